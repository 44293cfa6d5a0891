/**
 * The code caches of the bundle (the last part of scripts/bundle.ts): V8's compiled code for each
 * CommonJS file a run loads, written as `FILE.cache` beside it and read by cli/code-cache.ts.
 *
 * Made here, at build time, and never by a user's run (an install is read-only). Each workload
 * below is a run of the built command with MPA_DISSECT_WRITE_CODE_CACHE set, output discarded:
 * its threads write, at their end, the code of every file they loaded, so the functions the run
 * called are in it and not only the top level (a cache taken right after compiling saved about a
 * third as much: DEVELOPING.md, Benchmarks, "Start-up"). A file loaded by several workloads takes
 * the first one's cache, from its main thread if it ran there: the first workload is the common
 * case, so the startup chunk's cache is the code of a plain analysis.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Script } from 'node:vm';
import { wrap } from '../cli/code-cache.js';

/** Command lines run from the package's root; each brings the files (and code) the one before did not. */
const WORKLOADS: readonly (readonly string[])[] = [
  // The core and two upper layers, analysed on the main thread (small captures, no --jobs).
  ['captures/sample.pcap', 'captures/corpus/smbd-clean.pcap', 'captures/corpus/nfsrdma-clean.pcap'],
  ['--threads', '2', '--ulp', 'flow=all,proto=none', 'captures/sample.pcap'],
  ['--jobs', '2', 'captures/errors.pcap', 'captures/golden.pcap'],
  ['-V', '-x', 'captures/errors.pcap'],
  ['--help'],
];

/** Every file under `dir`, as paths relative to it. */
function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** Runs the command in `dist` with the given environment; its output is discarded, its status checked. */
function runCommand(dist: string, args: readonly string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [join(dist, 'cli', 'main.js'), ...args], {
    cwd: join(dist, '..'),
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // 0 or 1 (findings); 2 is a usage or capture error: the workload is wrong.
  if (r.status !== 0 && r.status !== 1) throw new Error(`code cache: mpa-dissect ${args.join(' ')}: ${r.stderr}`);
  return r.stderr;
}

/**
 * Writes the caches into `dist` and returns their names relative to it. `entries` (the worker
 * threads' CommonJS entries among them, relative to dist) get one made right after compiling when
 * no workload left one: a run ends its idle workers without their exit handlers.
 */
export function writeCodeCaches(dist: string, entries: readonly string[]): string[] {
  const tmp = mkdtempSync(join(tmpdir(), 'mpa-dissect-code-cache-'));
  try {
    const chosen = new Map<string, string>(); // a cache's path in dist -> the one made in tmp
    WORKLOADS.forEach((args, i) => {
      const out = join(tmp, String(i));
      runCommand(dist, args, { ...process.env, MPA_DISSECT_WRITE_CODE_CACHE: out });
      // Thread 0 (the main thread) first, then the workers.
      const threads = existsSync(out) ? readdirSync(out).sort((a, b) => Number(a) - Number(b)) : [];
      for (const thread of threads) {
        const root = join(out, thread);
        for (const f of files(root)) {
          const to = `${sep}${f}`; // the thread wrote it under its absolute path
          if (!chosen.has(to)) chosen.set(to, join(root, f));
        }
      }
    });
    const written: string[] = [];
    for (const [to, cache] of chosen) {
      const name = relative(dist, to);
      if (name.startsWith('..')) throw new Error(`code cache: ${to} is outside ${dist}`);
      copyFileSync(cache, to);
      written.push(name.split(sep).join('/'));
    }
    for (const entry of entries) {
      const file = join(dist, entry);
      if (chosen.has(`${file}.cache`)) continue;
      writeFileSync(
        `${file}.cache`,
        new Script(wrap(readFileSync(file, 'utf8')), { filename: file }).createCachedData(),
      );
      written.push(`${entry}.cache`);
    }
    // Each cache must be taken: a rejected one (the loader's wrapper or a flag changed) would only slow runs.
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_DEBUG: 'mpa-dissect' };
    delete env['MPA_DISSECT_WRITE_CODE_CACHE'];
    const said = runCommand(dist, WORKLOADS[0] as readonly string[], env);
    if (!/: cache accepted$/m.test(said) || /: cache (rejected|none)$/m.test(said)) {
      for (const name of written) rmSync(join(dist, name), { force: true });
      throw new Error(`code cache: not taken by a run:\n${said}`);
    }
    return written.sort();
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
