/**
 * The view model at 80x24 and 120x40 (issue 22): the PDU list keeps the CRC verdict, badges and
 * Info below 120 columns, the help scrolls to every key, long frame ranges keep the columns in
 * line, the flow table names the upper layer, the status bar says "1 flow" and marks a cut.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KEYS } from '../../src/tui/keys.js';
import { clip, lineText, plural } from '../../src/tui/lines.js';
import { frameLabel, pduColumns } from '../../src/tui/pdu-columns.js';
import { KIND_FPDU } from '../../src/tui/pdu-index.js';
import { capture, openModel, paneText } from './helpers.js';
import { FILLER_FRAMES, writeLongFrameCapture } from './long-frames.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-narrow-'));

describe('PDU list columns', () => {
  it('a long frame range is written whole when it fits, as a page range when not', () => {
    expect(frameLabel([138139, 138140, 138145])).toBe('138139-138145');
    expect(frameLabel([138139, 138145], 9)).toBe('138139-45');
    expect(frameLabel([99998, 100003], 9)).toBe('99998-10…');
    expect(frameLabel([7])).toBe('7');
  });

  it('Time shows from 120 columns; below, Seq is as wide as its widest value', () => {
    expect(pduColumns(120, ['1'], ['1397']).time).toBe(true);
    const narrow = pduColumns(80, ['6-8'], ['1', '1397']);
    expect(narrow.time).toBe(false);
    expect(narrow.seqW).toBe(4);
  });
});

describe('view model at 80x24', () => {
  it('the bad-CRC FPDU row keeps its CRC verdict, its [E] badge and its Info', async () => {
    const { vm, model } = await openModel(capture('errors.pcap'), { width: 80, height: 24 });
    const ix = model.index;
    const bad = vm.visibleItems().findIndex((i) => ix.kind[i] === KIND_FPDU && ix.crc[i] === 2);
    expect(bad).toBeGreaterThanOrEqual(0);
    vm.focus = 'pdus';
    vm.key('g', 'g');
    for (let k = 0; k < bad; k++) vm.key('down');
    const rows = paneText(vm, 'pdus');
    expect(rows[0]).not.toMatch(/Time/);
    const row = rows.find((l) => /\bBAD\b/.test(l));
    expect(row).toBeDefined();
    const info = model.infoOf(vm.visibleItems()[bad]!);
    expect(row).toMatch(/BAD \[E\]/);
    // Info starts in view (the first word of it, at least).
    expect(row).toContain(info.split(' ')[0]);
    const inner = vm.panes().find((p) => p.id === 'pdus')!.rect.width - 2;
    for (const l of rows) expect(Array.from(l).length).toBeLessThanOrEqual(inner);
  });

  it('the help scrolls: every key is reachable, the last ones at the end', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { width: 80, height: 24 });
    vm.key('?', '?');
    const seen = new Set<string>();
    const first = vm.overlay()!;
    expect(first.lines.length).toBeLessThanOrEqual(20);
    expect(first.title).toMatch(/^Keys 1-\d+ of \d+/);
    for (let k = 0; k < 40; k++) {
      for (const l of vm.overlay()!.lines) {
        seen.add(lineText(l));
        expect(Array.from(lineText(l)).length).toBeLessThanOrEqual(76);
      }
      vm.key('down');
    }
    const all = [...seen].join('\n');
    for (const k of KEYS) expect(all).toContain(k.keys);
    expect(vm.overlay()!.lines.map(lineText).join('\n')).toContain('q  Ctrl-C');
    vm.key('x', 'x');
    expect(vm.overlay()).toBeNull();
  });

  it('the status bar says 1 flow and 1 warning, and marks a cut with …', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { width: 80, height: 24 });
    expect(
      vm.applyFilter(
        'iwarp_mpa.crc_status == "bad" || iwarp_mpa.crc_status == "good" || iwarp_mpa.crc_status == "bad"',
      ),
    ).toBe(true);
    const s = lineText(vm.status());
    expect(s).toMatch(/\b1 flow\b/);
    expect(Array.from(s).length).toBe(80);
    expect(s.endsWith('…')).toBe(true);
    const wide = await openModel(capture('errors.pcap'), { width: 120, height: 40 });
    const w = lineText(wide.vm.status());
    expect(w).toMatch(/\b1 flow\b.*\b1 warning\b/);
    expect(w).toMatch(/\? help {2}q quit$/);
  });

  it('plural and clip', () => {
    expect(plural(1, 'flow')).toBe('1 flow');
    expect(plural(0, 'flow')).toBe('0 flows');
    expect(lineText(clip([{ t: 'abcdef' }], 4))).toBe('abc…');
    expect(lineText(clip([{ t: 'abcd' }], 4))).toBe('abcd');
  });
});

describe('long frame ranges and the upper-layer column', () => {
  for (const [w, h] of [
    [120, 40],
    [80, 24],
  ] as const)
    it(`frames past ${FILLER_FRAMES} keep the PDU columns in line at ${w}x${h}`, async () => {
      const path = join(tmp, `long-frames-${w}.pcap`);
      writeLongFrameCapture(path);
      const { vm, model } = await openModel(path, { width: w, height: h });
      const ix = model.index;
      const multi = vm.visibleItems().filter((i) => ix.framesOf(i).length > 1);
      expect(multi.length).toBeGreaterThan(0);
      const rows = paneText(vm, 'pdus').slice(1);
      expect(rows.some((l) => /\d{6}-\d+/.test(l))).toBe(true);
      // The Kind column starts at the same place on every row, as under the header.
      const at = paneText(vm, 'pdus')[0]!.indexOf('Kind');
      for (const l of rows) expect(l.slice(at)).toMatch(/^(FPDU|Request|Reply|finding) /);
    });

  it('the flow table at 120 columns names the upper layer whole', async () => {
    const { vm, model } = await openModel(capture('errors.pcap'), { width: 120, height: 40 });
    const upper = model.flows[0]!.upper!;
    const name = /^[^:(]+/.exec(upper)![0].trim();
    expect(name.length).toBeGreaterThan(5);
    const row = paneText(vm, 'flows').find((l) => l.includes('10.0.0.1:40001'))!;
    expect(row).toContain(` ${name} `);
  });
});
