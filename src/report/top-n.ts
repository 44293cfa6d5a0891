/**
 * The `cap` items with the largest keys seen so far, in O(log cap) per item and `cap` items of
 * memory whatever the count: a min-heap whose root is the smallest key kept, replaced when a
 * larger one comes. Ties keep the item seen first, so the same input gives the same output.
 */
interface Slot<T> {
  readonly item: T;
  readonly key: number;
  readonly seq: number;
}

export class TopN<T> {
  private readonly heap: Slot<T>[] = [];
  private seen = 0;

  constructor(readonly cap: number) {}

  /** Items offered so far (kept or not). */
  get offered(): number {
    return this.seen;
  }

  get size(): number {
    return this.heap.length;
  }

  /** Offers `item` under `key` (NaN is never kept). */
  add(item: T, key: number): void {
    const seq = this.seen++;
    if (Number.isNaN(key) || this.cap <= 0) return;
    const h = this.heap;
    if (h.length < this.cap) {
      h.push({ item, key, seq });
      this.up(h.length - 1);
    } else if (key > h[0]!.key) {
      h[0] = { item, key, seq };
      this.down(0);
    }
  }

  /** The items kept, largest key first (ties: first seen first). */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => b.key - a.key || a.seq - b.seq).map((s) => s.item);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && less(h[l]!, h[m]!)) m = l;
      if (r < h.length && less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/** Heap order: the smaller key first; of equal keys the later seen goes first (it is dropped first). */
function less<T>(a: Slot<T>, b: Slot<T>): boolean {
  return a.key < b.key || (a.key === b.key && a.seq > b.seq);
}
