import type { RuleDef } from '../analysis/findings.js';

/** Rules of this layer (ids, severities, references). Joined into the catalog by src/analysis/rules-catalog.ts. */
export const TCP_RULES: readonly RuleDef[] = [];
