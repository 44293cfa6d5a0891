/**
 * Octets of one direction held while TUF framing is looked for or a PDU is incomplete: one
 * contiguous window of the in-order stream, plus which frame carried which octets (kept apart from
 * the octets, so a PDU's frames are known after its octets were let go).
 */
export class Hold {
  private buf = new Uint8Array(0);
  private head = 0;
  private len = 0;
  /** Stream offset of the first held octet. */
  base = 0;
  // Pieces: [start, end) of the stream and the frame that carried it, oldest first.
  private pStart: number[] = [];
  private pEnd: number[] = [];
  private pFrame: number[] = [];
  private pHead = 0;

  get end(): number {
    return this.base + this.len;
  }

  get length(): number {
    return this.len;
  }

  append(offset: number, data: Uint8Array, frame: number): void {
    if (offset !== this.end) this.reset(offset);
    if (this.head + this.len + data.length > this.buf.length) {
      if (this.len + data.length <= this.buf.length >> 1 && this.head > 0) {
        this.buf.copyWithin(0, this.head, this.head + this.len);
      } else {
        const nb = new Uint8Array(Math.max(4096, (this.len + data.length) * 2));
        nb.set(this.buf.subarray(this.head, this.head + this.len));
        this.buf = nb;
      }
      this.head = 0;
    }
    this.buf.set(data, this.head + this.len);
    this.len += data.length;
    this.pStart.push(offset);
    this.pEnd.push(offset + data.length);
    this.pFrame.push(frame);
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
    return (b[i]! * 0x10000 + ((b[i + 1]! << 8) | b[i + 2]!)) * 0x1000000 + ((b[i + 3]! << 16) | (b[i + 4]! << 8) | b[i + 5]!);
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
    while (this.pHead < this.pStart.length && this.pEnd[this.pHead]! <= o) this.pHead++;
    if (this.pHead > 256 && this.pHead * 2 > this.pStart.length) {
      this.pStart = this.pStart.slice(this.pHead);
      this.pEnd = this.pEnd.slice(this.pHead);
      this.pFrame = this.pFrame.slice(this.pHead);
      this.pHead = 0;
    }
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
    for (let i = this.pHead; i < this.pStart.length; i++) {
      if (this.pEnd[i]! <= a) continue;
      if (this.pStart[i]! >= b) break;
      const f = this.pFrame[i]!;
      if (!out.includes(f)) out.push(f);
    }
    return out.sort((x, y) => x - y);
  }

  /** Frame that carried offset o, or 0 when not known. */
  frameAt(o: number): number {
    for (let i = this.pStart.length - 1; i >= this.pHead; i--) if (this.pStart[i]! <= o && o < this.pEnd[i]!) return this.pFrame[i]!;
    return 0;
  }
}
