/**
 * The thresholds of the rules file (src/analysis/threshold-rules.ts declares their rules): the
 * limits, their names in the file, and the findings a finished run gets from them.
 */
import type { FindingInput } from '../vocabulary/findings.js';
import type { AnalysisResult } from './pipeline-types.js';

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
