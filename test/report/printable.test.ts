/**
 * Text taken from an input is shown with its control characters escaped (issue: hostile input,
 * escapes): the helper itself, the -V tree lines and -T fields values built on it.
 */
import { describe, expect, it } from 'vitest';
import { printable, printableLines } from '../../src/report/printable.js';
import { nodeText } from '../../src/report/tree-text.js';
import { fieldValueText } from '../../cli/fields-output.js';
import type { FieldDef } from '../../src/vocabulary/fields.js';

const NQN: FieldDef = {
  abbrev: 'nvme.fabrics.cmd.connect.data.hostnqn',
  name: 'Host NQN',
  type: 'string',
} as FieldDef;

describe('printable', () => {
  it('escapes ESC, BEL, CR, LF, TAB, NUL, DEL and C1; leaves other text as it is', () => {
    expect(printable('a\u001b[2J\u0007\r\n\t\u0000\u007f\u009bz')).toBe('a\\x1b[2J\\x07\\r\\n\\t\\x00\\x7f\\x9bz');
    const plain = 'nqn.2014-08.org.nvmexpress:uuid:é→';
    expect(printable(plain)).toBe(plain);
  });

  it('printableLines keeps line feeds and escapes the rest', () => {
    expect(printableLines('one\u001b[31m\ntwo\r')).toBe('one\\x1b[31m\ntwo\\r');
  });

  it('a string field decoded from a packet: -V tree line and -T fields value hold no control character', () => {
    const text = nodeText({ field: NQN, value: 'host\u001b]0;owned\u0007\r\nFORGED', offset: 512, length: 256 });
    expect(text).toBe('Host NQN: host\\x1b]0;owned\\x07\\r\\nFORGED');
    expect(fieldValueText(NQN, 'a\nb\u0000')).toBe('a\\nb\\x00');
  });
});
