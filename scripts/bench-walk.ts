/**
 * The yardstick of `npm run bench`: a bare walk over a classic pcap file's records in 8 MiB reads,
 * touching each record header and nothing else. What a Node process needs at least to see every
 * packet; the analyzer's time is quoted as a multiple of it. Also cuts a record-aligned prefix of a
 * capture (tshark is timed on a prefix and extrapolated).
 *
 * `node dist/scripts/bench-walk.js FILE` prints {"records":N,"bytes":N} as JSON.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';

const CHUNK = 8 * 1024 * 1024;
const PCAP_HEADER = 24;
const RECORD_HEADER = 16;

/**
 * Calls `onRecord(fileOffset, recordLength)` for each record of a little-endian classic pcap file
 * until it returns false; returns the records walked.
 */
export function walkPcap(file: string, onRecord: (offset: number, length: number) => boolean = () => true): number {
  const fd = openSync(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    let start = 0; // file offset of buf[0]
    let len = readSync(fd, buf, 0, buf.length, 0);
    let pos = PCAP_HEADER;
    let records = 0;
    for (;;) {
      const header = pos + RECORD_HEADER <= len;
      const incl = header ? buf.readUInt32LE(pos + 8) : 0;
      if (!header || pos + RECORD_HEADER + incl > len) {
        // Move the partial record to the front (growing the buffer for a big one), read after it.
        const need = RECORD_HEADER + incl;
        if (need + CHUNK > buf.length) {
          const bigger = Buffer.allocUnsafe(need + CHUNK);
          buf.copy(bigger, 0, pos, len);
          buf = bigger;
        } else buf.copy(buf, 0, pos, len);
        start += pos;
        len -= pos;
        pos = 0;
        const n = readSync(fd, buf, len, buf.length - len, start + len);
        if (n === 0) return records;
        len += n;
        continue;
      }
      records++;
      if (!onRecord(start + pos, RECORD_HEADER + incl)) return records;
      pos += RECORD_HEADER + incl;
    }
  } finally {
    closeSync(fd);
  }
}

/** Writes the first records of `file` (up to `maxBytes`) to `out`; returns the bytes written. */
export function writePrefix(file: string, out: string, maxBytes: number): number {
  let end = PCAP_HEADER;
  walkPcap(file, (off, length) => {
    if (off + length > maxBytes) return false;
    end = off + length;
    return true;
  });
  const src = openSync(file, 'r');
  const dst = openSync(out, 'w');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    for (let off = 0; off < end; ) {
      const n = readSync(src, buf, 0, Math.min(CHUNK, end - off), off);
      if (n === 0) break;
      writeSync(dst, buf, 0, n);
      off += n;
    }
  } finally {
    closeSync(src);
    closeSync(dst);
  }
  return end;
}

if (process.argv[1]?.endsWith('bench-walk.js')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: bench-walk FILE');
  let bytes = 0;
  const records = walkPcap(file, (_, length) => {
    bytes += length;
    return true;
  });
  process.stdout.write(JSON.stringify({ records, bytes }) + '\n');
}
