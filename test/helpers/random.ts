/**
 * Seeded random integers for the tests that draw their inputs: the generator's own rng
 * (src/generate/mpa-encoder.ts), so a failure reproduces from its seed.
 */
import { rng } from '../../src/generate/mpa-encoder.js';

/** A function giving integers in [0, n), the same sequence for the same seed. */
export function randomInts(seed: number): (n: number) => number {
  const r = rng(seed);
  return (n) => Math.floor(r() * n);
}
