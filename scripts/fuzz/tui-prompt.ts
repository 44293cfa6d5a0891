/**
 * The fuzzer's `tui` target (issue 26): the terminal UI in a real terminal (a detached tmux on its
 * own socket), given random keys, hostile strings pasted at the `/` and `w` prompts (random
 * characters, 100 KB pastes, hostile filters) and resizes down to 20x5, then ended by q, Ctrl-C or
 * SIGTERM. A run fails when the UI does not end within its bound, ends with an unexpected status,
 * leaves the terminal on the alternate screen, or shows a JavaScript stack trace.
 *
 * Pastes never hold Esc, CR or LF: those would leave the prompt and turn the rest of the paste
 * into list keys (w and a path), writing files outside the case's directory. `w` prompts get
 * names without "/", so whatever is written stays in the case's directory (the UI's cwd).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Rand } from './mutate-capture.js';
import { hostileFilter } from './hostile-inputs.js';

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

/** True when tmux runs here (the target is skipped, and says so, when not). */
export function haveTmux(): boolean {
  return spawnSync('tmux', ['-V'], { stdio: 'ignore' }).status === 0;
}

/** List keys (tmux key names): everything but w, which only the `w` action sends. */
const KEYS = [
  'j', 'k', 'Up', 'Down', 'PageUp', 'PageDown', 'Home', 'End', 'g', 'G', 'Tab', 'BTab', 'Enter', 'Space',
  'Left', 'Right', 'n', 'N', 'e', 'f', 's', 'c', 'l', 'r', '?', 'x', 'BSpace', 'C-u',
] as const; // biome-ignore format: a table

const SIZES: ReadonlyArray<readonly [number, number]> = [
  [80, 24],
  [120, 40],
  [20, 5],
  [40, 10],
  [200, 60],
  [100, 30],
];

export type TuiAction =
  | { kind: 'keys'; keys: string[] }
  | { kind: 'filter'; paste: string; finish: 'Enter' | 'Escape' | 'Tab' | 'Up' }
  | { kind: 'write'; paste: string; finish: 'Enter' | 'Escape' }
  | { kind: 'resize'; w: number; h: number };

export interface TuiCase {
  name: string;
  size: readonly [number, number];
  actions: TuiAction[];
  end: 'q' | 'C-c' | 'SIGTERM';
}

/** A paste that cannot leave the prompt: Esc, CR, LF and Ctrl-C become spaces. */
function safe(s: string): string {
  return s.replace(/[\x1b\r\n\x03\x1a]/g, ' ');
}

/** Random characters of every kind a terminal can send inside a paste (control ones included). */
function randomText(r: Rand, n: number): string {
  let s = '';
  for (let k = 0; k < n; k++) {
    const c = r();
    s +=
      c < 0.6
        ? String.fromCharCode(0x20 + int(r, 95))
        : c < 0.75
          ? String.fromCharCode(int(r, 32))
          : c < 0.9
            ? String.fromCodePoint(0xa0 + int(r, 0x2f00))
            : pick(r, ['😀', '\u200b', '\u202e', '\ufeff', '\ud800', 'é', '\u0301', '\u4e2d']);
  }
  return safe(s);
}

function pasteFor(r: Rand, fields: readonly string[]): string {
  const c = r();
  if (c < 0.15) return safe('iwarp_mpa.crc_status == "bad" && '.repeat(3000)); // ~100 KB
  if (c < 0.5) return safe(hostileFilter(r, fields).text).slice(0, 120 * 1024);
  return randomText(r, 1 + int(r, c < 0.8 ? 64 : 20_000));
}

export function tuiCase(r: Rand, fields: readonly string[]): TuiCase {
  const actions: TuiAction[] = [];
  const n = 3 + int(r, 10);
  for (let k = 0; k < n; k++) {
    const c = r();
    if (c < 0.35) actions.push({ kind: 'keys', keys: Array.from({ length: 1 + int(r, 8) }, () => pick(r, KEYS)) });
    else if (c < 0.7)
      actions.push({ kind: 'filter', paste: pasteFor(r, fields), finish: pick(r, ['Enter', 'Escape', 'Tab', 'Up']) });
    else if (c < 0.85)
      actions.push({
        kind: 'write',
        paste: pasteFor(r, fields).replace(/\//g, '_').slice(0, 6000),
        finish: pick(r, ['Enter', 'Escape']),
      });
    else {
      const [w, h] = pick(r, SIZES);
      actions.push({ kind: 'resize', w, h });
    }
  }
  const size = pick(r, SIZES);
  const end = pick(r, ['q', 'C-c', 'SIGTERM'] as const);
  const kinds = actions.map((a) => a.kind[0]).join('');
  return { name: `tui ${size[0]}x${size[1]} actions ${kinds} end ${end}`, size, actions, end };
}

export interface TuiOutcome {
  ok: boolean;
  problem: string | null;
  ms: number;
  screen: string;
}

/** A V8 stack frame or a fatal error, as the CLI target judges stderr. */
const STACK =
  /^\s*at (?:.+ \()?(?:file:|node:|\/)[^\s)]*:\d+:\d+\)?$|FATAL ERROR|Maximum call stack size exceeded|TypeError|RangeError|ReferenceError/m;

