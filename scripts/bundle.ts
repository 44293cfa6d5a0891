/**
 * The second step of `npm run build`: bundles what tsc emitted for the command and its two
 * worker-thread entries (dist/cli/main.js, dist/cli/capture-worker.js,
 * dist/src/analysis/parallel/flow-worker.js) with rolldown, in place.
 *
 * Why: a plain run loaded some 160 modules, and resolving, reading, compiling and linking each one
 * was most of its start-up (DEVELOPING.md, Benchmarks, "Start-up"). Bundled, the modules a plain
 * run needs are one chunk beside the entry; what only an option needs (filters, trees, -V, JUnit,
 * HTML, the terminal UI, the generator, threads, ...) stays behind its dynamic import, one chunk
 * per import. The rest of dist/ is tsc's output as before (the scripts and tests use it), and a
 * dist/ built by tsc alone still runs, module by module.
 *
 * The bundle is CommonJS (`.cjs`; the package is `"type": "module"`), and each entry's file of
 * tsc's name (the bin path dist/cli/main.js, the worker URLs) becomes a small ES module that runs
 * it through cli/code-cache.ts: vm.Script with V8's code cache, which Node 20 offers scripts and
 * not ES modules. The caches (`FILE.cjs.cache`) are made here, after the files are written, by
 * runs of the built command (scripts/code-cache.ts). Measured on a plain run: parsing the startup
 * chunk (about 36 ms) and compiling the functions it calls (about 40 ms) mostly go; CPU from
 * 253 to 180 ms (DEVELOPING.md, Benchmarks, "Start-up"). A missing or rejected cache (another
 * Node) only costs that time again. import() is require() in the output (no import() is left:
 * a script's import() needs an experimental, warning vm option); yargs and the other ESM-only
 * packages load through Node's require(esm).
 *
 * Two things depend on where a chunk lands: `new URL('./x.js', import.meta.url)` (the worker
 * scripts) and `createRequire(import.meta.url)` (packages found from node_modules above); in the
 * CommonJS output import.meta.url is the chunk's own file. Each chunk that an import names is
 * written beside the module it is named for, so those URLs still resolve; the build fails when a
 * module holding such a URL would land elsewhere.
 *
 * The inputs are tsc's files, and three of the outputs replace three of them. tsc is incremental
 * (tsconfig.json): it writes a file only when its source changed, so tsc's own text of each entry
 * is kept in dist/.tsc-entries/ and is the input while the entry's path holds the bundle's module.
 * The files a bundle wrote, caches included, are listed in dist/.bundle-files and removed by the
 * next bundle, so hashed chunk names do not pile up. dist/.bundle-done marks a finished bundle: when
 * no .js file in dist/ is newer, nothing tsc wrote has changed since, and the bundle is kept as it is
 * (a build with nothing to do takes a few seconds of tsc instead of half a minute).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { writeCodeCaches } from './code-cache.js';

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, '..'); // dist/scripts -> dist
const MARK = '// bundled by scripts/bundle.ts';
const LIST = join(dist, '.bundle-files');
const SAVED = join(dist, '.tsc-entries');
const DONE = join(dist, '.bundle-done');

/** The entries, by their path in dist/ without `.js`: each replaces tsc's file of that name. */
const ENTRIES = ['cli/main', 'cli/capture-worker', 'src/analysis/parallel/flow-worker'];

/** Packages stay in node_modules (yargs, blessed, re2js, the optional native ones). */
function external(id: string): boolean {
  return id.startsWith('node:') || !(id.startsWith('.') || id.startsWith('/'));
}

