/** Big-endian (network order) reads from byte arrays, without a DataView per packet. */

export function u16(b: Uint8Array, i: number): number {
  return (b[i]! << 8) | b[i + 1]!;
}

export function u32(b: Uint8Array, i: number): number {
  return ((b[i]! << 24) | (b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!) >>> 0;
}

/**
 * n octets of Node's shared Buffer pool, as a plain Uint8Array: Buffer's own slice() is a view, and
 * records sliced from such a log (Private Data, ULPDU heads) must own their octets, since the log's
 * memory is reused and records outlive it (worker threads send them on after later segments).
 */
export function pooled(n: number): Uint8Array {
  const b = Buffer.allocUnsafe(n);
  return new Uint8Array(b.buffer, b.byteOffset, n);
}
