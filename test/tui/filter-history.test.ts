/**
 * The filter prompt's Tab completion (from FILTER_FIELDS, the names -G fields prints) and its
 * history (Up/Down, kept in a bounded file that may be missing, corrupt or unwritable).
 */
import { describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FILTER_FIELDS } from '../../src/report/fields.js';
import { completeField } from '../../src/tui/field-complete.js';
import { FilterHistory, HISTORY_MAX, historyPath } from '../../src/tui/filter-history.js';
import { PROMPT_MAX } from '../../src/tui/prompt-line.js';
import { lineText } from '../../src/tui/lines.js';
import { ViewModel } from '../../src/tui/view-model.js';
import { capture, openModel, type } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-hist-'));

describe('Tab completion', () => {
  it('a unique prefix completes to the field; several to what they share, all of them offered', () => {
    const crc = [...FILTER_FIELDS.keys()].filter((k) => k.startsWith('iwarp_mpa.crc_st'));
    expect(crc).toEqual(['iwarp_mpa.crc_status']);
    expect(completeField('frame.number > 3 && iwarp_mpa.crc_st')!.text).toBe(
      'frame.number > 3 && iwarp_mpa.crc_status',
    );
    const many = completeField('iwarp_mpa.c')!;
    const expected = [...FILTER_FIELDS.keys()].filter((k) => k.startsWith('iwarp_mpa.c'));
    expect(many.candidates).toEqual(expected.sort());
    expect(expected.every((k) => k.startsWith(many.text))).toBe(true);
    expect(completeField('iwarp_mpa.zzz')).toBeNull();
    expect(completeField('1 == ')).toBeNull();
  });
});

describe('FilterHistory', () => {
  it('follows XDG_STATE_HOME, else ~/.local/state', () => {
    expect(historyPath({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/mpa-dissect/filter-history');
    expect(historyPath({ HOME: '/h' })).toBe('/h/.local/state/mpa-dissect/filter-history');
    // A relative XDG_STATE_HOME is invalid by the XDG spec: ignored.
    expect(historyPath({ XDG_STATE_HOME: 'rel', HOME: '/h' })).toBe('/h/.local/state/mpa-dissect/filter-history');
  });

  it(`keeps the newest ${HISTORY_MAX}, across instances (runs), a reused filter moving to the end`, () => {
    const path = join(tmp, 'a', 'filter-history');
    const h = new FilterHistory(path);
    for (let k = 0; k < HISTORY_MAX + 50; k++) h.add(`frame.number == ${k}`);
    h.add('frame.number == 60');
    const again = new FilterHistory(path).list();
    expect(again.length).toBe(HISTORY_MAX);
    expect(again.at(-1)).toBe('frame.number == 60');
    expect(again[0]).toBe('frame.number == 50');
    expect(again.filter((x) => x === 'frame.number == 60').length).toBe(1);
  });

  it('a corrupt file gives what is usable in it; a huge one is read from its end only', () => {
    const path = join(tmp, 'corrupt');
    const junk = Buffer.concat([
      Buffer.from('good == 1\n'),
      Buffer.from([0, 1, 2, 0xff, 0xfe, 10]),
      Buffer.from(`${'x'.repeat(PROMPT_MAX + 10)}\n`),
      Buffer.from('\x1b[2Jclear\n\n   \nalso.good\n'),
    ]);
    writeFileSync(path, junk);
    expect(new FilterHistory(path).list()).toEqual(['good == 1', 'also.good']);
    const big = join(tmp, 'big');
    writeFileSync(big, `${'frame.number == 1\n'.repeat(2_000_000)}last.one\n`);
    const t0 = Date.now();
    expect(new FilterHistory(big).list()).toEqual(['frame.number == 1', 'last.one']);
    expect(Date.now() - t0).toBeLessThan(2000);
    // A directory where the file should be: no history, no exception.
    mkdirSync(join(tmp, 'dir-history'));
    expect(new FilterHistory(join(tmp, 'dir-history')).list()).toEqual([]);
  });

  it('an unwritable place: the history works for the run, nothing thrown', () => {
    const ro = join(tmp, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    const path = join(ro, 'sub', 'filter-history');
    const h = new FilterHistory(path);
    h.add('a == 1');
    expect(h.list()).toEqual(['a == 1']);
    // Root may write anywhere: only then is the file there.
    if (process.getuid?.() !== 0) expect(existsSync(path)).toBe(false);
    chmodSync(ro, 0o700);
  });

  it('Up walks to older filters, Down back to the draft typed', () => {
    const h = new FilterHistory();
    h.add('a == 1');
    h.add('b == 2');
    h.reset();
    expect(h.walk(-1, 'draft')).toBe('b == 2');
    expect(h.walk(-1, 'b == 2')).toBe('a == 1');
    expect(h.walk(-1, 'a == 1')).toBeNull();
    expect(h.walk(1, 'a == 1')).toBe('b == 2');
    expect(h.walk(1, 'b == 2')).toBe('draft');
    expect(h.walk(1, 'draft')).toBeNull();
  });
});

describe('the filter prompt', () => {
  it('Tab completes, Up recalls the filter applied, and the file keeps it', async () => {
    const path = join(tmp, 'vm', 'filter-history');
    const { model } = await openModel(capture('errors.pcap'));
    const vm2 = new ViewModel(model, new FilterHistory(path));
    vm2.resize(120, 40);
    vm2.key('/', '/');
    type(vm2, 'iwarp_mpa.crc_st');
    vm2.key('tab');
    expect(vm2.prompt()!.text).toBe('iwarp_mpa.crc_status');
    type(vm2, ' == "bad"');
    vm2.key('enter');
    expect(vm2.filterText).toBe('iwarp_mpa.crc_status == "bad"');
    expect(readFileSync(path, 'utf8')).toBe('iwarp_mpa.crc_status == "bad"\n');
    vm2.key('/', '/');
    vm2.key('C-u');
    vm2.key('up');
    expect(vm2.prompt()!.text).toBe('iwarp_mpa.crc_status == "bad"');
    vm2.key('escape');
    // Several names: the prompt lists them.
    vm2.key('/', '/');
    vm2.key('C-u');
    type(vm2, 'iwarp_mpa.c');
    vm2.key('tab');
    expect(vm2.prompt()!.note.map(lineText).join('\n')).toMatch(/iwarp_mpa\.crc_status/);
  });
});
