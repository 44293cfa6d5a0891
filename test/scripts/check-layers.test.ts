import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterEach, describe, expect, it } from 'vitest';
import { blankComments, checkLayers, cycles, importsOf } from '../../scripts/check-layers.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Layers of the small trees below: base, two independent folders, two folders that may share, cli. */
const LAYERS = {
  layers: [
    { name: 'base', folders: ['src/base'] },
    { name: 'middle', folders: ['src/a', 'src/b'], independent: true },
    { name: 'shared', folders: ['src/c', 'src/d'] },
    { name: 'top', folders: ['cli'] },
  ],
};

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temporary repository with LAYERS as its layers.json and these files (path: text). */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'check-layers-'));
  made.push(root);
  writeFileSync(join(root, 'layers.json'), JSON.stringify(LAYERS));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A clean tree: every import goes down the layers, or between the folders of a shared layer. */
const CLEAN: Record<string, string> = {
  'src/base/types.ts': 'export interface Thing {\n  readonly id: number;\n}\n',
  'src/base/make.ts':
    "import type { Thing } from './types.js';\n\nexport const make = (id: number): Thing => ({ id });\n",
  'src/a/one.ts': "import { make } from '../base/make.js';\n\nexport const one = make(1);\n",
  'src/b/two.ts': "import { make } from '../base/make.js';\n\nexport const two = make(2);\n",
  'src/c/three.ts': "export { one } from '../a/one.js';\nexport * from '../d/four.js';\n",
  'src/d/four.ts': 'export const four = 4;\n',
  'cli/main.ts':
    "import { one } from '../src/a/one.js';\nimport { four } from '../src/d/four.js';\n\nexport async function main(): Promise<number> {\n  const { two } = await import('../src/b/two.js');\n  return one.id + two.id + four;\n}\n",
  // Outside every layer: not judged, whatever it imports.
  'test/main.test.ts': "import { main } from '../cli/main.js';\nimport '../src/base/make.js';\n\nvoid main;\n",
};

describe('checkLayers', () => {
  it('finds no problem in a clean tree', () => {
    expect(checkLayers(tree(CLEAN))).toEqual([]);
  });

  it('reports an upward import with its file and line', () => {
    const root = tree({
      ...CLEAN,
      'src/base/make.ts':
        "/**\n * Making a thing: one import, one function.\n */\nimport type { Thing } from './types.js';\nimport { one } from '../a/one.js';\n\nexport const make = (id: number): Thing => ({ id: id + one.id });\n",
    });
    const problems = checkLayers(root);
    expect(problems).toContain(
      'src/base/make.ts:5 imports src/a/one.ts: layer "base" may not import the higher layer "middle"',
    );
    // one.ts imports make.ts back: that upward import closes a cycle too.
    expect(problems).toContain('import cycle: src/a/one.ts <-> src/base/make.ts');
    expect(problems).toHaveLength(2);
  });

  it('reports a type-only upward import and a dynamic one, each at its line', () => {
    const root = tree({
      ...CLEAN,
      'src/d/four.ts':
        "import type { main } from '../../cli/main.js';\n\nexport const four = 4;\nexport const later = (): Promise<typeof main> =>\n  import('../../cli/main.js').then((m) => m.main);\n",
    });
    expect(checkLayers(root)).toEqual([
      'src/d/four.ts:1 imports cli/main.ts: layer "shared" may not import the higher layer "top"',
      'src/d/four.ts:5 imports cli/main.ts: layer "shared" may not import the higher layer "top"',
      'import cycle: cli/main.ts <-> src/d/four.ts',
    ]);
  });

  it('reports an import between the independent folders of a layer, not between shared ones', () => {
    const root = tree({
      ...CLEAN,
      'src/a/one.ts':
        "import { make } from '../base/make.js';\nimport type { two } from '../b/two.js';\n\nexport const one = make(1);\nexport type Two = typeof two;\n",
      'src/d/four.ts': "import { one } from '../c/three.js';\n\nexport const four = 4 + one.id;\n",
    });
    const problems = checkLayers(root);
    expect(problems).toContain(
      'src/a/one.ts:2 imports src/b/two.ts: src/a and src/b are independent folders of layer "middle"',
    );
    expect(problems.filter((p) => !p.startsWith('import cycle:'))).toHaveLength(1);
    // three.ts re-exports four.ts, which now imports three.ts: a cycle inside the shared layer.
    expect(problems).toContain('import cycle: src/c/three.ts <-> src/d/four.ts');
  });

  it('reports a cycle closed by a type-only import and a dynamic import()', () => {
    const root = tree({
      ...CLEAN,
      'src/base/types.ts':
        "import type { make } from './make.js';\n\nexport interface Thing {\n  readonly id: number;\n}\nexport type Maker = typeof make;\n",
    });
    expect(checkLayers(root)).toEqual(['import cycle: src/base/make.ts <-> src/base/types.ts']);

    const lazy = tree({
      ...CLEAN,
      'src/base/types.ts':
        "export interface Thing {\n  readonly id: number;\n}\nexport const maker = async () => (await import('./make.js')).make;\n",
    });
    expect(checkLayers(lazy)).toEqual(['import cycle: src/base/make.ts <-> src/base/types.ts']);
  });

  it('reports a longer cycle once, with all its files, and a file importing itself', () => {
    const root = tree({
      ...CLEAN,
      'src/base/x.ts': "import { y } from './y.js';\nexport const x = () => y;\n",
      'src/base/y.ts': "export { z as y } from './z.js';\n",
      'src/base/z.ts': "import type { x } from './x.js';\nexport const z = (f?: typeof x) => f;\n",
      'src/base/self.ts': "export const self = 1;\nexport type Self = typeof import('./self.js');\n",
    });
    expect(checkLayers(root).sort()).toEqual([
      'import cycle: src/base/self.ts',
      'import cycle: src/base/x.ts <-> src/base/y.ts <-> src/base/z.ts',
    ]);
  });

  it('does not count an import written in a comment', () => {
    const root = tree({
      ...CLEAN,
      'src/base/make.ts':
        "import type { Thing } from './types.js';\n// import { one } from '../a/one.js';\n/* export * from '../../cli/main.js'; */\n\nexport const make = (id: number): Thing => ({ id });\n",
    });
    expect(checkLayers(root)).toEqual([]);
  });
});

