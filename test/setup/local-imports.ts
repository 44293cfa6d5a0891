/**
 * A Vite plugin for the test run: each named or default import of the project's own modules becomes
 * a local constant, read once when the module runs. Vitest runs a module with every imported
 * binding read through a getter on the exporter's exports object (a closure with a try/catch, per
 * read), which V8 does not inline: in hot loops of the product that read imported constants the
 * getters were most of the time (the TUF marker-grid search ran 2.5 times slower under the test
 * runner than built). Node runs the built tool with real bindings; this gives the tests the same.
 *
 * Sound here because nothing is reassigned after its module ran: the project has no `export let`,
 * no module mocks or spies, and no import cycles (npm run lint checks that), so by the time a
 * module's body runs every module it imports has finished and its bindings are final.
 * The line breaks are kept, so stack traces and source maps point where they did.
 */
import { parseAst, type Plugin } from 'vite';

interface Node {
  type: string;
  start: number;
  end: number;
}
interface Specifier extends Node {
  local: { name: string };
  imported?: { type: string; name?: string; value?: string };
}
interface ImportDeclaration extends Node {
  source: Node & { raw?: string; value: string };
  specifiers: Specifier[];
  importKind?: string;
}

export function localImports(root: string): Plugin {
  const mine = (id: string) =>
    id.startsWith(root) && !id.includes('/node_modules/') && /\.[cm]?[jt]s$/.test(id.replace(/\?.*$/, ''));
  return {
    name: 'mpa-dissect:local-imports',
    enforce: 'post',
    transform(code, id) {
      if (!mine(id) || !code.includes('import')) return null;
      const ast = parseAst(code) as unknown as { body: Node[] };
      const edits: { start: number; end: number; text: string }[] = [];
      let n = 0;
      for (const node of ast.body) {
        if (node.type !== 'ImportDeclaration') continue;
        const d = node as ImportDeclaration;
        const named = d.specifiers.filter((s) => s.type !== 'ImportNamespaceSpecifier');
        if (named.length === 0 || named.length !== d.specifiers.length) continue;
        const parts: string[] = [];
        const locals: string[] = [];
        let dflt: string | null = null;
        for (const s of named) {
          const alias = `__import${n++}_${s.local.name}`;
          locals.push(`${s.local.name} = ${alias}`);
          if (s.type === 'ImportDefaultSpecifier') dflt = alias;
          else {
            const im = s.imported!;
            const name = im.type === 'Identifier' ? im.name! : JSON.stringify(im.value);
            parts.push(`${name} as ${alias}`);
          }
        }
        const clause = [dflt, parts.length ? `{ ${parts.join(', ')} }` : null].filter((x) => x !== null).join(', ');
        const source = code.slice(d.source.start, d.source.end);
        // What followed the source (import attributes, the semicolon) stays, line breaks with it.
        const rest = code.slice(d.source.end, d.end).replace(/;\s*$/, '');
        const breaks = code.slice(d.start, d.end).split('\n').length - 1;
        edits.push({
          start: d.start,
          end: d.end,
          text: `import ${clause} from ${source}${rest}; const ${locals.join(', ')};${'\n'.repeat(breaks)}`,
        });
      }
      if (edits.length === 0) return null;
      let out = code;
      for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
      return { code: out, map: null };
    },
  };
}
