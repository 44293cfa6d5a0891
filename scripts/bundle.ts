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
 * Two things depend on where a chunk lands: `new URL('./x.js', import.meta.url)` (the worker
 * scripts) and `createRequire(import.meta.url)` (packages found from node_modules above). Each
 * chunk that an import names is written beside the module it is named for, so those URLs still
 * resolve; the build fails when a module holding such a URL would land elsewhere.
 *
 * The inputs are tsc's files, and three of the outputs replace three of them: the build refuses
 * to bundle its own output (run tsc first). The files a bundle wrote are listed in
 * dist/.bundle-files and removed by the next bundle, so hashed chunk names do not pile up.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const here = dirname(fileURLToPath(import.meta.url));
const dist = resolve(here, '..'); // dist/scripts -> dist
const MARK = '// bundled by scripts/bundle.ts';
const LIST = join(dist, '.bundle-files');

/** The entries, by their path in dist/ without `.js`: each replaces tsc's file of that name. */
const ENTRIES = ['cli/main', 'cli/capture-worker', 'src/analysis/parallel/flow-worker'];

/** Packages stay in node_modules (yargs, blessed, re2js, the optional native ones). */
function external(id: string): boolean {
  return id.startsWith('node:') || !(id.startsWith('.') || id.startsWith('/'));
}

/** Every module `entry` imports statically, itself included (import declarations of tsc's output). */
function staticClosure(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
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
function locationBound(id: string): boolean {
  return /new URL\(\s*['"]\.\//.test(readFileSync(id, 'utf8'));
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

export async function bundle(): Promise<string[]> {
  const inputs = Object.fromEntries(ENTRIES.map((e) => [e, join(dist, `${e}.js`)]));
  for (const file of Object.values(inputs)) {
    if (!existsSync(file)) throw new Error(`${relative(dist, file)} is missing: run tsc -p tsconfig.json first`);
    if (readFileSync(file, 'utf8').includes(MARK))
      throw new Error(`${relative(dist, file)} is already a bundle: run tsc -p tsconfig.json first`);
  }
  // What the command loads for a plain run: one chunk, so a run opens two files, not 160.
  const startup = staticClosure(inputs['cli/main'] as string);

  const build = await rolldown({
    input: inputs,
    platform: 'node',
    external,
    logLevel: 'warn',
    // A module also imported statically stays where it is: known, and what the startup chunk is for.
    onLog: (level, log, handler) => {
      if (log.code !== 'INEFFECTIVE_DYNAMIC_IMPORT') handler(level, log);
    },
  });
  const out = await build.generate({
    dir: dist,
    format: 'esm',
    banner: MARK, // after the entry's own #! line, which rolldown keeps first
    entryFileNames: '[name].js',
    // A chunk an import names lands beside that module (see above); the rest under cli/chunks/.
    chunkFileNames: (chunk) =>
      chunk.facadeModuleId
        ? `${dirname(inDist(chunk.facadeModuleId))}/[name]-[hash].js`
        : 'cli/chunks/[name]-[hash].js',
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
    const where = dirname(item.fileName);
    for (const id of item.moduleIds) {
      if (!id.startsWith(dist) || !locationBound(id)) continue;
      if (dirname(inDist(id)) !== where)
        throw new Error(`${inDist(id)}.js resolves a URL against its own location but would land in ${item.fileName}`);
    }
  }

  if (existsSync(LIST)) {
    for (const f of readFileSync(LIST, 'utf8').split('\n')) if (f !== '') rmSync(join(dist, f), { force: true });
  }
  const written: string[] = [];
  for (const item of out.output) {
    const text = item.type === 'chunk' ? asciiOnly(item.code) : item.source;
    mkdirSync(dirname(join(dist, item.fileName)), { recursive: true });
    writeFileSync(join(dist, item.fileName), text);
    written.push(item.fileName);
  }
  writeFileSync(LIST, `${written.join('\n')}\n`);
  return written;
}

await bundle();
