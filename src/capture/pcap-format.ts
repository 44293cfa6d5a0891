import { bytes, caplenLimit, type FormatParser, type RecordSink } from './record-sink.js';

/** Classic pcap (libpcap) files: a 24-byte file header, then 16-byte record headers and data. */

export const PCAP_MAGIC_US = 0xa1b2c3d4;
export const PCAP_MAGIC_NS = 0xa1b23c4d;
export const PCAP_FILE_HEADER = 24;
export const PCAP_RECORD_HEADER = 16;

export interface PcapFileHeader {
  littleEndian: boolean;
  nano: boolean;
  snaplen: number;
  linkType: number;
  /** Largest captured length a record may claim. */
  maxCaplen: number;
}

/** True when the 4 magic bytes at buf[pos] are a classic pcap magic in either byte order. */
export function isPcapMagic(dv: DataView, pos: number): boolean {
  const m = dv.getUint32(pos, true);
  const b = dv.getUint32(pos, false);
  return m === PCAP_MAGIC_US || m === PCAP_MAGIC_NS || b === PCAP_MAGIC_US || b === PCAP_MAGIC_NS;
}

/** Parses the file header at dv[pos] (24 bytes present); a string is an error message. */
export function parsePcapHeader(dv: DataView, pos: number): PcapFileHeader | string {
  const le = dv.getUint32(pos, true) === PCAP_MAGIC_US || dv.getUint32(pos, true) === PCAP_MAGIC_NS;
  const magic = dv.getUint32(pos, le);
  const major = dv.getUint16(pos + 4, le);
  const minor = dv.getUint16(pos + 6, le);
  if (major !== 2) return `unsupported pcap version ${major}.${minor} (only 2.x is defined)`;
  const snaplen = dv.getUint32(pos + 16, le);
  // The upper bits of the link-type word carry FCS information, not the link type.
  const linkType = dv.getUint32(pos + 20, le) & 0xffff;
  return { littleEndian: le, nano: magic === PCAP_MAGIC_NS, snaplen, linkType, maxCaplen: caplenLimit(snaplen) };
}

/**
 * Checks a record's captured length against the file header; null when acceptable.
 * A snaplen of 0 means the writer did not state one.
 */
export function checkCaplen(h: PcapFileHeader, caplen: number): string | null {
  if (h.snaplen !== 0 && caplen > h.snaplen) {
    return `record header says ${bytes(caplen)} captured, more than the file's snaplen of ${h.snaplen}`;
  }
  if (caplen > h.maxCaplen)
    return `record header says ${bytes(caplen)} captured, more than the ${h.maxCaplen}-byte limit for one record`;
  return null;
}

export class PcapParser implements FormatParser {
  readonly format = 'pcap' as const;
  need = PCAP_FILE_HEADER;
  private header: PcapFileHeader | null = null;

  constructor(private readonly sink: RecordSink) {}

  parse(buf: Uint8Array, dv: DataView, pos: number, end: number, base: number, eof: boolean): number {
    const sink = this.sink;
    let h = this.header;
    if (h === null) {
      if (end - pos < PCAP_FILE_HEADER) {
        if (eof)
          sink.fail(
            base + pos,
            `file too short for a pcap file header: ${PCAP_FILE_HEADER} bytes needed, ${bytes(end - pos)} in file`,
          );
        this.need = PCAP_FILE_HEADER;
        return pos;
      }
      const parsed = parsePcapHeader(dv, pos);
      if (typeof parsed === 'string') {
        sink.fail(base + pos, parsed);
        return pos;
      }
      h = this.header = parsed;
      pos += PCAP_FILE_HEADER;
    }
    const le = h.littleEndian;
    const nano = h.nano;
    const rec = sink.rec;
    for (;;) {
      const left = end - pos;
      if (left < PCAP_RECORD_HEADER) {
        if (eof && left > 0)
          sink.fail(
            base + pos,
            `truncated record header: ${PCAP_RECORD_HEADER} bytes needed, ${bytes(left)} left in file`,
          );
        this.need = PCAP_RECORD_HEADER;
        return pos;
      }
      const caplen = dv.getUint32(pos + 8, le);
      const bad = checkCaplen(h, caplen);
      if (bad !== null) {
        sink.fail(base + pos, bad);
        return pos;
      }
      if (left - PCAP_RECORD_HEADER < caplen) {
        if (eof) {
          sink.fail(
            base + pos,
            `truncated record: header says ${bytes(caplen)} captured, ${bytes(left - PCAP_RECORD_HEADER)} left in file`,
          );
        }
        this.need = PCAP_RECORD_HEADER + caplen;
        return pos;
      }
      let sec = dv.getUint32(pos, le);
      let frac = dv.getUint32(pos + 4, le);
      // Writers occasionally leave the fraction at or above one second: carry it.
      if (nano) {
        if (frac >= 1e9) {
          sec += Math.floor(frac / 1e9);
          frac %= 1e9;
        }
      } else {
        if (frac >= 1e6) {
          sec += Math.floor(frac / 1e6);
          frac %= 1e6;
        }
        frac *= 1000;
      }
      rec.tsSec = sec;
      rec.tsNsec = frac;
      rec.origLen = dv.getUint32(pos + 12, le);
      rec.linkType = h.linkType;
      rec.interfaceId = 0;
      rec.fileOffset = base + pos;
      rec.data = buf.subarray(pos + PCAP_RECORD_HEADER, pos + PCAP_RECORD_HEADER + caplen);
      pos += PCAP_RECORD_HEADER + caplen;
      sink.emit();
    }
  }
}
