/** Power-of-two sizing, shared by the held-data slabs and the history rings (both grow by doubling). */

export function pow2AtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}
