/**
 * Many flows (issue 8): 100,000 one-segment TCP flows (SYN, SYN-ACK, one data segment each) through
 * the CLI with `-q` and with `--json > /dev/null`, each in its own process under /usr/bin/time:
 * seconds and peak RSS against the target (seconds, < 300 MB). BENCH_FLOWS overrides the count.
 * Prints one line per mode; `--json-out` prints the figures as JSON instead (tests).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateFlowsCapture } from './bench-flows-generate.js';

const here = dirname(fileURLToPath(import.meta.url));
const builtCli = join(here, '..', 'cli', 'main.js');

export interface FlowsRun {
  mode: string;
  code: number | null;
  seconds: number;
  maxRssMB: number;
  stdoutBytes: number;
  /** The last 4 KB of standard output (the report's closing summary). */
  tail: string;
}

/** One CLI run on `file` under /usr/bin/time; stdout counted, not kept. */
export function runFlows(file: string, mode: '-q' | '--json', dir: string, cli = builtCli): FlowsRun {
  const tf = join(dir, 'time.txt');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', tf, process.execPath, cli, mode, file], {
    maxBuffer: 512 * 1024 * 1024,
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
    timeout: 300_000,
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const kb = Number(readFileSync(tf, 'utf8').trim().split('\n').pop());
  return {
    mode,
    code: r.status,
    seconds,
    maxRssMB: kb / 1024,
    stdoutBytes: r.stdout?.length ?? 0,
    tail: r.stdout ? r.stdout.subarray(Math.max(0, r.stdout.length - 4096)).toString('utf8') : '',
  };
}

if (process.argv[1]?.endsWith('bench-flows.js')) {
  const n = Number(process.env['BENCH_FLOWS'] ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'mpa-dissect-flows-'));
  try {
    const file = join(dir, 'flows.pcap');
    await generateFlowsCapture(file, n);
    for (const mode of ['-q', '--json'] as const) {
      const r = runFlows(file, mode, dir);
      console.log(
        `${n} one-segment flows, ${mode.padEnd(6)}: ${r.seconds.toFixed(1)} s, peak RSS ${r.maxRssMB.toFixed(0)} MB, exit ${r.code}` +
          `  [RSS < 300 MB: ${r.maxRssMB < 300 ? 'met' : 'NOT met'}; < 20 s: ${r.seconds < 20 ? 'met' : 'NOT met'}]`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
