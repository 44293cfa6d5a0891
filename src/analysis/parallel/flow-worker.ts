/**
 * A worker thread of the parallel pipeline: TCP reassembly and the dissectors for the flows whose
 * 4-tuple hashes to it. For each capture (a 'start' message with its settings) it takes segment
 * batches in capture order, runs exactly what analyze() runs for them (flowStage), and posts back
 * the events each segment produced; at the end, the events of closing its flows and their
 * results. The thread outlives one capture: the next 'start' begins afresh.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Reassembler } from '../../tcp/reassembler.js';
import { flowStage } from '../flow-stage.js';
import type { AnalysisOptions, FlowResult } from '../pipeline-types.js';
import { defaultUpper } from '../upper.js';
import { EventRecorder } from './worker-events.js';
import { ROW_MAYBE, SegmentBatchReader, type SegmentBatch } from './segment-batch.js';
import type { WorkerConfig, WorkerData, WorkerReply, WorkerStart } from './worker-protocol.js';
import { SHARED_FAILED, SHARED_MAYBE_DONE, SHARED_OPENED } from './worker-protocol.js';

const port = parentPort!;
const shared = new Int32Array((workerData as WorkerData).shared);

/** One capture's analysis on this thread. */
class CaptureRun {
  private readonly rec = new EventRecorder();
  private readonly stage: ReturnType<typeof flowStage>;
  private readonly reasm: Reassembler;
  private readonly reader = new SegmentBatchReader();
  private opened = false;

  constructor(config: WorkerConfig) {
    const rec = this.rec;
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
    const disabled = new Set(config.disabled);
    const sink = {
      report: (rule: string, f: Parameters<EventRecorder['report']>[1]) => {
        if (!disabled.has(rule)) rec.report(rule, f);
      },
    };
    this.stage = flowStage(sink, opts);
    this.reasm = new Reassembler(sink, this.stage.newFlow, opts.reassembly);
    this.reasm.flowId = () => {
      // The main thread gave the id this flow has with one thread; a flow it did not expect is a bug.
      if (this.reader.openId <= 0)
        throw new Error(`frame ${this.reader.seg.frame}: a flow opened that the main thread did not foresee`);
      this.opened = true;
      return this.reader.openId;
    };
  }

  batch(b: SegmentBatch): void {
    const { reader, rec, reasm } = this;
    const n = reader.begin(b);
    for (let i = 0; i < n; i++) {
      const s = reader.read(b, i);
      rec.tag = reader.slot;
      this.opened = false;
      this.stage.clock.now = s.tsSec + s.tsNsec / 1e9;
      this.stage.clock.frame = s.frame;
      reasm.segment(s);
      rec.endTag();
      if (reader.bits & ROW_MAYBE) {
        // The main thread may be waiting (Atomics.wait) to learn whether this SYN opened a flow.
        Atomics.store(shared, SHARED_OPENED, this.opened ? 1 : 0);
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

  finish(): void {
    const { rec } = this;
    this.reasm.finish((id) => {
      rec.endTag();
      rec.tag = id;
    });
    rec.endTag();
    const flows: FlowResult[] = this.reasm.flows().map(this.stage.result);
    const reply: WorkerReply = { t: 'finished', events: rec.take(), flows };
    port.postMessage(reply);
  }
}

let run: CaptureRun | null = null;

port.on('message', (m: SegmentBatch | WorkerStart | { t: 'finish' }) => {
  try {
    if (m.t === 'start') run = new CaptureRun(m.config);
    else if (run === null) throw new Error(`a '${m.t}' message before the capture's start`);
    else if (m.t === 'batch') run.batch(m);
    else {
      run.finish();
      run = null;
    }
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
