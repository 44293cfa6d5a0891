/**
 * Runs the bundle's CommonJS files (scripts/bundle.ts) through vm.Script with V8's code cache.
 *
 * Why: a plain run spent about 36 ms parsing the 774 KB startup chunk and about 40 ms compiling,
 * lazily, the functions it calls; Node 20 caches neither for ES modules (no
 * module.enableCompileCache, no cachedData for import). A script can take cachedData: the build
 * runs a workload and keeps, per file, V8's code for what it compiled (`FILE.cache` beside the
 * file), and a run starts from that code instead of the source (DEVELOPING.md, Benchmarks,
 * "Start-up").
 *
 * The cache is only ever read here: a missing file, or one V8 rejects (another Node, V8 or flag
 * set), means compiling the source as without it, with the same result. Writing is the build's:
 * with MPA_DISSECT_WRITE_CODE_CACHE=DIR (scripts/code-cache.ts sets it for its workload runs), no
 * cache is read and each thread writes each file's code under DIR/THREAD-ID/ when it ends.
 * NODE_DEBUG=mpa-dissect names each file loaded and what became of its cache.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { debuglog } from 'node:util';
import { Script } from 'node:vm';
import { threadId } from 'node:worker_threads';

/**
 * A CommonJS file's text as the function Node's own loader would make of it (Module.wrap), strict
 * as the ESM it came from; an entry's #! line, kept by the bundler, becomes a comment.
 */
export function wrap(source: string): string {
  return `(function (exports, require, module, __filename, __dirname) {"use strict";${source.replace(/^#!/, '//')}\n})`;
}

type Wrapped = (exports: object, require: (id: string) => unknown, module: object, file: string, dir: string) => void;

interface Loaded {
  readonly module: { exports: unknown };
  readonly script: Script;
}

const loaded = new Map<string, Loaded>();
const log = debuglog('mpa-dissect');
const writeTo = process.env['MPA_DISSECT_WRITE_CODE_CACHE'];

function readCache(file: string): Buffer | undefined {
  if (writeTo !== undefined) return undefined;
  try {
    return readFileSync(`${file}.cache`);
  } catch {
    return undefined; // none: compiled from source
  }
}

/** Runs the bundle's CommonJS file `file` (an absolute path) once, and returns its exports. */
export function loadBundled(file: string): unknown {
  const have = loaded.get(file);
  if (have !== undefined) return have.module.exports;
  const cachedData = readCache(file);
  // No import() in the bundle's files (scripts/bundle.ts makes them require()), so no importModuleDynamically.
  const script = new Script(wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  log('%s: cache %s', file, cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected' : 'accepted');
  const module = { exports: {} };
  loaded.set(file, { module, script });
  const dir = dirname(file);
  const nodeRequire = createRequire(file);
  // The bundle's files require each other by relative .cjs names; the rest is Node's.
  const require = (id: string): unknown =>
    id.startsWith('.') && id.endsWith('.cjs') ? loadBundled(resolve(dir, id)) : nodeRequire(id);
  (script.runInThisContext() as Wrapped)(module.exports, require, module, file, dir);
  return module.exports;
}

if (writeTo !== undefined) {
  // At the thread's end, so the cache holds the functions the run compiled, not only the top level.
  process.on('exit', () => {
    for (const [file, { script }] of loaded) {
      const to = join(writeTo, String(threadId), `${file}.cache`);
      mkdirSync(dirname(to), { recursive: true });
      writeFileSync(to, script.createCachedData());
    }
  });
}
