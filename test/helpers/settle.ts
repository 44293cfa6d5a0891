import { availableParallelism, loadavg } from 'node:os';

/**
 * A pause for packets already sent to reach the capture, stretched by how loaded the machine is
 * (load average per core, at most 8 times): as long as before on a quiet machine, and enough for
 * the last segments on a busy one (the suite runs several files at once, beside other work).
 */
export function settle(ms: number): Promise<void> {
  const factor = Math.min(8, Math.max(1, loadavg()[0]! / availableParallelism()));
  return new Promise((r) => setTimeout(r, Math.round(ms * factor)));
}
