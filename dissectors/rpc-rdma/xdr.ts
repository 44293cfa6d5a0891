/**
 * A bounded XDR (RFC 4506) reader over the captured octets of one message: big-endian words,
 * opaques padded to 4 octets. It never throws: a read past the captured octets sets `cut` (the
 * capture lacks them) or `overrun` (the message itself is too short), and every later read fails.
 */
export class Xdr {
  pos: number;
  /** Octets past the captured ones were needed (the message is longer than what was captured). */
  cut = false;
  /** Octets past the end of the message were needed: the message is malformed. */
  overrun = false;
  private readonly v: DataView;

  constructor(
    readonly b: Uint8Array,
    pos: number,
    /** Length of the whole message, captured or not. */
    readonly total: number = b.length,
  ) {
    this.v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.pos = pos;
  }

  get failed(): boolean {
    return this.cut || this.overrun;
  }

  /** True when `n` octets can be read from the current position. */
  has(n: number): boolean {
    if (this.failed) return false;
    if (this.pos + n <= this.b.length) return true;
    if (this.pos + n <= Math.max(this.total, this.b.length)) this.cut = true;
    else this.overrun = true;
    return false;
  }

  u32(): number | null {
    if (!this.has(4)) return null;
    const x = this.v.getUint32(this.pos);
    this.pos += 4;
    return x;
  }

  /** Skips `n` octets; false when they are not there. */
  skip(n: number): boolean {
    if (!this.has(n)) return false;
    this.pos += n;
    return true;
  }

  /** Skips a variable-length opaque or string (length word, data, pad); returns its length or null. */
  opaque(max = Number.POSITIVE_INFINITY): number | null {
    const n = this.u32();
    if (n === null) return null;
    if (n > max) {
      this.overrun = true;
      return null;
    }
    return this.skip(pad4(n)) ? n : null;
  }

  /** A string (opaque) as text, at most `max` octets shown; null when not readable. */
  text(max = 64): string | null {
    const start = this.pos + 4;
    const n = this.opaque();
    if (n === null) return null;
    let s = '';
    for (let i = 0; i < Math.min(n, max); i++) {
      const c = this.b[start + i]!;
      s += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '.';
    }
    return n > max ? `${s}…` : s;
  }
}

/** Octets of `n` rounded up to the XDR unit of 4. */
export const pad4 = (n: number): number => n + ((4 - (n % 4)) % 4);
