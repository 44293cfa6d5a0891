/**
 * What a combined summary needs of one capture's analysis, taken from its report document (the
 * `--json` document of ../shared/report-schema.md). A multi-capture run and `mpa-dissect merge`
 * both reduce each capture to this digest with the same function, so the summary `merge` prints
 * from reports made anywhere is the one the multi-capture run prints for the same captures.
 */
import { SEVERITY_RANK, type Finding, type Severity } from '../vocabulary/findings.js';
import type { ReportDocument } from './json-report.js';

/** How one capture came out, worst last: the exit status each stands for is verdictExit(). */
export type Verdict = 'clean' | 'findings' | 'truncated' | 'read-error' | 'unreadable';

export interface RuleCount {
  rule: string;
  /** The severity in force in that run (after its rules file). */
  severity: Severity;
  count: number;
}

/** The counts a capture's report gives, which a combined summary adds up. */
export interface CaptureCounts {
  packets: number;
  bytes: number;
  flows: number;
  mpaFlows: number;
  fpdus: number;
  errors: number;
  warnings: number;
  infos: number;
  findingsOmitted: number;
}

export const COUNT_KEYS: ReadonlyArray<keyof CaptureCounts> = [
  'packets',
  'bytes',
  'flows',
  'mpaFlows',
  'fpdus',
  'errors',
  'warnings',
  'infos',
  'findingsOmitted',
];

export interface CaptureDigest extends CaptureCounts {
  /** capture.path of the report: the capture as it was named to the run. */
  path: string;
  format: string | null;
  /** capture.error: the one-line read error, else null. */
  error: string | null;
  /** Findings by rule, counted over the findings the report kept (all unless findingsOmitted > 0). */
  byRule: RuleCount[];
  /** For JUnit only (empty unless asked for): the flows' suites and the findings. */
  junitFlows: Array<{ id: number; client: string; server: string }>;
  findings: Finding[];
}

/** The report document's parts a digest reads: the flows only for their endpoints. */
export type DigestSource = Pick<ReportDocument, 'capture' | 'findings' | 'summary'> & {
  flows: ReadonlyArray<{ id: number; client: string; server: string }>;
};

export function digestOf(doc: DigestSource, withJUnit: boolean): CaptureDigest {
  const counts = new Map<string, RuleCount>();
  for (const f of doc.findings) {
    const c = counts.get(f.rule);
    if (c) {
      c.count++;
      if (SEVERITY_RANK[f.severity] > SEVERITY_RANK[c.severity]) c.severity = f.severity;
    } else counts.set(f.rule, { rule: f.rule, severity: f.severity, count: 1 });
  }
  const s = doc.summary;
  return {
    path: doc.capture.path,
    format: doc.capture.format,
    packets: doc.capture.packets,
    bytes: doc.capture.bytes,
    error: doc.capture.error ?? null,
    flows: s.flows,
    mpaFlows: s.mpaFlows,
    fpdus: s.fpdus,
    errors: s.errors,
    warnings: s.warnings,
    infos: s.infos,
    findingsOmitted: s.findingsOmitted ?? 0,
    byRule: [...counts.values()],
    junitFlows: withJUnit ? doc.flows.map((f) => ({ id: f.id, client: f.client, server: f.server })) : [],
    findings: withJUnit ? doc.findings : [],
  };
}

/** A capture that could not be opened at all (no such file, permission): no report exists for it. */
export function unopenedDigest(path: string, error: string): CaptureDigest {
  return {
    path,
    format: null,
    packets: 0,
    bytes: 0,
    error,
    flows: 0,
    mpaFlows: 0,
    fpdus: 0,
    errors: 0,
    warnings: 0,
    infos: 0,
    findingsOmitted: 0,
    byRule: [],
    junitFlows: [],
    findings: [],
  };
}

export type FailOn = 'error' | 'warning' | 'never';

/**
 * The verdict a single-capture run's exit status gives: unreadable (nothing read), read-error
 * (stopped at a bad record) and truncated (cut mid-record, unless allowed) exit 2, a finding at or above failOn 1, else clean 0. The
 * read error's text tells a truncation ("truncated ...", as the readers word it) from the rest.
 */
export function verdictOf(d: CaptureDigest, failOn: FailOn, allowTruncated: boolean): Verdict {
  if (d.error !== null) {
    if (d.packets === 0) return 'unreadable';
    const truncated = /, frame \d+: truncated /.test(d.error);
    if (!truncated) return 'read-error';
    if (!allowTruncated) return 'truncated';
  }
  if (failOn === 'never') return 'clean';
  const min = SEVERITY_RANK[failOn];
  const over =
    (min <= SEVERITY_RANK.error && d.errors > 0) ||
    (min <= SEVERITY_RANK.warning && d.warnings > 0) ||
    (min <= SEVERITY_RANK.info && d.infos > 0);
  return over ? 'findings' : 'clean';
}

export function verdictExit(v: Verdict): number {
  return v === 'clean' ? 0 : v === 'findings' ? 1 : 2;
}
