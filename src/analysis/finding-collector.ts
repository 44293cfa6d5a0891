import {
  type Finding,
  type FindingInput,
  FindingRecord,
  type FindingSink,
  type RuleDef,
  type Severity,
} from '../vocabulary/findings.js';
import { RULES, type RuleOverrides } from './rules-catalog.js';

/** Findings kept in memory for the report; beyond this they are counted (and still streamed). */
export const MAX_KEPT_FINDINGS = 100_000;

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
    const finding = new FindingRecord(ruleId, this.severityOf(rule), rule.rfcErrorCode, f);
    this.byRule.set(ruleId, (this.byRule.get(ruleId) ?? 0) + 1);
    this.bySeverity[finding.severity]++;
    if (this.findings.length < MAX_KEPT_FINDINGS) this.findings.push(finding);
    else this.omitted++;
    for (const l of this.listeners) l(finding);
  }
}
