/**
 * The status line on a real terminal (tmux): while capturing, stderr shows packets, flows, FPDUs,
 * errors and drops under the event lines; when the run ends it is erased before the tables.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CLI, requireBuilt } from '../cli/helpers.js';
import { cannotCapture, exchange, freePort } from './helpers.js';
import { HAVE_TMUX } from '../helpers/tools.js';

const why = cannotCapture('cap') ?? (HAVE_TMUX ? null : 'tmux is not installed');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(why !== null)('live status line on a terminal', () => {
  it('shows the counts while capturing and is gone at the end', async () => {
    requireBuilt();
    const port = await freePort();
    const session = `mpa-status-${process.pid}-${port}`;
    const pane = () => spawnSync('tmux', ['capture-pane', '-p', '-t', session], { encoding: 'utf8' }).stdout;
    // CI unset: the status line, like the progress bar, stays off in CI logs (and .ci/run sets CI).
    const cmd = `env -u CI NO_COLOR=1 ${process.execPath} ${CLI} -i lo -f 'tcp port ${port}' -a duration:6; echo EXIT=$?; sleep 30`;
    expect(spawnSync('tmux', ['new-session', '-d', '-s', session, '-x', '200', '-y', '40', cmd]).status).toBe(0);
    try {
      for (let i = 0; i < 100 && !pane().includes('Capturing on'); i++) await sleep(100);
      await sleep(300);
      await exchange(port, { script: 'send:10,write:5000' }, { script: 'send:20' });
      await sleep(1200);
      expect(pane()).toMatch(/^lo: \d+ packets {2}1 flow {2}4 FPDUs {2}0 errors {2}drops n\/a/m);
      for (let i = 0; i < 100 && !pane().includes('EXIT='); i++) await sleep(100);
      const end = pane();
      expect(end).toContain('EXIT=0');
      expect(end).toMatch(/Findings by rule/);
      expect(end).not.toMatch(/packets {2}1 flow /);
    } finally {
      spawnSync('tmux', ['kill-session', '-t', session]);
    }
  }, 60_000);
});

if (why !== null) {
  describe('live status line on a terminal', () => {
    it.skip(`skipped: ${why}`, () => {});
  });
}
