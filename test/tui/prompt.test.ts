/**
 * The `/` and `w` prompts in the view model: the length cap, the check that waits for a pause
 * instead of running per key (issue 26), and the `w` default offered selected (issue 22).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROMPT_MAX, PromptLine } from '../../src/tui/prompt-line.js';
import { lineText } from '../../src/tui/lines.js';
import { capture, openModel, type } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-prompt-'));

describe('PromptLine', () => {
  it('holds at most PROMPT_MAX characters and counts the rest', () => {
    const p = new PromptLine('filter', '');
    p.insert('a'.repeat(PROMPT_MAX - 2));
    p.insert('bcde');
    expect(p.text.length).toBe(PROMPT_MAX);
    expect(p.text.endsWith('bc')).toBe(true);
    expect(p.dropped).toBe(2);
    for (let k = 0; k < 1000; k++) p.insert('x');
    expect(p.text.length).toBe(PROMPT_MAX);
    expect(p.dropped).toBe(1002);
  });

  it('a default offered is selected: the first character replaces it, → keeps it', () => {
    const p = new PromptLine('write', 'cap-pdus.pcap');
    expect(p.selected).toBe(true);
    p.insert('o');
    expect(p.text).toBe('o');
    const q = new PromptLine('write', 'cap-pdus.pcap');
    q.keep();
    q.insert('x');
    expect(q.text).toBe('cap-pdus.pcapx');
    const r = new PromptLine('write', 'cap.pcap');
    r.backspace();
    expect(r.text).toBe('');
  });

  it('shows the end of a long text, its start cut with …', () => {
    const p = new PromptLine('filter', '');
    p.insert('0123456789');
    expect(p.shown(20)).toBe('0123456789');
    expect(p.shown(5)).toBe('…6789');
  });

  it('backspace takes a whole code point', () => {
    const p = new PromptLine('write', '', false);
    p.insert('a😀');
    p.backspace();
    expect(p.text).toBe('a');
  });
});

describe('view model prompts', () => {
  it('typing does not check the filter per key; checkPrompt does, once', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('/', '/');
    type(vm, 'iwarp_mpa.bogus == 1');
    expect(vm.promptCheckDue()).toBe(true);
    expect(vm.filterError()).toEqual([]);
    vm.checkPrompt();
    expect(vm.promptCheckDue()).toBe(false);
    expect(vm.filterError()[0]).toMatch(/iwarp_mpa\.bogus/);
  });

  it('a paste past the cap is cut and the prompt says how much was not taken', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { width: 80, height: 24 });
    vm.key('/', '/');
    const paste = 'iwarp_mpa.crc_status == "bad" && '.repeat(4000);
    for (const ch of paste) vm.key(ch, ch);
    const p = vm.prompt()!;
    expect(p.text.length).toBe(PROMPT_MAX);
    const note = p.note.map(lineText);
    expect(note[0]).toBe(
      `the prompt holds at most ${PROMPT_MAX} characters: ${paste.length - PROMPT_MAX} more were not taken`,
    );
    // Every line fits the 80-column prompt (border included).
    for (const l of [p.label + p.shown, ...note]) expect(Array.from(l).length).toBeLessThanOrEqual(78);
    vm.key('escape');
    expect(vm.prompt()).toBeNull();
  });

  it('w offers its default selected: the path typed replaces it', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.focus = 'pdus';
    vm.key('w', 'w');
    expect(vm.prompt()?.text).toBe('errors-pdus.pcap');
    expect(vm.prompt()?.selected).toBe(true);
    const out = join(tmp, 'typed.pcap');
    type(vm, out);
    expect(vm.prompt()?.text).toBe(out);
    vm.key('enter');
    expect(vm.message?.text).toMatch(/^wrote \d+ frames to /);
    expect(vm.message?.text.endsWith(` to ${out}`)).toBe(true);
    expect(existsSync(out)).toBe(true);
  });
});

describe('Esc read together with the next key (a Meta key)', () => {
  it('M-escape leaves the prompt; M-q leaves it and quits', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('/', '/');
    type(vm, 'abc');
    vm.key('M-escape');
    expect(vm.prompt()).toBeNull();
    vm.key('/', '/');
    expect(vm.key('M-q')).toBe('quit');
    vm.key('?', '?');
    vm.key('M-j');
    expect(vm.overlay()).toBeNull();
  });
});
