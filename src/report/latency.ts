/**
 * Where each upper-layer request's time went (SMB2, NFS, NVMe, SCSI alike: anything that hands
 * RequestTiming records to the pipeline). Per command: the -z srt figures, a log-spaced histogram,
 * the split request → first data → last data → response, and the queues (connections) it ran on;
 * the slowest requests with their four frames; the requests never answered, with how long they had
 * waited when the capture ended. Everything bounded: histograms are fixed arrays, queues and kept
 * requests are capped, percentiles come from srt.ts's sampled store.
 *
 * Intervals are counted in whole microseconds: capture times are seconds since the epoch in a
 * double (about 0.24 µs apart at today's dates), so a difference of two is only good to the
 * microsecond, and integer sums stay exact however many requests there are.
 */
import type { RequestTiming } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import type {
  LatencyCommand,
  LatencyDistribution,
  LatencyQueue,
  LatencyReport,
  LatencyRequest,
} from '../analysis/latency-types.js';
import { SrtCollector } from './srt.js';
import { TopN } from './top-n.js';

/** Histogram bucket upper bounds in µs: 1, 2, 5 per decade from 1 µs to 100 s. */
export const BUCKETS_US: readonly number[] = Array.from(
  { length: 25 },
  (_, i) => [1, 2, 5][i % 3]! * 10 ** Math.floor(i / 3),
);
export const LATENCY_BUCKETS: readonly number[] = BUCKETS_US.map((u) => u / 1e6);

/** Requests kept for the slowest list and the never-answered list (the TUI shows them all). */
export const KEPT_REQUESTS = 10_000;
/** Of those, listed in the JSON report. */
export const JSON_LISTED = 100;
/** Queues listed per command, and per program in all; beyond, their calls count in the totals only. */
const MAX_QUEUES_PER_COMMAND = 256;
const MAX_QUEUES = 4096;

/** Seconds to whole microseconds. */
export function micros(s: number): number {
  return Math.round(s * 1e6);
}

const secs = (us: number): number => us / 1e6;

