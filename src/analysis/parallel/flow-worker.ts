/**
 * A worker thread of the parallel pipeline: TCP reassembly and the dissectors for the flows whose
 * 4-tuple hashes to it. It takes segment batches in capture order, runs exactly what analyze()
 * runs for them (flowStage), and posts back the events each segment produced; at the end, the
 * events of closing its flows and their results.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Reassembler } from '../../tcp/reassembler.js';
import { flowStage } from '../flow-stage.js';
import type { AnalysisOptions, FlowResult } from '../pipeline-types.js';
import { defaultUpper } from '../upper.js';
import { EventRecorder } from './worker-events.js';
import { ROW_MAYBE, SegmentBatchReader, type SegmentBatch } from './segment-batch.js';
import type { WorkerConfig, WorkerReply } from './worker-protocol.js';
import { SHARED_FAILED, SHARED_MAYBE_DONE, SHARED_OPENED } from './worker-protocol.js';

const port = parentPort!;
const config = workerData as WorkerConfig;
const shared = new Int32Array(config.shared);

const rec = new EventRecorder();
const opts: AnalysisOptions = {
  ...(config.reassembly ? { reassembly: config.reassembly } : {}),
  ...(config.forced ? { forced: config.forced } : {}),
  ...(config.forcedTuf ? { forcedTuf: config.forcedTuf } : {}),
  upper: config.upper ? defaultUpper : null,
  ulp: null, // upper layers above RDMAP run on one thread (parallel-analysis.ts canRunParallel)
  ...(config.dissect === false ? { dissect: false } : {}),
  ...(config.want.flow ? { onFlow: (h) => rec.flow(h) } : {}),
  ...(config.want.startup ? { onStartup: (r) => rec.startup(r) } : {}),
  ...(config.want.fpdu ? { onFpdu: (r) => rec.fpdu(r) } : {}),
  ...(config.want.tuf ? { onTuf: (r) => rec.tuf(r) } : {}),
};
// Disabled rules are left out here already; the main thread's collector applies the rest.
const sink = {
  report: (rule: string, f: Parameters<EventRecorder['report']>[1]) => {
    if (!config.disabled.includes(rule)) rec.report(rule, f);
  },
};
const stage = flowStage(sink, opts);
const reasm = new Reassembler(sink, stage.newFlow, opts.reassembly);
const reader = new SegmentBatchReader();
let opened = false;
reasm.flowId = () => {
  // The main thread gave the id this flow has with one thread; a flow it did not expect is a bug.
  if (reader.openId <= 0)
    throw new Error(`frame ${reader.seg.frame}: a flow opened that the main thread did not foresee`);
  opened = true;
  return reader.openId;
};

function batch(b: SegmentBatch): void {
  const n = reader.begin(b);
  for (let i = 0; i < n; i++) {
    const s = reader.read(b, i);
    rec.tag = reader.slot;
    opened = false;
    stage.clock.now = s.tsSec + s.tsNsec / 1e9;
    stage.clock.frame = s.frame;
    reasm.segment(s);
    rec.endTag();
    if (reader.bits & ROW_MAYBE) {
      // The main thread may be waiting (Atomics.wait) to learn whether this SYN opened a flow.
      Atomics.store(shared, SHARED_OPENED, opened ? 1 : 0);
      Atomics.add(shared, SHARED_MAYBE_DONE, 1);
      Atomics.notify(shared, SHARED_MAYBE_DONE);
    }
  }
  const reply: WorkerReply = {
    t: 'events',
    upTo: n > 0 ? reader.slot : -1,
    events: rec.take(),
    rows: b.rows,
    payload: b.payload,
  };
  port.postMessage(reply, [b.rows.buffer as ArrayBuffer, b.payload.buffer as ArrayBuffer]);
}

function finish(): void {
  reasm.finish((id) => {
    rec.endTag();
    rec.tag = id;
  });
  rec.endTag();
  const flows: FlowResult[] = reasm.flows().map(stage.result);
  const reply: WorkerReply = { t: 'finished', events: rec.take(), flows };
  port.postMessage(reply);
}

port.on('message', (m: SegmentBatch | { t: 'finish' }) => {
  try {
    if (m.t === 'batch') batch(m);
    else finish();
  } catch (e) {
    // Said once, by the main thread; one waiting in Atomics.wait is woken to hear it.
    Atomics.store(shared, SHARED_FAILED, 1);
    Atomics.notify(shared, SHARED_MAYBE_DONE);
    const reply: WorkerReply = {
      t: 'error',
      message: e instanceof Error ? e.message : String(e),
      stack: e instanceof Error ? (e.stack ?? '') : '',
    };
    port.postMessage(reply);
    port.close();
  }
});
