/**
 * analyze() on worker threads (--threads N). This thread reads the capture and decodes packets
 * (src/capture, src/net: their findings stay here); each TCP segment goes to the worker its
 * 4-tuple hashes to (both directions to one worker), in batches whose buffers are transferred.
 * Workers run reassembly and the dissectors (flow-worker.ts) and send back what each segment
 * produced; the journal (capture-journal.ts) replays it into the caller's callbacks in capture
 * order. Flow ids are given here in the order flows open (flow-shards.ts). So every sink sees the
 * sequence of calls one thread would make, and output does not depend on the number of threads.
 *
 * Memory is bounded: the reader waits before each read while more than IN_FLIGHT octets of
 * segments are with the workers unanswered.
 */
import { Worker } from 'node:worker_threads';
import { readCapture, readCaptureStream } from '../../capture/read-capture.js';
import type { PacketRecord } from '../../capture/packet.js';
import { PacketDecoder } from '../../net/decoder.js';
import { TCP_ACK, TCP_SYN, type TcpSegment } from '../../net/segment.js';
import { FindingCollector } from '../finding-collector.js';
import type { FindingInput } from '../../vocabulary/findings.js';
import type { AnalysisOptions, AnalysisResult, FlowResult } from '../pipeline-types.js';
import { reportReadError } from '../read-error-finding.js';
import { defaultUpper } from '../upper.js';
import { ulpAllOff } from '../ulp-registry.js';
import { CaptureJournal } from './capture-journal.js';
import { FlowShards } from './flow-shards.js';
import { SegmentBatchWriter, ROW_MAYBE } from './segment-batch.js';
import { EventQueue, type EventTarget } from './worker-events.js';
import {
  SHARED_FAILED,
  SHARED_MAYBE_DONE,
  SHARED_OPENED,
  SHARED_WORDS,
  type WorkerConfig,
  type WorkerData,
  type WorkerReply,
  type WorkerStart,
} from './worker-protocol.js';

/** A batch is posted once it holds this many payload octets or segments. */
const BATCH_BYTES = 256 * 1024;
const BATCH_SEGMENTS = 2048;
/** Segment octets with the workers, unanswered, beyond which the reader waits (per worker). */
const IN_FLIGHT = 4 * 1024 * 1024;
/** A worker that has not answered a SYN question for this long is taken for dead. */
const ANSWER_TIMEOUT_MS = 60_000;

/**
 * Whether these options can run on workers: a live source and idle-flow expiry stay on one thread
 * (they act on wall-clock ticks between packets), and so does an upper layer other than the
 * default one (a worker can only build the one it imports). Upper layers above RDMAP (SMB Direct,
 * RPC-over-RDMA) are decoded on one thread too: their records and request timings are not carried
 * back from workers yet, so `--threads` applies when they are off (`--ulp flow=all,proto=none`).
 */
export function canRunParallel(opts: AnalysisOptions): boolean {
  const noUpper = opts.upper === undefined || opts.upper === null;
  const ulpOff = noUpper || opts.ulp === null || (opts.ulp !== undefined && ulpAllOff(opts.ulp));
  return (
    opts.source === undefined && opts.flowTimeout === undefined && (noUpper || opts.upper === defaultUpper) && ulpOff
  );
}

/**
 * Worker threads kept between captures of one process (`-q dir/ --threads 2` over hundreds of
 * captures): starting a worker loads the whole dissector graph, which costs far more than a small
 * capture's analysis. Idle workers are unref'd so they never keep the process alive; a set that
 * saw a failure is terminated and never reused.
 *
 * A worker is started when the first flow is given to it, never before: `--threads 64` on a
 * capture of one connection starts one (each costs about 12 MB and the loading of the dissectors).
 */
class WorkerSet {
  /** Worker i, or undefined until a flow is given to it. */
  readonly workers: Array<Worker | undefined>;
  readonly shared: Array<Int32Array | undefined>;
  /** Workers started so far. */
  started = 0;
  run: Pool | null = null;
  broken = false;
  /** The configuration of the analysis it is lent to, for a worker started during it. */
  private config: WorkerConfig | null = null;

