import { concat } from '../../src/generate/frames.js';
/**
 * Builders for TcpSegment objects and recording consumers, to drive src/tcp/ without packet bytes.
 */
import type { FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import { TCP_ACK, type TcpOptions, type TcpSegment } from '../../src/net/segment.js';
import type { DirectionConsumer, EndReason, FlowConsumer, StreamChunk } from '../../src/tcp/stream.js';

export interface SegSpec {
  frame?: number;
  src?: string;
  dst?: string;
  srcPort?: number;
  dstPort?: number;
  seq: number;
  ack?: number;
  flags?: number;
  payload?: Uint8Array;
  missing?: number;
  mss?: number;
}

export function mkSeg(o: SegSpec): TcpSegment {
  const options: TcpOptions | null =
    o.mss === undefined
      ? null
      : { mss: o.mss, windowScale: null, sackPermitted: false, sack: [], tsVal: null, tsEcr: null };
  const src = o.src ?? '10.0.0.1';
  return {
    frame: o.frame ?? 1,
    tsSec: 0,
    tsNsec: 0,
    ipVersion: src.includes(':') ? 6 : 4,
    src,
    dst: o.dst ?? '10.0.0.2',
    srcPort: o.srcPort ?? 40001,
    dstPort: o.dstPort ?? 4420,
    seq: o.seq >>> 0,
    ack: (o.ack ?? 0) >>> 0,
    flags: o.flags ?? TCP_ACK,
    window: 65535,
    urgent: 0,
    options,
    payload: o.payload ?? new Uint8Array(0),
    missing: o.missing ?? 0,
  };
}

/** Deterministic bytes: pattern(n, salt)[i] depends on i and salt. */
export function pattern(n: number, salt = 0): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + salt * 7 + (i >> 8)) & 0xff;
  return b;
}

/** A conversation between a client and a server endpoint, numbering frames as it goes. */
export class Conv {
  frame = 0;
  constructor(
    readonly client = '10.0.0.1',
    readonly cport = 40001,
    readonly server = '10.0.0.2',
    readonly sport = 4420,
  ) {}

  /** Client to server. */
  c(o: Omit<SegSpec, 'src' | 'dst' | 'srcPort' | 'dstPort' | 'frame'>): TcpSegment {
    return mkSeg({
      ...o,
      frame: ++this.frame,
      src: this.client,
      srcPort: this.cport,
      dst: this.server,
      dstPort: this.sport,
    });
  }

  /** Server to client. */
  s(o: Omit<SegSpec, 'src' | 'dst' | 'srcPort' | 'dstPort' | 'frame'>): TcpSegment {
    return mkSeg({
      ...o,
      frame: ++this.frame,
      src: this.server,
      srcPort: this.sport,
      dst: this.client,
      dstPort: this.cport,
    });
  }
}

export type StreamEvent =
  | {
      kind: 'data';
      offset: number;
      seq: number;
      bytes: Uint8Array;
      buffer: ArrayBufferLike;
      frame: number;
      segmentStart: boolean;
      segmentEnd: boolean;
    }
  | { kind: 'gap'; offset: number; seq: number; length: number; cut?: boolean }
  | { kind: 'end'; reason: EndReason; frame: number | null };

export class DirRecorder implements DirectionConsumer {
  readonly events: StreamEvent[] = [];
  data(c: StreamChunk): void {
    this.events.push({
      kind: 'data',
      offset: c.offset,
      seq: c.seq,
      bytes: c.data.slice(),
      buffer: c.data.buffer,
      frame: c.frame,
      segmentStart: c.segmentStart,
      segmentEnd: c.segmentEnd,
    });
  }
  gap(offset: number, seq: number, length: number, cut?: boolean): void {
    this.events.push(cut ? { kind: 'gap', offset, seq, length, cut } : { kind: 'gap', offset, seq, length });
  }
  end(reason: EndReason, frame: number | null): void {
    this.events.push({ kind: 'end', reason, frame });
  }
  /** All delivered bytes, concatenated. */
  bytes(): Uint8Array {
    return concat(...this.events.flatMap((e) => (e.kind === 'data' ? [e.bytes] : [])));
  }
  gaps(): { offset: number; seq: number; length: number }[] {
    return this.events.flatMap((e) => (e.kind === 'gap' ? [{ offset: e.offset, seq: e.seq, length: e.length }] : []));
  }
  ends(): StreamEvent[] {
    return this.events.filter((e) => e.kind === 'end');
  }
}

export class FlowRecorder implements FlowConsumer {
  readonly directions: readonly [DirRecorder, DirRecorder] = [new DirRecorder(), new DirRecorder()];
}

export class SinkRecorder implements FindingSink {
  readonly findings: Array<FindingInput & { rule: string }> = [];
  report(rule: string, f: FindingInput): void {
    this.findings.push({ rule, ...f, frames: [...f.frames] });
  }
  of(rule: string): Array<FindingInput & { rule: string }> {
    return this.findings.filter((f) => f.rule === rule);
  }
}
