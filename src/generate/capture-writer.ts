/**
 * A capture file written frame by frame to a sink (a file, standard output, a test's buffer), in
 * blocks of about 1 MiB: what `generate` writes without holding the capture. The octets are those
 * of capture-file.ts's captureFile for the same frames: classic pcap (microsecond timestamps,
 * snaplen 262144) or pcapng with one Section Header, one Interface Description and an Enhanced
 * Packet Block per frame (pcapng draft, sections 4.1, 4.2, 4.3), little-endian.
 */
import { pcapHeader, type PcapFrame } from '../report/pcap-writer.js';
import { type CaptureFormat, interfaceBody, sectionHeaderBody } from './capture-file.js';

const BLOCK = 1 << 20;
/** The first block's size: it grows to BLOCK, so a small capture does not zero a whole MiB. */
const FIRST_BLOCK = 1 << 16;

export class CaptureWriter {
  private buf = new Uint8Array(FIRST_BLOCK);
  private view = new DataView(this.buf.buffer);
  private used = 0;

  constructor(
    private readonly format: CaptureFormat,
    linkType: number,
    /** Gets each block in order; the block is valid during the call only. */
    private readonly sink: (block: Uint8Array) => void,
  ) {
    if (format === 'pcap') this.put(pcapHeader(linkType));
    else {
      this.block(0x0a0d0d0a, sectionHeaderBody());
      this.block(1, interfaceBody(linkType));
    }
  }

  write(f: PcapFrame): void {
    const n = f.data.length;
    if (this.format === 'pcap') {
      this.room(16 + n);
      const v = this.view;
      const o = this.used;
      v.setUint32(o, f.tsSec >>> 0, true);
      v.setUint32(o + 4, Math.floor(f.tsNsec / 1000), true);
      v.setUint32(o + 8, n, true);
      v.setUint32(o + 12, f.origLen ?? n, true);
      this.buf.set(f.data, o + 16);
      this.used += 16 + n;
    } else {
      // Enhanced Packet Block: interface 0, timestamp in µs (if_tsresol default), lengths, data padded to 4.
      const total = 32 + ((n + 3) & ~3);
      this.room(total);
      const v = this.view;
      const o = this.used;
      const ts = BigInt(f.tsSec) * 1_000_000n + BigInt(Math.floor(f.tsNsec / 1000));
      v.setUint32(o, 6, true);
      v.setUint32(o + 4, total, true);
      v.setUint32(o + 8, 0, true);
      v.setUint32(o + 12, Number(ts >> 32n), true);
      v.setUint32(o + 16, Number(ts & 0xffffffffn), true);
      v.setUint32(o + 20, n, true);
      v.setUint32(o + 24, f.origLen ?? n, true);
      this.buf.set(f.data, o + 28);
      this.buf.fill(0, o + 28 + n, o + total - 4);
      v.setUint32(o + total - 4, total, true);
      this.used += total;
    }
  }

  /** Hands over what is buffered; call once after the last frame. */
  end(): void {
    this.flush();
  }

  private block(type: number, body: Uint8Array): void {
    const total = 12 + ((body.length + 3) & ~3);
    const b = new Uint8Array(total);
    const v = new DataView(b.buffer);
    v.setUint32(0, type, true);
    v.setUint32(4, total, true);
    b.set(body, 8);
    v.setUint32(total - 4, total, true);
    this.put(b);
  }

  private put(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.used);
    this.used += b.length;
  }

  /** Room for n more octets: flush first, and a record larger than the block gets a block of its own size. */
  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    if (this.buf.length < BLOCK && this.used + n <= BLOCK) {
      const bigger = new Uint8Array(Math.min(BLOCK, Math.max(2 * this.buf.length, this.used + n)));
      bigger.set(this.buf.subarray(0, this.used));
      this.buf = bigger;
      this.view = new DataView(bigger.buffer);
      return;
    }
    this.flush();
    if (n > this.buf.length) {
      this.buf = new Uint8Array(n);
      this.view = new DataView(this.buf.buffer);
    }
  }

  private flush(): void {
    if (this.used === 0) return;
    // The block is reused: a sink that keeps octets copies them (collectCapture).
    this.sink(this.buf.subarray(0, this.used));
    this.used = 0;
  }
}

/** The whole capture file of `frames` in memory (tests, the corpus, scenarios that damage the finished file). */
export function collectCapture(frames: Iterable<PcapFrame>, format: CaptureFormat, linkType: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  const w = new CaptureWriter(format, linkType, (b) => {
    parts.push(b.slice());
    total += b.length;
  });
  for (const f of frames) w.write(f);
  w.end();
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
