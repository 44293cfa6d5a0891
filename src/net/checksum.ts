/** Internet checksum (RFC 1071) helpers. */

/** Adds b[start, end) as big-endian 16-bit words (odd tail padded with zero) to `init`; not folded. */
export function sum16(b: Uint8Array, start: number, end: number, init: number): number {
  let s = init;
  let i = start;
  for (; i + 1 < end; i += 2) s += (b[i]! << 8) | b[i + 1]!;
  if (i < end) s += b[i]! << 8;
  return s;
}

/** Folds a sum into 16 bits with end-around carry (not complemented). A correct packet folds to 0xffff. */
export function fold(s: number): number {
  while (s > 0xffff) s = (s % 65536) + Math.floor(s / 65536);
  return s;
}

/** The checksum field value that would make a sum `withoutField` (field counted as 0) correct. */
export function expectedChecksum(withoutField: number): number {
  return ~fold(withoutField) & 0xffff;
}
