/**
 * The JSON report's `latency` section (docs/latency.md): where each upper-layer request's time
 * went. Every figure is in seconds, rounded to the microsecond (capture times held as seconds since
 * the epoch in a double keep about 0.24 µs, so finer digits would be noise).
 */

/** Calls, extremes, mean, sum and a log-spaced histogram of one set of intervals. */
export interface LatencyDistribution {
  readonly calls: number;
  readonly min: number;
  readonly max: number;
  readonly avg: number;
  readonly sum: number;
  /** Counts per bucket of `LatencyReport.buckets` (one more than the bounds: the last is above them). */
  readonly histogram?: readonly number[];
}

/** The three parts of a request that moved data by RDMA: request → first data → last data → response. */
export interface LatencyPhases {
  readonly toFirstData: LatencyDistribution;
  readonly firstToLastData: LatencyDistribution;
  readonly lastDataToResponse: LatencyDistribution;
}

/** One queue or connection's share of a command (or of a program). */
export interface LatencyQueue extends LatencyDistribution {
  readonly program: string;
  readonly queue: string;
}

/** One command: the -z srt row's figures, the histogram, the phases, the queues it ran on. */
export interface LatencyCommand extends LatencyDistribution {
  readonly program: string;
  readonly command: string;
  readonly code: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly sampled: boolean;
  readonly histogram: readonly number[];
  readonly phases: LatencyPhases;
  readonly queues: readonly LatencyQueue[];
  /** Queues beyond the per-command cap, folded into the figures above but not listed. */
  readonly queuesOmitted: number;
}

/** One request, answered (its response time) or not (how long it had waited when the capture ended). */
export interface LatencyRequest {
  readonly program: string;
  readonly command: string;
  readonly code: number | null;
  readonly queue: string;
  /** Capture time of the request (seconds since the epoch). */
  readonly time: number;
  /** Request to response; for one never answered, request to the capture's last packet. */
  readonly latency: number;
  readonly answered: boolean;
  readonly toFirstData: number | null;
  readonly firstToLastData: number | null;
  readonly lastDataToResponse: number | null;
  readonly requestFrame: number | null;
  readonly firstDataFrame: number | null;
  readonly lastDataFrame: number | null;
  readonly responseFrame: number | null;
}

export interface LatencyReport {
  /** Upper bounds of the histogram buckets (seconds): 1, 2, 5 per decade from 1 µs to 100 s. */
  readonly buckets: readonly number[];
  /** Time of the capture's last packet: what a request never answered had waited until. */
  readonly captureEnd: number | null;
  readonly commands: readonly LatencyCommand[];
  /** Per program and queue (connection), every command together. */
  readonly queues: readonly LatencyQueue[];
  /** Queues beyond the cap (4096), counted in the commands' figures but not listed. */
  readonly queuesOmitted: number;
  /** The slowest answered requests, slowest first (at most `slowestListed`). */
  readonly slowest: readonly LatencyRequest[];
  readonly answered: number;
  /** Requests never answered: how many, the longest waiting first, and how many are not listed. */
  readonly unanswered: { readonly count: number; readonly listed: readonly LatencyRequest[]; readonly more: number };
}
