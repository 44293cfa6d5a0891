/**
 * The external tools some suites need, probed once per run by test/setup/global-setup.ts (not
 * once per file: `tshark -v` alone takes most of a second of CPU). Suites skip visibly, naming
 * the reason, when a tool is missing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { inject } from 'vitest';

const tools = inject('tools');

/** True when tshark runs here. */
export const HAVE_TSHARK = tools.tshark !== null;
/** `tshark -v`'s first line, or null. */
export const TSHARK_VERSION = tools.tshark?.split('\n')[0] ?? null;
/** True when tmux runs here. */
export const HAVE_TMUX = tools.tmux;

/**
 * `tshark -G fields` (every field Wireshark registers), or null without tshark: run once per test
 * run and kept in the run's directory for the other files that ask (it costs most of a CPU second).
 */
export function wiresharkFields(): string | null {
  if (!HAVE_TSHARK) return null;
  const file = join(inject('runDir'), 'tshark-G-fields.txt');
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // Not there yet: this file is the first to ask.
  }
  const r = spawnSync('tshark', ['-G', 'fields'], { encoding: 'utf8', timeout: 120_000, maxBuffer: 256 << 20 });
  if (r.status !== 0) return null;
  // Written whole under another name and renamed, so that a file reading it never sees half of it.
  const part = `${file}.${process.pid}.${threadId}`;
  writeFileSync(part, r.stdout);
  renameSync(part, file);
  return r.stdout;
}
