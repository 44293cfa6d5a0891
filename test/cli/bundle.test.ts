/**
 * The bundled command (scripts/bundle.ts, `npm run build`): what a plain run loads stays the entry,
 * the code-cache loader, the startup chunk and rolldown's helpers, so a module that joins the plain
 * run's path behind a dynamic import (a file opened at every start) is seen here; V8 takes the
 * build's code caches, and a run without them, or with caches it rejects, says the same. Skipped,
 * with the reason, when dist/ was built by tsc alone (it then runs module by module).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURES, CLI, ROOT } from './helpers.js';

const DIST = join(ROOT, 'dist');
const bundled = existsSync(CLI) && readFileSync(CLI, 'utf8').includes('// bundled by scripts/bundle.ts');

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The files of dist/ the run loaded, without their hash: ES modules as Node's loader names them (NODE_DEBUG=esm), the bundle's CommonJS files as cli/code-cache.ts does (NODE_DEBUG=mpa-dissect). */
  readonly files: string[];
  /** What became of each CommonJS file's cache, in every thread: 'accepted', 'rejected' or 'none'. */
  readonly caches: Map<string, Set<string>>;
}

/** Runs the command of the dist/ at `dist` with the given debug sections; its own output is what is left of stderr. */
function runOf(dist: string, args: readonly string[], debug: string): Run {
  const r = spawnSync(process.execPath, [join(dist, 'cli/main.js'), ...args], {
    cwd: CAPTURES,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', NODE_DEBUG: debug },
  });
  expect(r.status).not.toBe(null);
  const files = new Set<string>();
  const caches = new Map<string, Set<string>>();
  const name = (path: string): string => path.slice(dist.length + 1).replace(/-[\w-]{8}(\.c?js)$/, '$1');
  const own: string[] = [];
  for (const line of r.stderr.split('\n')) {
    const cjs = /^MPA-DISSECT \d+: (\/\S+\.cjs): cache (accepted|rejected|none)$/.exec(line);
    if (cjs) {
      const f = name(cjs[1] as string);
      files.add(f);
      caches.set(f, (caches.get(f) ?? new Set()).add(cjs[2] as string));
      continue;
    }
    if (/^(ESM|MPA-DISSECT) \d+:/.test(line)) {
      for (const m of line.matchAll(/file:\/\/[^\s'",]+?\.js\b/g)) {
        if (m[0].startsWith(`file://${dist}/`)) files.add(name(m[0].slice('file://'.length)));
      }
      continue;
    }
    own.push(line);
  }
  return { status: r.status, stdout: r.stdout, stderr: own.join('\n'), files: [...files].sort(), caches };
}

function loaded(args: readonly string[]): string[] {
  return runOf(DIST, args, 'esm,mpa-dissect').files;
}

/** The command lines the cache must not change: a plain run, one on worker threads, several captures (on the main thread, on workers). */
const LINES: readonly (readonly string[])[] = [
  ['sample.pcap'],
  ['--threads', '2', '--ulp', 'flow=all,proto=none', 'sample.pcap'],
  ['errors.pcap', 'golden.pcap', 'sample.pcap'],
  ['--jobs', '2', 'errors.pcap', 'golden.pcap'],
];

describe.skipIf(!bundled)('the bundled command (skipped when dist/ was built by tsc alone)', () => {
  it('a plain run loads the entry, the startup chunk and rolldown helpers, nothing else', () => {
    expect(loaded(['errors.pcap'])).toEqual([
      'cli/chunks/rolldown-runtime.cjs',
      'cli/chunks/startup.cjs',
      'cli/code-cache.js',
      'cli/main.cjs',
      'cli/main.js',
    ]);
  });

  it('--json adds the response-time and latency chunks it asks for', () => {
    expect(loaded(['--json', 'sample.pcap'])).toEqual([
      'cli/chunks/latency.cjs',
      'cli/chunks/rolldown-runtime.cjs',
      'cli/chunks/srt.cjs',
      'cli/chunks/startup.cjs',
      'cli/code-cache.js',
      'cli/main.cjs',
      'cli/main.js',
    ]);
  });

  it('V8 takes the code cache of every file a plain, a --threads and two multi-capture runs load, in every thread', () => {
    const threads = ['src/analysis/parallel/flow-worker.cjs', 'src/analysis/parallel/parallel-analysis.cjs'];
    expect(runOf(DIST, LINES[1] as readonly string[], 'mpa-dissect').files).toEqual(expect.arrayContaining(threads));
    expect(runOf(DIST, LINES[2] as readonly string[], 'mpa-dissect').files).toContain('cli/multi.cjs');
    expect(runOf(DIST, LINES[3] as readonly string[], 'mpa-dissect').files).toContain('cli/capture-worker.cjs');
    for (const args of LINES) {
      const r = runOf(DIST, args, 'mpa-dissect');
      expect([0, 1], args.join(' ')).toContain(r.status); // errors.pcap has findings
      expect(r.caches.get('cli/chunks/startup.cjs'), args.join(' ')).toEqual(new Set(['accepted']));
      for (const [file, what] of r.caches) expect([file, [...what]], args.join(' ')).toEqual([file, ['accepted']]);
    }
  });

  describe('without the caches, or with caches V8 rejects, the output is the same', () => {
    // A copy of what the bundle wrote (and the loader), beside node_modules as dist/ is.
    let root = '';
    let dist = '';
    let caches: string[] = [];
    beforeAll(() => {
      root = mkdtempSync(join(tmpdir(), 'mpa-dissect-bundle-'));
      dist = join(root, 'dist');
      const written = readFileSync(join(DIST, '.bundle-files'), 'utf8')
        .split('\n')
        .filter((f) => f !== '');
      caches = written.filter((f) => f.endsWith('.cache'));
      for (const f of [...written.filter((f) => !f.endsWith('.cache')), 'cli/code-cache.js'])
        cpSync(join(DIST, f), join(dist, f));
      symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
    });
    afterAll(() => rmSync(root, { recursive: true, force: true }));

    it('with none, each file is compiled from its source', () => {
      expect(caches).toContain(caches.find((f) => /^cli\/chunks\/startup-[\w-]{8}\.cjs\.cache$/.test(f)));
      for (const args of LINES) {
        const want = runOf(DIST, args, '');
        const got = runOf(dist, args, 'mpa-dissect');
        expect(new Set([...got.caches.values()].flatMap((s) => [...s])), args.join(' ')).toEqual(new Set(['none']));
        expect({ ...got, files: [], caches: null }, args.join(' ')).toEqual({ ...want, files: [], caches: null });
      }
    });

    it('with caches V8 rejects (made by another build), each file is compiled from its source', () => {
      // Same names, wrong contents: what a cache made by another Node or V8 looks like to this one.
      for (const f of caches) writeFileSync(join(dist, f), readFileSync(join(DIST, f)).subarray(0, 64));
      for (const args of LINES) {
        const want = runOf(DIST, args, '');
        const got = runOf(dist, args, 'mpa-dissect');
        expect(new Set([...got.caches.values()].flatMap((s) => [...s])), args.join(' ')).toEqual(new Set(['rejected']));
        expect({ ...got, files: [], caches: null }, args.join(' ')).toEqual({ ...want, files: [], caches: null });
      }
    });
  });
});
