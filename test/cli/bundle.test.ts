/**
 * The bundled command (scripts/bundle.ts, `npm run build`): what a plain run loads stays the entry,
 * the startup chunk and rolldown's helpers, so a module that joins the plain run's path behind a
 * dynamic import (a file opened at every start) is seen here. Skipped, with the reason, when dist/
 * was built by tsc alone (it then runs module by module).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES, CLI, ROOT } from './helpers.js';

const bundled = existsSync(CLI) && readFileSync(CLI, 'utf8').includes('// bundled by scripts/bundle.ts');

/** The files of dist/ a run of the command loads, as Node's ESM loader names them (NODE_DEBUG=esm). */
function loaded(args: readonly string[]): string[] {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: CAPTURES,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', NODE_DEBUG: 'esm' },
  });
  expect(r.status).not.toBe(null);
  const prefix = `file://${join(ROOT, 'dist')}/`;
  const files = new Set<string>();
  for (const m of r.stderr.matchAll(/file:\/\/[^\s'",]+?\.js\b/g)) {
    if (m[0].startsWith(prefix)) files.add(m[0].slice(prefix.length).replace(/-[\w-]{8}\.js$/, '.js'));
  }
  return [...files].sort();
}

describe.skipIf(!bundled)('the bundled command (skipped when dist/ was built by tsc alone)', () => {
  it('a plain run loads the entry, the startup chunk and rolldown helpers, nothing else', () => {
    expect(loaded(['errors.pcap'])).toEqual(['cli/chunks/rolldown-runtime.js', 'cli/chunks/startup.js', 'cli/main.js']);
  });

  it('--json adds the response-time and latency chunks it asks for', () => {
    expect(loaded(['--json', 'sample.pcap'])).toEqual([
      'cli/chunks/latency.js',
      'cli/chunks/rolldown-runtime.js',
      'cli/chunks/srt.js',
      'cli/chunks/startup.js',
      'cli/main.js',
    ]);
  });
});
