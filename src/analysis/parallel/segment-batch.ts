/**
 * TCP segments as the main thread hands them to a worker: a batch of fixed-width numeric rows
 * (one Float64Array) and the payloads packed in one buffer, both transferred, not copied, by
 * postMessage. Addresses travel once per 4-tuple (a worker-local tuple index in each row), so a
 * segment costs one row and its payload octets.
 */
import { blankSegment, type TcpOptions, type TcpSegment } from '../../net/segment.js';

/** Row layout (Float64Array columns). */
const SLOT = 0; // the segment's position in capture order (all workers together)
const OPEN_ID = 1; // the flow id to give if this segment opens a flow, else 0
const BITS = 2; // ROW_MAYBE | ROW_REVERSE
const TUPLE = 3;
const FRAME = 4;
const TS_SEC = 5;
const TS_NSEC = 6;
const IP_VERSION = 7;
const SEQ = 8;
const ACK = 9;
const FLAGS = 10;
const WINDOW = 11;
const URGENT = 12;
const PAYLOAD_AT = 13;
const PAYLOAD_LEN = 14;
const MISSING = 15;
const HAS_OPTIONS = 16;
const MSS = 17;
const WSCALE = 18;
const SACK_OK = 19;
const TS_VAL = 20;
const TS_ECR = 21;
const SACK_N = 22;
const SACK0 = 23;
/** SACK blocks kept per segment (a TCP header holds at most 4, RFC 2018 §3). */
const SACK_MAX = 4;
const WIDTH = SACK0 + 2 * SACK_MAX;

/** The segment may open a new connection on a known 4-tuple (a SYN): the worker says whether it did. */
export const ROW_MAYBE = 1;
/** The segment was sent by the tuple's second endpoint. */
const ROW_REVERSE = 2;

/** A batch as posted: rows, payload octets, and the 4-tuples a worker has not seen before. */
export interface SegmentBatch {
  t: 'batch';
  rows: Float64Array;
  count: number;
  payload: Uint8Array;
  /** Flattened [index, addrA, portA, addrB, portB] per new tuple. */
  tuples: Array<string | number>;
}

const NUL = -1; // a null option value
/** A writer's first buffers: rows and payload octets (grown by doubling as batches need). */
const FIRST_ROWS = 64;
const FIRST_BYTES = 16 * 1024;

/** Builds one worker's next batch on the main thread. */
export class SegmentBatchWriter {
  private rows: Float64Array;
  private count = 0;
  private payload: Uint8Array;
  private used = 0;
  private tuples: Array<string | number> = [];

  /**
   * Starts small and grows to the batches the caller posts (up to about `segments` rows and `bytes`
   * of payload, plus one large segment): a run over hundreds of small captures makes a writer per
   * worker per capture, and full-size buffers were 0.8 MB of zeroed memory each, twice.
   */
  constructor(maxSegments: number, maxBytes: number) {
    this.rows = new Float64Array(WIDTH * Math.min(maxSegments, FIRST_ROWS));
    this.payload = new Uint8Array(Math.min(maxBytes + 65536, FIRST_BYTES));
  }

  get segments(): number {
    return this.count;
  }

  get bytes(): number {
    return this.used;
  }

  addTuple(index: number, a: string, ap: number, b: string, bp: number): void {
    this.tuples.push(index, a, ap, b, bp);
  }

  add(s: TcpSegment, slot: number, tuple: number, reverse: boolean, openId: number, bits: number): void {
    if ((this.count + 1) * WIDTH > this.rows.length) {
      const bigger = new Float64Array(this.rows.length * 2);
      bigger.set(this.rows);
      this.rows = bigger;
    }
    const n = s.payload.length;
    if (this.used + n > this.payload.length) {
      const bigger = new Uint8Array(Math.max(this.payload.length * 2, this.used + n));
      bigger.set(this.payload.subarray(0, this.used));
      this.payload = bigger;
    }
    this.payload.set(s.payload, this.used);
    const r = this.rows;
    const o = this.count++ * WIDTH;
    r[o + SLOT] = slot;
    r[o + OPEN_ID] = openId;
    r[o + BITS] = bits | (reverse ? ROW_REVERSE : 0);
    r[o + TUPLE] = tuple;
    r[o + FRAME] = s.frame;
    r[o + TS_SEC] = s.tsSec;
    r[o + TS_NSEC] = s.tsNsec;
    r[o + IP_VERSION] = s.ipVersion;
    r[o + SEQ] = s.seq;
    r[o + ACK] = s.ack;
    r[o + FLAGS] = s.flags;
    r[o + WINDOW] = s.window;
    r[o + URGENT] = s.urgent;
    r[o + PAYLOAD_AT] = this.used;
    r[o + PAYLOAD_LEN] = n;
    r[o + MISSING] = s.missing;
    const opt = s.options;
    r[o + HAS_OPTIONS] = opt ? 1 : 0;
    if (opt) {
      r[o + MSS] = opt.mss ?? NUL;
      r[o + WSCALE] = opt.windowScale ?? NUL;
      r[o + SACK_OK] = opt.sackPermitted ? 1 : 0;
      r[o + TS_VAL] = opt.tsVal ?? NUL;
      r[o + TS_ECR] = opt.tsEcr ?? NUL;
      const k = Math.min(opt.sack.length, SACK_MAX);
      r[o + SACK_N] = k;
      for (let i = 0; i < k; i++) {
        r[o + SACK0 + 2 * i] = opt.sack[i]![0];
        r[o + SACK0 + 2 * i + 1] = opt.sack[i]![1];
      }
    }
    this.used += n;
  }

