import { openSync, writeSync, closeSync } from 'node:fs';

export {
  LINKTYPE_ETHERNET,
  LINKTYPE_RAW,
  LINKTYPE_LINUX_SLL,
  LINKTYPE_LINUX_SLL2,
  LINKTYPE_NULL,
  LINKTYPE_LOOP,
  LINKTYPE_IPV4,
  LINKTYPE_IPV6,
} from '../capture/link-types.js';

export interface PcapFrame {
  tsSec: number;
  tsNsec: number;
  data: Uint8Array;
  /** Original length; defaults to data.length. */
  origLen?: number;
}

/** Classic pcap global header (little-endian, microsecond or nanosecond resolution). */
export function pcapHeader(linkType: number, snaplen = 262144, nano = false): Uint8Array {
  const h = new Uint8Array(24);
  const v = new DataView(h.buffer);
  v.setUint32(0, nano ? 0xa1b23c4d : 0xa1b2c3d4, true);
  v.setUint16(4, 2, true);
  v.setUint16(6, 4, true);
  v.setUint32(16, snaplen, true);
  v.setUint32(20, linkType, true);
  return h;
}

/** One classic pcap record (header + captured bytes). */
export function pcapRecord(f: PcapFrame, nano = false): Uint8Array {
  const r = new Uint8Array(16 + f.data.length);
  const v = new DataView(r.buffer);
  v.setUint32(0, f.tsSec >>> 0, true);
  v.setUint32(4, nano ? f.tsNsec : Math.floor(f.tsNsec / 1000), true);
  v.setUint32(8, f.data.length, true);
  v.setUint32(12, f.origLen ?? f.data.length, true);
  r.set(f.data, 16);
  return r;
}

/** A whole classic pcap file in memory (tests, small exports). */
export function buildPcap(
  linkType: number,
  frames: readonly PcapFrame[],
  opts: { nano?: boolean; snaplen?: number } = {},
): Uint8Array {
  // Records written in place: a copy of every frame first would double the peak for a large file.
  let total = 24;
  for (const f of frames) total += 16 + f.data.length;
  const out = new Uint8Array(total);
  out.set(pcapHeader(linkType, opts.snaplen, opts.nano), 0);
  const v = new DataView(out.buffer);
  let o = 24;
  for (const f of frames) {
    v.setUint32(o, f.tsSec >>> 0, true);
    v.setUint32(o + 4, opts.nano ? f.tsNsec : Math.floor(f.tsNsec / 1000), true);
    v.setUint32(o + 8, f.data.length, true);
    v.setUint32(o + 12, f.origLen ?? f.data.length, true);
    out.set(f.data, o + 16);
    o += 16 + f.data.length;
  }
  return out;
}

/** Streaming pcap writer (for -w): buffers records and writes them in large blocks. */
export class PcapFileWriter {
  private fd: number;
  private buf = new Uint8Array(1 << 20);
  private used = 0;

  constructor(path: string, linkType: number, nano = true) {
    this.fd = openSync(path, 'w');
    this.nano = nano;
    this.push(pcapHeader(linkType, 262144, nano));
  }

  private readonly nano: boolean;

  write(f: PcapFrame): void {
    const need = 16 + f.data.length;
    if (this.used + need > this.buf.length) this.flush();
    if (need > this.buf.length) {
      writeSync(this.fd, pcapRecord(f, this.nano));
      return;
    }
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.used, 16);
    v.setUint32(0, f.tsSec >>> 0, true);
    v.setUint32(4, this.nano ? f.tsNsec : Math.floor(f.tsNsec / 1000), true);
    v.setUint32(8, f.data.length, true);
    v.setUint32(12, f.origLen ?? f.data.length, true);
    this.buf.set(f.data, this.used + 16);
    this.used += need;
  }

  private push(b: Uint8Array): void {
    if (this.used + b.length > this.buf.length) this.flush();
    this.buf.set(b, this.used);
    this.used += b.length;
  }

  flush(): void {
    if (this.used > 0) writeSync(this.fd, this.buf, 0, this.used);
    this.used = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}
