/**
 * --annotate (and live -w FILE.pcapng) for a capture that cannot be read twice: standard input, a
 * pipe, live capture. Frames are written in capture order after a bounded delay, so the findings
 * raised on a frame a little after it passed (the end of its FPDU, an answer that never came)
 * still reach it: a frame is held until WINDOW_FRAMES frames or WINDOW_BYTES octets came after it,
 * or (live) until it waited WINDOW_MS. A finding about a frame already written is counted, not
 * carried, and the run says how many.
 *
 * What is not known here is rebuilt: one Interface Description Block per interface and link type
 * seen, with if_tsresol 9 (nanoseconds, which holds any input's timestamps exactly) and the
 * snaplen when known; the input's interface names and other options are not carried.
 */
import type { PacketRecord } from '../capture/packet.js';
import type { FrameComments } from './packet-comments.js';
import {
  BT_EPB,
  epbBlock,
  IF_TSRESOL,
  idbBlock,
  OPT_COMMENT,
  SHB_USERAPPL,
  shbBlock,
  splitTimestamp,
  stringOption,
  type BlockFile,
} from './pcapng-writer.js';

export const WINDOW_FRAMES = 100_000;
export const WINDOW_BYTES = 32 * 1024 * 1024;
export const WINDOW_MS = 10_000;

interface Held {
  frame: number;
  /** Where the bytes are in the ring (-1: in `own`). */
  off: number;
  own: Uint8Array | null;
  len: number;
  tsSec: number;
  tsNsec: number;
  linkType: number;
  interfaceId: number;
  origLen: number;
  /** Wall-clock arrival (ms), for the live delay. */
  at: number;
}

/**
 * The held frames' bytes, in one buffer used as a ring (frames leave in the order they came): no
 * allocation per frame, so memory is the window's size and not what the collector lets pile up.
 */
class ByteRing {
  readonly buf: Uint8Array;
  /** Offset of the oldest held bytes, and where the next frame goes. */
  private r = 0;
  private w = 0;
  private empty = true;

  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }

  /** Room for n bytes, or -1 (the oldest frames must go first). */
  alloc(n: number): number {
    if (this.empty) {
      this.r = 0;
      this.w = 0;
    }
    let at = -1;
    if (this.empty || this.w > this.r) {
      if (this.w + n <= this.buf.length) at = this.w;
      else if (n <= this.r) at = 0; // wrap; the tail end stays unused until the oldest passes it
    } else if (this.w + n <= this.r) at = this.w;
    if (at < 0) return -1;
    this.w = at + n;
    this.empty = false;
    return at;
  }

  /** The oldest frame left; `next` is the offset of the one after it (-1: none held). */
  release(next: number): void {
    if (next < 0) this.empty = true;
    else this.r = next;
  }
}

export class StreamAnnotator {
  private queue: Held[] = [];
  private readonly ring: ByteRing | null;
  private head = 0;
  private bytes = 0;
  private readonly ifaces = new Map<string, number>();
  written = 0;

  constructor(
    private readonly out: BlockFile,
    private readonly comments: FrameComments,
    app: string,
    private readonly snaplen = 0,
    private readonly limits = { frames: WINDOW_FRAMES, bytes: WINDOW_BYTES, ms: WINDOW_MS },
  ) {
    out.write(shbBlock(true, [stringOption(SHB_USERAPPL, app)]));
    // Unbounded (the frames are already copies, e.g. -w's kept frames): held as they are.
    this.ring = Number.isFinite(limits.bytes) ? new ByteRing(limits.bytes) : null;
  }

  /** A frame as read (its bytes are copied into the ring: the reader's buffer is reused). */
  note(p: PacketRecord, now = Date.now()): void {
    const len = p.data.length;
    while (this.queue.length - this.head >= this.limits.frames) this.writeOldest();
    let off = -1;
    let own: Uint8Array | null = null;
    if (this.ring === null) own = p.data;
    else if (len > this.ring.buf.length) {
      own = new Uint8Array(p.data); // larger than the whole window (a tiny window in a test)
    } else {
      while ((off = this.ring.alloc(len)) < 0) this.writeOldest();
      this.ring.buf.set(p.data, off);
    }
    this.queue.push({
      frame: p.frame,
      off,
      own,
      len,
      tsSec: p.tsSec,
      tsNsec: p.tsNsec,
      linkType: p.linkType,
      interfaceId: p.interfaceId,
      origLen: p.origLen,
      at: now,
    });
    this.bytes += len;
  }

  /** Writes the frames that have waited their time (live capture calls this on its ticks). */
  age(now = Date.now()): void {
    while (this.head < this.queue.length && now - this.queue[this.head]!.at >= this.limits.ms) this.writeOldest();
  }

  /** Writes every frame still held (the capture ended). The file itself is closed by the caller. */
  end(): void {
    while (this.head < this.queue.length) this.writeOldest();
    // The section header went out first, before any finding naming no frame was known.
    this.comments.late += this.comments.section.length;
    this.out.flush();
  }

  private writeOldest(): void {
    const h = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as Held;
    this.bytes -= h.len;
    const key = `${h.interfaceId}:${h.linkType}`;
    let ifid = this.ifaces.get(key);
    if (ifid === undefined) {
      ifid = this.ifaces.size;
      this.ifaces.set(key, ifid);
      this.out.write(idbBlock(h.linkType, this.snaplen, true, [{ code: IF_TSRESOL, value: Uint8Array.of(9) }]));
    }
    const [tsHi, tsLo] = splitTimestamp(h.tsSec, h.tsNsec, 1e9);
    const texts = this.comments.get(h.frame);
    this.out.write(
      epbBlock(
        BT_EPB,
        { ifid, tsHi, tsLo, origLen: h.origLen },
        h.own ?? this.ring!.buf.subarray(h.off, h.off + h.len),
        true,
        null,
        texts.map((t) => stringOption(OPT_COMMENT, t)),
      ),
    );
    if (h.own === null) {
      // The ring space is free once the block is built (epbBlock copied the bytes).
      let next = -1;
      for (let i = this.head; i < this.queue.length; i++)
        if (this.queue[i]!.own === null) {
          next = this.queue[i]!.off;
          break;
        }
      this.ring!.release(next);
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.comments.forget(h.frame);
    this.comments.written = h.frame;
    this.written++;
  }
}
