/**
 * `npm run screenshots` (`node dist/scripts/screenshots.js [--check] [--text-only]`): regenerates
 * every screenshot the documentation shows, from the built tool. The terminal UI runs under a
 * private tmux server at a fixed size, keys are sent as a user types them and `tmux capture-pane`
 * takes the screen as text; each shot is written to docs/screenshots/NAME.txt and put into every
 * Markdown file between `<!-- screenshot NAME -->` and `<!-- /screenshot -->`. The HTML report's
 * picture (docs/html-report.png) comes from scripts/html-screenshot.ts (headless Chromium), skipped
 * with a note when Chromium is absent or with --text-only. --check writes nothing and exits 1 when
 * a document's block differs from what the tool shows now.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'cli', 'main.js');

export interface Shot {
  /** docs/screenshots/NAME.txt and the `<!-- screenshot NAME -->` blocks. */
  readonly name: string;
  readonly capture: string;
  readonly cols: number;
  readonly rows: number;
  /** tmux send-keys arguments, one key (or literal text with `-l`) per entry, sent in order. */
  readonly keys: ReadonlyArray<readonly string[]>;
  /** Lines of the screen kept, [from, to) (negative: from the bottom); the whole screen by default. */
  readonly crop?: readonly [number, number?];
}

/** Every screenshot the documentation shows. */
export const SHOTS: readonly Shot[] = [
  // captures/errors.pcap with `n` pressed once: the FPDU with the bad CRC, every pane.
  { name: 'tui-errors-120x40', capture: 'captures/errors.pcap', cols: 120, rows: 40, keys: [['n']] },
  // The same capture at the smallest size the UI supports.
  { name: 'tui-errors-80x24', capture: 'captures/errors.pcap', cols: 80, rows: 24, keys: [['n']] },
  // The startup ladder (`l`) of captures/sample.pcap.
  { name: 'tui-ladder', capture: 'captures/sample.pcap', cols: 120, rows: 40, keys: [['l']] },
  // A display filter with a mistake: the prompt stays open with tshark's caret message.
  {
    name: 'tui-filter-error',
    capture: 'captures/errors.pcap',
    cols: 120,
    rows: 40,
    keys: [['/'], ['-l', 'iwarp_mpa.crc_status = "bad"'], ['Enter']],
    crop: [-6],
  },
  // The status bar alone.
  { name: 'tui-status-bar', capture: 'captures/errors.pcap', cols: 120, rows: 40, keys: [], crop: [-1] },
];

/** Command output the documents show, run as written (`$ mpa-dissect ARGS`), optionally cut to some lines. */
export interface OutputShot {
  readonly name: string;
  readonly args: readonly string[];
  /** The lines kept ("..." marks what was left out between them); all by default. */
  readonly keep?: (line: string) => boolean;
}

const frameLine = (frames: readonly number[]) => (l: string) => frames.some((f) => new RegExp(`^\\s+${f}\\s`).test(l));

export const OUTPUTS: readonly OutputShot[] = [
  {
    name: 'smbd-events',
    args: ['captures/corpus/smbd-clean.pcap'],
    keep: frameLine([6, 7, 10, 11, 17, 18, 64, 65, 92]),
  },
  {
    name: 'smbd-access-outside-buffer',
    args: ['captures/corpus/smbd-access-outside-buffer.pcap'],
    keep: (l) => /^\s+41\s/.test(l) || /ulp\.access-outside-buffer stream/.test(l),
  },
  { name: 'smbd-srt', args: ['-q', '-z', 'smb2,srt', 'captures/corpus/smbd-clean.pcap'] },
];

