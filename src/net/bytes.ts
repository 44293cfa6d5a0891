/** Big-endian (network order) reads from byte arrays, without a DataView per packet. */

export function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}

export function u32(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
}
