/**
 * The iSER/iSCSI/SCSI field table: each field declared once, and Wireshark's name, type and width
 * wherever Wireshark has the field (`tshark -G fields`); the fields that are ours are listed and
 * must not exist in Wireshark.
 */
import { describe, expect, it } from 'vitest';
import { ISER_FIELDS } from '../../dissectors/iser/fields.js';
import { indexFields } from '../../src/vocabulary/fields.js';
import { HAVE_TSHARK, wiresharkFields } from '../helpers/tools.js';

/** Fields Wireshark does not have: declared by us under its prefixes. */
const OURS = new Set([
  'iser.max_ver',
  'iser.min_ver',
  'iser.cm',
  'iser.cm.zbva_not_supported',
  'iser.cm.send_invalidate_not_supported',
  'iser.rdma.moved',
  'iser.invalidated_stag',
  'iser.streaming_login',
  'iscsi.time_us',
  'iscsi.unsolicited',
  'scsi_sbc.rdwr16.xferlen',
]);

const WS_TYPE: Record<string, string[]> = {
  protocol: ['FT_PROTOCOL', 'FT_NONE'],
  uint: ['FT_UINT8', 'FT_UINT16', 'FT_UINT24', 'FT_UINT32', 'FT_FRAMENUM'],
  uint64: ['FT_UINT64'],
  string: ['FT_STRING', 'FT_STRINGZ'],
  bool: ['FT_BOOLEAN'],
  bytes: ['FT_BYTES'],
};
const WIDTH: Record<string, number> = { FT_UINT8: 8, FT_UINT16: 16, FT_UINT24: 24 };

describe('iSER field table', () => {
  it('declares each field once', () => {
    expect(() => indexFields(ISER_FIELDS)).not.toThrow();
  });

  // Read when the test runs, not when the file is collected: by then another file may have left it.
  it.skipIf(!HAVE_TSHARK)("uses Wireshark's names, types and widths where Wireshark has the field", () => {
    const table = new Map<string, string>();
    const have = wiresharkFields();
    expect(have, 'tshark -G fields').not.toBeNull();
    for (const line of have!.split('\n')) {
      const c = line.split('\t');
      if (c[0] === 'F') table.set(c[2]!, c[3]!);
      else if (c[0] === 'P') table.set(c[2]!, 'FT_PROTOCOL');
    }
    for (const f of ISER_FIELDS) {
      if (OURS.has(f.abbrev)) {
        expect(table.has(f.abbrev), `${f.abbrev} is ours, yet Wireshark has it`).toBe(false);
        continue;
      }
      const t = table.get(f.abbrev);
      expect(t, f.abbrev).toBeDefined();
      expect(WS_TYPE[f.type], f.abbrev).toContain(t);
      if (f.type === 'uint' && f.mask === undefined) expect(f.width, f.abbrev).toBe(WIDTH[t!]);
    }
  });
});
