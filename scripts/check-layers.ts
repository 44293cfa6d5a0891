/**
 * Checks the layer rules of layers.json over every relative import (static, dynamic, `export from`,
 * type-only) of the compiled folders: no import from a higher layer, none between the independent
 * folders of one layer, and no import cycle. Prints each violation with the importing file and line,
 * exits 1 when there is one. Reads the TypeScript sources, so it needs no build.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Layer {
  readonly name: string;
  readonly folders: readonly string[];
  readonly independent?: boolean;
}

/**
 * A static `import`/`export ... from` (the clause between the keyword and `from` holds only names,
 * braces, commas, `*` and spaces, and no other import or export, so it cannot run on into the next
 * statement) or a dynamic `import()`, also as a type (`typeof import('./x.js')`). Matched on the
 * text with its comments blanked, so the word "import" in a comment neither counts nor swallows the
 * import below it.
 */
const IMPORT =
  /(?<![\w.$])(?:import|export)\s+(?:(?:(?!\b(?:import|export)\b)[\w$\s{},*])*?\s*from\s*)?['"](\.[^'"\n]+)['"]|(?<![\w.$])import\(\s*['"](\.[^'"\n]+)['"]\s*\)/g;

/** Characters after which a `/` starts a regular expression (not a division). */
const BEFORE_REGEX = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));
/** Keywords after which a `/` starts a regular expression. */
const KEYWORD_BEFORE =
  /(?:^|[^\w$])(?:return|typeof|instanceof|in|of|new|delete|void|throw|case|do|else|yield|await)\s*$/;

/** The end of the quoted string opening at `i` (at a line break when unterminated). */
function endOfString(text: string, i: number): number {
  const quote = text[i];
  for (let k = i + 1; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') k++;
    else if (c === quote) return k + 1;
    else if (c === '\n') return k;
  }
  return text.length;
}

/** The end of the regular expression literal opening at `i` (at a line break when it was none). */
function endOfRegex(text: string, i: number): number {
  let inClass = false;
  for (let k = i + 1; k < text.length; k++) {
    const c = text[k];
    if (c === '\\') k++;
    else if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) return k + 1;
    else if (c === '\n') return k;
  }
  return text.length;
}

/**
 * The text with every comment turned into spaces, line breaks kept, so offsets and line numbers
 * stay those of the file. Strings, template literals (with their `${}`) and regular expression
 * literals are stepped over, so a `//` or `/*` inside one is not taken for a comment.
 */
export function blankComments(text: string): string {
  const out = text.split('');
  const blank = (from: number, to: number): void => {
    for (let k = from; k < to; k++) if (out[k] !== '\n') out[k] = ' ';
  };
  const substitutions: number[] = []; // brace depth at each open `${` of a template literal
  let depth = 0;
  let inTemplate = false;
  let last = ''; // the last character of code seen (not space, not comment)
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (inTemplate) {
      if (c === '\\') i += 2;
      else if (c === '`') {
        inTemplate = false;
        last = c;
        i++;
      } else if (c === '$' && text[i + 1] === '{') {
        substitutions.push(depth++);
        inTemplate = false;
        last = '{';
        i += 2;
      } else i++;
      continue;
    }
    const d = text[i + 1];
    if (c === '/' && d === '/') {
      const eol = text.indexOf('\n', i);
      const end = eol < 0 ? text.length : eol;
      blank(i, end);
      i = end;
    } else if (c === '/' && d === '*') {
      const close = text.indexOf('*/', i + 2);
      const end = close < 0 ? text.length : close + 2;
      blank(i, end);
      i = end;
    } else if (c === "'" || c === '"') {
      i = endOfString(text, i);
      last = c;
    } else if (c === '`') {
      inTemplate = true;
      i++;
    } else if (
      c === '/' &&
      (last === '' || BEFORE_REGEX.has(last) || KEYWORD_BEFORE.test(text.slice(Math.max(0, i - 16), i)))
    ) {
      i = endOfRegex(text, i);
      last = '/';
    } else {
      if (c === '{') depth++;
      else if (c === '}') {
        depth--;
        if (substitutions.length > 0 && substitutions[substitutions.length - 1] === depth) {
          substitutions.pop();
          inTemplate = true;
        }
      }
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return out.join('');
}

function tsFiles(root: string, dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)); // the same order on every file system
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) tsFiles(root, p, out);
    else if (e.name.endsWith('.ts')) out.push(p.split(sep).join('/'));
  }
}

