/**
 * `node dist/scripts/make-man.js [OUT]` (run by `npm run build`): writes man/mpa-dissect.1 from the
 * option tables of --help (cli/man-page.ts). package.json's "man" field installs it with the
 * package, so `man mpa-dissect` works after `npm install -g` or `npm link`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { manPage } from '../cli/man-page.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = resolve(process.argv[2] ?? join(root, 'man', 'mpa-dissect.1'));
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, manPage(version));
