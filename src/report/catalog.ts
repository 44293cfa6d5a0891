/** The rule catalog as the outputs use it (one catalog: src/analysis/rules-catalog.ts). */
import type { RuleDef } from '../analysis/findings.js';
import { RULES } from '../analysis/rules-catalog.js';

/** Every rule, in catalog order. */
export function allRules(): RuleDef[] {
  return [...RULES.values()];
}

export function ruleById(id: string): RuleDef | undefined {
  return RULES.get(id);
}
