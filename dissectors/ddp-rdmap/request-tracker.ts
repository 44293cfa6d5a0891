/**
 * Pairs an upper layer's requests with their responses by its own key (SMB2 MessageId, RPC XID,
 * NVMe CID, iSCSI ITT) and records the times service response time statistics need: request,
 * first and last data transfer, response. One small helper shared by every upper layer.
 * Bounded: at most `max` outstanding requests; beyond it the oldest is forgotten (and counted).
 */
import type { RequestTiming } from './ulp-contract.js';

export interface TrackedRequest {
  readonly program: string;
  readonly command: string;
  /** The command's number (tshark's SRT Index). */
  readonly code?: number;
  readonly queue: string;
  /** Capture time of the request (seconds since the epoch). */
  readonly time: number;
  readonly seq: number;
  readonly frames: readonly number[];
  firstData: number;
  lastData: number;
  /** Frames that completed the first and the last data transfer (set by `data`). */
  firstDataFrame?: number;
  lastDataFrame?: number;
}

/**
 * The timing record of `r`, answered at `response` in frame `responseFrame` (NaN and undefined for
 * a request never answered). The request's frame is the one that completed it: the last of `frames`.
 */
export function requestTiming(r: TrackedRequest, response: number, responseFrame?: number): RequestTiming {
  const requestFrame = r.frames[r.frames.length - 1];
  // Optional fields set only when known, without spreading temporary objects (once per request).
  const t: { -readonly [K in keyof RequestTiming]: RequestTiming[K] } = {
    program: r.program,
    command: r.command,
    queue: r.queue,
    request: r.time,
    firstData: r.firstData,
    lastData: r.lastData,
    response,
  };
  if (r.code !== undefined) t.code = r.code;
  if (requestFrame !== undefined) t.requestFrame = requestFrame;
  if (r.firstDataFrame !== undefined) t.firstDataFrame = r.firstDataFrame;
  if (r.lastDataFrame !== undefined) t.lastDataFrame = r.lastDataFrame;
  if (responseFrame !== undefined) t.responseFrame = responseFrame;
  return t;
}

export class RequestTracker<K, R extends TrackedRequest> {
  private readonly open = new Map<K, R>();
  /** Requests forgotten because more than `max` were outstanding. */
  dropped = 0;
  /** Where eviction of the oldest request goes on (created at the first eviction). */
  private oldest: Iterator<K> | null = null;

  constructor(
    private readonly timing: (t: RequestTiming) => void,
    private readonly max = 65536,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** The outstanding request under `key`, if any. */
  get(key: K): R | undefined {
    return this.open.get(key);
  }

  /** Starts tracking `req`; returns the request already outstanding under the same key (a reuse), if any. */
  start(key: K, req: R): R | undefined {
    const before = this.open.get(key);
    this.open.delete(key);
    this.open.set(key, req);
    if (this.open.size > this.max) {
      // Oldest first, from one live iterator that goes on where the last eviction stopped: every
      // entry before it was evicted, later ones are appended. keys().next() from the start would
      // step over every entry deleted since the table was last rehashed, at each eviction (a
      // million commands over a full table: seconds instead of milliseconds).
      this.oldest ??= this.open.keys();
      this.open.delete(this.oldest.next().value as K);
      this.dropped++;
    }
    return before;
  }

  /** Data moved for the request under `key` at `time`, by the message completed in `frame`. */
  data(key: K, time: number, frame?: number): void {
    const r = this.open.get(key);
    if (!r) return;
    if (Number.isNaN(r.firstData)) {
      r.firstData = time;
      if (frame !== undefined) r.firstDataFrame = frame;
    }
    r.lastData = time;
    if (frame !== undefined) r.lastDataFrame = frame;
  }

  /** The response to `key` at `time` (in `frame`): the request, no longer outstanding, or undefined when none was. */
  finish(key: K, time: number, frame?: number): R | undefined {
    const r = this.open.get(key);
    if (!r) return undefined;
    this.open.delete(key);
    this.timing(requestTiming(r, time, frame));
    return r;
  }

  /** Reports every request still outstanding as never answered (response NaN), oldest first. */
  unanswered(): void {
    for (const r of this.open.values()) this.timing(requestTiming(r, Number.NaN));
  }

  /** Requests still outstanding, oldest first (at the end of a connection: never answered). */
  outstanding(): IterableIterator<R> {
    return this.open.values();
  }
}

/** A fresh request's data times: none yet. */
export const NO_DATA = Number.NaN;
