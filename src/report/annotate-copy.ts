/**
 * A capture file copied as pcapng with the findings as packet comments, block by block, in one
 * streaming pass after the analysis (when every finding is known): --annotate (every frame) and
 * -w FILE.pcapng (the frames chosen). Memory stays at one block and the read buffer.
 *
 * A pcapng input keeps everything but what the comments change: each section's byte order and
 * options, every Interface Description Block as it was (link type, snaplen, if_tsresol,
 * if_tsoffset, if_name, ...), name resolution, statistics and other blocks, and each packet's
 * timestamp units, lengths and options; a packet with comments gets its opt_comment options
 * appended (pcapng draft section 4.3). Section lengths are set to "unknown" (-1, section 4.1) since
 * the sections grow. A classic pcap becomes one section with one interface: its link type and
 * snaplen, if_tsresol 9 for a nanosecond file (section 4.2), its timestamps and lengths unchanged.
 *
 * Frames are counted as the capture reader counts them (every packet block), and no more are
 * written than the analysis read (-c, or a capture unreadable past some record).
 */
import { createReadStream } from 'node:fs';
import { gunzip, isGzipFile } from '../capture/gzip.js';
import { HARD_MAX_CAPLEN } from '../capture/record-sink.js';
import { PCAP_MAGIC_NS, PCAP_MAGIC_US } from '../capture/pcap-format.js';
import { BT_PB, BT_SPB } from '../capture/pcapng-format.js';
import type { FrameComments } from './packet-comments.js';
import {
  BT_EPB,
  BT_IDB,
  BT_SHB,
  BYTE_ORDER_MAGIC,
  epbBlock,
  IF_TSRESOL,
  idbBlock,
  newBlock,
  OPT_COMMENT,
  optionsLength,
  pad4,
  putOptions,
  SHB_USERAPPL,
  shbBlock,
  splitTimestamp,
  stringOption,
  type BlockFile,
  type PcapngOption,
} from './pcapng-writer.js';

export interface CopyOptions {
  comments: FrameComments;
  /** Which frames to write (default: all). */
  keep?: (frame: number) => boolean;
  /** Frames the analysis read: none beyond is written. */
  maxFrames: number;
  /** shb_userappl of a section we create (classic pcap input). */
  app: string;
}

export interface CopyResult {
  written: number;
  /** Packet blocks left out for want of structure (the capture reader stopped there too). */
  stoppedAt: string | null;
}

/** The largest block copied whole; larger non-packet blocks stream through in pieces. */
const BLOCK_LIMIT = HARD_MAX_CAPLEN + 64 * 1024;

/** Bytes of an async stream of chunks, read as needed. */
class Input {
  private buf = new Uint8Array(1 << 20);
  start = 0;
  end = 0;
  private readonly it: AsyncIterator<Uint8Array>;
  private done = false;

  constructor(src: AsyncIterable<Uint8Array>) {
    this.it = src[Symbol.asyncIterator]();
  }

  get available(): number {
    return this.end - this.start;
  }

  /** Makes `n` bytes available from `start`; false at the end of the input. */
  async ensure(n: number): Promise<boolean> {
    while (this.end - this.start < n) {
      if (this.done) return false;
      const r = await this.it.next();
      if (r.done === true) {
        this.done = true;
        return false;
      }
      this.append(r.value);
    }
    return true;
  }

  private append(c: Uint8Array): void {
    const have = this.end - this.start;
    if (this.end + c.length > this.buf.length) {
      const size = Math.max(this.buf.length, have + c.length);
      const next = size > this.buf.length ? new Uint8Array(size * 2) : this.buf;
      next.set(this.buf.subarray(this.start, this.end), 0);
      this.buf = next;
      this.start = 0;
      this.end = have;
    }
    this.buf.set(c, this.end);
    this.end += c.length;
  }

  /** A view of n available bytes at `start` (valid until the next ensure). */
  view(n: number): Uint8Array {
    return this.buf.subarray(this.start, this.start + n);
  }

  skip(n: number): void {
    this.start += n;
  }
}

/** The bytes of a capture file, decompressed when it is gzip (as the capture reader reads it). */
export function captureBytes(path: string): AsyncIterable<Uint8Array> {
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  return isGzipFile(path) ? gunzip(raw) : (raw as AsyncIterable<Uint8Array>);
}

const commentOptions = (texts: readonly string[]): PcapngOption[] => texts.map((t) => stringOption(OPT_COMMENT, t));

