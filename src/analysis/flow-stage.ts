/**
 * The per-flow half of the pipeline, in a module of its own so a worker thread
 * (parallel/flow-worker.ts) loads the dissectors without the capture readers and packet decoder.
 */
import {
  MpaFlow,
  type ForcedMpa,
  type MpaFlowOptions,
  type MpaFlowSummary,
  type UpperLayer,
} from '../../dissectors/mpa/mpa-flow.js';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import { plausibleDdpHeader, plausibleDdpSegmentStart } from '../../dissectors/ddp-rdmap/plausible.js';
import { portOf } from '../net/segment.js';
import type { TcpFlowStats } from '../tcp/reassembler.js';
import type { FlowHandle } from '../tcp/stream.js';
import type { FindingSink } from '../vocabulary/findings.js';
import type { AnalysisOptions, FlowResult } from './pipeline-types.js';
import { TufFlow, type TufFlowOptions, type TufFlowSummary } from '../../dissectors/tuf/tuf-flow.js';
import { FramingFlow, looksLikeMpaFpdu } from './framing-flow.js';
import { UlpHandoff, type UlpFlowSummary } from '../../dissectors/ddp-rdmap/ulp-handoff.js';
import { ULP_PAYLOAD_BOUND } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { connectionOf, UlpRegistry } from './ulp-registry.js';
import { selects } from './flow-selector.js';
import type { FlowConsumer } from '../tcp/stream.js';

/**
 * The per-flow half of the pipeline: what the reassembler calls for each new TCP flow (MPA and the
 * layer above), the summaries kept when a flow closes, and a flow's entry in the result. Built once
 * by analyze() and once in each worker thread of the parallel pipeline, so both dissect alike.
 */
export function flowStage(
  findings: FindingSink,
  opts: AnalysisOptions,
): {
  newFlow: (h: FlowHandle) => FlowConsumer | null;
  result: (tcp: TcpFlowStats) => FlowResult;
  /** Set to each packet's capture time before it is dissected (upper layers time requests by it). */
  clock: { now: number; frame: number };
} {
  // A flow is reduced to its summaries when both directions end (MPA flows only): a capture with
  // many connections keeps no dissector state for the ones already closed.
  const summaries = new Map<
    number,
    { mpa: MpaFlowSummary | null; upper: [unknown, unknown] | null; tuf?: TufFlowSummary; ulp?: UlpFlowSummary | null }
  >();
  const outputs = {
    ...(opts.onStartup ? { startup: opts.onStartup } : {}),
    ...(opts.onFpdu ? { fpdu: opts.onFpdu } : {}),
  };
  // One options object and one set of callbacks for every flow (no closure per flow: 100,000 flows
  // would otherwise carry 100,000 contexts). The flow is passed in, its upper layer read back from it.
  const upperFactory = opts.upper;
  type Upper = UpperLayer & {
    summary?(dir: 0 | 1): unknown;
    attachUlp?(h: UlpHandoff): void;
    ulpSummary?(): UlpFlowSummary | null;
  };
  // Upper layers above RDMAP: decoded on the DDP/RDMAP layer unless every flow is told none.
  const registry =
    upperFactory && opts.ulp !== null
      ? new UlpRegistry(opts.ulp ?? { overrides: [] }, opts.onRequestTiming ?? noTiming)
      : null;
  const ulpOn = registry !== null && !registry.off;
  const createUpper = (f: MpaFlow, ctx: MpaContext): Upper => {
    const up: Upper = upperFactory!.create(f.handle.id, ctx, findings, f.handle);
    if (ulpOn && up.attachUlp) {
      const forced = registry.forcedFor(f.handle);
      if (forced?.proto !== 'none') {
        const chooser = forced ? registry.forcedChooser(forced) : registry;
        up.attachUlp(new UlpHandoff(f.handle.id, findings, chooser, () => connectionOf(f, ctx)));
      }
    }
    return up;
  };
  const shared: MpaFlowOptions = {
    ...(upperFactory ? { upper: createUpper } : {}),
    ...(ulpOn ? { bodyBytes: ULP_PAYLOAD_BOUND } : {}),
    onClosed: (f: MpaFlow) => {
      const mpa = f.summary();
      const up = f.upperInstance as Upper | null;
      if (mpa)
        summaries.set(f.handle.id, {
          mpa,
          upper: up?.summary ? [up.summary(0), up.summary(1)] : null,
          ulp: up?.ulpSummary?.() ?? null,
        });
    },
  };
  // TUF: one options object for every flow too (a FramingFlow answers its TufFlow's claim).
  const tufShared: TufFlowOptions = {
    foreign: looksLikeMpaFpdu,
    onClosed: (t: TufFlow) => {
      const tuf = t.summary();
      if (tuf) summaries.set(t.handle.id, { mpa: null, upper: null, tuf });
    },
    ...(opts.onTuf ? { onRecord: opts.onTuf } : {}),
  };
  const newFlow = (h: FlowHandle): FlowConsumer | null => {
    opts.onFlow?.(h);
    if (opts.dissect === false) return null;
    const tufSpec = opts.forcedTuf?.find((f) => selects(f.selector, h));
    if (tufSpec) {
      // Forced TUF: MPA does not look at this flow at all.
      const t = new TufFlow(h, findings, { ...tufShared, forced: tufSpec.tuf });
      t.claimFor(tufSpec.tuf.mode);
      return t;
    }
    const spec = opts.forced?.find((f) => selects(f.selector, h));
    const forced: ForcedMpa | null = spec
      ? {
          markers: spec.markers,
          crc: spec.crc,
          seqStart: spec.seqStart,
          prestandard: spec.prestandard ?? false,
          startAny: spec.startAny ?? null,
        }
      : null;
    const flow = new MpaFlow(h, findings, outputs, forced ? { ...shared, forced } : shared);
    flow.plausible = plausibleDdpHeader;
    flow.framingPlausible = plausibleDdpSegmentStart; // every FPDU as framed: a broken chain is diagnosed
    if (forced) return flow;
    return new FramingFlow(flow, new TufFlow(h, findings, tufShared));
  };
  const result = (tcp: TcpFlowStats): FlowResult => {
    const sm = summaries.get(tcp.id) ?? null;
    const mpa = sm ? sm.mpa : null;
    return {
      tcp,
      mpa,
      tuf: sm?.tuf ?? null,
      upper: sm ? sm.upper : null,
      ulp: sm?.ulp ?? null,
      upperLayer: (mpa && opts.upper?.label?.(mpa, portOf(tcp.server))) ?? null,
    };
  };
  return { newFlow, result, clock: registry?.clock ?? { now: Number.NaN, frame: 0 } };
}

const noTiming = (): void => {};
