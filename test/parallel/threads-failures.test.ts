/**
 * What goes wrong with worker threads ends as it does with one thread, or as one line, never a
 * hang: a worker that throws or exits (a copy of dist/ whose worker script is replaced, so the
 * real main thread meets a real failing thread), an output that goes away (| head, EPIPE) or
 * fills up (/dev/full).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, renameSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, cli, ROOT, requireBuilt } from '../cli/helpers.js';
import { generateManyMpaFlows } from '../../scripts/bench-threads-generate.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-threads-fail-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const capture = join(tmp, 'flows.pcap');
generateManyMpaFlows(capture, { flows: 30, concurrent: 10, fpdus: 5 });

const WORKER = 'dist/src/analysis/parallel/flow-worker.js';

/** A copy of the built CLI whose worker script is `source` (the real one stays as flow-worker-real.js). */
function brokenCli(name: string, source: string): string {
  requireBuilt();
  const root = join(tmp, name);
  cpSync(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  renameSync(join(root, WORKER), join(root, 'dist/src/analysis/parallel/flow-worker-real.js'));
  writeFileSync(join(root, WORKER), source);
  return join(root, 'dist/cli/main.js');
}

function runCli(main: string, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [main, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Upper layers above RDMAP (SMB Direct, RPC-over-RDMA) are decoded on one thread, so the worker
 * machinery runs only when they are off: every run here that should start workers says so.
 */
const NO_ULP = ['--ulp', 'flow=all,proto=none'];

describe('a worker thread that fails', () => {
  it('throwing as it starts: one line, exit 2', () => {
    const main = brokenCli('throws', "throw new Error('injected fault');\n");
    const r = runCli(main, ['-q', capture, '--threads', '2', ...NO_ULP]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: worker thread \d failed: injected fault\n$/);
  });

  it('throwing at the end of the capture, after dissecting every segment: one line, exit 2', () => {
    const main = brokenCli(
      'throws-at-finish',
      [
        "import { parentPort } from 'node:worker_threads';",
        "parentPort.on('message', (m) => { if (m.t === 'finish') throw new Error('injected fault at the end'); });",
        "await import('./flow-worker-real.js');",
      ].join('\n'),
    );
    const r = runCli(main, ['--json', capture, '--threads', '2', ...NO_ULP]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: worker thread \d failed: injected fault at the end\n$/);
    expect(r.stdout).toBe(''); // no half report
  });

  it('exiting without a word: one line, exit 2, no hang', () => {
    const main = brokenCli(
      'exits',
      "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(7));\n",
    );
    const r = runCli(main, ['-q', capture, '--threads', '3', ...NO_ULP]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: worker thread \d stopped \(exit code 7\) before the analysis ended\n$/);
  });

  it('with --threads 1 no worker is started (the broken worker is never loaded)', () => {
    const main = brokenCli('unused', "throw new Error('injected fault');\n");
    const r = runCli(main, ['-q', capture, '--threads', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(cli(['-q', capture, '--threads', '1']).stdout);
  });
});

describe('outputs that fail, with threads as with one', () => {
  const shell = (cmd: string) =>
    spawnSync('bash', ['-c', cmd], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
    });
  for (const threads of [1, 2]) {
    it(`--threads ${threads}: a reader that goes away (| head) ends the run quietly, exit 0`, () => {
      const err = join(tmp, `head-${threads}.err`);
      const r = shell(
        `node ${CLI} -V ${capture} --threads ${threads} ${NO_ULP.join(' ')} 2> ${err} | head -c 100 > /dev/null; echo "status \${PIPESTATUS[0]}"`,
      );
      expect(r.stdout.trim()).toBe('status 0');
      expect(readFileSync(err, 'utf8')).toBe('');
    });
  }
  it('a full output (/dev/full): the same one line and exit 2 as with one thread', () => {
    const one = shell(`node ${CLI} -V ${capture} --threads 1 2>&1 > /dev/full; echo "status $?"`);
    const two = shell(`node ${CLI} -V ${capture} --threads 2 ${NO_ULP.join(' ')} 2>&1 > /dev/full; echo "status $?"`);
    expect(one.stdout).toMatch(/^mpa-dissect: .*\nstatus 2\n$/);
    expect(two.stdout).toBe(one.stdout);
  });
});

describe('--threads usage', () => {
  it('rejects a count that is not a whole number from 1 to 64', () => {
    for (const bad of ['0', '1.5', '65', 'x']) {
      const r = cli([capture, '--threads', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--threads/);
    }
  });
  it('standard input with --threads 2 gives the same output as with one thread', () => {
    const input = spawnSync('cat', [capture]).stdout;
    const r = cli(['-', '-x', '--threads', '2'], { input });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(cli(['-', '-x', '--threads', '1'], { input }).stdout);
  });
});
