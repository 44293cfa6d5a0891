import { readCapture, readCaptureStream } from '../capture/read-capture.js';
import type { PacketRecord } from '../capture/packet.js';
import { PacketDecoder } from '../net/decoder.js';
import { Reassembler } from '../tcp/reassembler.js';
import { FindingCollector } from './finding-collector.js';
import { flowStage } from './flow-stage.js';
import type { AnalysisOptions, AnalysisResult, FlowResult } from './pipeline-types.js';
import { reportReadError } from './read-error-finding.js';

// The options and result types live in pipeline-types.ts; they are exported here too, with
// analyze(), for the code outside src/analysis that runs an analysis.
export type {
  AnalysisOptions,
  AnalysisResult,
  FlowResult,
  FlowSelector,
  ForcedMpaSpec,
  ForcedTufSpec,
  UpperFactory,
} from './pipeline-types.js';

/** Capture -> packets -> TCP streams -> MPA -> DDP/RDMAP -> records and findings. One way. */
export async function analyze(path: string, opts: AnalysisOptions = {}): Promise<AnalysisResult> {
  if ((opts.threads ?? 1) > 1) {
    const parallel = await import('./parallel/parallel-analysis.js');
    if (parallel.canRunParallel(opts)) return parallel.analyzeParallel(path, opts);
  }
  const findings = new FindingCollector(opts.rules ?? null);
  if (opts.onFinding) findings.onFinding(opts.onFinding);
  const decoder = new PacketDecoder(findings, opts.decoder);
  const stage = flowStage(findings, opts);
  const reasm = new Reassembler(findings, stage.newFlow, opts.reassembly);
  const clock = stage.clock;
  const onSegment = (s: Parameters<Reassembler['segment']>[0]) => {
    // Upper layers time requests by the capture time of the packet that completes a message.
    clock.now = s.tsSec + s.tsNsec / 1e9;
    clock.frame = s.frame;
    reasm.segment(s);
  };
  const flowResult = stage.result;
  // Idle flows are looked for at most once a (capture or wall-clock) second, against the exact time.
  const timeout = opts.flowTimeout;
  let lastSweep = 0;
  const sweep = (nowSec: number): void => {
    if (timeout === undefined || Math.floor(nowSec) <= lastSweep) return;
    lastSweep = Math.floor(nowSec);
    for (const tcp of reasm.expireIdle(nowSec, timeout)) opts.onFlowEnd?.(flowResult(tcp));
  };
  const src = opts.source;
  const max = opts.maxPackets ?? Infinity;
  let seen = 0;
  let seenBytes = 0;
  const onPacket = (p: PacketRecord) => {
    // A source may hand out a few more packets between stop() and its end: they are not analysed.
    if (src && ++seen > max) return;
    if (src) seenBytes += p.data.length;
    if (timeout !== undefined && p.tsSec > lastSweep) sweep(p.tsSec + p.tsNsec / 1e9);
    opts.onPacket?.(p);
    decoder.decode(p, onSegment);
    if (src && seen === max) src.stop();
  };
  const readOpts = {
    ...(opts.chunkSize ? { chunkSize: opts.chunkSize } : {}),
    ...(opts.maxPackets !== undefined ? { maxPackets: opts.maxPackets } : {}),
    ...(opts.compressed ? { compressed: opts.compressed } : {}),
  };
  const captured = src
    ? await src.run({ packet: onPacket, tick: sweep })
    : opts.stream
      ? await readCaptureStream(opts.stream, path, onPacket, readOpts)
      : await readCapture(path, onPacket, readOpts);
  // The summary counts what was analysed, not what the source handed out after stop().
  const capture = src && seen > max ? { ...captured, packets: max, bytes: seenBytes } : captured;
  decoder.finish(); // IP datagrams still missing fragments are reported, not silently dropped
  reasm.finish();
  if (capture.error) reportReadError(findings, capture.error);
  const flows: FlowResult[] = reasm.flows().map(flowResult);
  return { capture, flows, findings, decoder: decoder.stats };
}
