/**
 * Builds whole TCP connections carrying MPA as real pcap files: handshake, each side's byte stream
 * cut into segments by a policy, optional reordering, duplication and loss, FIN/RST. As a stream
 * (scenarioStream: frames made as they are read, each send's octets asked for in order, so a
 * capture of a gigabyte is never held) or whole (buildScenario).
 */
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../report/pcap-writer.js';
import { ACK, FIN, PSH, RST, SYN, mssOption, tcpFrame } from './frames.js';
import { rng } from './mpa-encoder.js';

export interface Endpoint {
  addr: string;
  port: number;
}

/** One send: `bytes` from side 0 (client) or 1 (server), cut into segments by `cut`. */
export interface Send {
  dir: 0 | 1;
  bytes: Uint8Array;
  /** Segment sizes; default: one segment per MSS. A function gets the bytes and returns sizes. */
  cut?: number[] | 'mss' | { random: number; seed: number; max?: number };
  /** Microseconds of capture time that pass before this send's first segment (default 0). */
  delayUs?: number;
  /** Each of its frames captured with this many octets only (a snaplen cut; the original length recorded). */
  snaplen?: number;
}

export interface ScenarioOptions {
  client?: Endpoint;
  server?: Endpoint;
  isn?: [number, number];
  mss?: number;
  /** Skip the handshake (mid-stream capture). */
  noHandshake?: boolean;
  /** How the connection ends. */
  close?: 'fin' | 'rst' | 'none';
  /** Instead of `close`: these FIN/RST segments in this order (e.g. FIN then two RSTs from the server). */
  closing?: ReadonlyArray<{ dir: 0 | 1; flag: 'fin' | 'rst' }>;
  /** Post-processing on the list of data frames (indexes in emission order): drop, duplicate, reorder. */
  drop?: (i: number, dir: 0 | 1) => boolean;
  duplicate?: (i: number) => boolean;
  /** Swap each data frame i with i+1 when it returns true. */
  swapWithNext?: (i: number, dirA: 0 | 1, dirB: 0 | 1) => boolean;
  /** Drop this many octets of stream from the start of each direction's capture (mid-stream start). */
  skipBytes?: [number, number];
  /**
   * After data frame i and its successor in the same direction: a retransmission of the second half
   * of i and the first half of the successor, the same octets again (an overlapping retransmission).
   */
  overlap?: (i: number) => boolean;
  /** Tag every frame with this IEEE 802.1Q VLAN ID. */
  vlan?: number;
}

export interface ScenarioResult {
  pcap: Uint8Array;
  frames: PcapFrame[];
  /** Absolute seq of each side's first payload octet (ISN + 1). */
  dataSeq: [number, number];
  /**
   * Per send (in `sends` order): the frame number (1-based) and capture time in µs of the frame
   * that carried its last octet, as scheduled here; null when that frame was dropped or skipped.
   */
  sendEnds: Array<{ frame: number; us: number } | null>;
}

/** A send without its octets: what scenarioStream plans with before it asks for them. */
export type SendShape = Omit<Send, 'bytes'> & { length: number };

/** The sends in order: an array, or made when asked for (millions of segments need not be objects at once). */
export interface SendShapes {
  readonly length: number;
  at(i: number): SendShape | undefined;
}

export interface ScenarioStream {
  /** Absolute seq of each side's first payload octet (ISN + 1). */
  dataSeq: [number, number];
  /**
   * The frames in capture order, made as they are read (once). `bytesOf(i)` is asked for each
   * send's octets in send order; `onSendEnd` hears of each send whose last octet was captured: its
   * frame number (1-based) and capture time in µs.
   */
  frames(
    bytesOf: (send: number) => Uint8Array,
    onSendEnd?: (send: number, frame: number, us: number) => void,
  ): Generator<PcapFrame>;
}

/** A send's segment sizes, in order: its cut, or one per MSS. */
function forEachSize(s: SendShape, mss: number, fn: (size: number) => void): void {
  const n = s.length;
  if (Array.isArray(s.cut)) {
    let rest = n;
    for (const c of s.cut) {
      if (rest <= 0) break;
      fn(Math.min(c, rest));
      rest -= c;
    }
    if (rest > 0) fn(rest);
  } else if (s.cut && typeof s.cut === 'object') {
    const r = rng(s.cut.seed);
    let rest = n;
    while (rest > 0) {
      const c = Math.min(rest, 1 + Math.floor(r() * (s.cut.max ?? mss)));
      fn(c);
      rest -= c;
    }
  } else {
    for (let off = 0; off < n; off += mss) fn(Math.min(mss, n - off));
  }
}

