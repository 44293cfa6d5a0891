/**
 * --jobs and --threads bounded by what the machine has (issue 26 A): a request above the bound is
 * lowered with one line saying why, and worker threads start only as flows reach them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { boundWorkers } from '../../cli/worker-limits.js';
import { CAPTURES, CLI, cli, requireBuilt } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-worker-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const GB = 2 ** 30;

describe('boundWorkers', () => {
  it('twice the cores, at least 4: a request above is lowered and the line says why', () => {
    expect(boundWorkers('--jobs', 1024, { cores: 2, freeBytes: 20 * GB })).toEqual({
      workers: 4,
      note: 'mpa-dissect: --jobs 1024: lowered to 4: this machine has 2 cores, and more than 4 workers would only wait for them\n',
    });
    expect(boundWorkers('--threads', 64, { cores: 16, freeBytes: 64 * GB }).workers).toBe(32);
    expect(boundWorkers('--threads', 3, { cores: 1, freeBytes: 8 * GB })).toEqual({ workers: 3, note: null });
    // Never more than the run can use (its captures), without a word.
    expect(boundWorkers('--jobs', 1024, { cores: 2, freeBytes: 20 * GB }, 3)).toEqual({ workers: 3, note: null });
    expect(boundWorkers('--jobs', 1024, { cores: 2, freeBytes: 20 * GB }, 300).note).toMatch(
      /^mpa-dissect: --jobs 1024: lowered to 4: /,
    );
  });

  it('half the free memory: 64 MB a job, 16 MB a thread, never below 1', () => {
    const jobs = boundWorkers('--jobs', 100, { cores: 64, freeBytes: GB });
    expect(jobs.workers).toBe(8);
    expect(jobs.note).toBe(
      'mpa-dissect: --jobs 100: lowered to 8: half of the 1.0 GB of free memory holds 8 (a worker needs about 64 MB)\n',
    );
    expect(boundWorkers('--threads', 64, { cores: 64, freeBytes: GB }).workers).toBe(32);
    expect(boundWorkers('--threads', 64, { cores: 64, freeBytes: 1 }).workers).toBe(1);
  });
});

/** Peak RSS of a CLI run, in MB (/usr/bin/time). */
function peakRss(args: readonly string[]): { code: number | null; stderr: string; mb: number } {
  requireBuilt();
  const tf = join(tmp, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-f', '%M', '-o', tf, process.execPath, CLI, ...args], {
    cwd: CAPTURES,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
    timeout: 120_000,
  });
  return { code: r.status, stderr: r.stderr, mb: Number(readFileSync(tf, 'utf8').trim().split('\n').pop()) / 1024 };
}

describe('through the CLI', () => {
  it('--threads 64 on a capture of one connection starts one worker: bounded memory (was 787 MB)', () => {
    const r = peakRss(['-q', '--threads', '64', '--ulp', 'flow=all,proto=none', 'sample.pcap']);
    expect(r.code).toBe(0);
    expect(r.mb).toBeLessThan(250);
    const bound = Math.max(4, 2 * availableParallelism());
    if (bound < 64) expect(r.stderr).toMatch(/^mpa-dissect: --threads 64: lowered to \d+: .*\n$/);
  });

  it('--jobs 1024 over 40 captures: never more workers than captures or than the machine holds', () => {
    const d = join(tmp, 'forty');
    mkdirSync(d);
    for (let i = 0; i < 40; i++)
      symlinkSync(join(CAPTURES, 'sample.pcap'), join(d, `c${String(i).padStart(2, '0')}.pcap`));
    const r = peakRss(['-q', '--jobs', '1024', d]);
    expect(r.code).toBe(0);
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines.length).toBeLessThanOrEqual(1);
    for (const l of lines) expect(l).toMatch(/^mpa-dissect: --jobs 1024: lowered to \d+: /);
    expect(r.mb).toBeLessThan(900);
  });

  it('--jobs abc and --threads x: "not a number", never NaN', () => {
    for (const [flag, v] of [
      ['--jobs', 'abc'],
      ['--threads', 'x'],
    ] as const) {
      const r = cli([flag, v, 'sample.pcap']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^mpa-dissect: ${flag}: not a number: give a whole number .*\\n$`));
    }
  });
});
