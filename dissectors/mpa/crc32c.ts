/**
 * CRC-32C (Castagnoli), as MPA uses it (RFC 5044 §4.4; draft-ietf-rddp-mpa-00 §7.2): reflected
 * polynomial 0x82F63B78, initial value 0xFFFFFFFF, final xor 0xFFFFFFFF. Slicing-by-8 so the hot
 * path runs at memory-ish speed without a native module.
 */
const POLY = 0x82f63b78;
const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  for (let k = 1; k < 8; k++) {
    const prev = T[(k - 1) * 256 + n]!;
    T[k * 256 + n] = (prev >>> 8) ^ T[prev & 0xff]!;
  }
}

/** The register's value before any data. */
export const CRC32C_INIT = 0xffffffff | 0;

/** Feeds buf[start, end) into a running CRC register (not yet finalized). */
export function crc32cUpdate(reg: number, buf: Uint8Array, start: number, end: number): number {
  let c = reg | 0;
  let i = start;
  const end8 = end - 8;
  while (i <= end8) {
    c ^= buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24);
    const hi = buf[i + 4]! | (buf[i + 5]! << 8) | (buf[i + 6]! << 16) | (buf[i + 7]! << 24);
    c =
      T[1792 + (c & 0xff)]! ^
      T[1536 + ((c >>> 8) & 0xff)]! ^
      T[1280 + ((c >>> 16) & 0xff)]! ^
      T[1024 + (c >>> 24)]! ^
      T[768 + (hi & 0xff)]! ^
      T[512 + ((hi >>> 8) & 0xff)]! ^
      T[256 + ((hi >>> 16) & 0xff)]! ^
      T[hi >>> 24]!;
    i += 8;
  }
  for (; i < end; i++) c = T[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return c;
}

/** Final CRC value (unsigned) from a register. */
export function crc32cFinal(reg: number): number {
  return (reg ^ 0xffffffff) >>> 0;
}

/** CRC-32C of a whole buffer. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  return crc32cFinal(crc32cUpdate(CRC32C_INIT, buf, start, end));
}

/** Reads the CRC field as it travels: least significant octet first (SPEC-NOTES "Wire byte order"). */
export function readWireCrc(b0: number, b1: number, b2: number, b3: number): number {
  return (b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)) >>> 0;
}

export function byteSwap32(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}
