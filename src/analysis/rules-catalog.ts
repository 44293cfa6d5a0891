import type { RuleDef, Severity } from '../vocabulary/findings.js';
import { CAPTURE_RULES } from '../capture/rules.js';
import { NET_RULES } from '../net/rules.js';
import { TCP_RULES } from '../tcp/rules.js';
import { MPA_RULES } from '../../dissectors/mpa/rules.js';
import { DDP_RULES } from '../../dissectors/ddp-rdmap/rules.js';
import { TUF_RULES } from '../../dissectors/tuf/rules.js';
import { THRESHOLD_RULES } from './threshold-rules.js';
import { LEDGER_RULES } from '../../dissectors/ddp-rdmap/ledger-rules.js';
import { ULP_SPECS } from './ulp-specs.js';

/**
 * The one rule catalog: each layer declares its rules in its own table (as Wireshark dissectors
 * declare their expert infos); this module joins them, in layer order, and refuses duplicates.
 */
function join(...tables: ReadonlyArray<readonly RuleDef[]>): ReadonlyMap<string, RuleDef> {
  const m = new Map<string, RuleDef>();
  for (const t of tables) {
    for (const r of t) {
      if (m.has(r.id)) throw new Error(`rule ${r.id} declared twice`);
      m.set(r.id, r);
    }
  }
  return m;
}

export const RULES: ReadonlyMap<string, RuleDef> = join(
  CAPTURE_RULES,
  NET_RULES,
  TCP_RULES,
  MPA_RULES,
  DDP_RULES,
  LEDGER_RULES,
  ...ULP_SPECS.map((s) => s.rules),
  TUF_RULES,
  THRESHOLD_RULES,
);

/** Every rule, in catalog order. */
export function allRules(): RuleDef[] {
  return [...RULES.values()];
}

/** Per-run changes to the catalog (--rules FILE): severities and rules turned off. */
export interface RuleOverrides {
  severity: ReadonlyMap<string, Severity>;
  disabled: ReadonlySet<string>;
}
