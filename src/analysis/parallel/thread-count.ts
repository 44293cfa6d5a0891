/**
 * How many worker threads `--threads` means when not given: every core for a capture file big
 * enough to repay starting the workers (each loads the dissectors, tens of milliseconds), one
 * thread otherwise. A pipe, standard input or live capture gets one: its size cannot be known, and
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
  return Math.max(1, Math.min(MAX_DEFAULT, availableParallelism()));
}
