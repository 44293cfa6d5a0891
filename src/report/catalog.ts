/**
 * The rule catalog as the outputs see it: the one catalog of src/analysis, plus the threshold
 * rules declared in this folder for as long as the catalog does not join them itself.
 */
import type { FindingInput, RuleDef } from '../analysis/findings.js';
import type { FindingCollector } from '../analysis/finding-collector.js';
import type { Finding } from '../analysis/findings.js';
import { MAX_KEPT_FINDINGS } from '../analysis/finding-collector.js';
import { RULES } from '../analysis/rules-catalog.js';
import { THRESHOLD_RULES } from './threshold-rules.js';

const EXTRA: ReadonlyMap<string, RuleDef> = new Map(THRESHOLD_RULES.filter((r) => !RULES.has(r.id)).map((r) => [r.id, r]));

/** Every rule, in catalog order. */
export function allRules(): RuleDef[] {
  return [...RULES.values(), ...EXTRA.values()];
}

export function ruleById(id: string): RuleDef | undefined {
  return RULES.get(id) ?? EXTRA.get(id);
}

/**
 * Reports a finding of a rule the output layer raises (a threshold). Through the collector when
 * the catalog knows the rule; otherwise it does what FindingCollector.report does (rules file,
 * counts, bound) and hands the finding to `notify`, since the collector's listeners are its own.
 */
export function reportExtra(c: FindingCollector, id: string, input: FindingInput, notify: (f: Finding) => void): void {
  if (RULES.has(id)) {
    c.report(id, input);
    return;
  }
  const rule = EXTRA.get(id);
  if (!rule) throw new Error(`finding names unknown rule ${id}`);
  if (!c.enabled(id)) return;
  const f: Finding = { rule: id, severity: c.severityOf(rule), rfcErrorCode: rule.rfcErrorCode, ...input, frames: [...input.frames] };
  c.byRule.set(id, (c.byRule.get(id) ?? 0) + 1);
  c.bySeverity[f.severity]++;
  if (c.findings.length < MAX_KEPT_FINDINGS) c.findings.push(f);
  else c.omitted++;
  notify(f);
}
