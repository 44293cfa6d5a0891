/** Findings: protocol anomalies as first-class records (cf. Zeek's "weird" events). */

export type Severity = 'error' | 'warning' | 'info';

export const SEVERITY_RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, error: 2 };

/** One entry of the rule catalog. Each protocol layer declares its rules in a table of these. */
export interface RuleDef {
  /** Stable id, e.g. "mpa.crc-mismatch". */
  readonly id: string;
  readonly severity: Severity;
  /** Where the rule comes from, e.g. "RFC 5044 §8", or null. */
  readonly ref: string | null;
  /** MPA error code (1-4 RFC 5044 §8, 5-7 RFC 6581) the finding corresponds to, else null. */
  readonly rfcErrorCode: number | null;
  /** One-line meaning. */
  readonly summary: string;
  /** Longer explanation: what it means, what it rests on, what to look at. */
  readonly explanation: string;
}

/** Builds a catalog entry; rule tables read as one line of facts per rule. */
export function rule(
  id: string,
  severity: Severity,
  ref: string | null,
  rfcErrorCode: number | null,
  summary: string,
  explanation: string,
): RuleDef {
  return { id, severity, ref, rfcErrorCode, summary, explanation };
}

/** A finding as the report schema defines it (../shared/report-schema.md). */
export interface Finding {
  rule: string;
  severity: Severity;
  rfcErrorCode: number | null;
  flow: number | null;
  from: string | null;
  frames: number[];
  seq: number | null;
  message: string;
}

/**
 * A finding as the FindingCollector makes it: a Finding whose own properties are the interface's, in
 * its order (JSON.stringify and spreads see exactly the object literal it replaces).
 *
 * Made by a constructor, not an object literal, on purpose: V8 tracks an object literal's
 * allocation site and, once most of its objects outlive a young-generation collection (the first
 * collector's MAX_KEPT_FINDINGS are kept), allocates every later one straight in the old generation
 * ("pretenuring"). Beyond the bound the findings are streamed and dropped at once, so each then
 * cost a full (mark-compact) collection's work, and the young strings and arrays they point at
 * survived every scavenge: a million findings took twice the CPU of the run without it.
 * Outputs that know the shape serialise it by hand (src/report/finding-json.ts).
 */
export class FindingRecord implements Finding {
  rule: string;
  severity: Severity;
  rfcErrorCode: number | null;
  flow: number | null;
  from: string | null;
  frames: number[];
  seq: number | null;
  message: string;

  constructor(rule: string, severity: Severity, rfcErrorCode: number | null, f: FindingInput) {
    this.rule = rule;
    this.severity = severity;
    this.rfcErrorCode = rfcErrorCode;
    this.flow = f.flow;
    this.from = f.from;
    // slice(), not a spread into a literal: no allocation site to be pretenured either.
    this.frames = f.frames.slice();
    this.seq = f.seq;
    this.message = f.message;
  }
}

/** What a layer knows when it reports something; the sink adds severity and code from the catalog. */
export interface FindingInput {
  flow: number | null;
  from: string | null;
  frames: readonly number[];
  seq: number | null;
  message: string;
}

/** Where every layer sends its findings. */
export interface FindingSink {
  report(ruleId: string, f: FindingInput): void;
}
