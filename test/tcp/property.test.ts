import { describe, expect, it } from 'vitest';
import { TCP_ACK, TCP_FIN, TCP_SYN, type TcpSegment } from '../../src/net/segment.js';
import { Reassembler, type ReassemblyOptions } from '../../src/tcp/reassembler.js';
import { Conv, FlowRecorder, SinkRecorder, type StreamEvent } from '../helpers/tcp-stream.js';

/** Seeds per property; raise with TCP_PROPERTY_SEEDS=5000 for a longer soak. */
const SEEDS = Number(process.env['TCP_PROPERTY_SEEDS'] ?? 0) || 600;

/** mulberry32: small seeded PRNG so failures reproduce. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Piece {
  off: number;
  len: number;
  /** Offset of one octet this copy carries corrupted (a conflicting retransmission). */
  flip?: number;
}

interface Scenario {
  isn: number;
  stream: Uint8Array;
  /** Pieces in capture order (after drops, duplicates, re-segmentation and reordering). */
  order: Piece[];
}

function scenario(rand: () => number, corrupt = 0): Scenario {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const n = int(1, 40000);
  const stream = new Uint8Array(n);
  for (let i = 0; i < n; i++) stream[i] = int(0, 255);
  // ISNs near the wrap point a third of the time
  const isn = rand() < 0.33 ? (0xffffffff - int(0, 60000)) >>> 0 : int(0, 0xffffffff) >>> 0;
  // original segmentation (min 2 octets so no piece can pass for a keep-alive)
  const segs: Piece[] = [];
  for (let o = 0; o < n; ) {
    const len = Math.min(n - o, int(2, 3000));
    segs.push({ off: o, len: n - o - len === 1 ? len + 1 : len });
    o += segs.at(-1)!.len;
  }
  const order: Piece[] = [];
  for (const s of segs) {
    if (rand() < 0.15) continue; // capture drop
    order.push(s);
    const copy = (p: Piece): Piece => (rand() < corrupt ? { ...p, flip: p.off + int(0, p.len - 1) } : p);
    if (rand() < 0.1) order.push(copy(s)); // exact duplicate
    if (rand() < 0.1) {
      // retransmission with different boundaries (same bytes)
      const a = Math.max(0, s.off - int(0, 2000));
      const b = Math.min(n, s.off + s.len + int(0, 2000));
      if (b - a >= 2) order.push(copy({ off: a, len: b - a }));
    }
  }
  // local reordering: move pieces back by up to 8 places
  for (let i = order.length - 1; i > 0; i--) {
    if (rand() < 0.3) {
      const j = Math.max(0, i - int(1, 8));
      const [p] = order.splice(i, 1);
      order.splice(j, 0, p!);
    }
  }
  return { isn, stream, order };
}

function run(sc: Scenario, opts: ReassemblyOptions, withAcks: boolean, rand: () => number) {
  const sink = new SinkRecorder();
  const rec = new FlowRecorder();
  const r = new Reassembler(sink, () => rec, opts);
  const cv = new Conv();
  r.segment(cv.c({ seq: sc.isn, flags: TCP_SYN }));
  const base = (sc.isn + 1) >>> 0;
  const frameOf: number[] = [];
  const pieceOf = new Map<number, Piece>();
  let maxEnd = 0;
  for (const p of sc.order) {
    let payload = sc.stream.subarray(p.off, p.off + p.len);
    if (p.flip !== undefined) {
      payload = payload.slice();
      payload[p.flip - p.off] ^= 0x5a;
    }
    const s: TcpSegment = cv.c({ seq: (base + p.off) >>> 0, payload });
    frameOf.push(s.frame);
    pieceOf.set(s.frame, p);
    r.segment(s);
    // memory charged for held data never exceeds the caps between segments
    const cap = Math.min(opts.maxBufferedPerFlow ?? Infinity, opts.maxBufferedTotal ?? Infinity);
    if (r.bufferedBytes() > cap) throw new Error(`buffered ${r.bufferedBytes()} > cap ${cap}`);
    maxEnd = Math.max(maxEnd, p.off + p.len);
    if (withAcks && rand() < 0.2) {
      // the receiver got everything sent so far; it acknowledges some prefix of it
      const ack = Math.floor(rand() * (maxEnd + 1));
      r.segment(cv.s({ seq: 1, ack: (base + ack) >>> 0, flags: TCP_ACK }));
    }
  }
  r.segment(cv.c({ seq: (base + sc.stream.length) >>> 0, flags: TCP_FIN | TCP_ACK }));
  if (r.bufferedBytes() !== 0) throw new Error(`buffered ${r.bufferedBytes()} after the FIN`);
  r.finish();
  return { r, sink, rec, frameOf, pieceOf };
}

