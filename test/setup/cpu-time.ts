/**
 * Setup file of the e2e project, whose worker processes run one file at a time: the CPU time the
 * worker and the processes it waited for (the CLI, tshark, tcpdump) took from a file's start to its
 * end, from /proc/self/stat, is left for the summary reporter (test/setup/summary-reporter.ts). On
 * a shared machine a file's wall time says how busy the machine was; its CPU time what it costs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { CPU_DIR_ENV } from './cpu-dir.js';

/** user + system CPU seconds of this process and of its waited-for children, or null off Linux. */
export function processTreeCpu(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis: state is field 3; utime..cstime are 14..17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((s, i) => s + Number(f[i]), 0);
    return ticks / 100; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

// Evaluated again before each file (setup files are), so importing the file is counted too.
const start = processTreeCpu();
let file = '';
beforeAll(() => {
  file = expect.getState().testPath ?? '';
});
afterAll(() => {
  const dir = process.env[CPU_DIR_ENV];
  const end = processTreeCpu();
  if (!dir || end === null || start === null || file === '') return;
  const cpu = end - start;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${encodeURIComponent(file)}.json`), JSON.stringify({ file, cpu }));
});
