/**
 * How many worker threads a run may start, by what the machine has: `--jobs 1024` over 300 small
 * captures took 2.2 GB and `--threads 64` 787 MB on an 8 KB capture. A request above the bound is
 * lowered to it with one line on standard error saying why. The bound is twice the cores (a worker
 * waiting for its input leaves its core to another), at least 4 (so that outputs over several
 * workers can be compared on any machine), and no more than half the free memory holds.
 */
import { availableParallelism, freemem } from 'node:os';

/** What a worker costs before it has read anything: the dissectors loaded in a V8 isolate (measured: 12-14 MB). */
const THREAD_BYTES = 16 * 1024 * 1024;
/** A capture's worker under --jobs also holds that capture's analysis: reassembly buffers, flow state. */
const JOB_BYTES = 64 * 1024 * 1024;

export interface Machine {
  cores: number;
  freeBytes: number;
}

export function thisMachine(): Machine {
  return { cores: availableParallelism(), freeBytes: freemem() };
}

/**
 * The number of workers to start for `requested`, and the line saying it was lowered (null when
 * it was not). `flag` names the option; `useful`: the most workers the run could keep busy (its
 * captures, for --jobs), taken without a word.
 */
export function boundWorkers(
  flag: '--jobs' | '--threads',
  requested: number,
  m: Machine = thisMachine(),
  useful = Number.POSITIVE_INFINITY,
): { workers: number; note: string | null } {
  const perWorker = flag === '--jobs' ? JOB_BYTES : THREAD_BYTES;
  const byCores = Math.max(4, 2 * m.cores);
  const byMemory = Math.max(1, Math.floor(m.freeBytes / 2 / perWorker));
  const bound = Math.min(byCores, byMemory);
  const wanted = Math.min(requested, useful);
  if (wanted <= bound) return { workers: wanted, note: null };
  const gb = (m.freeBytes / 2 ** 30).toFixed(1);
  const why =
    byMemory < byCores
      ? `half of the ${gb} GB of free memory holds ${byMemory} (a worker needs about ${perWorker >> 20} MB)`
      : `this machine has ${m.cores} ${m.cores === 1 ? 'core' : 'cores'}, and more than ${byCores} workers would only wait for them`;
  return {
    workers: bound,
    note: `mpa-dissect: ${flag} ${requested}: lowered to ${bound}: ${why}\n`,
  };
}