/** Merged missing ranges [off, end) given which octets are covered. */
function holes(covered: Uint8Array): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < covered.length; ) {
    if (covered[i]) {
      i++;
      continue;
    }
    const a = i;
    while (i < covered.length && !covered[i]) i++;
    out.push([a, i]);
  }
  return out;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

/**
 * check(bytes[i] === want[at + i], what(i)) for every i, the octets compared in one go (a message
 * built per octet was a third of this file's time); on a difference, the first differing octet's.
 */
function checkOctets(bytes: Uint8Array, want: Uint8Array, at: number, what: (i: number) => string): void {
  const w = want.subarray(at, at + bytes.length);
  if (w.length === bytes.length && Buffer.compare(bytes, w) === 0) return;
  for (let i = 0; i < bytes.length; i++) check(bytes[i] === want[at + i], what(i));
}

/** Events tile [0, n) in order: data and gaps back to back, then exactly one end. */
function checkTiling(
  ev: readonly StreamEvent[],
  sc: Scenario,
  base: number,
  pieceOf: ReadonlyMap<number, Piece>,
): Array<[number, number]> {
  let pos = 0;
  const gaps: Array<[number, number]> = [];
  for (let k = 0; k < ev.length - 1; k++) {
    const e = ev[k]!;
    if (e.kind === 'end') throw new Error('end before the last event');
    check(e.offset === pos, `event at ${e.offset}, expected ${pos}`);
    check(e.seq === (base + pos) >>> 0, `seq ${e.seq} at offset ${pos}`);
    if (e.kind === 'data') {
      check(e.bytes.length > 0, 'empty chunk');
      checkOctets(e.bytes, sc.stream, pos, (i) => `octet ${pos + i} differs`);
      // the boundary flags tell whether the chunk starts/ends where its segment's payload does
      const p = pieceOf.get(e.frame)!;
      check(e.segmentStart === (pos === p.off), `segmentStart at ${pos}`);
      check(e.segmentEnd === (pos + e.bytes.length === p.off + p.len), `segmentEnd at ${pos}`);
      pos += e.bytes.length;
    } else {
      check(e.length > 0, 'empty gap');
      const last = gaps.at(-1);
      if (last && last[1] === pos) last[1] += e.length;
      else gaps.push([pos, pos + e.length]);
      pos += e.length;
    }
  }
  check(pos === sc.stream.length, `stream ends at ${pos}, expected ${sc.stream.length}`);
  expect(ev.at(-1)).toMatchObject({ kind: 'end', reason: 'fin' });
  return gaps;
}