  constructor(readonly n: number) {
    this.workers = new Array<Worker | undefined>(n).fill(undefined);
    this.shared = new Array<Int32Array | undefined>(n).fill(undefined);
  }

  /** Worker i, started (and given the current analysis) on first use. */
  worker(i: number): Worker {
    const have = this.workers[i];
    if (have !== undefined) return have;
    const sab = new SharedArrayBuffer(SHARED_WORDS * 4);
    this.shared[i] = new Int32Array(sab);
    const w = new Worker(new URL('./flow-worker.js', import.meta.url), {
      workerData: { shared: sab } satisfies WorkerData,
    });
    w.on('message', (m: WorkerReply) => this.run?.reply(i, m));
    w.on('error', (e) => this.fail(new Error(`worker thread ${i + 1} failed: ${e.message}`)));
    w.on('messageerror', (e) =>
      this.fail(new Error(`worker thread ${i + 1}: a message could not be read: ${e.message}`)),
    );
    w.on('exit', (code) => {
      if (!this.broken)
        this.fail(new Error(`worker thread ${i + 1} stopped (exit code ${code}) before the analysis ended`));
    });
    this.workers[i] = w;
    this.started++;
    if (this.run !== null && this.config !== null)
      w.postMessage({ t: 'start', config: this.config } satisfies WorkerStart);
    return w;
  }

  /** The workers started so far. */
  *live(): Generator<Worker> {
    for (const w of this.workers) if (w !== undefined) yield w;
  }

  private fail(e: Error): void {
    this.discard();
    this.run?.fail(e);
  }

  /** Lends the workers to one capture's analysis. */
  lend(run: Pool, config: WorkerConfig): void {
    this.run = run;
    this.config = config;
    for (let i = 0; i < this.n; i++) {
      const w = this.workers[i];
      if (w === undefined) continue;
      this.shared[i]!.fill(0);
      w.ref();
      w.postMessage({ t: 'start', config } satisfies WorkerStart);
    }
  }

  /** Back from a capture: idle, and not holding the process open. */
  async giveBack(): Promise<void> {
    this.run = null;
    this.config = null;
    if (this.broken) return;
    // Another set took this one's place while it was lent (analyses at once in one process).
    if (sets.get(this.n) !== this) return this.discard();
    for (const w of this.live()) w.unref();
  }

  /** Never used again: a failed or stopped worker leaves the set in an unknown state. */
  discard(): void {
    if (this.broken) return;
    this.broken = true;
    if (sets.get(this.n) === this) sets.delete(this.n);
    for (const w of this.live()) void w.terminate();
  }
}

const sets = new Map<number, WorkerSet>();

function workerSet(n: number): WorkerSet {
  let s = sets.get(n);
  if (s === undefined || s.broken || s.run !== null) {
    s = new WorkerSet(n);
    // A set still lent out stays with its analysis and ends when that analysis gives it back.
    if (sets.get(n)?.run == null) sets.set(n, s);
  }
  return s;
}

/** What one capture's analysis knows of the workers it borrowed. */
class Pool {
  readonly writers: SegmentBatchWriter[] = [];
  readonly queues: EventQueue[] = [];
  readonly finishing: EventQueue[] = [];
  readonly flows: FlowResult[][] = [];
  /** Last slot each worker has answered for. */
  readonly done: number[];
  /** Octets of each posted batch not answered yet, oldest first. */
  readonly posted: number[][];
  readonly maybeSent: number[];
  inFlight = 0;
  finished = 0;
  failure: unknown = null;
  private wake: (() => void) | null = null;
  readonly set: WorkerSet;