/** Copies `src` (a pcap or pcapng file's bytes) to `out` as annotated pcapng. */
export async function copyAnnotated(
  src: AsyncIterable<Uint8Array>,
  out: BlockFile,
  o: CopyOptions,
): Promise<CopyResult> {
  const input = new Input(src);
  if (!(input.available >= 4 || (await input.ensure(4)))) return { written: 0, stoppedAt: 'no capture header' };
  const head = input.view(4);
  const dv = new DataView(head.buffer, head.byteOffset, 4);
  const m = dv.getUint32(0, true);
  const mb = dv.getUint32(0, false);
  if (m === PCAP_MAGIC_US || m === PCAP_MAGIC_NS || mb === PCAP_MAGIC_US || mb === PCAP_MAGIC_NS)
    return copyPcap(input, out, o);
  if (m === BT_SHB) return copyPcapng(input, out, o);
  return { written: 0, stoppedAt: 'not a pcap or pcapng file' };
}

async function copyPcap(input: Input, out: BlockFile, o: CopyOptions): Promise<CopyResult> {
  const res: CopyResult = { written: 0, stoppedAt: null };
  if (!(input.available >= 24 || (await input.ensure(24)))) return { ...res, stoppedAt: 'truncated pcap header' };
  let h = input.view(24);
  let dv = new DataView(h.buffer, h.byteOffset, 24);
  const le = dv.getUint32(0, true) === PCAP_MAGIC_US || dv.getUint32(0, true) === PCAP_MAGIC_NS;
  const nano = dv.getUint32(0, le) === PCAP_MAGIC_NS;
  const snaplen = dv.getUint32(16, le);
  const linkType = dv.getUint32(20, le) & 0xffff; // the upper bits carry FCS information
  input.skip(24);
  out.write(shbBlock(true, [stringOption(SHB_USERAPPL, o.app), ...commentOptions(o.comments.section)]));
  out.write(idbBlock(linkType, snaplen, true, nano ? [{ code: IF_TSRESOL, value: Uint8Array.of(9) }] : []));
  const unit = nano ? 1e9 : 1e6;
  for (let frame = 1; frame <= o.maxFrames; frame++) {
    if (!(input.available >= 16 || (await input.ensure(16)))) break;
    h = input.view(16);
    dv = new DataView(h.buffer, h.byteOffset, 16);
    const sec = dv.getUint32(0, le);
    const frac = dv.getUint32(4, le);
    const caplen = dv.getUint32(8, le);
    const origLen = dv.getUint32(12, le);
    if (caplen > HARD_MAX_CAPLEN) return { ...res, stoppedAt: `frame ${frame}: record too large` };
    if (!(input.available >= 16 + caplen || (await input.ensure(16 + caplen))))
      return { ...res, stoppedAt: `frame ${frame}: truncated record` };
    if (o.keep === undefined || o.keep(frame)) {
      const [tsHi, tsLo] = splitTimestamp(sec, frac, unit);
      const data = input.view(16 + caplen).subarray(16);
      out.write(
        epbBlock(BT_EPB, { ifid: 0, tsHi, tsLo, origLen }, data, true, null, commentOptions(o.comments.get(frame))),
      );
      res.written++;
    }
    input.skip(16 + caplen);
  }
  return res;
}

/** The options of a block from `at` to its trailer, without opt_endofopt; null when they do not parse. */
function rawOptions(b: Uint8Array, dv: DataView, at: number, le: boolean): Uint8Array | null {
  const end = b.length - 4;
  let o = at;
  while (o + 4 <= end) {
    const code = dv.getUint16(o, le);
    const len = dv.getUint16(o + 2, le);
    if (code === 0) break;
    if (o + 4 + pad4(len) > end) return null;
    o += 4 + pad4(len);
  }
  return b.subarray(at, o);
}

