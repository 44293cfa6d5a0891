/**
 * Runs the built CLI (dist/cli/main.js) as a user would, and compares outputs with golden files.
 * `npm test` builds dist/ before vitest; run `npx tsc -p tsconfig.json` first when running vitest
 * alone. UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(here, '../..');
export const CLI = join(ROOT, 'dist/cli/main.js');
export const CAPTURES = join(ROOT, 'captures');
export const GOLDEN = join(here, 'golden');

export function requireBuilt(): void {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build first (npm test does; alone: npx tsc -p tsconfig.json)`);
  }
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args` in `cwd` (captures/ by default) with a plain environment. */
export function cli(
  args: readonly string[],
  o: { cwd?: string; input?: Uint8Array; env?: Record<string, string> } = {},
): CliResult {
  requireBuilt();
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...o.env };
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: o.cwd ?? CAPTURES,
    env,
    input: o.input ?? new Uint8Array(0),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * As cli(), without blocking the worker: for suites whose tests run concurrently (describe.concurrent),
 * so that several CLI runs overlap on a machine with cores to spare.
 */
export function cliAsync(
  args: readonly string[],
  o: { cwd?: string; input?: Uint8Array; env?: Record<string, string> } = {},
): Promise<CliResult> {
  requireBuilt();
  const env: Record<string, string> = { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', ...o.env };
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: o.cwd ?? CAPTURES, env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    // A CLI that exits without reading its input is not an error here, as with spawnSync.
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? new Uint8Array(0));
    child.on('close', (code) =>
      resolvePromise({
        code,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }),
    );
  });
}

/** Compares with test/cli/golden/<name>, or writes it when UPDATE_GOLDEN=1. */
export function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) throw new Error(`golden file ${path} is missing: run UPDATE_GOLDEN=1 npx vitest run test/cli`);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}