describe('importsOf', () => {
  it('finds every form of relative import at its line, and none in comments or strings', () => {
    const text = [
      '/**', // 1
      ' * Adding a table is one import and one entry in the list below.', // 2
      ' */', // 3
      "import type { A } from './a.js';", // 4
      "// import { old } from './old.js';", // 5
      "const url = 'http://example.com/*';", // 6
      'const re = /[\'"`]\\/\\*/g;', // 7
      "export { b } from './b.js';", // 8
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
      'const t = `x ${`y ${"z"}`} // not a comment /* nor this`;', // 9
      "import './side.js';", // 10
      "export * as ns from './ns.js';", // 11
      'export enum E {', // 12
      '  One,', // 13
      '}', // 14
      'import {', // 15
      '  c, // the c', // 16
      '  type D,', // 17
      "} from '../up/c.js';", // 18
      "const lazy = () => import('./lazy.js');", // 19
      "type T = typeof import('./typed.js');", // 20
      "/* block: import x from './blocked.js' */", // 21
      "import { pkg } from 'some-package';", // 22
      'const n = 4 / 2; // a division', // 23
      "export default n; import { last } from './last.js';", // 24
    ].join('\n');
    const root = tree({ 'src/base/all.ts': text });
    const got = importsOf(root, ['src/base/all.ts']).map((e) => `${e.line} ${e.to}`);
    expect(got).toEqual([
      '4 src/base/a.ts',
      '8 src/base/b.ts',
      '10 src/base/side.ts',
      '11 src/base/ns.ts',
      '15 src/up/c.ts',
      '19 src/base/lazy.ts',
      '20 src/base/typed.ts',
      '24 src/base/last.ts',
    ]);
    for (const e of importsOf(root, ['src/base/all.ts'])) expect(e.from).toBe('src/base/all.ts');
  });

  it('blanks comments only, keeping every offset and line break', () => {
    const text = "a /* x\ny */ b // z\n'// s' `/* t */` x(/\\/*/) c";
    expect(blankComments(text)).toBe("a     \n     b     \n'// s' `/* t */` x(/\\/*/) c");
  });
});

describe('cycles', () => {
  const edge = (from: string, to: string) => ({ from, to, line: 1 });

  it('finds none in a chain or a diamond', () => {
    expect(cycles([edge('a', 'b'), edge('b', 'c'), edge('a', 'c'), edge('c', 'd')])).toEqual([]);
  });

  it('finds each strongly connected group, sorted', () => {
    const found = cycles([
      edge('a', 'b'),
      edge('b', 'a'),
      edge('b', 'c'),
      edge('c', 'e'),
      edge('e', 'd'),
      edge('d', 'c'),
      edge('f', 'f'),
    ]);
    expect(found.map((c) => c.join(' ')).sort()).toEqual(['a b', 'c d e', 'f']);
  });

  it('follows a long chain without overflowing the stack', () => {
    const n = 30_000;
    const edges = Array.from({ length: n }, (_, i) => edge(`f${i}`, `f${(i + 1) % n}`));
    const found = cycles(edges);
    expect(found).toHaveLength(1);
    expect(found[0]).toHaveLength(n);
  });
});

describe("the repository's layers.json", () => {
  /** Upper-layer folders the layers name before their code exists. */
  const NOT_YET = ['dissectors/smb-direct', 'dissectors/rpc-rdma', 'dissectors/nvme-rdma', 'dissectors/iser'];
  const { layers } = JSON.parse(readFileSync(join(REPO, 'layers.json'), 'utf8')) as {
    layers: Array<{ name: string; folders: string[] }>;
  };

  it('names an existing folder for every layer but the upper layers not yet written', () => {
    const missing = layers.flatMap((l) =>
      l.folders.filter((f) => !(existsSync(join(REPO, f)) && statSync(join(REPO, f)).isDirectory())),
    );
    expect(missing.filter((f) => !NOT_YET.includes(f))).toEqual([]);
  });

  it('names each folder once, in no more than one layer', () => {
    const all = layers.flatMap((l) => l.folders);
    expect(new Set(all).size).toBe(all.length);
  });

  it('is checked on the very imports TypeScript sees', () => {
    const files = layers
      .flatMap((l) => l.folders)
      .filter((f) => existsSync(join(REPO, f)))
      .flatMap((f) => tsFilesUnder(join(REPO, f)).map((p) => relative(REPO, p).split(sep).join('/')));
    expect(files.length).toBeGreaterThan(100);
    const ours = importsOf(REPO, files).map((e) => `${e.from} -> ${e.to}`);
    // TypeScript's own scan of a file's imports (static, dynamic, type-only, export from).
    const theirs = files.flatMap((f) =>
      ts
        .preProcessFile(readFileSync(join(REPO, f), 'utf8'), true, true)
        .importedFiles.filter((r) => r.fileName.startsWith('.'))
        .map((r) => `${f} -> ${posix.join(posix.dirname(f), r.fileName).replace(/\.js$/, '.ts')}`),
    );
    expect(ours.sort()).toEqual(theirs.sort());
  });
});

/** Every .ts file under a directory. */
function tsFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFilesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
