/**
 * Bytes of one direction held while the MPA layer cannot frame them yet (startup negotiation not
 * seen, hunting for FPDU boundaries after loss or mid-stream). Keeps which frame carried each
 * octet so a replay through the framer attributes FPDUs to frames exactly. Bounded: the owner
 * decides what to drop.
 *
 * While framing, the octets from the last plausible FPDU on are held only in case the framing
 * breaks, which it rarely does: they are kept as views into the capture reader's buffers
 * (`appendLent`, src/capture/lent-bytes.ts) and copied only when one is about to be reused or when
 * they are read. Every reading method copies them first, so a log reads the same either way.
 */
import { pooled } from '../../src/net/bytes.js';
import { holdLent, isLent, type LentBytesHolder } from '../../src/capture/lent-bytes.js';
const EMPTY = new Uint8Array(0);

export class ByteLog implements LentBytesHolder {
  private buf: Uint8Array;
  private used = 0;
  /** Stream offset of buf[0]. */
  base = 0;
  /**
   * Piece boundaries, three numbers a piece (one array, not three: a capture of 100,000 flows holds
   * as many logs): start index in buf, frame, and whether the piece starts/ends a TCP segment.
   */
  private pieces: number[] = [];

  /**
   * Lent views held after the owned octets (buf[0, used)), in stream order, with frame and
   * segment flags (two numbers a view); created on first use.
   */
  private lentViews: Uint8Array[] | null = null;
  private lentMeta: number[] | null = null;
  private lentBytes = 0;
  /** Registered as a holder of lent views until the reader next recycles a buffer. */
  private holding = false;

  /** Allocated on first use: most directions never hold anything. */
  constructor() {
    this.buf = EMPTY;
  }

  /** Gives memory back when far more is allocated than held (after a drop or reset). */
  private shrink(): void {
    if (this.buf.length > 16 * 1024 && this.used < this.buf.length / 4) {
      const nb = this.used === 0 ? EMPTY : new Uint8Array(Math.max(4096, this.used * 2));
      nb.set(this.buf.subarray(0, this.used));
      this.buf = nb;
    }
  }

  /** Drops everything and the buffer with it (the direction ended). */
  release(): void {
    this.reset(this.end);
    this.buf = EMPTY;
  }

  get length(): number {
    return this.used + this.lentBytes;
  }

  /** Octets held in the log's own memory (the rest are lent views: dropping them moves nothing). */
  get ownedLength(): number {
    return this.used;
  }

  get end(): number {
    return this.base + this.used + this.lentBytes;
  }

  /** Contiguous view of everything held (valid until the next append/drop). */
  get bytes(): Uint8Array {
    this.own();
    return this.buf.subarray(0, this.used);
  }

  reset(base: number): void {
    this.base = base;
    this.used = 0;
    this.pieces.length = 0;
    this.forgetLent();
    this.shrink();
  }

  /**
   * Appends a whole chunk: kept as a view when the capture reader lent it (copied before the reader
   * reuses its buffer), copied otherwise.
   */
  appendLent(data: Uint8Array, frame: number, segStart: boolean, segEnd: boolean): void {
    if (data.length === 0) return;
    if (!isLent(data)) {
      this.append(data, 0, data.length, frame, segStart, segEnd);
      return;
    }
    (this.lentViews ??= []).push(data);
    (this.lentMeta ??= []).push(frame, (segStart ? 1 : 0) | (segEnd ? 2 : 0));
    this.lentBytes += data.length;
    if (!this.holding) {
      this.holding = true;
      holdLent(this);
    }
  }

  /** The reader is about to reuse a buffer: the lent views become copies. */
  ownLentBytes(): void {
    this.holding = false;
    this.own();
  }

  /** Copies the lent views after the owned octets, in order. */
  private own(): void {
    if (this.lentBytes === 0) return;
    const v = this.lentViews!;
    const m = this.lentMeta!;
    // Exactly the room needed (not doubled): with 10,000 flows every recycle comes here for each.
    const need = this.used + this.lentBytes;
    if (need > this.buf.length) {
      const nb = new Uint8Array(need);
      nb.set(this.buf.subarray(0, this.used));
      this.buf = nb;
    }
    this.lentBytes = 0;
    for (let i = 0; i < v.length; i++) {
      const f = m[2 * i + 1]!;
      this.copyIn(v[i]!, 0, v[i]!.length, m[2 * i]!, (f & 1) !== 0, (f & 2) !== 0);
    }
    v.length = 0;
    m.length = 0;
  }

  private forgetLent(): void {
    if (this.lentBytes === 0) return;
    this.lentBytes = 0;
    this.lentViews!.length = 0;
    this.lentMeta!.length = 0;
  }

  append(data: Uint8Array, from: number, to: number, frame: number, segStart: boolean, segEnd: boolean): void {
    this.own();
    this.copyIn(data, from, to, frame, segStart, segEnd);
  }

