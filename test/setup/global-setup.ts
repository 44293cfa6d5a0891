/**
 * Runs once per `vitest run`, before any test file: checks that dist/ is built (the end-to-end
 * suites run the built CLI), probes the external tools the suites skip without (once, instead of
 * a `tshark --version` in every file that needs it), and makes one temporary directory for the
 * fixtures the run generates and shares (test/helpers/run-fixtures.ts), removed at the end.
 * Test files read what it provides with `inject('tools')` / `inject('runDir')`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

export interface Tools {
  /** `tshark -v`'s output, or null when tshark does not run. */
  tshark: string | null;
  tmux: boolean;
}

declare module 'vitest' {
  export interface ProvidedContext {
    tools: Tools;
    runDir: string;
  }
}

function probe(cmd: string, args: string[]): string | null {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return r.status === 0 ? r.stdout : null;
}

export default function setup(project: TestProject): () => void {
  const cli = resolve(project.config.root, 'dist/cli/main.js');
  if (!existsSync(cli))
    throw new Error(`${cli} is missing: build first (npm test does; alone: npx tsc -p tsconfig.json)`);
  const runDir = mkdtempSync(join(tmpdir(), 'mpa-dissect-run-'));
  project.provide('runDir', runDir);
  project.provide('tools', { tshark: probe('tshark', ['-v']), tmux: probe('tmux', ['-V']) !== null });
  return () => rmSync(runDir, { recursive: true, force: true });
}
