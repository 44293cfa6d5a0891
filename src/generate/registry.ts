/**
 * Every scenario `mpa-dissect generate` knows: the scenario tables, joined. Each table lives in
 * its own file; adding one is one import and one entry in SCENARIO_TABLES.
 */
import type { Scenario } from './scenario-table.js';
import { MPA_SCENARIOS } from './scenarios.js';
import { RULE_SCENARIOS } from './rule-scenarios.js';
import { CAPTURE_FAULT_SCENARIOS } from './capture-fault-scenarios.js';
import { PRESTANDARD_LATE_SCENARIOS, PRESTANDARD_SCENARIOS } from './prestandard-scenarios.js';
import { TUF_SCENARIOS } from './tuf-scenarios.js';
import { SMBD_CUT_SCENARIOS, SMBD_SCENARIOS } from './smbd-scenarios.js';
import { NFSRDMA_CUT_SCENARIOS, NFSRDMA_SCENARIOS } from './nfsrdma-scenarios.js';
import { NVME_SCENARIOS } from './nvme-rdma-scenarios.js';
import { ISER_SCENARIOS } from './iser-scenarios.js';

export const SCENARIO_TABLES: ReadonlyArray<readonly Scenario[]> = [
  MPA_SCENARIOS,
  RULE_SCENARIOS,
  CAPTURE_FAULT_SCENARIOS,
  PRESTANDARD_SCENARIOS,
  TUF_SCENARIOS,
  SMBD_SCENARIOS,
  NFSRDMA_SCENARIOS,
  NVME_SCENARIOS,
  ISER_SCENARIOS,
  SMBD_CUT_SCENARIOS,
  NFSRDMA_CUT_SCENARIOS,
  PRESTANDARD_LATE_SCENARIOS,
];

export function allScenarios(): Scenario[] {
  return SCENARIO_TABLES.flat();
}

export function findScenario(name: string): Scenario | undefined {
  return allScenarios().find((s) => s.name === name);
}