  /**
   * The batch to post: its buffers go to the worker (transferred, not copied) and come back with
   * its answer (recycle()), so batches allocate nothing once a few are in circulation.
   */
  take(): { batch: SegmentBatch; transfer: ArrayBuffer[] } {
    const batch: SegmentBatch = {
      t: 'batch',
      rows: this.rows,
      count: this.count,
      payload: this.payload,
      tuples: this.tuples,
    };
    const transfer = [this.rows.buffer as ArrayBuffer, this.payload.buffer as ArrayBuffer];
    // With no buffers back yet, new ones the size the last batch grew to.
    const spare = this.spare.pop();
    this.rows = spare?.rows ?? new Float64Array(batch.rows.length);
    this.payload = spare?.payload ?? new Uint8Array(batch.payload.length);
    this.count = 0;
    this.used = 0;
    this.tuples = [];
    return { batch, transfer };
  }

  /** Buffers of an answered batch, for the next ones. */
  recycle(rows: Float64Array, payload: Uint8Array): void {
    if (this.spare.length < 64) this.spare.push({ rows, payload });
  }

  private readonly spare: Array<{ rows: Float64Array; payload: Uint8Array }> = [];
}

/** The worker's side: known tuples, and one reused TcpSegment filled from each row. */
export class SegmentBatchReader {
  private readonly addrA: string[] = [];
  private readonly portA: number[] = [];
  private readonly addrB: string[] = [];
  private readonly portB: number[] = [];
  readonly seg: TcpSegment = blankSegment();
  slot = 0;
  openId = 0;
  bits = 0;

  /** Takes a batch's new tuples; returns its row count. */
  begin(b: SegmentBatch): number {
    const t = b.tuples;
    for (let i = 0; i < t.length; i += 5) {
      const k = t[i] as number;
      this.addrA[k] = t[i + 1] as string;
      this.portA[k] = t[i + 2] as number;
      this.addrB[k] = t[i + 3] as string;
      this.portB[k] = t[i + 4] as number;
    }
    return b.count;
  }

  /** Fills `seg`, `slot`, `openId` and `bits` from row i of the batch. */
  read(b: SegmentBatch, i: number): TcpSegment {
    const r = b.rows;
    const o = i * WIDTH;
    const s = this.seg;
    const k = r[o + TUPLE]!;
    this.slot = r[o + SLOT]!;
    this.openId = r[o + OPEN_ID]!;
    this.bits = r[o + BITS]!;
    if (this.bits & ROW_REVERSE) {
      s.src = this.addrB[k]!;
      s.srcPort = this.portB[k]!;
      s.dst = this.addrA[k]!;
      s.dstPort = this.portA[k]!;
    } else {
      s.src = this.addrA[k]!;
      s.srcPort = this.portA[k]!;
      s.dst = this.addrB[k]!;
      s.dstPort = this.portB[k]!;
    }
    s.frame = r[o + FRAME]!;
    s.tsSec = r[o + TS_SEC]!;
    s.tsNsec = r[o + TS_NSEC]!;
    s.ipVersion = r[o + IP_VERSION] === 6 ? 6 : 4;
    s.seq = r[o + SEQ]!;
    s.ack = r[o + ACK]!;
    s.flags = r[o + FLAGS]!;
    s.window = r[o + WINDOW]!;
    s.urgent = r[o + URGENT]!;
    const at = r[o + PAYLOAD_AT]!;
    s.payload = b.payload.subarray(at, at + r[o + PAYLOAD_LEN]!);
    s.missing = r[o + MISSING]!;
    s.options = r[o + HAS_OPTIONS] ? options(r, o) : null;
    return s;
  }
}

function orNull(v: number): number | null {
  return v === NUL ? null : v;
}

function options(r: Float64Array, o: number): TcpOptions {
  const sack: Array<[number, number]> = [];
  for (let i = 0; i < r[o + SACK_N]!; i++) sack.push([r[o + SACK0 + 2 * i]!, r[o + SACK0 + 2 * i + 1]!]);
  return {
    mss: orNull(r[o + MSS]!),
    windowScale: orNull(r[o + WSCALE]!),
    sackPermitted: r[o + SACK_OK] === 1,
    sack,
    tsVal: orNull(r[o + TS_VAL]!),
    tsEcr: orNull(r[o + TS_ECR]!),
  };
}
