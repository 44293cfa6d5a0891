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
  tsSec: number;
  tsNsec: number;
  linkType: number;
  interfaceId: number;
  origLen: number;
  data: Uint8Array;
  /** Wall-clock arrival (ms), for the live delay. */
  at: number;
}

export class StreamAnnotator {
  private queue: Held[] = [];
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
  }

  /** A frame as read (its bytes are copied: the reader's buffer is reused). */
  note(p: PacketRecord, now = Date.now()): void {
    this.queue.push({
      frame: p.frame,
      tsSec: p.tsSec,
      tsNsec: p.tsNsec,
      linkType: p.linkType,
      interfaceId: p.interfaceId,
      origLen: p.origLen,
      data: new Uint8Array(p.data),
      at: now,
    });
    this.bytes += p.data.length;
    while (this.queue.length - this.head > this.limits.frames || this.bytes > this.limits.bytes) this.writeOldest();
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
    this.bytes -= h.data.length;
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
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
        h.data,
        true,
        null,
        texts.map((t) => stringOption(OPT_COMMENT, t)),
      ),
    );
    this.comments.forget(h.frame);
    this.comments.written = h.frame;
    this.written++;
  }
}
