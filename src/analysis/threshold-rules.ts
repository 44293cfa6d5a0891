/**
 * Rules whose limits the user sets in the rules file ("thresholds"): nothing in the RFCs makes
 * poor FPDU alignment an error (senders SHOULD align, receivers MUST NOT depend on it), but a CI
 * job validating an RNIC may want to fail on it. They fire only when their threshold is set, after
 * the capture has been read, from the per-direction and per-capture totals.
 */
import type { FindingInput, RuleDef } from '../vocabulary/findings.js';
import type { AnalysisResult } from './pipeline.js';

const r = (id: string, summary: string, explanation: string): RuleDef => ({
  id,
  severity: 'error',
  ref: 'rules file threshold',
  rfcErrorCode: null,
  summary,
  explanation,
});

/** Declared here, joined into the catalog by src/analysis/rules-catalog.ts. */
export const THRESHOLD_RULES: readonly RuleDef[] = [
  r(
    'threshold.fpdu-alignment',
    'FPDU alignment of a direction below the minimum set in the rules file',
    'alignment.minFpduAlignedPercent: the share of whole TCP segments that begin with an FPDU (FPDU Alignment, draft-ietf-rddp-mpa-00 glossary) must reach this percentage in every MPA direction with at least alignment.minSegments whole segments. Senders SHOULD align FPDUs with segments; an RNIC that does not costs its peer a copy.',
  ),
  r(
    'threshold.header-alignment',
    'Header alignment of a direction below the minimum set in the rules file',
    'alignment.minHeaderAlignedPercent: the share of whole TCP segments that begin with an FPDU and hold a whole number of FPDUs (Header Alignment) must reach this percentage in every MPA direction with at least alignment.minSegments whole segments.',
  ),
  r(
    'threshold.min-mpa-flows',
    'Fewer MPA connections than the rules file requires',
    'capture.minMpaFlows: the capture must hold at least this many TCP connections carrying MPA. Guards a CI job against a capture that silently holds no iWARP traffic at all (wrong port, wrong interface, capture filter too strict).',
  ),
];

/** Limits from the rules file; null = not set (the rule stays silent). */
export interface Thresholds {
  minFpduAlignedPercent: number | null;
  minHeaderAlignedPercent: number | null;
  /** Directions with fewer whole segments are not judged on alignment. */
  minSegments: number;
  minMpaFlows: number | null;
}

export const NO_THRESHOLDS: Thresholds = {
  minFpduAlignedPercent: null,
  minHeaderAlignedPercent: null,
  minSegments: 1,
  minMpaFlows: null,
};

/** Names of the thresholds in the rules file, with their bounds. */
export const THRESHOLD_KEYS: Readonly<
  Record<string, { key: keyof Thresholds; min: number; max: number; integer: boolean }>
> = {
  'alignment.minFpduAlignedPercent': { key: 'minFpduAlignedPercent', min: 0, max: 100, integer: false },
  'alignment.minHeaderAlignedPercent': { key: 'minHeaderAlignedPercent', min: 0, max: 100, integer: false },
  'alignment.minSegments': { key: 'minSegments', min: 1, max: Number.MAX_SAFE_INTEGER, integer: true },
  'capture.minMpaFlows': { key: 'minMpaFlows', min: 0, max: Number.MAX_SAFE_INTEGER, integer: true },
};

function pct(a: number, b: number): string {
  const p = (100 * a) / b;
  return `${Number.isInteger(p) ? p : p.toFixed(1)}%`;
}

/** The threshold findings of a finished run, as (rule id, finding) pairs in flow order. */
export function thresholdFindings(r: AnalysisResult, t: Thresholds): Array<[string, FindingInput]> {
  const out: Array<[string, FindingInput]> = [];
  const checks: Array<[string, number | null, 'fpduAligned' | 'headerAligned', string]> = [
    ['threshold.fpdu-alignment', t.minFpduAlignedPercent, 'fpduAligned', 'FPDU alignment'],
    ['threshold.header-alignment', t.minHeaderAlignedPercent, 'headerAligned', 'header alignment'],
  ];
  for (const f of r.flows) {
    if (!f.mpa) continue;
    for (const d of f.mpa.directions) {
      const a = d.alignment;
      if (d.fpdus === 0 || a.segments < t.minSegments || a.segments === 0) continue;
      for (const [rule, min, key, what] of checks) {
        if (min === null || (100 * a[key]) / a.segments >= min) continue;
        out.push([
          rule,
          {
            flow: f.tcp.id,
            from: d.from,
            frames: [],
            seq: null,
            message: `${what} ${pct(a[key], a.segments)} (${a[key]} of ${a.segments} whole segments from ${d.from}) is below the minimum ${min}%`,
          },
        ]);
      }
    }
  }
  if (t.minMpaFlows !== null) {
    const n = r.flows.filter((f) => f.mpa !== null).length;
    if (n < t.minMpaFlows) {
      out.push([
        'threshold.min-mpa-flows',
        {
          flow: null,
          from: null,
          frames: [],
          seq: null,
          message: `${n} MPA connection${n === 1 ? '' : 's'} in the capture, the rules file requires at least ${t.minMpaFlows}`,
        },
      ]);
    }
  }
  return out;
}
