/**
 * mpa-dissect(1) is made from the option tables of --help (cli/man-page.ts, scripts/make-man.ts):
 * every option each --help lists is in it, it is well-formed roff, `man` renders it without a
 * warning (skipped, with why, where man is not installed), and the package installs it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, ROOT, requireBuilt } from './helpers.js';

requireBuilt();
const dir = mkdtempSync(join(tmpdir(), 'mpa-man-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const page = join(dir, 'mpa-dissect.1');
const made = spawnSync(process.execPath, [join(ROOT, 'dist', 'scripts', 'make-man.js'), page], { encoding: 'utf8' });
const source = made.status === 0 ? readFileSync(page, 'utf8') : '';
/** The page's text with roff's escapes taken off, as a reader sees the names. */
const plain = source.replace(/\\-/g, '-').replace(/\\f[BIR]/g, '');

/** The option names (`-r`, `--read-file`) of a --help text's option lines. */
function helpOptions(help: string): string[] {
  const names: string[] = [];
  for (const line of help.split('\n')) {
    const m = /^ {2,6}((?:--?[\w-]+(?:, )?)+)(?:\s{2,}|$)/.exec(line);
    if (m) names.push(...m[1]!.split(', ').map((n) => n.trim()));
  }
  return names;
}

const MAN = spawnSync('sh', ['-c', 'command -v man']).status === 0;

describe('the man page, mpa-dissect(1)', () => {
  it('is generated', () => {
    expect(made.status, made.stderr).toBe(0);
    expect(source).toMatch(/^\.\\" Generated/);
  });

  it.each([
    ['mpa-dissect', ['--help'], 'OPTIONS'],
    ['mpa-dissect merge', ['merge', '--help'], 'MERGE OPTIONS'],
    ['mpa-dissect generate', ['generate', '--help'], 'GENERATE OPTIONS'],
    ['mpa-dissect peer', ['peer', '--help'], 'PEER OPTIONS'],
  ])('lists every option %s --help lists, in its section', (_, args, heading) => {
    const help = cli(args).stdout;
    const names = helpOptions(help);
    expect(names.length).toBeGreaterThan(3);
    const sections = plain.split(/^\.SH /m);
    const sec = sections.find((s) => s.startsWith(`${heading}\n`)) ?? '';
    const items = new Set(
      sec
        .split('\n')
        .flatMap((l, i, all) => (all[i - 1] === '.TP' ? l.split(/,\s*|\s+/) : []))
        .filter((w) => w.startsWith('-')),
    );
    const missing = names.filter((n) => !items.has(n) && n !== '--version');
    expect(missing, `${heading} lacks what --help lists`).toEqual([]);
  });

  it('lists every subcommand and example of --help', () => {
    const help = cli(['--help']).stdout;
    for (const cmd of ['rules', 'fields', 'tui', 'merge', 'generate', 'peer'])
      expect(help).toContain(`mpa-dissect ${cmd}`);
    for (const cmd of ['rules', 'fields', 'tui', 'merge', 'generate', 'peer'])
      expect(plain).toMatch(new RegExp(`^${cmd}\\b`, 'm'));
    expect(plain).toContain('-T fields -e frame.number -e iwarp_mpa.ulpdulength');
  });

  it('is well-formed roff: a title, the standard sections, only known requests, no bare hyphen', () => {
    const lines = source.split('\n');
    expect(lines[1]).toMatch(/^\.TH MPA\\-DISSECT 1 /);
    for (const s of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS', 'SEE ALSO'])
      expect(source).toMatch(new RegExp(`^\\.SH ${s}$`, 'm'));
    const requests = new Set(['TH', 'SH', 'TP', 'PP', 'B', 'BR', 'br', 'nh', 'ad', '\\"']);
    for (const l of lines.filter((x) => x.startsWith('.'))) expect(requests, l).toContain(/^\.(\S+)/.exec(l)![1]);
    // A hyphen not written \- prints as a Unicode hyphen in UTF-8 locales: options could not be copied.
    for (const l of lines.filter((x) => !x.startsWith('.\\"'))) expect(l.replace(/\\-/g, ''), l).not.toContain('-');
  });

  it.skipIf(!MAN)(
    `renders with man at 80 columns without a warning${MAN ? '' : ' (skipped: man is not installed)'}`,
    () => {
      const r = spawnSync('man', ['--warnings', '-l', page], {
        encoding: 'utf8',
        env: { ...process.env, MANWIDTH: '80', MANPAGER: 'cat', PAGER: 'cat' },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('--display-filter');
      for (const l of r.stdout.split('\n')) expect(l.length, l).toBeLessThanOrEqual(80);
    },
  );

  it('is installed with the package: package.json "man", files, and the build writes it', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      man: string[];
      files: string[];
      scripts: Record<string, string>;
    };
    // An array: npm 11 links the man pages of a global install only from an array (bin-links).
    expect(pkg.man).toEqual(['./man/mpa-dissect.1']);
    expect(pkg.files).toContain('man/');
    expect(pkg.scripts['build']).toContain('node dist/scripts/make-man.js');
    // After npm run build, the shipped page is the one the option tables make now.
    const shipped = join(ROOT, 'man', 'mpa-dissect.1');
    if (existsSync(shipped)) expect(readFileSync(shipped, 'utf8')).toBe(source);
  });
});
