/**
 * The worker pool behind several captures (cli/worker-pool.ts), with a real worker script: at
 * most `size` jobs at once, workers reused, each job's own result whatever the finishing order,
 * and a worker that dies failing its job only.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../cli/worker-pool.js';

interface Job {
  id: number;
  ms: number;
  /** [running now, most running at once], shared by every worker. */
  gauge: Int32Array;
  die?: 'exit' | 'throw';
}
interface Result {
  id: number;
  thread: number;
}

const SCRIPT = `
import { parentPort, threadId } from 'node:worker_threads';
parentPort.on('message', async (job) => {
  const now = Atomics.add(job.gauge, 0, 1) + 1;
  for (let seen = Atomics.load(job.gauge, 1); now > seen; seen = Atomics.load(job.gauge, 1)) Atomics.compareExchange(job.gauge, 1, seen, now);
  await new Promise((r) => setTimeout(r, job.ms));
  Atomics.sub(job.gauge, 0, 1);
  if (job.die === 'exit') process.exit(3);
  if (job.die === 'throw') throw new Error('boom in the worker');
  parentPort.postMessage({ id: job.id, thread: threadId });
});
`;

let dir: string;
let script: URL;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-pool-test-'));
  const path = join(dir, 'worker.mjs');
  writeFileSync(path, SCRIPT);
  script = pathToFileURL(path);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gauge = (): Int32Array => new Int32Array(new SharedArrayBuffer(8));

describe('WorkerPool', () => {
  // "Most at once is 2" needs the second worker to start while the first still has work (155 ms of
  // jobs): on a loaded machine a thread can start later than that. Another try, not a weaker check.
  it('runs at most size jobs at once, reuses its workers, and gives each job its own result', {
    retry: 2,
  }, async () => {
    const pool = new WorkerPool<Job, Result>(script, 2);
    const g = gauge();
    try {
      // Later jobs are quicker: they finish before earlier ones.
      const jobs = [80, 60, 40, 20, 10, 5].map((ms, id) => ({ id, ms, gauge: g }));
      const results = await Promise.all(jobs.map((j) => pool.run(j)));
      expect(results.map((r) => r.id)).toEqual([0, 1, 2, 3, 4, 5]);
      expect(Atomics.load(g, 1)).toBe(2);
      expect(new Set(results.map((r) => r.thread)).size).toBeLessThanOrEqual(2);
    } finally {
      await pool.close();
    }
  });

  it('a worker that exits or throws fails its own job; the jobs after it run on a new worker', async () => {
    const pool = new WorkerPool<Job, Result>(script, 1);
    const g = gauge();
    try {
      const a = pool.run({ id: 0, ms: 1, gauge: g });
      const b = pool.run({ id: 1, ms: 1, gauge: g, die: 'exit' });
      const c = pool.run({ id: 2, ms: 1, gauge: g, die: 'throw' });
      const d = pool.run({ id: 3, ms: 1, gauge: g });
      await expect(a).resolves.toMatchObject({ id: 0 });
      await expect(b).rejects.toThrow(/worker exited with status 3/);
      await expect(c).rejects.toThrow(/boom in the worker/);
      const last = await d;
      expect(last.id).toBe(3);
      expect(last.thread).not.toBe((await a).thread);
    } finally {
      await pool.close();
    }
  });

  it('close() fails the jobs still waiting and stops the workers', async () => {
    const pool = new WorkerPool<Job, Result>(script, 1);
    const g = gauge();
    const outcome = (p: Promise<Result>): Promise<unknown> =>
      p.then(
        (r) => r,
        (e: unknown) => e,
      );
    const running = outcome(pool.run({ id: 0, ms: 200, gauge: g }));
    const waiting = outcome(pool.run({ id: 1, ms: 1, gauge: g }));
    await new Promise((r) => setTimeout(r, 50));
    await pool.close();
    expect(await waiting).toEqual(new Error('the pool was closed'));
    expect(await running).toBeInstanceOf(Error);
  });

  it('refuses a size that is not a whole number of at least 1', () => {
    expect(() => new WorkerPool(script, 0)).toThrow(RangeError);
    expect(() => new WorkerPool(script, 1.5)).toThrow(RangeError);
  });
});
