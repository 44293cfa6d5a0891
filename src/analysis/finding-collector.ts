import type { Finding, FindingInput, FindingSink, RuleDef, Severity } from '../vocabulary/findings.js';
import { RULES, type RuleOverrides } from './rules-catalog.js';

/** Findings kept in memory for the report; beyond this they are counted (and still streamed). */
export const MAX_KEPT_FINDINGS = 100_000;

/**
 * A finding as the collector hands it out: a Finding whose own properties are the interface's, in
 * its order (JSON.stringify and spreads see exactly the object literal it replaces).
 *
 * Made by a constructor, not an object literal, on purpose: V8 tracks an object literal's
 * allocation site and, once most of its objects outlive a young-generation collection (the first
 * MAX_KEPT_FINDINGS are kept), allocates every later one straight in the old generation
 * ("pretenuring"). Beyond the bound the findings are streamed and dropped at once, so each then
 * cost a full (mark-compact) collection's work, and the young strings and arrays they point at
 * survived every scavenge: a million findings took twice the CPU of the run without it.
 */
class CollectedFinding implements Finding {
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

/**
 * The one FindingSink of a run: applies the rules file (off, severity), keeps findings for the
 * report up to a bound, counts them per rule and severity, and streams each to listeners.
 */
export class FindingCollector implements FindingSink {
  readonly findings: Finding[] = [];
  readonly byRule = new Map<string, number>();
  readonly bySeverity: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  omitted = 0;
  private readonly listeners: Array<(f: Finding) => void> = [];

  constructor(private readonly overrides: RuleOverrides | null = null) {}

  onFinding(fn: (f: Finding) => void): void {
    this.listeners.push(fn);
  }

  severityOf(rule: RuleDef): Severity {
    return this.overrides?.severity.get(rule.id) ?? rule.severity;
  }

  enabled(id: string): boolean {
    return !this.overrides?.disabled.has(id);
  }

  report(ruleId: string, f: FindingInput): void {
    const rule = RULES.get(ruleId);
    if (!rule) throw new Error(`finding names unknown rule ${ruleId}`);
    if (!this.enabled(ruleId)) return;
    const finding = new CollectedFinding(ruleId, this.severityOf(rule), rule.rfcErrorCode, f);
    this.byRule.set(ruleId, (this.byRule.get(ruleId) ?? 0) + 1);
    this.bySeverity[finding.severity]++;
    if (this.findings.length < MAX_KEPT_FINDINGS) this.findings.push(finding);
    else this.omitted++;
    for (const l of this.listeners) l(finding);
  }
}
