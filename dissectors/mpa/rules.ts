import type { RuleDef } from '../../src/analysis/findings.js';

/** Rules of this layer (ids, severities, references). Joined into the catalog by src/analysis/rules-catalog.ts. */
export const MPA_RULES: readonly RuleDef[] = [];
