/**
 * A Vite plugin for the unit tests: each named or default import of the project's own modules
 * becomes a local constant, read once when the module runs. Vitest runs a module with every
 * imported binding read through a getter on the exporter's exports object (a closure with a
 * try/catch, per read), which V8 does not inline: in hot loops of the product that read imported
 * constants the getters were most of the time (the TUF marker-grid search ran 2.5 times slower
 * under the test runner than built). Node runs the built tool with real bindings; this gives the
 * tests the same.
 *
 * Sound here because nothing is reassigned after its module ran: the project has no `export let`,
 * no module mocks or spies, and no import cycles (npm run lint checks that), so by the time a
 * module's body runs every module it imports has finished and its bindings are final.
 *
 * It reads the module as the TypeScript transform printed it (one import declaration a line), and
 * only the imports at its head, before the first other statement: a line further down that looks
 * like an import may be inside a string. No line is added or removed, so traces point where they did.
 */
import type { Plugin } from 'vite';

const IMPORT = /^import\s+(.+?)\s+from\s+("[^"\n]*"|'[^'\n]*')(\s+with\s*\{[^}\n]*\})?;?$/;
const NAME = /^[A-Za-z_$][\w$]*$/;
const SPECIFIER = /^([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?$/;

/** The line with its bindings made local constants, or null to leave it as it is. */
function localized(line: string, n: { next: number }): string | null {
  const m = IMPORT.exec(line);
  if (!m) return null;
  const [, clause, source, attributes = ''] = m;
  const brace = clause!.indexOf('{');
  const head = (brace < 0 ? clause! : clause!.slice(0, brace)).replace(/,\s*$/, '').trim();
  if (head !== '' && !NAME.test(head)) return null; // a namespace import: left as it is
  const named = brace < 0 ? [] : clause!.slice(brace + 1, clause!.lastIndexOf('}')).split(',');
  const parts: string[] = [];
  const locals: string[] = [];
  let dflt = '';
  if (head !== '') {
    dflt = `__import${n.next++}_${head}`;
    locals.push(`${head} = ${dflt}`);
  }
  for (const raw of named) {
    const s = raw.trim();
    if (s === '') continue;
    const sm = SPECIFIER.exec(s);
    if (!sm) return null;
    const local = sm[2] ?? sm[1]!;
    const alias = `__import${n.next++}_${local}`;
    parts.push(`${sm[1]} as ${alias}`);
    locals.push(`${local} = ${alias}`);
  }
  if (locals.length === 0) return null;
  const what = [dflt, parts.length ? `{ ${parts.join(', ')} }` : ''].filter((x) => x !== '').join(', ');
  return `import ${what} from ${source}${attributes}; const ${locals.join(', ')};`;
}

export function localImports(root: string): Plugin {
  const mine = (id: string) =>
    id.startsWith(root) && !id.includes('/node_modules/') && /\.[cm]?[jt]s$/.test(id.replace(/\?.*$/, ''));
  return {
    name: 'mpa-dissect:local-imports',
    enforce: 'post',
    transform(code, id) {
      if (!mine(id) || !code.includes('import')) return null;
      const lines = code.split('\n');
      const n = { next: 0 };
      let changed = false;
      let inComment = false;
      for (let i = 0; i < lines.length; i++) {
        const t = lines[i]!.trim();
        if (inComment) {
          inComment = !t.includes('*/');
          continue;
        }
        if (t === '' || t.startsWith('//')) continue;
        if (t.startsWith('/*')) {
          inComment = !t.includes('*/');
          continue;
        }
        if (!t.startsWith('import ')) break; // the first other statement: the head ends here
        const l = localized(t, n);
        if (l !== null) {
          lines[i] = l;
          changed = true;
        }
      }
      return changed ? { code: lines.join('\n'), map: null } : null;
    },
  };
}
