/**
 * The out-of-order pieces of one TCP direction, sorted by stream offset and disjoint, in chunks of
 * at most 2 * CHUNK entries. A plain sorted array costs O(n) per insertion away from its end, which
 * made 200,000 one-octet segments in reverse order take quadratic time; here an insertion anywhere is
 * a binary search plus a move of at most 2 * CHUNK entries (amortized O(log n)), and taking the first
 * piece, inserting before it or appending after the last is O(1).
 */

/** What the queue needs of a piece: its stream range [off, end). */
export interface Piece {
  off: number;
  end: number;
}

const CHUNK = 256;

export class HeldQueue<T extends Piece> {
  /** Non-empty chunks in offset order; the first one is live from index `head`. */
  private chunks: T[][] = [];
  private head = 0;
  size = 0;

  first(): T | null {
    return this.size === 0 ? null : this.chunks[0]![this.head]!;
  }

  last(): T | null {
    if (this.size === 0) return null;
    const c = this.chunks[this.chunks.length - 1]!;
    return c[c.length - 1]!;
  }

  /** Removes and returns the first piece (the queue must not be empty). */
  shift(): T {
    const c = this.chunks[0]!;
    const x = c[this.head]!;
    this.head++;
    this.size--;
    if (this.head === c.length) {
      this.chunks.shift();
      this.head = 0;
    }
    return x;
  }

  /** Removes and returns the last piece (the queue must not be empty). */
  pop(): T {
    const ci = this.chunks.length - 1;
    const c = this.chunks[ci]!;
    const x = c.pop()!;
    this.size--;
    if (c.length === (ci === 0 ? this.head : 0)) {
      this.chunks.pop();
      if (ci === 0) this.head = 0;
    }
    return x;
  }

  /** The first piece ending after x (the one containing x, or the next one after it), or null. */
  ceilEnd(x: number): T | null {
    if (this.size === 0) return null;
    const chunks = this.chunks;
    const lc = chunks[chunks.length - 1]!;
    if (lc[lc.length - 1]!.end <= x) return null; // common case: beyond everything held
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = chunks[mid]!;
      if (c[c.length - 1]!.end <= x) lo = mid + 1;
      else hi = mid;
    }
    const c = chunks[lo]!;
    let a = lo === 0 ? this.head : 0;
    let b = c.length - 1;
    while (a < b) {
      const m = (a + b) >> 1;
      if (c[m]!.end <= x) a = m + 1;
      else b = m;
    }
    return c[a]!;
  }

  /** Inserts a piece disjoint from every piece held. */
  insert(p: T): void {
    const chunks = this.chunks;
    this.size++;
    if (chunks.length === 0) {
      chunks.push([p]);
      this.head = 0;
      return;
    }
    const lc = chunks[chunks.length - 1]!;
    if (lc[lc.length - 1]!.off < p.off) {
      // After everything held (in-order arrival beyond a hole): append.
      if (lc.length - (chunks.length === 1 ? this.head : 0) < 2 * CHUNK) lc.push(p);
      else chunks.push([p]);
      return;
    }
    // The first chunk whose last piece lies after p.
    let lo = 0;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = chunks[mid]!;
      if (c[c.length - 1]!.off < p.off) lo = mid + 1;
      else hi = mid;
    }
    const c = chunks[lo]!;
    const from = lo === 0 ? this.head : 0;
    let a = from;
    let b = c.length - 1;
    while (a < b) {
      const m = (a + b) >> 1;
      if (c[m]!.off < p.off) a = m + 1;
      else b = m;
    }
    if (lo === 0 && a === this.head) {
      if (this.head > 0) {
        c[--this.head] = p; // before the first piece, into a slot already delivered
        return;
      }
      if (c.length >= CHUNK) {
        // Before a full first chunk: a new first chunk filled from its end, so that arrivals in
        // reverse order take a free slot each instead of moving up to 2 * CHUNK entries. Its
        // slots before `head` count as delivered; they hold p only to keep the array packed.
        const n = new Array<T>(CHUNK).fill(p);
        chunks.unshift(n);
        this.head = CHUNK - 1;
        return;
      }
    }
    c.splice(a, 0, p);
    if (c.length - from > 2 * CHUNK) {
      if (from > 0) {
        c.splice(0, from);
        this.head = 0;
      }
      chunks.splice(lo + 1, 0, c.splice(CHUNK));
    }
  }

  /** Every piece in offset order. */
  forEach(fn: (p: T) => void): void {
    for (let ci = 0; ci < this.chunks.length; ci++) {
      const c = this.chunks[ci]!;
      for (let i = ci === 0 ? this.head : 0; i < c.length; i++) fn(c[i]!);
    }
  }
}
