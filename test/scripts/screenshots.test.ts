/**
 * The screenshots and command outputs the documents show are the tool's own (scripts/screenshots.ts):
 * the block replacement, and every marked block of README.md, DEVELOPING.md and docs/ equal to what
 * the built tool draws now (the terminal UI under tmux; skipped, with why, where tmux is missing).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { putShots } from '../../scripts/screenshots.js';
import { requireBuilt, ROOT } from '../cli/helpers.js';
import { HAVE_TMUX } from '../helpers/tools.js';

describe('screenshots in the documents', () => {
  it('replaces the block between the markers, and only a block it has a shot for', () => {
    const doc =
      'a\n<!-- screenshot x -->\n```\nold\n```\n<!-- /screenshot -->\nb\n<!-- screenshot y -->\n```\nkept\n```\n<!-- /screenshot -->\n';
    const out = putShots(doc, new Map([['x', 'new 1\nnew 2\n']]));
    expect(out).toBe(
      'a\n<!-- screenshot x -->\n```\nnew 1\nnew 2\n```\n<!-- /screenshot -->\nb\n<!-- screenshot y -->\n```\nkept\n```\n<!-- /screenshot -->\n',
    );
    expect(putShots('no markers\n', new Map([['x', 'y\n']]))).toBe('no markers\n');
  });

  it.skipIf(!HAVE_TMUX)(
    `every block is what the tool shows now (npm run screenshots regenerates them)${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`,
    () => {
      requireBuilt();
      const r = spawnSync(
        process.execPath,
        [join(ROOT, 'dist', 'scripts', 'screenshots.js'), '--check', '--text-only'],
        {
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(r.status, r.stderr).toBe(0);
    },
    150_000,
  );
});