const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));

/**
 * Runs one case in `dir` (the UI's cwd and state home). `capture` is the capture the UI opens;
 * `endBoundMs` how long the UI has to end after the last action.
 */
export async function runTuiCase(
  node: string,
  mainJs: string,
  capture: string,
  c: TuiCase,
  dir: string,
  endBoundMs: number,
): Promise<TuiOutcome> {
  const socket = `mpa-fuzz-tui-${process.pid}-${Math.floor(Math.random() * 1e9)}`;
  const tmux = (...a: string[]): string =>
    execFileSync('tmux', ['-L', socket, ...a], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const screen = (): string => {
    try {
      return tmux('capture-pane', '-p', '-t', '0');
    } catch {
      return '';
    }
  };
  const t0 = Date.now();
  const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const line = `cd ${q(dir)} && ${q(node)} ${q(mainJs)} tui ${q(capture)}; echo "EXIT=$?"; sleep 600`;
  const done = (problem: string | null): TuiOutcome => {
    const s = screen();
    spawnSync('tmux', ['-L', socket, 'kill-server'], { stdio: 'ignore' });
    return { ok: problem === null, problem, ms: Date.now() - t0, screen: s };
  };
  try {
    tmux(
      '-f', '/dev/null', 'new-session', '-d',
      '-e', 'LANG=C.UTF-8', '-e', `XDG_STATE_HOME=${dir}`, '-e', `HOME=${dir}`,
      '-x', String(c.size[0]), '-y', String(c.size[1]), line,
    ); // biome-ignore format: the tmux line
  } catch {
    return done('tmux would not start');
  }
  // The UI is up when it has taken the terminal (the alternate screen) and drawn on it.
  for (let end = Date.now() + 15_000; ; ) {
    const s = screen();
    let alt = '';
    try {
      alt = tmux('display-message', '-p', '-t', '0', '#{alternate_on}').trim();
    } catch {
      // not up yet
    }
    if ((alt === '1' && /[─│]/.test(s)) || /EXIT=/.test(s)) break;
    if (Date.now() > end) return done('hang (the UI never drew its screen)');
    await sleep(100);
  }
  const paste = (text: string): void => {
    const f = join(dir, 'paste.txt');
    writeFileSync(f, text);
    tmux('load-buffer', f);
    tmux('paste-buffer', '-t', '0');
  };
  // Esc closes any prompt, help or popup; the pause keeps it from joining the next key as Meta.
  const pressEscape = async (): Promise<void> => {
    tmux('send-keys', '-t', '0', 'Escape');
    await sleep(150);
  };
  try {
    for (const a of c.actions) {
      if (/EXIT=/.test(screen())) return done('ended before being told to');
      if (a.kind === 'keys') tmux('send-keys', '-t', '0', ...a.keys);
      else if (a.kind === 'resize') tmux('resize-window', '-t', '0', '-x', String(a.w), '-y', String(a.h));
      else {
        await pressEscape();
        tmux('send-keys', '-t', '0', a.kind === 'filter' ? '/' : 'w');
        await sleep(100);
        paste(a.paste);
        tmux('send-keys', '-t', '0', a.finish);
        if (a.finish === 'Escape') await sleep(150);
      }
      await sleep(50 + Math.floor(Math.random() * 150));
    }
    const tEnd = Date.now();
    let expect: number[];
    if (c.end === 'SIGTERM') {
      const shell = tmux('display-message', '-p', '-t', '0', '#{pane_pid}').trim();
      const pid = Number(spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.trim().split('\n')[0]);
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGTERM');
      expect = [143];
    } else if (c.end === 'C-c') {
      tmux('send-keys', '-t', '0', 'C-c');
      expect = [0, 2];
    } else {
      await pressEscape();
      await pressEscape();
      tmux('send-keys', '-t', '0', 'q');
      expect = [0, 2];
    }
    for (;;) {
      const s = screen();
      const m = /EXIT=(\d+)/.exec(s);
      if (m) {
        if (STACK.test(s)) return done('stack trace on the screen');
        if (!expect.includes(Number(m[1]))) return done(`exit status ${m[1]} (expected ${expect.join(' or ')})`);
        if (tmux('display-message', '-p', '-t', '0', '#{alternate_on}').trim() !== '0')
          return done('terminal left on the alternate screen');
        return done(null);
      }
      if (Date.now() - tEnd > endBoundMs) return done(`hang (no exit ${endBoundMs / 1000} s after ${c.end})`);
      await sleep(100);
    }
  } catch (e) {
    return done(`harness: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
  }
}
