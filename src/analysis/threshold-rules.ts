/**
 * Rules whose limits the user sets in the rules file ("thresholds"): nothing in the RFCs makes
 * poor FPDU alignment an error (senders SHOULD align, receivers MUST NOT depend on it), but a CI
 * job validating an RNIC may want to fail on it. They fire only when their threshold is set, after
 * the capture has been read, from the per-direction and per-capture totals: the limits and that
 * judgement are src/analysis/thresholds.ts.
 */
import type { RuleDef } from '../vocabulary/findings.js';

const r = (id: string, summary: string, explanation: string): RuleDef => ({
  id,
  severity: 'error',
  ref: 'rules file threshold',
  rfcErrorCode: null,
  summary,
  explanation,
});

/** Declared here, joined into the catalog by src/analysis/rules-catalog.ts. */
export const THRESHOLD_RULES: readonly RuleDef[] = [
  r(
    'threshold.fpdu-alignment',
    'FPDU alignment of a direction below the minimum set in the rules file',
    'alignment.minFpduAlignedPercent: the share of whole TCP segments that begin with an FPDU (FPDU Alignment, draft-ietf-rddp-mpa-00 glossary) must reach this percentage in every MPA direction with at least alignment.minSegments whole segments. Senders SHOULD align FPDUs with segments; an RNIC that does not costs its peer a copy.',
  ),
  r(
    'threshold.header-alignment',
    'Header alignment of a direction below the minimum set in the rules file',
    'alignment.minHeaderAlignedPercent: the share of whole TCP segments that begin with an FPDU and hold a whole number of FPDUs (Header Alignment) must reach this percentage in every MPA direction with at least alignment.minSegments whole segments.',
  ),
  r(
    'threshold.min-mpa-flows',
    'Fewer MPA connections than the rules file requires',
    'capture.minMpaFlows: the capture must hold at least this many TCP connections carrying MPA. Guards a CI job against a capture that silently holds no iWARP traffic at all (wrong port, wrong interface, capture filter too strict).',
  ),
];