/** One command's output block text. */
export function takeOutput(o: OutputShot): string {
  const r = spawnSync(process.execPath, [CLI, ...o.args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`mpa-dissect ${o.args.join(' ')}: ${r.stderr}`);
  const lines = r.stdout.replace(/\n$/, '').split('\n');
  const out: string[] = [`$ mpa-dissect ${o.args.join(' ')}`];
  let skipped = false;
  for (const l of lines) {
    if (!o.keep || o.keep(l)) {
      if (skipped && out.length > 1) out.push('    ...');
      out.push(l.trimEnd());
      skipped = false;
    } else skipped = true;
  }
  return `${out.join('\n')}\n`;
}

const sleep = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/** tmux on a private server whose socket is the path `server` (no socket left behind in /tmp/tmux-UID). */
function tmux(server: string, args: readonly string[]): string {
  const r = spawnSync('tmux', ['-S', server, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** The screen once it stops changing (the capture read, the last key drawn). */
function settled(server: string): string {
  let last = '';
  let same = 0;
  for (let i = 0; i < 150; i++) {
    sleep(100);
    const now = tmux(server, ['capture-pane', '-p', '-t', 'shot']);
    // Three looks alike in a row: on a loaded machine one pause in drawing is not the end of it.
    same = now === last && now.trim() !== '' ? same + 1 : 0;
    if (same >= 3) return now;
    last = now;
  }
  throw new Error('the screen did not settle in 15 s');
}

/** One shot's text from the screen drawn: its crop, lines right-trimmed. */
function cropped(s: Shot, screen: string): string {
  const lines = screen.replace(/\n$/, '').split('\n');
  const [from, to] = s.crop ?? [0];
  return `${lines
    .slice(from, to)
    .map((l) => l.trimEnd())
    .join('\n')}\n`;
}

const sameKeys = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether `b` is the same capture at the same size with `a`'s keys and maybe more after them. */
function extends_(a: Shot, b: Shot): boolean {
  return (
    a.capture === b.capture &&
    a.cols === b.cols &&
    a.rows === b.rows &&
    a.keys.length <= b.keys.length &&
    a.keys.every((k, i) => sameKeys(k, b.keys[i]!))
  );
}

/**
 * The shots in runs one terminal UI session can take, one after the other: each run is one capture
 * at one size, each shot's keys those of the one before it and more. The status bar (no keys) is the
 * first screen of the session whose next shot presses `n`: the UI is started once for both.
 */
export function sessionsOf(shots: readonly Shot[]): Shot[][] {
  const runs: Shot[][] = [];
  for (const s of [...shots].sort((a, b) => a.keys.length - b.keys.length)) {
    const run = runs.find((r) => extends_(r[r.length - 1]!, s));
    if (run) run.push(s);
    else runs.push([s]);
  }
  return runs;
}

/** The texts of a run of shots (sessionsOf): the UI under a private tmux server at their size, keys sent as typed. */
export function takeShots(run: readonly Shot[]): Map<string, string> {
  const first = run[0]!;
  const out = new Map<string, string>();
  const dir = mkdtempSync(join(tmpdir(), 'mpa-shots-'));
  const server = join(dir, 'tmux.sock');
  const cmd = `env NO_COLOR=1 TERM=xterm-256color "${process.execPath}" "${CLI}" tui "${join(root, first.capture)}"`;
  tmux(server, ['new-session', '-d', '-s', 'shot', '-x', String(first.cols), '-y', String(first.rows), cmd]);
  try {
    let screen = settled(server);
    let sent = 0;
    for (const s of run) {
      for (; sent < s.keys.length; sent++) {
        const k = s.keys[sent]!;
        // Literal text one character at a time, as typed: a burst can arrive as one unparsed chunk.
        const parts = k[0] === '-l' ? [...k[1]!].map((c) => ['-l', c]) : [k];
        for (const p of parts) {
          tmux(server, ['send-keys', '-t', 'shot', ...p]);
          sleep(40);
        }
        sleep(100);
      }
      // A shot with keys is the screen once the last of them is drawn; one without is the first screen.
      if (s.keys.length > 0) screen = settled(server);
      out.set(s.name, cropped(s, screen));
    }
    return out;
  } finally {
    spawnSync('tmux', ['-S', server, 'kill-server']);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `text` with every `<!-- screenshot NAME -->` block of `shots` replaced; null when none is there. */
export function putShots(text: string, shots: ReadonlyMap<string, string>): string {
  return text.replace(
    /(<!-- screenshot ([\w-]+) -->\n)```[^\n]*\n[\s\S]*?```\n(<!-- \/screenshot -->)/g,
    (all, open: string, name: string, close: string) => {
      const t = shots.get(name);
      return t === undefined ? all : `${open}\`\`\`\n${t}\`\`\`\n${close}`;
    },
  );
}

/** The Markdown files that may hold screenshots. */
function documents(): string[] {
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    join(root, 'DEVELOPING.md'),
    ...readdirSync(docs)
      .filter((f) => f.endsWith('.md'))
      .map((f) => join(docs, f)),
  ].filter((f) => existsSync(f));
}

function main(): number {
  const check = process.argv.includes('--check');
  if (spawnSync('tmux', ['-V']).status !== 0) {
    process.stderr.write('screenshots: tmux not found (apt-get install tmux)\n');
    return 2;
  }
  if (!existsSync(CLI)) {
    process.stderr.write('screenshots: build first (npm run build)\n');
    return 2;
  }
  const shots = new Map<string, string>();
  for (const run of sessionsOf(SHOTS)) {
    for (const [name, text] of takeShots(run)) shots.set(name, text);
    for (const s of run) process.stderr.write(`screenshots: ${s.name} (${s.cols}x${s.rows}, ${s.capture})\n`);
  }
  for (const o of OUTPUTS) {
    shots.set(o.name, takeOutput(o));
    process.stderr.write(`screenshots: ${o.name} (mpa-dissect ${o.args.join(' ')})\n`);
  }
  let stale = 0;
  const dir = join(root, 'docs', 'screenshots');
  if (!check) {
    mkdirSync(dir, { recursive: true });
    for (const [name, text] of shots) writeFileSync(join(dir, `${name}.txt`), text);
  }
  for (const f of documents()) {
    const was = readFileSync(f, 'utf8');
    const now = putShots(was, shots);
    if (now === was) continue;
    stale++;
    if (check) process.stderr.write(`screenshots: ${f} shows screens the tool no longer draws\n`);
    else writeFileSync(f, now);
  }
  if (check) return stale ? 1 : 0;
  if (process.argv.includes('--text-only')) return 0;
  const html = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'html-screenshot.js')], {
    stdio: 'inherit',
  });
  if (html.status !== 0) process.stderr.write('screenshots: docs/html-report.png not regenerated (see above)\n');
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