  constructor(
    readonly n: number,
    config: WorkerConfig,
    private readonly onEvents: () => void,
  ) {
    this.set = workerSet(n);
    this.done = new Array<number>(n).fill(-1);
    this.posted = Array.from({ length: n }, () => []);
    this.maybeSent = new Array<number>(n).fill(0);
    for (let i = 0; i < n; i++) {
      this.writers.push(new SegmentBatchWriter(BATCH_SEGMENTS, BATCH_BYTES));
      this.queues.push(new EventQueue());
      this.finishing.push(new EventQueue());
      this.flows.push([]);
    }
    this.set.lend(this, config);
  }

  reply(i: number, m: WorkerReply): void {
    if (this.failure !== null) return;
    try {
      if (m.t === 'error') {
        this.fail(new Error(`worker thread ${i + 1} failed: ${m.message}`));
        if (process.env['MPA_DISSECT_DEBUG']) process.stderr.write(`${m.stack}\n`);
        return;
      }
      if (m.t === 'events') {
        this.queues[i]!.push(m.events);
        if (m.upTo >= 0) this.done[i] = m.upTo;
        this.inFlight -= this.posted[i]!.shift() ?? 0;
        this.writers[i]!.recycle(m.rows, m.payload);
      } else {
        this.finishing[i]!.push(m.events);
        this.flows[i] = m.flows;
        this.finished++;
      }
      this.onEvents();
    } catch (e) {
      // An output that failed (EPIPE, a full disk) ends the run as it would on one thread.
      this.fail(e);
    }
    this.notify();
  }