async function copyPcapng(input: Input, out: BlockFile, o: CopyOptions): Promise<CopyResult> {
  const res: CopyResult = { written: 0, stoppedAt: null };
  let le = true;
  let frame = 0;
  let sections = 0;
  /** Snaplen of interface 0 in this section, for a Simple Packet Block's captured length. */
  let snaplen0 = 0;
  let ifaces = 0;
  for (;;) {
    if (!(input.available >= 12 || (await input.ensure(12)))) {
      if (input.available > 0) res.stoppedAt = 'truncated block header';
      return res;
    }
    const h = input.view(12);
    let dv = new DataView(h.buffer, h.byteOffset, 12);
    let type = dv.getUint32(0, le);
    if (dv.getUint32(0, true) === BT_SHB) {
      type = BT_SHB;
      if (dv.getUint32(8, true) === BYTE_ORDER_MAGIC) le = true;
      else if (dv.getUint32(8, false) === BYTE_ORDER_MAGIC) le = false;
      else return { ...res, stoppedAt: 'bad byte-order magic' };
    }
    const total = dv.getUint32(4, le);
    if (total < 12 || total % 4 !== 0) return { ...res, stoppedAt: `block of bad length ${total}` };
    const packet = type === BT_EPB || type === BT_PB || type === BT_SPB;
    if (total > BLOCK_LIMIT) {
      if (packet || type === BT_SHB || type === BT_IDB) return { ...res, stoppedAt: 'block too large' };
      await passThrough(input, out, total); // e.g. a large Decryption Secrets Block
      continue;
    }
    if (!(input.available >= total || (await input.ensure(total)))) return { ...res, stoppedAt: 'truncated block' };
    const b = input.view(total);
    dv = new DataView(b.buffer, b.byteOffset, total);
    if (type === BT_SHB) {
      if (total < 28) return { ...res, stoppedAt: 'section header block too short' };
      sections++;
      ifaces = 0;
      snaplen0 = 0;
      out.write(copyShb(b, dv, le, sections === 1 ? o.comments.section : []));
    } else if (packet) {
      frame++;
      if (frame <= o.maxFrames && (o.keep === undefined || o.keep(frame))) {
        const texts = o.comments.get(frame);
        out.write(texts.length === 0 ? b : withComments(type, b, dv, le, snaplen0, texts));
        res.written++;
      }
    } else {
      if (type === BT_IDB && total >= 20) {
        if (ifaces === 0) snaplen0 = dv.getUint32(12, le);
        ifaces++;
      }
      out.write(b);
    }
    input.skip(total);
  }
}

/** A Section Header Block as read, its section length made unknown (-1) and `texts` added as comments. */
function copyShb(b: Uint8Array, dv: DataView, le: boolean, texts: readonly string[]): Uint8Array {
  const raw = rawOptions(b, dv, 24, le) ?? new Uint8Array(0);
  const opts = commentOptions(texts);
  const ol = optionsLength(opts, raw.length);
  const { b: nb, v } = newBlock(BT_SHB, 16 + ol, le);
  nb.set(b.subarray(8, 16), 8); // byte-order magic and version as read
  v.setInt32(16, -1, le);
  v.setInt32(20, -1, le);
  if (ol) {
    nb.set(raw, 24);
    putOptions(nb, v, 24 + raw.length, opts, le);
  }
  return nb;
}

/** The packet block `b` with `texts` as opt_comment options after its own options. */
function withComments(
  type: number,
  b: Uint8Array,
  dv: DataView,
  le: boolean,
  snaplen0: number,
  texts: readonly string[],
): Uint8Array {
  const opts = commentOptions(texts);
  if (type === BT_SPB) {
    // A Simple Packet Block has no options (section 4.4): the frame becomes an Enhanced Packet
    // Block on interface 0, which has no timestamp to keep (0, as the SPB's is unknown).
    const origLen = dv.getUint32(8, le);
    let caplen = Math.min(origLen, b.length - 16);
    if (snaplen0 !== 0) caplen = Math.min(caplen, snaplen0);
    return epbBlock(BT_EPB, { ifid: 0, tsHi: 0, tsLo: 0, origLen }, b.subarray(12, 12 + caplen), le, null, opts);
  }
  const caplen = dv.getUint32(20, le);
  const optsAt = 28 + pad4(caplen);
  const raw = optsAt <= b.length - 4 ? (rawOptions(b, dv, optsAt, le) ?? new Uint8Array(0)) : new Uint8Array(0);
  const nb = epbBlock(
    type,
    { ifid: 0, tsHi: dv.getUint32(12, le), tsLo: dv.getUint32(16, le), origLen: dv.getUint32(24, le) },
    b.subarray(28, 28 + caplen),
    le,
    raw,
    opts,
  );
  nb.set(b.subarray(8, 12), 8); // interface id (and a Packet Block's drops count) as read
  return nb;
}

/** Copies a block too large to hold whole in pieces (its length was checked by the caller). */
async function passThrough(input: Input, out: BlockFile, total: number): Promise<void> {
  let left = total;
  while (left > 0) {
    if (!(input.available >= 1 || (await input.ensure(1)))) return;
    const n = Math.min(left, input.available);
    out.write(input.view(n));
    input.skip(n);
    left -= n;
  }
}