describe('Reassembler: randomized property', () => {
  it('delivers the stream minus exactly the dropped ranges; bytes, gaps and retransmissions agree', () => {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const rand = rng(seed);
      const sc = scenario(rand);
      const { r, sink, rec, frameOf, pieceOf } = run(sc, {}, false, rand);
      const base = (sc.isn + 1) >>> 0;
      const n = sc.stream.length;

      // expected: covered octets, first frame per octet, retransmitted segments
      const covered = new Uint8Array(n);
      const firstFrame = new Float64Array(n);
      let retrans = 0;
      sc.order.forEach((p, k) => {
        let old = false;
        for (let i = p.off; i < p.off + p.len; i++) {
          if (covered[i]) old = true;
          else {
            covered[i] = 1;
            firstFrame[i] = frameOf[k]!;
          }
        }
        if (old) retrans++;
      });
      const expectHoles = holes(covered);

      const ev = rec.directions[0].events;
      try {
        const gaps = checkTiling(ev, sc, base, pieceOf);
        expect(gaps).toEqual(expectHoles);
        // first copy wins, with its frame
        for (const e of ev) {
          if (e.kind !== 'data') continue;
          for (let i = 0; i < e.bytes.length; i++) {
            if (firstFrame[e.offset + i] !== e.frame)
              throw new Error(`octet ${e.offset + i}: frame ${e.frame}, first copy in ${firstFrame[e.offset + i]}`);
          }
        }
        const st = r.flows()[0]!.directions[0];
        expect(st.bytes).toBe(covered.reduce((a, b) => a + b, 0));
        expect(st.gaps).toEqual(expectHoles.map(([a, b]) => ({ seq: (base + a) >>> 0, length: b - a })));
        expect(st.retransmissions).toBe(retrans);
        expect(st.segments).toBe(sc.order.length + 2);
        expect(st.closed).toBe('fin');
        expect(sink.of('tcp.overlap-conflict')).toEqual([]);
        expect(sink.of('tcp.capture-loss')).toHaveLength(expectHoles.length);
      } catch (err) {
        throw new Error(`seed ${seed}: ${(err as Error).message}`);
      }
    }
  });

  it('under a small reorder window, tight caps and early ACKs the stream still tiles exactly, and stats match the events', () => {
    for (let seed = 100000; seed < 100000 + Math.ceil(SEEDS * 0.66); seed++) {
      const rand = rng(seed);
      const sc = scenario(rand);
      const opts: ReassemblyOptions = {
        reorderWindow: 1 + Math.floor(rand() * 8000),
        maxBufferedPerFlow: 1 + Math.floor(rand() * 12000),
        maxBufferedTotal: 1 + Math.floor(rand() * 16000),
        historyBytes: Math.floor(rand() * 4096),
      };
      const { r, sink, rec, pieceOf } = run(sc, opts, true, rand);
      const base = (sc.isn + 1) >>> 0;
      try {
        const ev = rec.directions[0].events;
        const gaps = checkTiling(ev, sc, base, pieceOf);
        const delivered = ev.reduce((a, e) => a + (e.kind === 'data' ? e.bytes.length : 0), 0);
        const st = r.flows()[0]!.directions[0];
        expect(st.bytes).toBe(delivered);
        expect(st.gaps).toEqual(gaps.map(([a, b]) => ({ seq: (base + a) >>> 0, length: b - a })));
        // every dropped octet is inside a gap
        const covered = new Uint8Array(sc.stream.length);
        for (const p of sc.order) covered.fill(1, p.off, p.off + p.len);
        for (const [a, b] of holes(covered)) {
          expect(gaps.some(([x, y]) => x <= a && b <= y)).toBe(true);
        }
        expect(sink.of('tcp.overlap-conflict')).toEqual([]);
      } catch (err) {
        throw new Error(`seed ${seed}: ${(err as Error).message}`);
      }
    }
  });

  it('with corrupted retransmissions the first copy wins per octet and each conflicting segment is reported once', () => {
    let total = 0;
    for (let seed = 500000; seed < 500000 + Math.ceil(SEEDS * 0.5); seed++) {
      const rand = rng(seed);
      const sc = scenario(rand, 0.5);
      const { sink, rec, frameOf } = run(sc, {}, false, rand);
      const n = sc.stream.length;
      // expected: per octet, the value and frame of its first copy; segments disagreeing with them
      const seen = new Uint8Array(n);
      const value = new Uint8Array(n);
      const first = new Float64Array(n);
      const conflicts: Array<{ frames: number[]; seq: number }> = [];
      const base = (sc.isn + 1) >>> 0;
      sc.order.forEach((p, k) => {
        const frames = new Set<number>();
        let firstBad = -1;
        for (let i = p.off; i < p.off + p.len; i++) {
          const v = sc.stream[i]! ^ (i === p.flip ? 0x5a : 0);
          if (!seen[i]) {
            seen[i] = 1;
            value[i] = v;
            first[i] = frameOf[k]!;
          } else if (value[i] !== v) {
            frames.add(first[i]!);
            if (firstBad < 0) firstBad = i;
          }
        }
        if (firstBad >= 0)
          conflicts.push({ frames: [...frames, frameOf[k]!].sort((x, y) => x - y), seq: (base + firstBad) >>> 0 });
      });
      try {
        for (const e of rec.directions[0].events) {
          if (e.kind !== 'data') continue;
          checkOctets(e.bytes, value, e.offset, (i) => `octet ${e.offset + i}: not the first copy`);
        }
        expect(sink.of('tcp.overlap-conflict').map((f) => ({ frames: f.frames, seq: f.seq }))).toEqual(conflicts);
        total += conflicts.length;
      } catch (err) {
        throw new Error(`seed ${seed}: ${(err as Error).message}`);
      }
    }
    expect(total).toBeGreaterThan(SEEDS / 10); // the scenarios do conflict
  });
});