/** A growing array of octets (one per data segment: its direction, whether it is dropped, swapped). */
class Flags {
  a = new Uint8Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = new Uint8Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
}

interface DataSegment {
  dir: 0 | 1;
  frame: Uint8Array;
  seq: number;
  payload: Uint8Array;
  delayUs: number;
  snaplen: number | undefined;
  /** Index of the send, and whether this segment carries its last octet. */
  send: number;
  last: boolean;
}

/**
 * The connection of `shapes` as a stream. The callbacks of `o` are called in the order buildScenario
 * always called them (drop for every data segment, then swapWithNext for every kept one, here;
 * duplicate and overlap as the frames are read), so a seeded random choice in them draws the same
 * values. Memory: two flags per data segment, the frames in flight, not the capture.
 */
export function scenarioStream(shapes: SendShapes, o: ScenarioOptions = {}): ScenarioStream {
  const ep: [Endpoint, Endpoint] = [
    o.client ?? { addr: '10.0.0.1', port: 40001 },
    o.server ?? { addr: '10.0.0.2', port: 4420 },
  ];
  const isn = o.isn ?? [1000, 900000];
  const mss = o.mss ?? 1460;
  const dataSeq: [number, number] = [(isn[0] + 1) >>> 0, (isn[1] + 1) >>> 0];
  // Which data segments are dropped, then which kept ones trade places with their successor.
  const dropped = new Flags();
  const keptDirs = new Flags();
  const finalSeq: [number, number] = [dataSeq[0], dataSeq[1]];
  {
    const skip = o.skipBytes ? [...o.skipBytes] : [0, 0];
    let i = 0;
    for (let n = 0; n < shapes.length; n++) {
      const s = shapes.at(n)!;
      finalSeq[s.dir] = (finalSeq[s.dir] + s.length) >>> 0;
      forEachSize(s, mss, (z) => {
        const sk = skip[s.dir]!;
        if (sk >= z) {
          skip[s.dir] = sk - z;
          return;
        }
        skip[s.dir] = 0;
        const drop = o.drop?.(i++, s.dir) ?? false;
        dropped.push(drop ? 1 : 0);
        if (!drop) keptDirs.push(s.dir);
      });
    }
  }
  const swapped = new Uint8Array(keptDirs.length);
  if (o.swapWithNext)
    for (let i = 0; i + 1 < keptDirs.length; i++) {
      if (o.swapWithNext(i, keptDirs.a[i] as 0 | 1, keptDirs.a[i + 1] as 0 | 1)) {
        swapped[i] = 1;
        i++;
      }
    }
  keptDirs.a = new Uint8Array(0);

  function* frames(
    bytesOf: (send: number) => Uint8Array,
    onSendEnd?: (send: number, frame: number, us: number) => void,
  ): Generator<PcapFrame> {
    const seq: [number, number] = [dataSeq[0], dataSeq[1]];
    let t = 1_700_000_000 * 1e6;
    let count = 0;
    const frame = (data: Uint8Array, snaplen?: number): PcapFrame => {
      t += 10;
      count++;
      const cut = snaplen !== undefined && data.length > snaplen;
      return {
        tsSec: Math.floor(t / 1e6),
        tsNsec: (t % 1e6) * 1000,
        data: cut ? data.subarray(0, snaplen) : data,
        ...(cut ? { origLen: data.length } : {}),
      };
    };
    const seg = (dir: 0 | 1, flags: number, s: number, ack: number, payload?: Uint8Array, options?: Uint8Array) =>
      tcpFrame(
        {
          src: ep[dir].addr,
          dst: ep[1 - dir]!.addr,
          sport: ep[dir].port,
          dport: ep[1 - dir]!.port,
          seq: s,
          ack,
          flags,
          ...(payload ? { payload } : {}),
          ...(options ? { options } : {}),
        },
        o.vlan,
      );
    if (!o.noHandshake) {
      // An absent ack is written as 0 (tcpFrame): the SYN's.
      yield frame(seg(0, SYN, isn[0], 0, undefined, mssOption(mss)));
      yield frame(seg(1, SYN | ACK, isn[1], seq[0], undefined, mssOption(mss)));
      yield frame(seg(0, ACK, seq[0], seq[1]));
    }
    /** The kept data segments in send order; each one's frame acknowledges what the peer had sent by then. */
    function* kept(): Generator<DataSegment> {
      const skip = o.skipBytes ? [...o.skipBytes] : [0, 0];
      let i = 0;
      for (let sendIndex = 0; sendIndex < shapes.length; sendIndex++) {
        const s = shapes.at(sendIndex)!;
        const bytes = bytesOf(sendIndex);
        const n = s.length;
        const out: DataSegment[] = [];
        let off = 0;
        let delayUs = s.delayUs ?? 0;
        forEachSize(s, mss, (z) => {
          const payload = bytes.subarray(off, off + z);
          const sq = seq[s.dir];
          seq[s.dir] = (seq[s.dir] + z) >>> 0;
          off += z;
          const sk = skip[s.dir]!;
          if (sk >= z) {
            skip[s.dir] = sk - z;
            return;
          }
          skip[s.dir] = 0;
          const at = (sq + sk) >>> 0;
          const p = sk > 0 ? payload.subarray(sk) : payload;
          const d = { dir: s.dir, seq: at, payload: p, delayUs, snaplen: s.snaplen, send: sendIndex, last: off === n };
          delayUs = 0;
          if (dropped.a[i++]) return;
          out.push({ ...d, frame: seg(s.dir, ACK | PSH, at, seq[1 - s.dir]!, p) });
        });
        yield* out;
      }
    }
    /** Kept segments in capture order: each one marked swapped trades places with its successor. */
    function* ordered(): Generator<DataSegment> {
      const it = kept();
      for (let i = 0; ; i++) {
        const a = it.next();
        if (a.done) return;
        if (swapped[i]) {
          const b = it.next();
          if (!b.done) yield b.value;
          yield a.value;
          i++;
        } else yield a.value;
      }
    }
    const it = ordered();
    let cur = it.next();
    let overlapAfter: Uint8Array | null = null;
    for (let i = 0; !cur.done; i++) {
      const d = cur.value;
      const nx = it.next();
      const next = nx.done ? undefined : nx.value;
      t += d.delayUs;
      yield frame(d.frame, d.snaplen);
      if (d.last) onSendEnd?.(d.send, count, t);
      if (o.duplicate?.(i)) yield frame(d.frame);
      if (overlapAfter) yield frame(overlapAfter);
      overlapAfter = null;
      if (
        next &&
        o.overlap?.(i) &&
        next.dir === d.dir &&
        (d.seq + d.payload.length) >>> 0 === next.seq &&
        d.payload.length > 1 &&
        next.payload.length > 1
      ) {
        const a = d.payload.subarray(d.payload.length >> 1);
        const b = next.payload.subarray(0, next.payload.length >> 1);
        const both = new Uint8Array(a.length + b.length);
        both.set(a);
        both.set(b, a.length);
        // Acknowledging what the peer has sent by the end of the connection, as every retransmission here.
        overlapAfter = seg(d.dir, ACK | PSH, (d.seq + (d.payload.length >> 1)) >>> 0, finalSeq[1 - d.dir]!, both);
      }
      cur = nx;
    }
    if (o.closing) {
      const finSent = [false, false];
      for (const c of o.closing) {
        // A RST after the sender's FIN carries the sequence number after the FIN.
        const at = (seq[c.dir] + (finSent[c.dir] ? 1 : 0)) >>> 0;
        yield frame(seg(c.dir, c.flag === 'fin' ? FIN | ACK : RST, at, seq[1 - c.dir]!));
        if (c.flag === 'fin') finSent[c.dir] = true;
      }
    } else if (o.close === 'fin' || o.close === undefined) {
      yield frame(seg(0, FIN | ACK, seq[0], seq[1]));
      yield frame(seg(1, FIN | ACK, seq[1], seq[0]));
    } else if (o.close === 'rst') {
      yield frame(seg(0, RST | ACK, seq[0], seq[1]));
    }
  }
  return { dataSeq, frames };
}

export function buildScenario(sends: readonly Send[], o: ScenarioOptions = {}): ScenarioResult {
  const shapes = sends.map(({ bytes, ...rest }) => ({ ...rest, length: bytes.length }));
  const st = scenarioStream(shapes, o);
  const sendEnds: ScenarioResult['sendEnds'] = sends.map(() => null);
  const frames = [
    ...st.frames(
      (i) => sends[i]!.bytes,
      (send, frame, us) => {
        sendEnds[send] = { frame, us };
      },
    ),
  ];
  return { pcap: buildPcap(LINKTYPE_ETHERNET, frames), frames, dataSeq: st.dataSeq, sendEnds };
}
