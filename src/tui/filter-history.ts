/**
 * The filter prompt's history, kept across runs as termshark keeps it: one filter a line in
 * $XDG_STATE_HOME/mpa-dissect/filter-history (~/.local/state/... without it), the newest last,
 * at most HISTORY_MAX entries. A missing, corrupt or unwritable file costs the history, never the
 * UI: what cannot be read is skipped, what cannot be written is not written.
 */
import { mkdirSync, openSync, readSync, closeSync, fstatSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { PROMPT_MAX } from './prompt-line.js';

export const HISTORY_MAX = 100;
/** Octets read from the end of the file at most: a huge file is not read whole. */
const READ_MAX = HISTORY_MAX * (PROMPT_MAX + 1);

/** Where the history lives, from the environment; null when there is no home to put it in. */
export function historyPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const state = env['XDG_STATE_HOME'];
  if (state?.startsWith('/')) return join(state, 'mpa-dissect', 'filter-history');
  let home = env['HOME'];
  if (!home) {
    try {
      home = homedir();
    } catch {
      return null;
    }
  }
  return home ? join(home, '.local', 'state', 'mpa-dissect', 'filter-history') : null;
}

/** A line that can be a filter again: no control characters, not too long, not blank. */
function usable(line: string): boolean {
  return line.trim() !== '' && line.length <= PROMPT_MAX && !/[\u0000-\u001f\u007f\ufffd]/.test(line);
}

export class FilterHistory {
  private entries: string[] = [];
  /** Walking with Up/Down: the entry shown (entries.length: the draft), and the draft typed. */
  private pos = 0;
  private draft = '';

  /** `path` null: kept for this run only (tests, no home directory). */
  constructor(private readonly path: string | null = null) {
    if (path) this.entries = read(path);
    this.pos = this.entries.length;
  }

  list(): readonly string[] {
    return this.entries;
  }

  /** A filter applied: the newest entry (moved there when already known), and saved. */
  add(filter: string): void {
    if (!usable(filter)) return;
    const at = this.entries.indexOf(filter);
    if (at >= 0) this.entries.splice(at, 1);
    this.entries.push(filter);
    if (this.entries.length > HISTORY_MAX) this.entries.splice(0, this.entries.length - HISTORY_MAX);
    this.reset();
    if (this.path) write(this.path, this.entries);
  }

  /** The prompt opened: walking starts again from the draft. */
  reset(): void {
    this.pos = this.entries.length;
    this.draft = '';
  }

  /** Up (-1, older) or Down (+1, newer) from the text shown; null when there is nothing further. */
  walk(step: -1 | 1, current: string): string | null {
    const to = this.pos + step;
    if (to < 0 || to > this.entries.length) return null;
    if (this.pos === this.entries.length) this.draft = current;
    this.pos = to;
    return to === this.entries.length ? this.draft : this.entries[to]!;
  }
}

function read(path: string): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return [];
    const n = Math.min(st.size, READ_MAX);
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const r = readSync(fd, buf, got, n - got, st.size - n + got);
      if (r <= 0) break;
      got += r;
    }
    const lines = buf.subarray(0, got).toString('utf8').split('\n');
    // Read from the middle of a big file: its first line is likely a piece of one.
    if (st.size > n) lines.shift();
    // Newest last; a filter repeated keeps its newest place.
    const seen = new Set<string>();
    const out: string[] = [];
    for (let k = lines.length - 1; k >= 0 && out.length < HISTORY_MAX; k--) {
      const l = lines[k]!;
      if (usable(l) && !seen.has(l)) {
        seen.add(l);
        out.push(l);
      }
    }
    return out.reverse();
  } catch {
    return [];
  } finally {
    closeSync(fd);
  }
}

function write(path: string, entries: readonly string[]): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    // Written beside it, then renamed: a run that dies mid-write leaves the old history whole.
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, `${entries.join('\n')}\n`, { mode: 0o600 });
    renameSync(tmp, path);
  } catch {
    // A read-only home or a full disk: the history is for this run only.
  }
}
