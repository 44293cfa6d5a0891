/**
 * Address text: dotted quad for IPv4, RFC 5952 canonical text for IPv6, and a small cache so a
 * capture's few hosts are formatted once rather than once per packet.
 */

/** Dotted quad of the 4 bytes at b[off]. */
export function ipv4Text(b: Uint8Array, off: number): string {
  return `${b[off]!}.${b[off + 1]!}.${b[off + 2]!}.${b[off + 3]!}`;
}

/**
 * RFC 5952 text of the 16 bytes at b[off]: lowercase hex without leading zeros, the longest run
 * of two or more zero groups (the first on a tie) written as "::", IPv4-mapped addresses as
 * ::ffff:a.b.c.d (section 5).
 */
export function ipv6Text(b: Uint8Array, off: number): string {
  const w: number[] = [];
  for (let i = 0; i < 8; i++) w.push((b[off + 2 * i]! << 8) | b[off + 2 * i + 1]!);
  if (w[0] === 0 && w[1] === 0 && w[2] === 0 && w[3] === 0 && w[4] === 0 && w[5] === 0xffff) {
    return `::ffff:${ipv4Text(b, off + 12)}`;
  }
  let bestAt = -1;
  let bestLen = 1; // a single zero group is not compressed
  for (let i = 0; i < 8; ) {
    if (w[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && w[j] === 0) j++;
    if (j - i > bestLen) {
      bestAt = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number): string =>
    w
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(':');
  if (bestAt < 0) return hex(0, 8);
  return `${hex(0, bestAt)}::${hex(bestAt + bestLen, 8)}`;
}

const V4_CACHE_MAX = 4096;
const V6_SLOTS = 16;

/** Caches address text per address (a capture has few hosts; building strings per packet would not be cheap). */
export class AddressCache {
  private readonly v4 = new Map<number, string>();
  /** Ring of recent IPv6 addresses: 4 words each, with their text. */
  private readonly v6Words = new Int32Array(V6_SLOTS * 4);
  private readonly v6Text: string[] = new Array<string>(V6_SLOTS).fill('');
  private v6Used = 0;
  private v6Next = 0;

  ipv4(b: Uint8Array, off: number): string {
    const k = (b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!;
    let s = this.v4.get(k);
    if (s === undefined) {
      if (this.v4.size >= V4_CACHE_MAX) this.v4.clear();
      s = ipv4Text(b, off);
      this.v4.set(k, s);
    }
    return s;
  }

  ipv6(b: Uint8Array, off: number): string {
    const w0 = (b[off]! << 24) | (b[off + 1]! << 16) | (b[off + 2]! << 8) | b[off + 3]!;
    const w1 = (b[off + 4]! << 24) | (b[off + 5]! << 16) | (b[off + 6]! << 8) | b[off + 7]!;
    const w2 = (b[off + 8]! << 24) | (b[off + 9]! << 16) | (b[off + 10]! << 8) | b[off + 11]!;
    const w3 = (b[off + 12]! << 24) | (b[off + 13]! << 16) | (b[off + 14]! << 8) | b[off + 15]!;
    const words = this.v6Words;
    for (let i = 0; i < this.v6Used; i++) {
      const j = i * 4;
      if (words[j + 3] === w3 && words[j] === w0 && words[j + 1] === w1 && words[j + 2] === w2) return this.v6Text[i]!;
    }
    const slot = this.v6Next;
    this.v6Next = (slot + 1) % V6_SLOTS;
    if (this.v6Used < V6_SLOTS) this.v6Used++;
    words[slot * 4] = w0;
    words[slot * 4 + 1] = w1;
    words[slot * 4 + 2] = w2;
    words[slot * 4 + 3] = w3;
    const s = ipv6Text(b, off);
    this.v6Text[slot] = s;
    return s;
  }
}
