/**
 * The TUI's prompts under a real terminal (tmux): a 100 KB paste at `/` costs no more than the
 * prompt's cap and q, Ctrl-C, SIGTERM and SIGHUP still end the UI within seconds with the terminal
 * given back (issue 26). Skipped, with the reason in the test name, when tmux is not installed.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { HAVE_TMUX, Tmux } from './tmux.js';
import { PROMPT_MAX } from '../../src/tui/prompt-line.js';

const errorsPcap = join(ROOT, 'captures', 'errors.pcap');
/** 100 KB of a filter. No key of the list in it, so whatever follows Escape is only the keys sent. */
const PASTE = '1 == 1 && '.repeat(10_000);

describe.skipIf(!HAVE_TMUX)(`tui prompts under tmux${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`, () => {
  let t: Tmux;
  beforeAll(() => requireBuilt());
  afterEach(() => t?.kill());

  const opened = async (w = 120, h = 40): Promise<void> => {
    t = new Tmux();
    t.start(`node ${CLI} tui ${errorsPcap}`, w, h, ROOT);
    await t.waitFor((s) => /FPDUs/.test(s) && /errors\.pcap/.test(s) && !/reading/.test(s));
    t.keys('/');
    await t.waitFor((s) => s.includes('Display filter:'));
  };

  /** The count of characters the prompt refused, once it stops growing (the paste has been read). */
  const pasteRead = async (): Promise<number> => {
    let last = -1;
    let same = 0;
    const end = Date.now() + 15_000;
    for (;;) {
      const m = /(\d+) more were not taken/.exec(t.screen());
      const n = m ? Number(m[1]) : -1;
      same = n >= 0 && n === last ? same + 1 : 0;
      last = n;
      if (same >= 5) return n;
      if (Date.now() > end) throw new Error(`the paste was not read within 15 s:\n${t.screen()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('a 100 KB paste at / is cut at the cap, said so, and q quits within seconds after Esc', async () => {
    await opened();
    const t0 = Date.now();
    t.paste(PASTE);
    const dropped = await pasteRead();
    expect(dropped).toBeGreaterThan(PASTE.length / 2);
    const s = t.screen();
    expect(s).toContain(`the prompt holds at most ${PROMPT_MAX} characters`);
    // The line shows the end of the text, its start marked as cut.
    expect(s).toMatch(/Display filter: …[1=& ]+█/);
    t.keys('Escape');
    await t.waitFor((x) => !x.includes('Display filter:'), 5_000);
    t.keys('q');
    await t.waitFor((x) => x.includes('EXIT=0'), 5_000);
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(t.format('#{alternate_on}')).toBe('0');
  });

  it('Esc and Ctrl-C in one read (pressed while a paste was still being taken in) still end the UI', async () => {
    // blessed drops Esc followed by a control character when both arrive together: the UI
    // delivers them itself (src/tui/blessed-screen.ts). One paste puts both in one read.
    await opened();
    t.paste('1 == 1\x1b\x03');
    await t.waitFor((x) => x.includes('EXIT=0'), 5_000);
    expect(t.format('#{alternate_on}')).toBe('0');
  });

  it('Esc and Tab in one read: the prompt closes and the UI goes on (only Ctrl-C ends it)', async () => {
    await opened();
    t.paste('1 == 1\x1b\t');
    await t.waitFor((x) => !x.includes('Display filter:'), 5_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(t.screen()).not.toContain('EXIT=');
    t.keys('q');
    await t.waitFor((x) => x.includes('EXIT=0'), 5_000);
  });

  it('the filter typed is checked when typing pauses: the caret message for a pasted bad filter', async () => {
    await opened();
    t.paste('iwarp_mpa.crc_status == "bad" && iwarp_mpa.bogus');
    const s = await t.waitFor((x) => x.includes('^~~~'), 5_000);
    expect(s).toMatch(/iwarp_mpa\.bogus.*neither a field nor a protocol name/);
    t.keys('C-c');
    await t.waitFor((x) => x.includes('EXIT=0'), 5_000);
  });

  for (const [sig, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const)
    it(`${sig} right after a 100 KB paste ends the UI within seconds (exit ${code}) and gives the terminal back`, async () => {
      await opened(80, 24);
      const pid = t.childPid();
      t.paste(PASTE);
      process.kill(pid, sig);
      await t.waitFor((x) => x.includes(`EXIT=${code}`), 5_000);
      expect(t.format('#{alternate_on}')).toBe('0');
      expect(t.format('#{cursor_flag}')).toBe('1');
      expect(t.screen()).not.toMatch(/\bat .*\.js:\d+|TypeError|RangeError/);
    });

  it('80x24: w offers its default selected, the path typed replaces it, the long result shows whole', async () => {
    t = new Tmux();
    t.start(`node ${CLI} tui ${errorsPcap}`, 80, 24, ROOT);
    await t.waitFor((s) => /FPDUs/.test(s) && /errors\.pcap/.test(s) && !/reading/.test(s));
    t.keys('Tab'); // the PDU list: w writes the PDUs listed
    t.keys('w');
    await t.waitFor((s) => s.includes('Write pcap to: errors-pdus.pcap') && s.includes('typing replaces'));
    // A path longer than the status bar: the message cannot fit there.
    const dir = mkdtempSync(join(tmpdir(), 'mpa-tui-write-a-directory-with-a-rather-long-name-'));
    const out = join(dir, 'pdus-written-from-the-terminal-ui.pcap');
    t.text(out);
    await t.waitFor((s) => s.includes('Write pcap to: ') && !s.includes('errors-pdus.pcap'));
    t.keys('Enter');
    const s = await t.waitFor((x) => x.includes('Done') && x.includes('any key closes'));
    expect(existsSync(out)).toBe(true);
    const text = s.replace(/[│┌┐└┘─]/g, ' ').replace(/\s+/g, ' ');
    expect(text.replace(/ /g, '')).toContain(`to${out}`.replace(/ /g, ''));
    t.keys('x');
    await t.waitFor((x) => !x.includes('any key closes'));
    // A path that cannot be written: the error, whole, in the popup.
    t.keys('w');
    await t.waitFor((x) => x.includes('Write pcap to:'));
    t.text(join(dir, 'no-such-directory', 'x.pcap'));
    t.keys('Enter');
    const e = await t.waitFor((x) => x.includes('Error') && x.includes('any key closes'));
    expect(e.replace(/[│┌┐└┘─\s]/g, '')).toContain(`cannotwrite${join(dir, 'no-such-directory', 'x.pcap')}`);
    t.keys('x');
    t.keys('q');
    await t.waitFor((x) => x.includes('EXIT=0'));
  });

  it('Tab completes a field name; a filter applied is there with Up in the next run', async () => {
    await opened();
    const state = t.stateHome;
    t.text('iwarp_mpa.crc_st');
    t.keys('Tab');
    await t.waitFor((x) => x.includes('Display filter: iwarp_mpa.crc_status█'));
    t.text(' == "bad"');
    t.keys('Enter');
    await t.waitFor((x) => /1 shown \(filtered\)/.test(x));
    t.keys('q');
    await t.waitFor((x) => x.includes('EXIT=0'));
    t.kill();
    t = new Tmux();
    t.stateHome = state;
    t.start(`node ${CLI} tui ${errorsPcap}`, 80, 24, ROOT);
    await t.waitFor((s) => /FPDUs/.test(s) && !/reading/.test(s));
    t.keys('/');
    await t.waitFor((s) => s.includes('Display filter:'));
    t.keys('Up');
    await t.waitFor((x) => x.includes('Display filter: iwarp_mpa.crc_status == "bad"'));
    t.keys('Enter');
    await t.waitFor((x) => /1 shown \(filtered\)/.test(x));
  });

  it('Ctrl-C right after a 100 KB paste quits within seconds', async () => {
    await opened();
    t.paste(PASTE);
    t.keys('C-c');
    await t.waitFor((x) => x.includes('EXIT=0'), 8_000);
    expect(t.format('#{alternate_on}')).toBe('0');
  });
});