export interface ImportEdge {
  readonly from: string;
  readonly to: string;
  readonly line: number;
}

/** Every relative import of the given files, resolved to repository paths (`.js` read as `.ts`). */
export function importsOf(root: string, files: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const f of files) {
    const text = blankComments(readFileSync(join(root, f), 'utf8'));
    IMPORT.lastIndex = 0;
    for (let m = IMPORT.exec(text); m !== null; m = IMPORT.exec(text)) {
      const spec = (m[1] ?? m[2])!;
      const to = normalize(join(dirname(f), spec))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      const line = text.slice(0, m.index).split('\n').length;
      edges.push({ from: f, to, line });
    }
  }
  return edges;
}

/** The layer index and folder of a path, or null for a path outside every layer. */
function placer(layers: readonly Layer[]): (path: string) => { layer: number; folder: string } | null {
  return (path) => {
    for (let i = 0; i < layers.length; i++)
      for (const folder of layers[i]!.folders)
        if (path === folder || path.startsWith(`${folder}/`)) return { layer: i, folder };
    return null;
  };
}

/** Import cycles (strongly connected components of more than one file, or a file importing itself). */
export function cycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, []);
    next.get(e.from)!.push(e.to);
  }
  // Tarjan's algorithm, iterative so a long chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ v: string; i: number }> = [{ v: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const succ = next.get(top.v) ?? [];
      if (top.i < succ.length) {
        const w = succ[top.i++]!;
        if (!next.has(w) && !index.has(w)) continue; // imports nothing: cannot close a cycle
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.v;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.v)!));
      }
      if (low.get(top.v) === index.get(top.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== top.v);
        if (scc.length > 1 || (next.get(top.v) ?? []).includes(top.v)) found.push(scc.sort());
      }
    }
  }
  return found;
}

/** Every violation of the layer rules, as one line each. */
export function checkLayers(root: string): string[] {
  const { layers } = JSON.parse(readFileSync(join(root, 'layers.json'), 'utf8')) as { layers: Layer[] };
  const files: string[] = [];
  for (const l of layers) for (const f of l.folders) tsFiles(root, f, files);
  const place = placer(layers);
  const edges = importsOf(root, files);
  const problems: string[] = [];
  for (const e of edges) {
    const a = place(e.from);
    const b = place(e.to);
    if (!a || !b) continue;
    const la = layers[a.layer]!;
    const lb = layers[b.layer]!;
    if (b.layer > a.layer)
      problems.push(
        `${e.from}:${e.line} imports ${e.to}: layer "${la.name}" may not import the higher layer "${lb.name}"`,
      );
    else if (b.layer === a.layer && a.folder !== b.folder && la.independent)
      problems.push(
        `${e.from}:${e.line} imports ${e.to}: ${a.folder} and ${b.folder} are independent folders of layer "${la.name}"`,
      );
  }
  for (const c of cycles(edges)) problems.push(`import cycle: ${c.join(' <-> ')}`);
  return problems;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = relative(process.cwd(), join(dirname(fileURLToPath(import.meta.url)), '..', '..')) || '.';
  const problems = checkLayers(root);
  for (const p of problems) console.error(p);
  console.log(
    problems.length === 0 ? 'layers: no upward import, no import cycle' : `layers: ${problems.length} violation(s)`,
  );
  process.exitCode = problems.length === 0 ? 0 : 1;
}
