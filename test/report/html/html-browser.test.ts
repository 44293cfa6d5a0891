/**
 * The HTML report in a real headless Chromium (scripts/cdp-pipe.ts): the page of a corpus capture
 * loads with no console error and no request beyond itself, shows the flows and findings that the
 * --json report of the same run lists, sorts its flow table, filters findings by severity and shows
 * a hover tip. A screenshot is kept in test-artifacts/html-report.png. Skipped, visibly, without
 * chromium (.ci/run installs it).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, type Page, PipeBrowser } from '../../../scripts/cdp-pipe.js';
import type { ReportDocument } from '../../../src/report/json-report.js';
import { CAPTURES, cli, ROOT } from '../../cli/helpers.js';

const exe = chromiumPath();
/** SMB Direct with an error and warnings: flows, findings of two severities, service response times. */
const CAPTURE = join(CAPTURES, 'corpus', 'smbd-fragment-too-large.pcap');

describe.skipIf(exe === null)('--html in headless Chromium', () => {
  let dir: string;
  let browser: PipeBrowser;
  let page: Page;
  let doc: ReportDocument;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'html-browser-'));
    const html = join(dir, 'report.html');
    const r = cli(['--json', '--html', html, CAPTURE]);
    expect(r.stderr).toBe('');
    expect([0, 1]).toContain(r.code);
    doc = JSON.parse(r.stdout) as ReportDocument;
    url = pathToFileURL(html).href;
    browser = PipeBrowser.launch(exe!);
    page = await browser.newPage(1280, 900);
    await page.goto(url);
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads with no console error, no exception and no network request', async () => {
    expect(await page.eval<string>('document.readyState')).toBe('complete');
    expect(page.problems).toEqual([]);
    expect(page.requests.filter((u) => u !== url)).toEqual([]);
  });

  it('lists every flow of the JSON report, with its endpoints', async () => {
    const rows = await page.eval<Array<{ flow: string; cells: string[] }>>(
      `[...document.querySelectorAll('table.flows tbody tr')].map(r => ({ flow: r.dataset.flow, cells: [...r.cells].map(c => c.textContent) }))`,
    );
    expect(rows.map((r) => Number(r.flow))).toEqual(doc.flows.map((f) => f.id));
    for (const [i, f] of doc.flows.entries()) {
      expect(rows[i]!.cells[0]).toBe(String(f.id - 1));
      expect(rows[i]!.cells[1]).toBe(f.client);
      expect(rows[i]!.cells[2]).toBe(f.server);
    }
  });

  it('shows each rule with its count, and every finding with its frames and seq', async () => {
    expect(doc.findings.length).toBeGreaterThan(0);
    const rules = await page.eval<Record<string, string>>(
      `Object.fromEntries([...document.querySelectorAll('table.rules tbody tr')].map(r => [r.dataset.rule, r.cells[2].textContent]))`,
    );
    const counts = new Map<string, number>();
    for (const f of doc.findings) counts.set(f.rule, (counts.get(f.rule) ?? 0) + 1);
    expect(Object.keys(rules).sort()).toEqual([...counts.keys()].sort());
    for (const [rule, n] of counts) expect(rules[rule]).toBe(String(n));
    const listed = await page.eval<string[]>(
      `[...document.querySelectorAll('tr.finding')].map(r => [r.dataset.rule, r.cells[2].textContent, r.cells[3].textContent].join('|'))`,
    );
    const expected = doc.findings.map((f) =>
      [f.rule, f.frames.length ? f.frames.join(', ') : '-', f.seq ?? '-'].join('|'),
    );
    expect(listed.sort()).toEqual(expected.sort());
  });

  it('sorts the flow table and the findings by a click on a column head', async () => {
    // Findings by frame: ascending, then descending on a second click.
    const order = `[...document.querySelector('table.findings').tBodies[0].rows].map(r => Number(r.cells[2].dataset.v))`;
    await page.eval(`document.querySelector('table.findings thead th:nth-child(3)').click()`);
    const up = await page.eval<number[]>(order);
    expect(up).toEqual([...up].sort((a, b) => a - b));
    await page.eval(`document.querySelector('table.findings thead th:nth-child(3)').click()`);
    const down = await page.eval<number[]>(order);
    expect(down).toEqual([...up].reverse());
    // The flow table by FPDUs, then by verdict.
    await page.eval(`document.querySelector('table.flows thead th:nth-child(7)').click()`);
    const fpdus = await page.eval<number[]>(
      `[...document.querySelector('table.flows').tBodies[0].rows].map(r => Number(r.cells[6].dataset.v))`,
    );
    expect(fpdus).toEqual([...fpdus].sort((a, b) => a - b));
    expect(
      await page.eval<string>(`document.querySelector('table.flows thead th:nth-child(7)').getAttribute('aria-sort')`),
    ).toBe('ascending');
  });

  it('filters findings by severity', async () => {
    const severities = [...new Set(doc.findings.map((f) => f.severity))];
    for (const sev of severities) {
      await page.eval(
        `(() => { const i = document.querySelector('.sevfilter input[value="${sev}"]'); i.checked = false; i.dispatchEvent(new Event('change', { bubbles: true })); })()`,
      );
      const visible = await page.eval<string[]>(
        `[...document.querySelectorAll('tr.finding:not([hidden])')].map(r => r.dataset.sev)`,
      );
      expect(visible.length).toBe(doc.findings.filter((f) => f.severity !== sev).length);
      expect(visible).not.toContain(sev);
      await page.eval(
        `(() => { const i = document.querySelector('.sevfilter input[value="${sev}"]'); i.checked = true; i.dispatchEvent(new Event('change', { bubbles: true })); })()`,
      );
    }
    expect(await page.eval<number>(`document.querySelectorAll('tr.finding:not([hidden])').length`)).toBe(
      doc.findings.length,
    );
  });

  it('shows the frame and seq of a point under the mouse', async () => {
    const box = await page.eval<{ x: number; y: number; tip: string }>(`(() => {
      const el = document.querySelector('.direction figure:last-child svg rect[data-tip]');
      el.scrollIntoView({ block: 'center' });
      const r = el.getBoundingClientRect();
      return { x: r.left + r.width / 2, y: r.top + r.height / 2, tip: el.dataset.tip };
    })()`);
    await page.mouseMove(box.x, box.y);
    const tip = await page.eval<{ hidden: boolean; text: string }>(
      `({ hidden: document.getElementById('tip').hidden, text: document.getElementById('tip').textContent })`,
    );
    expect(tip.hidden).toBe(false);
    expect(tip.text).toBe(box.tip);
    expect(tip.text).toMatch(/frame \d+/);
  });

  it('draws the plots of each MPA direction and the service response times', async () => {
    const mpaDirs = doc.flows.flatMap((f) =>
      ((f.mpa?.['directions'] as Array<{ fpdus: number }> | undefined) ?? []).filter((d) => d.fpdus > 0),
    );
    expect(await page.eval<number>(`document.querySelectorAll('.direction').length`)).toBe(mpaDirs.length);
    // One row per command that was timed (the report's latency section).
    const commands = (doc.latency?.commands ?? []).map((c) => `${c.program} ${c.command} ${c.calls}`);
    const rows = await page.eval<string[]>(
      `[...document.querySelectorAll('table.srt tbody tr')].map(r => [r.cells[0].textContent, r.cells[1].textContent, r.cells[2].textContent].join(' '))`,
    );
    expect(rows).toEqual(commands);
    expect(page.problems).toEqual([]);
  });

  it('saves a screenshot as a test artifact', async () => {
    await page.eval('window.scrollTo(0, 0)');
    const png = await page.screenshot(3000);
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    const out = join(ROOT, 'test-artifacts');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'html-report.png'), png);
  });
});

// Registered only without chromium: with it, a placeholder would show as a skip saying it was missing.
if (exe === null)
  describe('--html in headless Chromium', () => {
    it.skip('chromium is not installed: the browser tests of the HTML report are skipped (.ci/run installs it)', () => {});
  });
