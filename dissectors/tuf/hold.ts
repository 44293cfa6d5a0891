/**
 * Octets of one direction held while TUF framing is looked for or a PDU is incomplete: one
 * contiguous window of the in-order stream, plus which frame carried which octets (kept apart from
 * the octets, so a PDU's frames are known after its octets were let go).
 */
import { pooled } from '../../src/net/bytes.js';
const EMPTY = new Uint8Array(0);

export class Hold {
  private buf: Uint8Array = EMPTY;
  private head = 0;
  private len = 0;
  /** Stream offset of the first held octet. */
  base = 0;
  // Pieces: start, end (of the stream) and the frame that carried them, three numbers each, oldest
  // first; pHead is the index of the first live triple's start.
  private pieces: number[] | null = null;
  private pHead = 0;

  get end(): number {
    return this.base + this.len;
  }

  get length(): number {
    return this.len;
  }

  append(offset: number, data: Uint8Array, frame: number): void {
    if (offset !== this.end) this.reset(offset);
    if (this.buf === EMPTY && data.length < 4096) {
      // The first piece from the shared Buffer pool: 100,000 one-segment flows pay no buffer object each.
      this.buf = pooled(data.length);
    } else if (this.head + this.len + data.length > this.buf.length) {
      if (this.len + data.length <= this.buf.length >> 1 && this.head > 0) {
        this.buf.copyWithin(0, this.head, this.head + this.len);
      } else {
        // Sized to what is held: 100,000 short flows must not each get a large buffer.
        const nb = new Uint8Array(Math.max(64, (this.len + data.length) * 2));
        nb.set(this.buf.subarray(this.head, this.head + this.len));
        this.buf = nb;
      }
      this.head = 0;
    }
    this.buf.set(data, this.head + this.len);
    this.len += data.length;
    if (this.pieces === null) this.pieces = [offset, offset + data.length, frame];
    else this.pieces.push(offset, offset + data.length, frame);
  }

  /** Octet at stream offset o (must be held). */
  at(o: number): number {
    return this.buf[this.head + o - this.base]!;
  }

  u16(o: number): number {
    const i = this.head + o - this.base;
    return (this.buf[i]! << 8) | this.buf[i + 1]!;
  }

  /** The 48-bit value at o (a framing key), as a number (exact below 2^53). */
  u48(o: number): number {
    const i = this.head + o - this.base;
    const b = this.buf;
    return (
      (b[i]! * 0x10000 + ((b[i + 1]! << 8) | b[i + 2]!)) * 0x1000000 +
      ((b[i + 3]! << 16) | (b[i + 4]! << 8) | b[i + 5]!)
    );
  }

  /** A view of held octets [a, b) (valid until the next append or drop). */
  view(a: number, b: number): Uint8Array {
    return this.buf.subarray(this.head + a - this.base, this.head + b - this.base);
  }

  has(a: number, b: number): boolean {
    return a >= this.base && b <= this.end;
  }

  /** Lets go of octets before o (their frames stay known until dropFramesBefore). */
  dropBefore(o: number): void {
    if (o <= this.base) return;
    const n = Math.min(o - this.base, this.len);
    this.head += n;
    this.len -= n;
    this.base += n;
    if (this.len === 0) {
      this.head = 0;
      this.base = o;
    }
  }

  dropFramesBefore(o: number): void {
    const p = this.pieces;
    if (p === null) return;
    while (this.pHead < p.length && p[this.pHead + 1]! <= o) this.pHead += 3;
    if (this.pHead > 768 && this.pHead * 2 > p.length) {
      this.pieces = p.slice(this.pHead);
      this.pHead = 0;
    }
  }

  /** The direction ended: the memory goes too. */
  release(): void {
    this.reset(this.end);
    this.buf = EMPTY;
    this.pieces = null;
    this.pHead = 0;
  }

  /** Everything held goes; the stream continues at offset. */
  reset(offset: number): void {
    this.head = 0;
    this.len = 0;
    this.base = offset;
    this.dropFramesBefore(offset);
  }

  /** Frames that carried octets of [a, b), in order, each once. */
  framesIn(a: number, b: number): number[] {
    const out: number[] = [];
    const p = this.pieces;
    if (p === null) return out;
    for (let i = this.pHead; i < p.length; i += 3) {
      if (p[i + 1]! <= a) continue;
      if (p[i]! >= b) break;
      const f = p[i + 2]!;
      if (!out.includes(f)) out.push(f);
    }
    return out.sort((x, y) => x - y);
  }

  /** Frame that carried offset o, or 0 when not known. */
  frameAt(o: number): number {
    const p = this.pieces;
    if (p === null) return 0;
    for (let i = p.length - 3; i >= this.pHead; i -= 3) if (p[i]! <= o && o < p[i + 1]!) return p[i + 2]!;
    return 0;
  }
}