  fail(e: unknown): void {
    this.failure ??= e;
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** Resolves at the next answer (or failure). */
  next(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  check(): void {
    if (this.failure !== null) throw this.failure;
  }

  post(i: number): void {
    const wr = this.writers[i]!;
    if (wr.segments === 0) return;
    const bytes = wr.bytes + wr.segments * 64; // rows count too: many tiny segments are work
    const { batch, transfer } = wr.take();
    this.posted[i]!.push(bytes);
    this.inFlight += bytes;
    this.set.worker(i).postMessage(batch, transfer);
  }

  postAll(): void {
    for (let i = 0; i < this.n; i++) this.post(i);
  }

  /**
   * Did worker i's last SYN of a known 4-tuple open a flow? Blocks this thread (Atomics.wait) until
   * the worker has dissected it: the next flow id depends on it.
   */
  opened(i: number): boolean {
    this.post(i);
    const sh = this.set.shared[i]!;
    let last = Atomics.load(sh, SHARED_MAYBE_DONE);
    let since = Date.now();
    while (last < this.maybeSent[i]!) {
      if (Atomics.load(sh, SHARED_FAILED) !== 0) throw new Error(`worker thread ${i + 1} failed (its message follows)`);
      Atomics.wait(sh, SHARED_MAYBE_DONE, last, 1000);
      const now = Atomics.load(sh, SHARED_MAYBE_DONE);
      if (now !== last) since = Date.now();
      else if (Date.now() - since > ANSWER_TIMEOUT_MS) throw new Error(`worker thread ${i + 1} stopped answering`);
      last = now;
    }
    return Atomics.load(sh, SHARED_OPENED) === 1;
  }

  /** The workers go back to the set for the next capture, unless this run failed. */
  async close(): Promise<void> {
    if (this.failure !== null || this.finished < this.set.started) this.set.discard();
    await this.set.giveBack();
  }
}

/** analyze() with opts.threads workers; the result and every callback as with one thread. */
export async function analyzeParallel(path: string, opts: AnalysisOptions): Promise<AnalysisResult> {
  const n = Math.max(1, Math.floor(opts.threads ?? 1));
  const findings = new FindingCollector(opts.rules ?? null);
  if (opts.onFinding) findings.onFinding(opts.onFinding);
  const journal = new CaptureJournal(opts.packetData !== false);
  // Capture- and network-level findings stay on this thread, in the journal until their turn.
  const decoder = new PacketDecoder(
    { report: (rule: string, f: FindingInput) => journal.finding(rule, f) },
    opts.decoder,
  );
  const target: EventTarget = { report: (rule, f) => findings.report(rule, f), opts };
  const pool = new Pool(
    n,
    {
      reassembly: opts.reassembly ?? null,
      forced: opts.forced ?? null,
      forcedTuf: opts.forcedTuf ?? null,
      upper: opts.upper === defaultUpper,
      dissect: opts.dissect !== false,
      disabled: [...(opts.rules?.disabled ?? [])],
      want: {
        flow: opts.onFlow !== undefined,
        startup: opts.onStartup !== undefined,
        fpdu: opts.onFpdu !== undefined,
        tuf: opts.onTuf !== undefined,
      },
    },
    () => journal.drain(pool.done, pool.queues, target),
  );
  const shards = new FlowShards(n);
  const ask = (w: number): boolean => pool.opened(w);
  let slot = 0;

  const onSegment = (s: TcpSegment): void => {
    let t = shards.find(s.src, s.srcPort, s.dst, s.dstPort);
    let openId = 0;
    let bits = 0;
    if (t === null) {
      t = shards.add(s.src, s.srcPort, s.dst, s.dstPort);
      pool.writers[t.worker]!.addTuple(t.index, t.a, t.ap, t.b, t.bp);
      openId = shards.newId(ask);
    } else if ((s.flags & (TCP_SYN | TCP_ACK)) === TCP_SYN) {
      openId = shards.maybeId(t.worker, ask);
      bits = ROW_MAYBE;
      pool.maybeSent[t.worker]!++;
    }
    const w = t.worker;
    const wr = pool.writers[w]!;
    wr.add(s, slot, t.index, t.ap !== s.srcPort || t.a !== s.src, openId, bits);
    journal.slot(w, slot++);
    if (wr.bytes >= BATCH_BYTES || wr.segments >= BATCH_SEGMENTS) pool.post(w);
  };
  const onPacket = (p: PacketRecord): void => {
    pool.check();
    if (opts.onPacket) journal.packet(p);
    decoder.decode(p, onSegment);
  };
  const beforeRead = async (): Promise<void> => {
    pool.check();
    pool.postAll();
    journal.drain(pool.done, pool.queues, target);
    while (pool.inFlight > IN_FLIGHT * n && pool.failure === null) await pool.next();
    pool.check();
  };

  try {
    const readOpts = {
      beforeRead,
      ...(opts.chunkSize ? { chunkSize: opts.chunkSize } : {}),
      ...(opts.maxPackets !== undefined ? { maxPackets: opts.maxPackets } : {}),
      ...(opts.compressed ? { compressed: opts.compressed } : {}),
    };
    const capture = opts.stream
      ? await readCaptureStream(opts.stream, path, onPacket, readOpts)
      : await readCapture(path, onPacket, readOpts);
    pool.check();
    decoder.finish(); // IP datagrams still missing fragments are reported, not silently dropped
    pool.postAll();
    for (const w of pool.set.live()) w.postMessage({ t: 'finish' });
    while (pool.finished < pool.set.started && pool.failure === null) await pool.next();
    pool.check();
    journal.drain(pool.done, pool.queues, target);
    if (journal.length !== 0) throw new Error('internal: worker threads ended with segments unanswered');
    // One thread ends its flows in the order they opened: the workers' closing events, merged by flow id.
    for (;;) {
      let best = -1;
      let bestTag = Infinity;
      for (let i = 0; i < n; i++) {
        const tag = pool.finishing[i]!.nextTag();
        if (tag !== null && tag < bestTag) {
          bestTag = tag;
          best = i;
        }
      }
      if (best < 0) break;
      pool.finishing[best]!.replay(bestTag, target);
    }
    if (capture.error) reportReadError(findings, capture.error);
    const flows = pool.flows.flat().sort((a, b) => a.tcp.id - b.tcp.id);
    return { capture, flows, findings, decoder: decoder.stats };
  } finally {
    await pool.close();
  }
}