/** Every module `entry` imports statically, itself included (import declarations of tsc's output). */
function staticClosure(entry: string, read: (file: string) => string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = read(file);
    for (const m of src.matchAll(/^(?:import|export)\s(?:[^;'"]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      visit(resolve(dirname(file), m[1] as string));
    }
  };
  visit(entry);
  return seen;
}

/** Path of a module in dist/ with forward slashes, without `.js`. */
function inDist(id: string): string {
  return relative(dist, id).split(sep).join('/').replace(/\.js$/, '');
}

/** Modules whose meaning depends on their own location (see above). */
function locationBound(id: string, read: (file: string) => string): boolean {
  return /new URL\(\s*['"]\.\//.test(read(id));
}

/**
 * tsc's text of an entry: the file itself when tsc just wrote it (kept aside for the next bundle),
 * else the copy kept by the bundle that replaced it.
 */
function tscEntry(entry: string): string {
  const file = join(dist, `${entry}.js`);
  const saved = join(SAVED, `${entry}.js`);
  if (!existsSync(file)) throw new Error(`${entry}.js is missing: run tsc -p tsconfig.json first`);
  const code = readFileSync(file, 'utf8');
  if (!code.includes(MARK)) {
    mkdirSync(dirname(saved), { recursive: true });
    writeFileSync(saved, code);
    return code;
  }
  if (!existsSync(saved)) throw new Error(`${entry}.js is already a bundle: run tsc -p tsconfig.json first`);
  return readFileSync(saved, 'utf8');
}

/** Whether the last bundle finished and no .js file in dist/ (tsc's or the bundle's) changed after it. */
function upToDate(): boolean {
  if (!existsSync(DONE)) return false;
  const done = statSync(DONE).mtimeMs;
  for (const e of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (e.isFile() && /\.c?js$/.test(e.name) && statSync(join(e.parentPath, e.name)).mtimeMs > done) return false;
  }
  return true;
}

/**
 * The code with every non-ASCII character as a \u escape (a §, an ellipsis, an arrow in a
 * message): V8 then holds the source as one octet per character and decodes it on the fast path.
 * The escape means the same character in a string, template, regular expression or identifier,
 * and nothing in a comment; the code uses no String.raw.
 */
function asciiOnly(code: string): string {
  // `\§` would become `\\u00a7`, an escaped backslash: none today, and the build says so if one comes.
  if (/\\[^\x00-\x7f]/.test(code)) throw new Error('a backslash before a non-ASCII character: escape it by hand');
  return code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The ES module left at an entry's path (the bin path, the worker URLs): it runs the entry's
 * CommonJS bundle, and what that requires, through the code-cache loader (cli/code-cache.ts).
 */
function entryModule(entry: string): string {
  const loader = relative(dirname(join(dist, entry)), join(dist, 'cli', 'code-cache.js'))
    .split(sep)
    .join('/');
  const shebang = entry === 'cli/main' ? '#!/usr/bin/env node\n' : '';
  return `${shebang}${MARK}
import { fileURLToPath } from 'node:url';
import { loadBundled } from '${loader.startsWith('.') ? loader : `./${loader}`}';
loadBundled(fileURLToPath(new URL('./${entry.split('/').at(-1)}.cjs', import.meta.url)));
`;
}

export async function bundle(): Promise<string[]> {
  if (upToDate()) return [];
  rmSync(DONE, { force: true });
  const inputs = Object.fromEntries(ENTRIES.map((e) => [e, join(dist, `${e}.js`)]));
  const entryCode = new Map(ENTRIES.map((e) => [inputs[e] as string, tscEntry(e)]));
  const read = (file: string): string => entryCode.get(file) ?? readFileSync(file, 'utf8');
  // What the command loads for a plain run: one chunk, so a run opens two files, not 160.
  const startup = staticClosure(inputs['cli/main'] as string, read);

  const build = await rolldown({
    input: inputs,
    platform: 'node',
    external,
    // An entry's path may hold the last bundle's module: its input is tsc's text (tscEntry).
    plugins: [{ name: 'tsc-entries', load: (id: string) => entryCode.get(id) ?? null }],
    logLevel: 'warn',
    // A module also imported statically stays where it is: known, and what the startup chunk is for.
    onLog: (level, log, handler) => {
      if (log.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') handler(level, log);
    },
  });
  const out = await build.generate({
    dir: dist,
    // CommonJS, run by cli/code-cache.ts through vm.Script with a code cache (see above).
    format: 'cjs',
    // import() of a package or built-in becomes require() (a script's import() would need the
    // experimental vm.USE_MAIN_CONTEXT_DEFAULT_LOADER, which warns and which a cached script loses).
    dynamicImportInCjs: false,
    banner: MARK, // after the entry's own #! line, which rolldown keeps first
    entryFileNames: '[name].cjs',
    // A chunk an import names lands beside that module (see above); the rest under cli/chunks/.
    chunkFileNames: (chunk) =>
      chunk.facadeModuleId
        ? `${dirname(inDist(chunk.facadeModuleId))}/[name]-[hash].cjs`
        : 'cli/chunks/[name]-[hash].cjs',
    codeSplitting: {
      groups: [{ name: 'startup', test: (id: string) => startup.has(id) && !Object.values(inputs).includes(id) }],
    },
    // Modules run in the order ESM gives them, whatever chunk they land in.
    strictExecutionOrder: true,
    // Comments stay in tsc's files and are reached through the source maps; the bundle is read at
    // every start, and every octet of it is decoded and scanned.
    comments: false,
    sourcemap: true,
  });
  await build.close();

  for (const item of out.output) {
    if (item.type !== 'chunk') continue;
    if (/\bimport\(/.test(item.code))
      throw new Error(`${item.fileName} keeps an import(): the loader's scripts have none`);
    const where = dirname(item.fileName);
    for (const id of item.moduleIds) {
      if (!id.startsWith(dist) || !locationBound(id, read)) continue;
      if (dirname(inDist(id)) !== where)
        throw new Error(`${inDist(id)}.js resolves a URL against its own location but would land in ${item.fileName}`);
    }
  }

  if (existsSync(LIST)) {
    for (const f of readFileSync(LIST, 'utf8').split('\n')) if (f !== '') rmSync(join(dist, f), { force: true });
  }
  const written: string[] = [];
  const write = (name: string, text: string | Uint8Array): void => {
    mkdirSync(dirname(join(dist, name)), { recursive: true });
    writeFileSync(join(dist, name), text);
    written.push(name);
  };
  for (const item of out.output) write(item.fileName, item.type === 'chunk' ? asciiOnly(item.code) : item.source);
  // Each entry's file of tsc's name becomes the module that runs its bundle.
  for (const e of ENTRIES) write(`${e}.js`, entryModule(e));
  // Listed before the caches are made (from runs of these files), so a failed build's files go with the next one.
  writeFileSync(LIST, `${written.join('\n')}\n`);
  const entryScripts = ENTRIES.map((e) => `${e}.cjs`);
  written.push(...writeCodeCaches(dist, entryScripts));
  writeFileSync(LIST, `${written.join('\n')}\n`);
  writeFileSync(DONE, '');
  return written;
}

await bundle();
