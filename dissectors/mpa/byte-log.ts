/**
 * Bytes of one direction held while the MPA layer cannot frame them yet (startup negotiation not
 * seen, hunting for FPDU boundaries after loss or mid-stream). Keeps which frame carried each
 * octet so a replay through the framer attributes FPDUs to frames exactly. Bounded: the owner
 * decides what to drop.
 */
const EMPTY = new Uint8Array(0);

export class ByteLog {
  private buf: Uint8Array;
  private used = 0;
  /** Stream offset of buf[0]. */
  base = 0;
  /** Piece boundaries: start index in buf, frame, and whether the piece starts/ends a TCP segment. */
  private starts: number[] = [];
  private frames: number[] = [];
  private segFlags: number[] = [];

  /** Allocated on first use: most directions never hold anything. */
  constructor() {
    this.buf = EMPTY;
  }

  /** Gives memory back when far more is allocated than held (after a drop or reset). */
  private shrink(): void {
    if (this.buf.length > 64 * 1024 && this.used < this.buf.length / 4) {
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
    return this.used;
  }

  get end(): number {
    return this.base + this.used;
  }

  /** Contiguous view of everything held (valid until the next append/drop). */
  get bytes(): Uint8Array {
    return this.buf.subarray(0, this.used);
  }

  reset(base: number): void {
    this.base = base;
    this.used = 0;
    this.starts.length = 0;
    this.frames.length = 0;
    this.segFlags.length = 0;
    this.shrink();
  }

  append(data: Uint8Array, from: number, to: number, frame: number, segStart: boolean, segEnd: boolean): void {
    const n = to - from;
    if (n <= 0) return;
    if (this.used + n > this.buf.length) {
      // Start small: most held runs are a startup frame or a few segments.
      let cap = Math.max(256, this.buf.length * 2);
      while (cap < this.used + n) cap *= 2;
      const nb = new Uint8Array(cap);
      nb.set(this.buf.subarray(0, this.used));
      this.buf = nb;
    }
    this.buf.set(data.subarray(from, to), this.used);
    this.starts.push(this.used);
    this.frames.push(frame);
    this.segFlags.push((segStart ? 1 : 0) | (segEnd ? 2 : 0));
    this.used += n;
  }

  /** Frame that carried stream offset `off`. */
  frameAt(off: number): number {
    const idx = off - this.base;
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= idx) lo = mid;
      else hi = mid - 1;
    }
    return this.frames[lo] ?? -1;
  }

  /** Frames carrying [from, to) stream offsets. */
  framesIn(from: number, to: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.starts.length; i++) {
      const s = this.base + this.starts[i]!;
      const e = this.base + (i + 1 < this.starts.length ? this.starts[i + 1]! : this.used);
      if (e > from && s < to && out[out.length - 1] !== this.frames[i]) out.push(this.frames[i]!);
    }
    return out;
  }

  /** Hands out the held pieces from stream offset `from` on, in order, as the reassembler would. */
  replay(from: number, fn: (data: Uint8Array, offset: number, frame: number, segStart: boolean, segEnd: boolean) => void): void {
    for (let i = 0; i < this.starts.length; i++) {
      const s = this.starts[i]!;
      const e = i + 1 < this.starts.length ? this.starts[i + 1]! : this.used;
      const off = this.base + s;
      if (this.base + e <= from) continue;
      const skip = Math.max(0, from - off);
      const f = this.segFlags[i]!;
      fn(this.buf.subarray(s + skip, e), off + skip, this.frames[i]!, skip === 0 && (f & 1) !== 0, (f & 2) !== 0);
    }
  }

  /** Forgets everything before stream offset `off` (keeps the buffer, shifts the rest down). */
  dropBefore(off: number, keepCapacity = false): void {
    const k = Math.min(this.used, Math.max(0, off - this.base));
    if (k === 0) return;
    this.buf.copyWithin(0, k, this.used);
    this.used -= k;
    this.base += k;
    let first = 0;
    while (first + 1 < this.starts.length && this.starts[first + 1]! <= k) first++;
    const exact = this.starts[first] === k;
    this.starts.splice(0, first);
    this.frames.splice(0, first);
    this.segFlags.splice(0, first);
    for (let i = 0; i < this.starts.length; i++) this.starts[i] = Math.max(0, this.starts[i]! - k);
    if (this.used === 0) {
      this.starts.length = 0;
      this.frames.length = 0;
      this.segFlags.length = 0;
    } else if (!exact && this.segFlags.length > 0) this.segFlags[0] = this.segFlags[0]! & ~1; // first piece now starts mid-segment
    if (!keepCapacity) this.shrink();
  }
}
