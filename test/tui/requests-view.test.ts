/**
 * The requests view (key `r`) on corpus SMB Direct captures: the rows are the requests of the JSON
 * report's `latency` section, slowest first, with unanswered ones by how long they waited; the
 * detail shows the selected request's four frames; Enter selects the PDU that completed its request.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import type { LatencyReport, LatencyRequest } from '../../src/analysis/latency-types.js';
import type { TreeNode } from '../../src/vocabulary/fields.js';
import { nodeText } from '../../src/report/tree-text.js';
import { cli } from '../cli/helpers.js';
import { capture, openModel, paneText, paneTitle } from './helpers.js';

const clean = capture('corpus/smbd-clean.pcap');
const unanswered = capture('corpus/smbd-smb2-request-unanswered.pcap');
const HAVE = existsSync(clean) && existsSync(unanswered);

function reportOf(path: string): LatencyReport {
  return (JSON.parse(cli(['--json', path]).stdout) as { latency: LatencyReport }).latency;
}

const rowOf = (r: LatencyRequest): RegExp =>
  new RegExp(`^\\s*${r.latency.toFixed(6).replace('.', '\\.')} ${r.command}\\s+${r.queue}\\s+${r.requestFrame}\\b`);

describe.skipIf(!HAVE)(`requests view${HAVE ? '' : ' (skipped: captures/corpus/smbd-*.pcap missing)'}`, () => {
  it('r lists the requests slowest first, as the JSON report ranks them, and the detail has their frames', async () => {
    const { vm } = await openModel(clean);
    const want = reportOf(clean).slowest;
    expect(want.length).toBeGreaterThan(3);
    vm.key('r', 'r');
    expect(vm.focus).toBe('findings');
    expect(paneTitle(vm, 'findings')).toBe(`Requests by latency: ${want.length} answered, 0 never answered`);
    const text = paneText(vm, 'findings');
    expect(text[0]).toMatch(/Latency s\s+Command\s+Queue\s+Frames: req → data → rsp/);
    const shown = text.slice(1, 1 + Math.min(want.length, 4));
    for (const [k, l] of shown.entries()) expect(l).toMatch(rowOf(want[k]!));
    // The READ: down to it, its frames and intervals under the list.
    const at = want.findIndex((r) => r.command === 'READ');
    for (let k = 0; k < at; k++) vm.key('down');
    const read = want[at]!;
    const detail = paneText(vm, 'findings').slice(-4);
    expect(detail).toEqual([
      `SMB2 READ, flow 1: ${read.latency.toFixed(6)} s (Enter: request PDU)`,
      `  request frame ${read.requestFrame} → first data frame ${read.firstDataFrame}: +${read.toFirstData!.toFixed(6)} s`,
      `  → last data frame ${read.lastDataFrame}: +${read.firstToLastData!.toFixed(6)} s`,
      `  → response frame ${read.responseFrame}: +${read.lastDataToResponse!.toFixed(6)} s`,
    ]);
    // Enter: the PDU list selects the FPDU that completed the READ request, its tree shows it.
    vm.key('enter');
    expect(vm.focus).toBe('pdus');
    const item = vm.selectedItem()!;
    expect(vm.model.index.framesOf(item).at(-1)).toBe(read.requestFrame);
    const texts: string[] = [];
    const walk = (ns: readonly TreeNode[]): void => {
      for (const n of ns) {
        texts.push(nodeText(n));
        walk(n.children ?? []);
      }
    };
    walk(vm.model.decode(item).tree);
    expect(texts.some((t) => /SMB2 READ Request MessageId/.test(t))).toBe(true);
    // r again: the findings are back.
    vm.key('r', 'r');
    expect(paneTitle(vm, 'findings')).toMatch(/^Findings/);
  });

  it('a request never answered is listed with how long it waited, and says so', async () => {
    const { vm } = await openModel(unanswered);
    const lat = reportOf(unanswered);
    expect(lat.unanswered.count).toBeGreaterThan(0);
    const never = lat.unanswered.listed[0]!;
    vm.key('r', 'r');
    expect(paneTitle(vm, 'findings')).toContain(`${lat.unanswered.count} never answered`);
    const rows = paneText(vm, 'findings');
    const k = rows.findIndex((l) => l.includes('(never answered)'));
    expect(k).toBeGreaterThan(0);
    expect(rows[k]).toMatch(rowOf(never));
    expect(rows[k]).toContain('→ none (never answered)');
    for (let n = 1; n < k; n++) vm.key('down');
    expect(paneText(vm, 'findings').slice(-4).join('\n')).toContain(
      `SMB2 ${never.command}, ${never.queue}: no response, waited ${never.latency.toFixed(6)} s to capture end`,
    );
  });

  it('lines stay within the pane at 80x24, and an empty capture says there are no requests', async () => {
    const { vm } = await openModel(clean, { width: 80, height: 24 });
    vm.key('r', 'r');
    const p = vm.panes().find((x) => x.id === 'findings')!;
    expect(p.lines.length).toBeLessThanOrEqual(p.rect.height - 2);
    const other = await openModel(capture('errors.pcap'));
    other.vm.key('r', 'r');
    expect(paneText(other.vm, 'findings').join('\n')).toContain('no upper-layer requests timed');
  });
});
