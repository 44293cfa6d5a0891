import { analyze, type AnalysisOptions, type AnalysisResult } from '../../src/analysis/pipeline.js';
import { buildReport, type ReportDocument } from '../../src/report/json-report.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

/** Runs the whole pipeline on in-memory capture bytes. */
export async function analyzeBytes(
  pcap: Uint8Array,
  opts: AnalysisOptions = {},
): Promise<AnalysisResult & { report: ReportDocument }> {
  const r = await analyze('test.pcap', {
    ...opts,
    stream: (async function* () {
      yield pcap;
    })(),
  });
  return { ...r, report: buildReport(r) };
}

const here = dirname(fileURLToPath(import.meta.url));
/** ../shared/captures/<sub> next to the project checkout, or null when absent (fresh clone). */
export function sharedCaptures(sub: 'real' | 'reference'): string | null {
  const p = resolve(here, '../../../shared/captures', sub);
  return existsSync(p) ? p : null;
}

export function rulesOf(r: { report: ReportDocument }): string[] {
  return r.report.findings.map((f) => f.rule);
}
