/**
 * CRC-32C of any span of a buffer in constant time, from prefix CRCs: the boundary search checks the
 * CRC of a candidate FPDU at every offset of held bytes, and hashing each candidate's bytes anew made
 * that search quadratic (every offset of 200 KB of garbage hashed up to 64 KB).
 *
 * CRC is linear: crc(A || B) = crc(A) * x^(8|B|) + crc(B) over GF(2) mod the polynomial (zlib's
 * crc32_combine), so with F[k] = crc(bytes[0, k)), crc(bytes[i, j)) = F[j] + F[i] * x^(8(j - i)).
 */
const POLY = 0x82f63b78;
const T = new Int32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}

/** Longest span `span()` takes: an FPDU without markers (2 + 64768 + 3 octets of length, ULPDU, PAD) fits. */
export const MAX_SPAN = (1 << 17) - 1;

/** a * b mod P over GF(2), both reflected; a must not be 0 (zlib's multmodp). Slow: tables only. */
function mulmod(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p;
}

const SHIFT_BITS = 17; // shifts up to 2^17 - 1 octets
/**
 * SHIFT[k * 1024 + j * 256 + c]: the octet c at byte j of a register, times x^(8 * 2^k). Multiplying a
 * register by x^(8m) is then one 4-lookup step per set bit of m. Built on first use (about 70 KB).
 */
let SHIFT: Int32Array | null = null;

function shiftTable(): Int32Array {
  if (SHIFT !== null) return SHIFT;
  const t = new Int32Array(SHIFT_BITS * 1024);
  let c = 0x80000000 | 0; // x^0
  for (let k = 0; k < SHIFT_BITS; k++) {
    // c = x^(8 * 2^k): from x^(8 * 2^(k-1)) squared (k = 0: one zero octet through the register)
    c = k === 0 ? T[c & 0xff]! ^ (c >>> 8) : mulmod(c, c);
    for (let j = 0; j < 4; j++) {
      for (let v = 0; v < 256; v++) t[k * 1024 + j * 256 + v] = mulmod(c, (v << (8 * j)) >>> 0);
    }
  }
  SHIFT = t;
  return t;
}

/** reg times x^(8m) mod P: the register after m zero octets (reflected). */
function shift(reg: number, m: number): number {
  const t = shiftTable();
  for (let k = 0; m !== 0; k++, m >>>= 1) {
    if (m & 1) {
      const o = k * 1024;
      reg =
        t[o + (reg & 0xff)]! ^
        t[o + 256 + ((reg >>> 8) & 0xff)]! ^
        t[o + 512 + ((reg >>> 16) & 0xff)]! ^
        t[o + 768 + (reg >>> 24)]!;
    }
  }
  return reg;
}

/**
 * Prefix CRCs of one buffer. One scratch instance can be reused for any buffer (no allocation once
 * it has grown to the largest buffer seen).
 */
export class CrcPrefix {
  private f = new Int32Array(0);
  private from = 0;
  private to = 0;

  /** Prefixes of buf[from, to) (indices into buf); returns the octets hashed. */
  cover(buf: Uint8Array, from: number, to: number): number {
    const n = to - from;
    if (this.f.length < n + 1) this.f = new Int32Array(Math.max(n + 1, this.f.length * 2, 4096));
    const f = this.f;
    let reg = ~0;
    f[0] = 0;
    for (let k = 0; k < n; k++) {
      reg = T[(reg ^ buf[from + k]!) & 0xff]! ^ (reg >>> 8);
      f[k + 1] = ~reg;
    }
    this.from = from;
    this.to = to;
    return n;
  }

  /** CRC-32C (finalized, unsigned) of buf[i, j), from <= i <= j <= to, j - i <= MAX_SPAN. */
  span(i: number, j: number): number {
    const fi = this.f[i - this.from]!;
    const fj = this.f[j - this.from]!;
    return (fj ^ shift(fi, j - i)) >>> 0;
  }

  /** Covered range, for callers that check before asking. */
  covers(i: number, j: number): boolean {
    return i >= this.from && j <= this.to && j - i <= MAX_SPAN;
  }
}
