/** Moving the view model to a tree row, for the tests that check what the bytes pane shows for it. */
import { expect } from 'vitest';
import { lineText } from '../../src/tui/lines.js';
import { KIND_FPDU } from '../../src/tui/pdu-index.js';
import type { ViewModel } from '../../src/tui/view-model.js';

/** Selects the FPDU with the bad CRC, focuses the tree and moves to the row whose text matches `re`. */
/** Returns the Down presses: `at` in the PDU list (after g), `downs` in the tree (after Enter). */
export function toTreeRow(vm: ViewModel, re: RegExp): { at: number; downs: number } {
  const ix = vm.model.index;
  const at = vm.visibleItems().findIndex((i) => ix.kind[i] === KIND_FPDU && ix.crc[i] === 2);
  expect(at).toBeGreaterThanOrEqual(0);
  vm.focus = 'pdus';
  vm.key('g', 'g');
  for (let k = 0; k < at; k++) vm.key('down');
  vm.key('enter');
  expect(vm.focus).toBe('tree');
  for (let downs = 0; downs < 200; downs++) {
    const p = vm.panes().find((x) => x.id === 'tree')!;
    if (re.test(lineText(p.lines[p.selected] ?? []))) return { at, downs };
    vm.key('down');
  }
  throw new Error(`no tree row matches ${re}`);
}
