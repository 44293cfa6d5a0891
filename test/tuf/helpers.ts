import { analyzeBytes } from '../helpers/analyze.js';
import type { AnalysisOptions } from '../../src/analysis/pipeline.js';
import type { TufRecord } from '../../dissectors/tuf/types.js';
import type { Finding } from '../../src/vocabulary/findings.js';

/** Runs the pipeline and collects TUF records and findings as they stream. */
export async function runTuf(pcap: Uint8Array, opts: AnalysisOptions = {}) {
  const records: TufRecord[] = [];
  const r = await analyzeBytes(pcap, { ...opts, onTuf: (x) => records.push(x) });
  const findings: Finding[] = r.report.findings;
  return { ...r, records, findings, rules: findings.map((f) => f.rule), tuf: r.report.flows[0]?.tuf ?? null };
}

export const KEY_C = 0x1a2b3c4d5e6f;
export const KEY_S = 0x0badc0ffee11;
