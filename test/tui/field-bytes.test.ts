/**
 * Selecting a field in the detail tree brings its octets into view in the bytes pane, lit in the
 * field style (issue 22; as Wireshark and termshark do), also when they lie below the pane's fold.
 */
import { describe, expect, it } from 'vitest';
import { capture, openModel, paneLines } from './helpers.js';
import { toTreeRow } from './tree-nav.js';
import type { ViewModel } from '../../src/tui/view-model.js';

const lit = (vm: ViewModel): string[] =>
  paneLines(vm, 'bytes').flatMap((l) => l.filter((s) => s.s === 'field').map((s) => s.t));

describe('tree field → bytes', () => {
  for (const [w, h] of [
    [120, 40],
    [80, 24],
  ] as const)
    it(`${w}x${h}: the CRC field's four octets, at the end of a 724-octet FPDU, come into view lit`, async () => {
      const { vm } = await openModel(capture('errors.pcap'), { width: w, height: h });
      toTreeRow(vm, /^\s*CRC: 0x/);
      // The CRC is the FPDU's last four octets on the wire (RFC 5044 §4.1).
      const item = vm.selectedItem()!;
      const r = vm.model.decode(item).record!;
      const wire = vm.model.wireBytes(item, r)!;
      const n = (r as { wireSize: number }).wireSize;
      const last4 = Array.from(wire.bytes.subarray(n - 4, n), (b) => b.toString(16).padStart(2, '0'));
      expect(lit(vm)).toEqual(last4);
      // Back up to the first row: its octets (the ULPDU_Length) come back into view.
      vm.key('g', 'g');
      expect(lit(vm).length).toBeGreaterThan(0);
      // Tab to the bytes pane: the octets keep their place, in their own classes' colours.
      vm.key('tab');
      expect(vm.focus).toBe('bytes');
      expect(lit(vm)).toEqual([]);
    });
});
