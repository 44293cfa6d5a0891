/**
 * Plugs the DDP/RDMAP analyzer in above MPA. Shaped to fit the pipeline's UpperFactory
 * (create / summarize) structurally, so this folder does not depend on the pipeline's module.
 */

import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { MpaContext } from '../mpa/ulpdu.js';
import { DdpFlowAnalyzer } from './analyzer.js';
import { segmentInfo } from './tree.js';
import type { DdpAnalyzerOptions, DdpSegmentRecord } from './types.js';

/** True for the records DdpFlowAnalyzer.ulpdu returns (what MPA stores as FpduRecord.upper). */
export function isDdpSegmentRecord(rec: unknown): rec is DdpSegmentRecord {
  return typeof rec === 'object' && rec !== null && 'pdu' in rec && 'findings' in rec && 'skipped' in rec;
}

export interface DdpUpperFactory {
  create(flowId: number, ctx: MpaContext, sink: FindingSink): DdpFlowAnalyzer;
  /** tshark-style Info text of a record, or null when it is not one of ours. */
  summarize(rec: unknown): string | null;
}

/** `opts` apply to every flow (e.g. an onMessage callback for message-level outputs). */
export function ddpUpperFactory(opts: DdpAnalyzerOptions = {}): DdpUpperFactory {
  return {
    create: (flowId, ctx, sink) => new DdpFlowAnalyzer(flowId, ctx, sink, opts),
    summarize: (rec) => (isDdpSegmentRecord(rec) ? segmentInfo(rec) : null),
  };
}
