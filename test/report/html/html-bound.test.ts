/**
 * The page stays small whatever the capture: a generated capture of about 1.5 million FPDUs on 24
 * connections (some segments lost, so findings too) gives a page of at most 3 MB, with the caps
 * saying what was left out.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateShapedCapture, SMALL_SIZES } from '../../../scripts/bench-generate.js';
import { HTML_LIMITS } from '../../../src/report/html/collect.js';
import type { ReportDocument } from '../../../src/report/json-report.js';
import { cliAsync } from '../../cli/helpers.js';

describe('--html on a million FPDUs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'html-bound-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a page of at most 3 MB', async () => {
    const capture = join(dir, 'big.pcap');
    generateShapedCapture(capture, 130e6, { sizes: SMALL_SIZES, concurrent: 24, loss: 0.0002 });
    const page = join(dir, 'big.html');
    const r = await cliAsync(['--json', '--fail-on', 'never', '--html', page, capture]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as ReportDocument;
    expect(doc.summary.fpdus).toBeGreaterThanOrEqual(1_000_000);
    const size = statSync(page).size;
    expect(size).toBeLessThan(3 * 1024 * 1024);
    const html = readFileSync(page, 'utf8');
    // Every flow is listed; the directions beyond the plot cap are said to be left out.
    expect([...html.matchAll(/<tr data-flow="/g)].length).toBe(doc.flows.length);
    expect([...html.matchAll(/<div class="direction"/g)].length).toBe(HTML_LIMITS.plots);
    const mpaDirections = doc.flows.length * 2;
    expect(html).toContain(`${mpaDirections - HTML_LIMITS.plots} more MPA directions not drawn.`);
    // Each sampled line keeps at most its cap of bins.
    for (const svg of html.split('FPDUs along the stream').slice(1))
      expect((svg.split('</svg>')[0]!.match(/stream octets /g) ?? []).length / 2).toBeLessThanOrEqual(HTML_LIMITS.bins);
  }, 300_000);
});
