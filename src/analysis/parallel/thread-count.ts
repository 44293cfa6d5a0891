/**
 * How many worker threads `--threads` means when not given: one per core besides the core the
 * reading thread keeps busy, for a capture file big enough to repay starting the workers (each
 * loads the dissectors: about 0.1 s of CPU), one thread otherwise. On 2 cores that is one thread:
 * measured there, two workers beside the reader cost about 35% more CPU than one thread and
 * finished no sooner. A pipe, standard input or live capture gets one: its size cannot be known, and
 * a live capture's flows end by timeouts that run on one thread.
 */
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Captures smaller than this are analysed on one thread by default. */
export const THREADS_MIN_BYTES = 32 * 1024 * 1024;
/** The most worker threads the default asks for. */
const MAX_DEFAULT = 16;

export function defaultThreads(capture: string, stream: boolean): number {
  if (stream) return 1;
  let size: number;
  try {
    size = statSync(capture).size;
  } catch {
    return 1;
  }
  if (size < THREADS_MIN_BYTES) return 1;
  const workers = Math.min(MAX_DEFAULT, availableParallelism() - 1);
  return workers >= 2 ? workers : 1;
}