  private copyIn(data: Uint8Array, from: number, to: number, frame: number, segStart: boolean, segEnd: boolean): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.used + n > this.buf.length) {
      // Start small: most held runs are a startup frame or a few segments. A first piece gets its
      // exact size from Node's shared pool (no ArrayBuffer of its own); later growth doubles.
      let nb: Uint8Array;
      if (this.buf.length === 0 && n <= 1024) nb = pooled(n);
      else {
        let cap = Math.max(256, this.buf.length * 2);
        while (cap < this.used + n) cap *= 2;
        nb = new Uint8Array(cap);
      }
      nb.set(this.buf.subarray(0, this.used));
      this.buf = nb;
    }
    this.buf.set(data.subarray(from, to), this.used);
    this.pieces.push(this.used, frame, (segStart ? 1 : 0) | (segEnd ? 2 : 0));
    this.used += n;
  }

  /** Frame that carried stream offset `off`. */
  frameAt(off: number): number {
    this.own();
    const idx = off - this.base;
    const p = this.pieces;
    let lo = 0;
    let hi = p.length / 3 - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (p[mid * 3]! <= idx) lo = mid;
      else hi = mid - 1;
    }
    return p[lo * 3 + 1] ?? -1;
  }

  /** Frames carrying [from, to) stream offsets. */
  framesIn(from: number, to: number): number[] {
    this.own();
    const out: number[] = [];
    const p = this.pieces;
    for (let i = 0; i < p.length; i += 3) {
      const s = this.base + p[i]!;
      const e = this.base + (i + 3 < p.length ? p[i + 3]! : this.used);
      if (e > from && s < to && out[out.length - 1] !== p[i + 1]) out.push(p[i + 1]!);
    }
    return out;
  }

  /**
   * Where each frame's octets begin in [from, to): flattened pairs (offset relative to `from`,
   * frame), at most `max` pairs (the rest are left out).
   */
  frameMap(from: number, to: number, max: number): number[] {
    this.own();
    const out: number[] = [];
    const p = this.pieces;
    for (let i = 0; i < p.length && out.length < 2 * max; i += 3) {
      const s = this.base + p[i]!;
      const e = this.base + (i + 3 < p.length ? p[i + 3]! : this.used);
      if (e > from && s < to && out[out.length - 1] !== p[i + 1]) out.push(Math.max(0, s - from), p[i + 1]!);
    }
    return out;
  }

  /** Hands out the held pieces from stream offset `from` on, in order, as the reassembler would. */
  replay(
    from: number,
    fn: (data: Uint8Array, offset: number, frame: number, segStart: boolean, segEnd: boolean) => void,
  ): void {
    this.own();
    const p = this.pieces;
    for (let i = 0; i < p.length; i += 3) {
      const s = p[i]!;
      const e = i + 3 < p.length ? p[i + 3]! : this.used;
      const off = this.base + s;
      if (this.base + e <= from) continue;
      const skip = Math.max(0, from - off);
      const f = p[i + 2]!;
      fn(this.buf.subarray(s + skip, e), off + skip, p[i + 1]!, skip === 0 && (f & 1) !== 0, (f & 2) !== 0);
    }
  }

  /** Forgets everything before stream offset `off` (keeps the buffer, shifts the rest down). */
  dropBefore(off: number, keepCapacity = false): void {
    if (this.lentBytes > 0 && off - this.base > this.used) {
      this.dropIntoLent(off);
      // Nothing owned is left: the buffer goes (a recycle allocates what it then needs), else each of
      // 10,000 directions would keep the largest pair of FPDUs it ever held.
      if (!keepCapacity) this.buf = EMPTY;
      return;
    }
    const k = Math.min(this.used, Math.max(0, off - this.base));
    if (k === 0) return;
    this.buf.copyWithin(0, k, this.used);
    this.used -= k;
    this.base += k;
    const p = this.pieces;
    let first = 0;
    while ((first + 1) * 3 < p.length && p[(first + 1) * 3]! <= k) first++;
    const exact = p[first * 3] === k;
    p.splice(0, first * 3);
    for (let i = 0; i < p.length; i += 3) p[i] = Math.max(0, p[i]! - k);
    if (this.used === 0) p.length = 0;
    else if (!exact && p.length > 0) p[2] = p[2]! & ~1; // first piece now starts mid-segment
    if (!keepCapacity) this.shrink();
  }

  /** Drops every owned octet and the lent views before `off` (a view cut in two keeps its tail). */
  private dropIntoLent(off: number): void {
    this.base += this.used;
    this.used = 0;
    this.pieces.length = 0;
    const v = this.lentViews!;
    const m = this.lentMeta!;
    let rest = Math.min(off - this.base, this.lentBytes);
    let i = 0;
    while (i < v.length && v[i]!.length <= rest) {
      rest -= v[i]!.length;
      this.base += v[i]!.length;
      this.lentBytes -= v[i]!.length;
      i++;
    }
    if (i > 0) {
      v.splice(0, i);
      m.splice(0, 2 * i);
    }
    if (rest > 0) {
      v[0] = v[0]!.subarray(rest);
      this.base += rest;
      this.lentBytes -= rest;
      m[1] = m[1]! & ~1; // the first view now starts mid-segment
    }
  }
}
