/**
 * The TUI at 80x24 and 120x40 in a real terminal (tmux), issue 22's terminal-UI items: the PDU
 * list keeps the CRC verdict, badges and Info at 80 columns; the help scrolls to every key; long
 * frame ranges keep the columns in line; the flow table names the upper layer at 120 columns; the
 * status bar's plurals and its cut mark. Skipped, with the reason in the name, without tmux.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { HAVE_TMUX, Tmux } from './tmux.js';
import { writeLongFrameCapture } from './long-frames.js';
import { openModel } from './helpers.js';
import { toTreeRow } from './tree-nav.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-narrow-e2e-'));
const errorsPcap = join(ROOT, 'captures', 'errors.pcap');

describe.skipIf(!HAVE_TMUX)(`tui at 80x24 and 120x40${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`, () => {
  let t: Tmux;
  beforeAll(() => requireBuilt());
  afterEach(() => t?.kill());

  const open = async (path: string, w: number, h: number, args = ''): Promise<string> => {
    t = new Tmux();
    t.start(`node ${CLI} tui ${args} ${path}`, w, h, ROOT);
    return t.waitFor((s) => /FPDU/.test(s) && !/reading/.test(s) && /PDUs: all flows/.test(s));
  };

  it('80x24: the bad-CRC row shows BAD, [E] and its Info; the status bar is cut with …', async () => {
    // A filter long enough that the status bar cannot hold it at 80 columns.
    const s = await open(errorsPcap, 80, 24, `-Y 'iwarp_mpa.crc_status == "bad" || iwarp_mpa.crc_status == "good"'`);
    expect(s.split('\n').every((l) => [...l].length <= 80)).toBe(true);
    expect(s).toMatch(/No\.\s+Seq Kind\s+Len Mk CRC Info/);
    // n: to the first PDU with a finding; on until the one with the bad CRC.
    t.keys('Tab', 'n');
    const row = await t.waitFor((x) => /│\s+9 → +\d+ FPDU +\d+ +\d* BAD \[E\] ?\S/.test(x), 10_000);
    expect(row).toMatch(/BAD \[E\] ?Send/);
    // 80 columns cannot hold the whole status bar: the cut is marked.
    expect(row.trimEnd().split('\n').at(-1)!.trimEnd()).toMatch(/…$/);
  });

  it('80x24: ? lists the keys, scrolls with End to l, w, ? and q', async () => {
    await open(errorsPcap, 80, 24);
    t.keys('?');
    const top = await t.waitFor((x) => /Keys 1-\d+ of \d+/.test(x));
    expect(top).toMatch(/↑ ↓ {2}j k/);
    t.keys('End');
    const end = await t.waitFor((x) => /Keys \d+-(\d+) of \1/.test(x));
    for (const k of [/│l\s+startup ladder/, /│w\s+write a pcap/, /│\?\s+this help/, /│q {2}Ctrl-C\s+quit/])
      expect(end).toMatch(k);
    t.keys('x');
    await t.waitFor((x) => !x.includes('Keys '));
    t.keys('q');
    await t.waitFor((x) => x.includes('EXIT=0'));
  });

  it('120x40: the flow table names the upper layer; the status bar says 1 flow, 1 warning', async () => {
    const s = await open(errorsPcap, 120, 40);
    expect(s).toMatch(/10\.0\.0\.1:40001 → 10\.0\.0\.2:4420 +startup +2 +1 +10\/1 +\d+ NVMe\/iWARP +1/);
    expect(s).toMatch(/21 packets {2}1 flow {2}11 FPDUs {2}2 errors {2}1 warning {2}no filter {2}\? help {2}q quit/);
  });

  for (const [w, h] of [
    [80, 24],
    [120, 40],
  ] as const)
    it(`${w}x${h}: tui README.md says why it cannot be read, the panes empty, and q exits 2 as the CLI does`, async () => {
      const cli = spawnSync(process.execPath, [CLI, 'README.md'], { cwd: ROOT, encoding: 'utf8' });
      expect(cli.status).toBe(2);
      const reason = cli.stderr.trim().replace(/^mpa-dissect: /, '');
      t = new Tmux();
      t.start(`node ${CLI} tui README.md`, w, h, ROOT);
      const s = await t.waitFor((x) => x.includes('Cannot read the capture') && x.includes('q quits'));
      expect(s.split('\n').every((l) => [...l].length <= w)).toBe(true);
      // The whole reason (wrapped when the screen is narrow), as the CLI gives it.
      const text = s.replace(/[│┌┐└┘─]/g, ' ').replace(/\s+/g, ' ');
      expect(text).toContain(reason);
      expect(s).not.toMatch(/capture\.read-error/);
      t.keys('q');
      await t.waitFor((x) => x.includes('EXIT=2'));
      expect(t.format('#{alternate_on}')).toBe('0');
    });

  for (const [w, h] of [
    [80, 24],
    [120, 40],
  ] as const)
    it(`${w}x${h}: a tree field's octets come into view in the bytes pane, lit`, async () => {
      // The keys to the CRC row, as the view model at this size counts them.
      const { vm } = await openModel(errorsPcap, { width: w, height: h });
      const { at, downs } = toTreeRow(vm, /^\s*CRC: 0x/);
      await open(errorsPcap, w, h);
      t.keys('Tab', 'g');
      for (let k = 0; k < at; k++) t.keys('Down');
      t.keys('Enter');
      await t.waitFor((x) => /CRC seen 0xa7f36a54/.test(x));
      for (let k = 0; k < downs; k++) t.keys('Down');
      // The CRC octets (a7 f3 6a 54 on the wire) in the field style: black on white.
      const s = await t.waitFor((x) => /\x1b\[[0-9;]*47[0-9;]*m(\x1b\[[0-9;]*m)*a7/.test(x), 10_000, true);
      const row = s.split('\n').find((l) => /\x1b\[[0-9;]*47[0-9;]*m(\x1b\[[0-9;]*m)*a7/.test(l))!;
      for (const b of ['f3', '6a', '54']) expect(row).toMatch(new RegExp(`47[0-9;]*m(\\x1b\\[[0-9;]*m)*${b}`));
    });

  it('tui --help in an 80x24 terminal: the key table, exit 0, no UI', async () => {
    t = new Tmux();
    t.start(`node ${CLI} tui --help`, 80, 24, ROOT);
    const s = await t.waitFor((x) => x.includes('EXIT=0'));
    expect(s).toMatch(/^ {2}q {2}Ctrl-C +quit$/m);
    expect(s).toMatch(/^ {2}w +write a pcap/m);
    expect(t.format('#{alternate_on}')).toBe('0');
  });

  for (const [w, h] of [
    [120, 40],
    [80, 24],
  ] as const)
    it(`${w}x${h}: frame ranges past 138000 keep the PDU columns in line`, async () => {
      const path = join(tmp, 'long-frames.pcap');
      writeLongFrameCapture(path);
      const s = await open(path, w, h);
      const lines = s.split('\n');
      const head = lines.find((l) => /No\..*Kind/.test(l))!;
      const at = head.indexOf('Kind');
      const rows = lines.filter((l) => /│ *\d{6}(-\d+)? /.test(l));
      expect(rows.length).toBeGreaterThan(2);
      expect(rows.some((l) => /\d{6}-\d+/.test(l))).toBe(true);
      for (const l of rows) expect(l.slice(at)).toMatch(/^(FPDU|Request|Reply|finding) /);
    });
});
