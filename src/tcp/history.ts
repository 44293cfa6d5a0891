/**
 * Delivered-bytes history, kept so an overlapping retransmission can be compared with the first
 * copy: one ring per direction (History), and the budget of rings shared by all directions
 * (HistoryRings), lent out and reclaimed by a clock hand.
 */
import { pow2AtLeast } from './pow2.js';

/** A direction that found no free history ring waits this many ring-fulls of delivery before trying again. */
const HIST_BACKOFF = 4;

/** First size of a history ring and of its run arrays: most directions deliver little. */
const HIST_MIN = 4096;
const RUNS_MIN = 64;

/**
 * The last delivered bytes of a direction, as a ring, with runs of (start offset, frame) so an
 * overlap conflict can name the frame that carried the first copy. Frame 0 marks a gap run. The ring
 * starts at 4 KiB and doubles up to its full size as the direction delivers, so 512 rings held by
 * directions that carried one small segment each cost 2.5 MiB, not 40.
 */
export class History {
  buf: Uint8Array;
  cap: number;
  private runOff: Float64Array;
  private runFrame: Float64Array;
  private runCap: number;
  private readonly maxRunCap: number;
  private first = 0;
  count = 0;
  /** Offset of the first octet written since the last reset, -1 before. */
  private lo = -1;
  owner: HistoryOwner | null = null;

  constructor(readonly maxCap: number) {
    this.cap = Math.min(maxCap, HIST_MIN);
    this.buf = new Uint8Array(this.cap);
    // Enough runs for 64-octet average chunks; smaller chunks just shorten the usable history.
    this.maxRunCap = Math.max(RUNS_MIN, Math.ceil(maxCap / 64));
    this.runCap = RUNS_MIN;
    this.runOff = new Float64Array(this.runCap);
    this.runFrame = new Float64Array(this.runCap);
  }

  reset(): void {
    this.first = 0;
    this.count = 0;
    this.lo = -1;
  }

  offAt(k: number): number {
    return this.runOff[(this.first + k) % this.runCap]!;
  }

  frameAt(k: number): number {
    return this.runFrame[(this.first + k) % this.runCap]!;
  }

  private push(off: number, frame: number): void {
    if (this.count > 0 && this.runFrame[(this.first + this.count - 1) % this.runCap] === frame) return;
    if (this.count === this.runCap) {
      if (this.runCap < this.maxRunCap) {
        this.growRuns();
      } else {
        this.first = (this.first + 1) % this.runCap;
        this.count--;
      }
    }
    const i = (this.first + this.count) % this.runCap;
    this.runOff[i] = off;
    this.runFrame[i] = frame;
    this.count++;
  }

  private growRuns(): void {
    const n = Math.min(this.maxRunCap, this.runCap * 2);
    const ro = new Float64Array(n);
    const rf = new Float64Array(n);
    for (let k = 0; k < this.count; k++) {
      ro[k] = this.offAt(k);
      rf[k] = this.frameAt(k);
    }
    this.runOff = ro;
    this.runFrame = rf;
    this.runCap = n;
    this.first = 0;
  }

  /** Room for the octets up to `end`: the ring grows (to at most maxCap) keeping what it holds. */
  private grow(end: number, next: number): void {
    const nc = Math.min(this.maxCap, pow2AtLeast(end - this.lo));
    const nb = new Uint8Array(nc);
    const cap = this.cap;
    for (let x = Math.max(this.lo, next - cap); x < next; x++) nb[x % nc] = this.buf[x % cap]!;
    this.buf = nb;
    this.cap = nc;
  }

  write(off: number, data: Uint8Array, frame: number): void {
    this.push(off, frame);
    if (this.lo < 0) this.lo = off;
    if (this.cap < this.maxCap && off + data.length - this.lo > this.cap) this.grow(off + data.length, off);
    const cap = this.cap;
    let n = data.length;
    let src = data;
    if (n >= cap) {
      src = data.subarray(n - cap);
      off += n - cap;
      n = cap;
    }
    const pos = off % cap;
    if (pos + n <= cap) {
      this.buf.set(src, pos);
    } else {
      const first = cap - pos;
      this.buf.set(src.subarray(0, first), pos);
      this.buf.set(src.subarray(first), 0);
    }
  }

  gap(off: number): void {
    this.push(off, 0);
  }

  /** Index of the last run starting at or before off (runs are in offset order). */
  find(off: number): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offAt(mid) <= off) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/** What the ring budget needs of a direction (Dir, declared here so this file needs nothing above it). */
export interface HistoryOwner {
  hist: History | null;
  /** Delivered since the clock last looked (a ring in use is spared once). */
  histUsed: boolean;
  /** No history ring is sought before `delivered` reaches this. */
  histRetryAt: number;
  readonly delivered: number;
}

/** Every history ring allocated (at most maxHistoryTotal / historyBytes), swept by a clock hand. */
export class HistoryRings {
  private readonly rings: History[] = [];
  private readonly ringFree: History[] = [];
  private hand = 0;

  constructor(
    private readonly histBytes: number,
    private readonly ringsMax: number,
  ) {}

  /**
   * A ring for d: a free one, a new one within the budget, or one taken from a direction that has
   * not delivered since the clock hand last passed it. When every ring is busy, d goes without for
   * a while instead of evicting a busy one (which would leave both with useless history).
   */
  attach(d: HistoryOwner): History | null {
    if (d.delivered < d.histRetryAt) return null;
    let h = this.ringFree.pop() ?? null;
    if (h === null && this.rings.length < this.ringsMax) {
      h = new History(this.histBytes);
      this.rings.push(h);
    }
    // At most one pass (and 8 rings) per attempt: a ring used since the hand last passed is spared.
    const look = Math.min(8, this.rings.length);
    for (let k = 0; h === null && k < look; k++) {
      const c = this.rings[this.hand]!;
      this.hand = (this.hand + 1) % this.rings.length;
      const o = c.owner;
      if (o === null) continue;
      if (o.histUsed) {
        o.histUsed = false;
        continue;
      }
      o.hist = null;
      o.histRetryAt = o.delivered + HIST_BACKOFF * this.histBytes;
      h = c;
    }
    if (h === null) {
      d.histRetryAt = d.delivered + HIST_BACKOFF * this.histBytes;
      return null;
    }
    h.reset();
    h.owner = d;
    d.hist = h;
    return h;
  }

  detach(d: HistoryOwner): void {
    const h = d.hist;
    if (h === null) return;
    h.owner = null;
    this.ringFree.push(h);
    d.hist = null;
  }
}