/** Index of the bucket holding `us`: the first bound at or above it, or the overflow bucket. */
function bucketOf(us: number): number {
  let lo = 0;
  let hi = BUCKETS_US.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (BUCKETS_US[mid]! >= us) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

class Dist {
  calls = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;
  sum = 0;
  readonly hist: Uint32Array | null;

  constructor(histogram: boolean) {
    this.hist = histogram ? new Uint32Array(BUCKETS_US.length + 1) : null;
  }

  add(us: number): void {
    this.calls++;
    if (us < this.min) this.min = us;
    if (us > this.max) this.max = us;
    this.sum += us;
    if (this.hist) this.hist[bucketOf(us)]!++;
  }

  json(): LatencyDistribution {
    const c = this.calls;
    return {
      calls: c,
      min: c === 0 ? 0 : secs(this.min),
      max: secs(this.max),
      avg: c === 0 ? 0 : secs(this.sum / c),
      sum: secs(this.sum),
      ...(this.hist ? { histogram: Array.from(this.hist) } : {}),
    };
  }
}

class CommandLatency {
  readonly total = new Dist(true);
  readonly toFirst = new Dist(true);
  readonly firstToLast = new Dist(true);
  readonly lastToResponse = new Dist(true);
  readonly queues = new Map<string, Dist>();
  queuesOmitted = 0;

  constructor(readonly code: number) {}
}

/** The request's intervals in µs: total (NaN when never answered) and the three phases (NaN without data). */
function phasesUs(t: RequestTiming): { total: number; first: number; spread: number; tail: number } {
  const total = micros(t.response - t.request);
  const data = Number.isFinite(t.firstData) && Number.isFinite(t.lastData);
  return {
    total,
    first: data ? micros(t.firstData - t.request) : Number.NaN,
    spread: data ? micros(t.lastData - t.firstData) : Number.NaN,
    tail: data ? micros(t.response - t.lastData) : Number.NaN,
  };
}

const orNull = (us: number): number | null => (Number.isFinite(us) ? secs(us) : null);

/** Collects every request's timing; `srt` holds the same requests for the -z srt tables. */
export class LatencyCollector {
  readonly srt = new SrtCollector();
  private readonly commands = new Map<string, Map<string, CommandLatency>>();
  /** Program → queue → every command's response times there. */
  private readonly queues = new Map<string, Map<string, Dist>>();
  private queueCount = 0;
  private queuesOmitted = 0;
  private readonly slow: TopN<RequestTiming>;
  private readonly waiting: TopN<RequestTiming>;
  private readonly unansweredBy = new Map<string, number>();
  private answered = 0;
  private unanswered = 0;
  /** Time of the capture's last packet (set by `end`). */
  captureEnd: number | null = null;

  /** `kept`: answered (and, apart, unanswered) requests kept for the lists. */
  constructor(readonly kept = KEPT_REQUESTS) {
    this.slow = new TopN(kept);
    this.waiting = new TopN(kept);
  }

  readonly add = (t: RequestTiming): void => {
    this.srt.add(t);
    if (!Number.isFinite(t.response)) {
      this.unanswered++;
      this.unansweredBy.set(t.program, (this.unansweredBy.get(t.program) ?? 0) + 1);
      // The oldest request has waited longest whenever the capture ended.
      if (Number.isFinite(t.request)) this.waiting.add(t, -t.request);
      return;
    }
    const p = phasesUs(t);
    if (!Number.isFinite(p.total)) return;
    this.answered++;
    let cmds = this.commands.get(t.program);
    if (!cmds) this.commands.set(t.program, (cmds = new Map()));
    let c = cmds.get(t.command);
    if (!c) cmds.set(t.command, (c = new CommandLatency(t.code ?? 0)));
    c.total.add(p.total);
    if (Number.isFinite(p.first)) {
      c.toFirst.add(p.first);
      c.firstToLast.add(p.spread);
      c.lastToResponse.add(p.tail);
    }
    let q = c.queues.get(t.queue);
    if (!q && c.queues.size < MAX_QUEUES_PER_COMMAND) c.queues.set(t.queue, (q = new Dist(false)));
    if (q) q.add(p.total);
    else c.queuesOmitted++;
    let byQueue = this.queues.get(t.program);
    if (!byQueue) this.queues.set(t.program, (byQueue = new Map()));
    let pq = byQueue.get(t.queue);
    if (!pq && this.queueCount < MAX_QUEUES) {
      byQueue.set(t.queue, (pq = new Dist(true)));
      this.queueCount++;
    }
    if (pq) pq.add(p.total);
    else this.queuesOmitted++;
    this.slow.add(t, p.total);
  };

  /** The capture ended at `time` (its last packet): requests never answered waited until then. */
  end(time: number): void {
    if (Number.isFinite(time)) this.captureEnd = time;
  }

  /** One request as the report and the TUI show it. */
  request(t: RequestTiming): LatencyRequest {
    const answered = Number.isFinite(t.response);
    const p = phasesUs(t);
    const end = this.captureEnd;
    return {
      program: t.program,
      command: t.command,
      code: t.code ?? null,
      queue: t.queue,
      time: t.request,
      latency: answered ? secs(p.total) : end === null ? Number.NaN : secs(micros(end - t.request)),
      answered,
      toFirstData: orNull(p.first),
      firstToLastData: orNull(p.spread),
      lastDataToResponse: answered ? orNull(p.tail) : null,
      requestFrame: t.requestFrame ?? null,
      firstDataFrame: t.firstDataFrame ?? null,
      lastDataFrame: t.lastDataFrame ?? null,
      responseFrame: t.responseFrame ?? null,
    };
  }

  /** The slowest answered requests kept, slowest first. */
  slowest(limit = Number.POSITIVE_INFINITY): LatencyRequest[] {
    return this.slow
      .sorted()
      .slice(0, limit)
      .map((t) => this.request(t));
  }

  /** Requests never answered that are kept, the longest waiting first; `program` keeps only its own. */
  neverAnswered(limit = Number.POSITIVE_INFINITY, program?: string): LatencyRequest[] {
    const out: LatencyRequest[] = [];
    for (const t of this.waiting.sorted()) {
      if (out.length >= limit) break;
      if (program === undefined || t.program === program) out.push(this.request(t));
    }
    return out;
  }

  /** Requests never answered in all (`program`: of that program). */
  unansweredCount(program?: string): number {
    return program === undefined ? this.unanswered : (this.unansweredBy.get(program) ?? 0);
  }

  answeredCount(): number {
    return this.answered;
  }

  /** The JSON report's `latency` section. */
  report(listed = JSON_LISTED): LatencyReport {
    const commands: LatencyCommand[] = [];
    for (const row of this.srt.rows()) {
      const c = this.commands.get(row.program)?.get(row.command);
      if (!c) continue;
      const total = c.total.json();
      commands.push({
        program: row.program,
        command: row.command,
        code: c.code,
        ...total,
        // Rounding is monotonic: the rounded percentile is the percentile of the rounded times.
        p50: secs(micros(row.p50)),
        p99: secs(micros(row.p99)),
        p999: secs(micros(row.p999)),
        sampled: row.sampled,
        histogram: total.histogram!,
        phases: {
          toFirstData: c.toFirst.json(),
          firstToLastData: c.firstToLast.json(),
          lastDataToResponse: c.lastToResponse.json(),
        },
        queues: [...c.queues].map(([queue, d]) => ({ program: row.program, queue, ...d.json() })),
        queuesOmitted: c.queuesOmitted,
      });
    }
    const queues: LatencyQueue[] = [];
    for (const [program, byQueue] of this.queues)
      for (const [queue, d] of byQueue) queues.push({ program, queue, ...d.json() });
    const never = this.neverAnswered(listed);
    return {
      buckets: LATENCY_BUCKETS,
      captureEnd: this.captureEnd,
      commands,
      queues,
      queuesOmitted: this.queuesOmitted,
      slowest: this.slowest(listed),
      answered: this.answered,
      unanswered: { count: this.unanswered, listed: never, more: this.unanswered - never.length },
    };
  }
}

const LISTED_IN_TEXT = 20;

/**
 * The requests of `program` never answered, under its -z srt table: the request's frame, how long
 * it had waited when the capture ended, the command and queue; at most 20, then how many more.
 */
export function unansweredText(c: LatencyCollector, program: string, limit = LISTED_IN_TEXT): string {
  const n = c.unansweredCount(program);
  if (n === 0) return '';
  const list = c.neverAnswered(limit, program);
  const lines = [
    `${program} requests never answered: ${n} (waited until the capture's last packet)`,
    `${'Frame'.padStart(8)}  ${'Waited (s)'.padStart(12)}  ${'Command'.padEnd(22)} Queue`,
  ];
  for (const r of list)
    lines.push(
      `${String(r.requestFrame ?? '-').padStart(8)}  ${Number.isFinite(r.latency) ? r.latency.toFixed(6).padStart(12) : '?'.padStart(12)}  ${r.command.padEnd(22)} ${r.queue}`,
    );
  if (n > list.length) lines.push(`${n - list.length} more not listed`);
  return `${lines.join('\n')}\n`;
}
