import { describe, expect, it } from 'vitest';
import { TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN } from '../../src/net/segment.js';
import { Reassembler, type FlowHandle, type ReassemblyOptions } from '../../src/tcp/reassembler.js';
import { TCP_RULES } from '../../src/tcp/rules.js';
import { Conv, FlowRecorder, SinkRecorder, pattern, type StreamEvent } from '../helpers/tcp-stream.js';

const SYN = TCP_SYN;
const SYNACK = TCP_SYN | TCP_ACK;
const ACK = TCP_ACK;
const PA = TCP_PSH | TCP_ACK;
const FA = TCP_FIN | TCP_ACK;
const RA = TCP_RST | TCP_ACK;

function setup(opts?: ReassemblyOptions) {
  const sink = new SinkRecorder();
  const recs: FlowRecorder[] = [];
  const handles: FlowHandle[] = [];
  const r = new Reassembler(
    sink,
    (h) => {
      const f = new FlowRecorder();
      recs.push(f);
      handles.push(h);
      return f;
    },
    opts,
  );
  return { r, sink, recs, handles, cv: new Conv() };
}

type Data = Extract<StreamEvent, { kind: 'data' }>;
const dataOf = (ev: readonly StreamEvent[]): Data[] => ev.filter((e): e is Data => e.kind === 'data');

/** SYN, SYN-ACK, ACK with client ISN ci and server ISN si. */
function handshake(r: Reassembler, cv: Conv, ci: number, si: number): void {
  r.segment(cv.c({ seq: ci, flags: SYN, mss: 1460 }));
  r.segment(cv.s({ seq: si, ack: ci + 1, flags: SYNACK, mss: 1440 }));
  r.segment(cv.c({ seq: ci + 1, ack: si + 1, flags: ACK }));
}

describe('Reassembler: in-order delivery', () => {
  it('delivers in-order data as zero-copy views with frame and segment boundaries', () => {
    const { r, recs, handles, cv } = setup();
    handshake(r, cv, 1000, 5000);
    const payloads = [pattern(100, 1), pattern(200, 2), pattern(50, 3)];
    let seq = 1001;
    const frames: number[] = [];
    for (const p of payloads) {
      const s = cv.c({ seq, ack: 5001, flags: PA, payload: p });
      frames.push(s.frame);
      r.segment(s);
      const last = recs[0]!.directions[0].events.at(-1) as Data;
      expect(last.buffer).toBe(p.buffer); // zero copy
      seq += p.length;
    }
    const d = dataOf(recs[0]!.directions[0].events);
    expect(d.map((e) => [e.offset, e.seq, e.bytes.length, e.frame, e.segmentStart, e.segmentEnd])).toEqual([
      [0, 1001, 100, frames[0], true, true],
      [100, 1101, 200, frames[1], true, true],
      [300, 1301, 50, frames[2], true, true],
    ]);
    expect(handles[0]!.info(0)).toEqual({
      from: '10.0.0.1:40001',
      to: '10.0.0.2:4420',
      mss: 1460,
      baseSeq: 1001,
      synSeen: true,
    });
    expect(handles[0]!.info(1)).toEqual({
      from: '10.0.0.2:4420',
      to: '10.0.0.1:40001',
      mss: 1440,
      baseSeq: 5001,
      synSeen: true,
    });
    const [fl] = r.flows();
    expect(fl).toMatchObject({ id: 1, client: '10.0.0.1:40001', server: '10.0.0.2:4420', firstFrame: 1, lastFrame: 6 });
    expect(fl!.directions[0]).toEqual({
      from: '10.0.0.1:40001',
      to: '10.0.0.2:4420',
      bytes: 350,
      segments: 5,
      retransmissions: 0,
      gaps: [],
      gapsOmitted: 0,
      mss: 1460,
      closed: null,
    });
    expect(fl!.directions[1]).toMatchObject({ bytes: 0, segments: 1, mss: 1440 });
  });

  it('passes the chunk data as the payload view itself (no subarray) when untrimmed', () => {
    const cv = new Conv();
    const seen: Uint8Array[] = [];
    const r2 = new Reassembler(new SinkRecorder(), () => ({
      directions: [
        { data: (c) => seen.push(c.data), gap: () => {}, end: () => {} },
        { data: () => {}, gap: () => {}, end: () => {} },
      ],
    }));
    const p = pattern(10);
    r2.segment(cv.c({ seq: 1, payload: p }));
    expect(seen[0]).toBe(p);
  });

  it('works without a consumer (stats only)', () => {
    const sink = new SinkRecorder();
    const r = new Reassembler(sink, () => null);
    const cv = new Conv();
    r.segment(cv.c({ seq: 10, payload: pattern(100) }));
    r.segment(cv.c({ seq: 210, payload: pattern(100) }));
    r.finish();
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 200, gaps: [{ seq: 110, length: 100 }] });
  });
});

describe('Reassembler: reordering and retransmission', () => {
  it('holds out-of-order segments (copied) and delivers them in order when the hole fills', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 5);
    const a = cv.c({ seq: 1, payload: all.subarray(0, 100) });
    const b = cv.c({ seq: 101, payload: all.subarray(100, 200) });
    const c = cv.c({ seq: 201, payload: all.subarray(200, 300) });
    r.segment(c);
    r.segment(b);
    expect(dataOf(recs[0]!.directions[0].events)).toHaveLength(0);
    expect(r.flows()[0]!.directions[0].bytes).toBe(200); // held octets count as seen
    r.segment(a);
    const d = dataOf(recs[0]!.directions[0].events);
    expect(d.map((e) => [e.offset, e.frame, e.segmentStart, e.segmentEnd])).toEqual([
      [0, a.frame, true, true],
      [100, b.frame, true, true],
      [200, c.frame, true, true],
    ]);
    expect(d[0]!.buffer).toBe(all.buffer); // in-order part is still a view
    expect(d[1]!.buffer).not.toBe(all.buffer); // held parts are copies
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 300, retransmissions: 0, gaps: [] });
    expect(r.bufferedBytes()).toBe(0); // slabs released once nothing is held
  });

  it('drops exact retransmissions of delivered and of held data, counting them', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 6);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    r.segment(cv.c({ seq: 1, payload: all.slice(0, 100) })); // delivered already
    r.segment(cv.c({ seq: 201, payload: all.subarray(200, 300) }));
    r.segment(cv.c({ seq: 201, payload: all.slice(200, 300) })); // held already
    r.segment(cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(dataOf(recs[0]!.directions[0].events)).toHaveLength(3);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 300, retransmissions: 2, segments: 7 });
    expect(sink.findings).toEqual([]);
  });

  it('delivers only the new part of an overlapping retransmission with the same bytes', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(150, 7);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    const s = cv.c({ seq: 51, payload: all.subarray(50, 150) });
    r.segment(s);
    const d = dataOf(recs[0]!.directions[0].events);
    expect(d).toHaveLength(2);
    expect(d[1]).toMatchObject({ offset: 100, seq: 101, frame: s.frame, segmentStart: false, segmentEnd: true });
    expect(d[1]!.buffer).toBe(all.buffer);
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 150, retransmissions: 1 });
    expect(sink.findings).toEqual([]);
  });

  it('a segment spanning held pieces delivers its own bytes around them (first copy wins)', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(400, 8);
    const h1 = cv.c({ seq: 101, payload: all.slice(100, 150) });
    const h2 = cv.c({ seq: 201, payload: all.slice(200, 250) });
    r.segment(h1);
    r.segment(h2);
    const big = cv.c({ seq: 1, payload: all.subarray(0, 400) });
    r.segment(big);
    const d = dataOf(recs[0]!.directions[0].events);
    expect(d.map((e) => [e.offset, e.bytes.length, e.frame, e.segmentStart, e.segmentEnd])).toEqual([
      [0, 100, big.frame, true, false],
      [100, 50, h1.frame, true, true],
      [150, 50, big.frame, false, false],
      [200, 50, h2.frame, true, true],
      [250, 150, big.frame, false, true],
    ]);
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(sink.findings).toEqual([]);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 400, retransmissions: 1 });
  });

  it('reports conflicting overlap with delivered data, naming both frames; the first copy wins', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 1000, 0);
    const all = pattern(150, 9);
    const first = cv.c({ seq: 1001, payload: all.subarray(0, 100) });
    r.segment(first);
    const bad = all.slice(50, 150);
    bad[10] ^= 0xff; // offset 60
    bad[12] ^= 0x01; // offset 62
    const second = cv.c({ seq: 1051, payload: bad });
    r.segment(second);
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    const f = sink.of('tcp.overlap-conflict');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ flow: 1, from: '10.0.0.1:40001', frames: [first.frame, second.frame], seq: 1061 });
    expect(f[0]!.message).toMatch(/2 retransmitted octet/);
  });

  it('reports conflicting overlap among held out-of-order segments', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 10);
    const h = cv.c({ seq: 101, payload: all.slice(100, 200) });
    r.segment(h);
    const bad = all.slice(150, 300);
    bad[0] ^= 0x55; // offset 150
    const o = cv.c({ seq: 151, payload: bad });
    r.segment(o);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(sink.of('tcp.overlap-conflict')).toEqual([
      expect.objectContaining({ frames: [h.frame, o.frame], seq: 151 }),
    ]);
    const d = dataOf(recs[0]!.directions[0].events);
    expect(d.map((e) => [e.offset, e.frame, e.segmentStart, e.segmentEnd])).toEqual([
      [0, 6, true, true],
      [100, h.frame, true, true],
      [200, o.frame, false, true],
    ]);
  });

  it('reports a conflict between an in-order segment and held data it runs into', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(200, 11);
    const h = cv.c({ seq: 101, payload: all.slice(100, 200) });
    r.segment(h);
    const bad = all.slice(0, 150);
    bad[120] ^= 1;
    const s = cv.c({ seq: 1, payload: bad });
    r.segment(s);
    expect(recs[0]!.directions[0].bytes()).toEqual(all);
    expect(sink.of('tcp.overlap-conflict')).toEqual([
      expect.objectContaining({ frames: [h.frame, s.frame], seq: 121 }),
    ]);
  });

  it('compares only within the history window; older overlaps are counted but unverifiable', () => {
    const { r, cv, sink } = setup({ historyBytes: 256 });
    handshake(r, cv, 0, 0);
    const all = pattern(1000, 12);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 1000) }));
    const bad = all.slice(0, 100);
    bad[5] ^= 1;
    r.segment(cv.c({ seq: 1, payload: bad })); // far behind the 256-octet history
    expect(sink.of('tcp.overlap-conflict')).toHaveLength(0);
    const bad2 = all.slice(900, 1000);
    bad2[50] ^= 1;
    r.segment(cv.c({ seq: 901, payload: bad2 }));
    expect(sink.of('tcp.overlap-conflict')).toEqual([expect.objectContaining({ seq: 951, frames: [4, 6] })]);
    expect(r.flows()[0]!.directions[0].retransmissions).toBe(2);
  });

  it('names the right first-copy frame from history after gaps', () => {
    const { r, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(400, 13);
    const f1 = cv.c({ seq: 1, payload: all.subarray(0, 100) });
    const f3 = cv.c({ seq: 201, payload: all.subarray(200, 300) });
    r.segment(f1);
    r.segment(f3);
    r.segment(cv.s({ seq: 1, ack: 301, flags: ACK })); // declares [100,200) lost
    const bad = all.slice(0, 300);
    bad[250] ^= 1;
    bad[150] ^= 1; // inside the gap: nothing to compare
    r.segment(cv.c({ seq: 1, payload: bad }));
    const f = sink.of('tcp.overlap-conflict');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ seq: 251, frames: [f3.frame, cv.frame] });
    expect(f[0]!.message).toMatch(/^1 retransmitted octet/);
  });

  it('does not count a keep-alive as a retransmission', () => {
    const { r, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    r.segment(cv.c({ seq: 100, payload: Uint8Array.of(0) }));
    r.segment(cv.c({ seq: 100 }));
    expect(r.flows()[0]!.directions[0]).toMatchObject({ retransmissions: 0, bytes: 100 });
    expect(sink.findings).toEqual([]);
  });
});

describe('Reassembler: gaps', () => {
  it('turns a hole into a gap at end of capture, then delivers what follows and ends with eof', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 100, 0);
    const all = pattern(300, 14);
    r.segment(cv.c({ seq: 101, payload: all.subarray(0, 100) }));
    const c = cv.c({ seq: 301, payload: all.subarray(200, 300) });
    r.segment(c);
    r.finish();
    const ev = recs[0]!.directions[0].events;
    expect(ev.map((e) => e.kind)).toEqual(['data', 'gap', 'data', 'end']);
    expect(ev[1]).toEqual({ kind: 'gap', offset: 100, seq: 201, length: 100 });
    expect(ev[2]).toMatchObject({ offset: 200, frame: c.frame });
    expect(ev[3]).toEqual({ kind: 'end', reason: 'eof', frame: null });
    expect(recs[0]!.directions[1].ends()).toEqual([{ kind: 'end', reason: 'eof', frame: null }]);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 200, gaps: [{ seq: 201, length: 100 }], closed: null });
    expect(sink.of('tcp.capture-loss')).toEqual([
      {
        rule: 'tcp.capture-loss',
        flow: 1,
        from: '10.0.0.1:40001',
        frames: [c.frame],
        seq: 201,
        message: expect.stringMatching(/not captured.*100 octet/),
      },
    ]);
  });

  it('declares a hole lost once reorderWindow bytes are buffered beyond it, and delivery continues', () => {
    const { r, recs, cv, sink } = setup({ reorderWindow: 1000 });
    handshake(r, cv, 0, 0);
    const all = pattern(2000, 15);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    // [100,200) lost; 900 held is still under the window
    for (let o = 200; o < 1100; o += 100) r.segment(cv.c({ seq: o + 1, payload: all.subarray(o, o + 100) }));
    expect(recs[0]!.directions[0].gaps()).toEqual([]);
    r.segment(cv.c({ seq: 1101, payload: all.subarray(1100, 1200) })); // 1000 held: give up
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 100, seq: 101, length: 100 }]);
    expect(sink.of('tcp.capture-loss')).toHaveLength(1);
    const after = cv.c({ seq: 1201, payload: all.subarray(1200, 2000) });
    r.segment(after);
    const last = recs[0]!.directions[0].events.at(-1) as Data;
    expect(last).toMatchObject({ offset: 1200, frame: after.frame });
    expect(last.buffer).toBe(all.buffer); // back to zero-copy
    const expected = new Uint8Array([...all.subarray(0, 100), ...all.subarray(200)]);
    expect(recs[0]!.directions[0].bytes()).toEqual(expected);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 1900, gaps: [{ seq: 101, length: 100 }] });
  });

  it("declares a hole lost when the peer's ACK covers it", () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(400, 16);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    r.segment(cv.c({ seq: 201, payload: all.subarray(200, 300) }));
    r.segment(cv.s({ seq: 1, ack: 101, flags: ACK })); // not beyond the hole start: nothing
    expect(recs[0]!.directions[0].gaps()).toEqual([]);
    const ack = cv.s({ seq: 1, ack: 151, flags: ACK }); // beyond: [100,150) proven sent
    r.segment(ack);
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 100, seq: 101, length: 50 }]);
    r.segment(cv.s({ seq: 1, ack: 301, flags: ACK }));
    expect(recs[0]!.directions[0].gaps()).toEqual([
      { offset: 100, seq: 101, length: 50 },
      { offset: 150, seq: 151, length: 50 },
    ]);
    expect(dataOf(recs[0]!.directions[0].events).map((e) => e.offset)).toEqual([0, 200]);
    expect(sink.of('tcp.capture-loss')[0]).toMatchObject({ frames: [ack.frame], seq: 101 });
    // adjacent gaps merge in the stats
    expect(r.flows()[0]!.directions[0].gaps).toEqual([{ seq: 101, length: 100 }]);
    // an ACK beyond everything captured, with no hole, declares nothing
    r.segment(cv.s({ seq: 1, ack: 1001, flags: ACK }));
    expect(recs[0]!.directions[0].gaps()).toHaveLength(2);
  });

  it('handles sequence wrap near 2^32 (ISN 0xFFFFFF00, 1 KiB in reordered segments, with a gap)', () => {
    const { r, recs, cv, handles } = setup();
    const isn = 0xffffff00;
    handshake(r, cv, isn, 0x7fffffff);
    const all = pattern(1024, 17);
    const segs = [];
    for (let o = 0; o < 1024; o += 128)
      segs.push(cv.c({ seq: (isn + 1 + o) >>> 0, payload: all.subarray(o, o + 128) }));
    // 0,2,1,3,... then drop segment 5 (crosses nothing, lies after the wrap)
    const order = [0, 2, 1, 4, 3, 6, 7];
    for (const i of order) r.segment(segs[i]!);
    r.finish();
    const rec = recs[0]!.directions[0];
    expect(handles[0]!.info(0).baseSeq).toBe(0xffffff01);
    const d = dataOf(rec.events);
    expect(d[0]!.seq).toBe(0xffffff01);
    expect(d.find((e) => e.offset === 256)!.seq).toBe(0x01);
    expect(rec.gaps()).toEqual([{ offset: 640, seq: (isn + 1 + 640) >>> 0, length: 128 }]);
    const expected = new Uint8Array([...all.subarray(0, 640), ...all.subarray(768)]);
    expect(rec.bytes()).toEqual(expected);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 896, gaps: [{ seq: 0x181, length: 128 }] });
  });

  it('a segment straddling the wrap point is delivered whole', () => {
    const { r, recs, cv } = setup();
    r.segment(cv.c({ seq: 0xfffffff0, payload: pattern(16, 1) }));
    r.segment(cv.c({ seq: 0x20, payload: pattern(16, 3) })); // held
    r.segment(cv.c({ seq: 0, payload: pattern(32, 2) }));
    const rec = recs[0]!.directions[0];
    expect(dataOf(rec.events).map((e) => [e.offset, e.seq])).toEqual([
      [0, 0xfffffff0],
      [16, 0],
      [48, 0x20],
    ]);
  });

  it('turns the missing tail of a snaplen-cut segment into a gap unless a retransmission fills it', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 18);
    const cut = cv.c({ seq: 1, payload: all.slice(0, 60), missing: 40 });
    r.segment(cut);
    expect(recs[0]!.directions[0].events.at(-1)).toMatchObject({ offset: 0, segmentStart: true, segmentEnd: false });
    r.segment(cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    r.segment(cv.c({ seq: 201, payload: all.slice(200, 250), missing: 50 }));
    r.finish();
    const rec = recs[0]!.directions[0];
    expect(rec.gaps()).toEqual([
      { offset: 60, seq: 61, length: 40 },
      { offset: 250, seq: 251, length: 50 },
    ]);
    expect(r.flows()[0]!.directions[0]).toMatchObject({
      bytes: 210,
      gaps: [
        { seq: 61, length: 40 },
        { seq: 251, length: 50 },
      ],
    });
    expect(sink.of('tcp.capture-loss')).toHaveLength(2);

    // the same, but the full segment is retransmitted (and captured) in time
    const t = setup();
    handshake(t.r, t.cv, 0, 0);
    t.r.segment(t.cv.c({ seq: 1, payload: all.slice(0, 60), missing: 40 }));
    t.r.segment(t.cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    t.r.segment(t.cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    t.r.finish();
    expect(t.recs[0]!.directions[0].gaps()).toEqual([]);
    expect(t.recs[0]!.directions[0].bytes()).toEqual(all.subarray(0, 200));
    expect(t.r.flows()[0]!.directions[0]).toMatchObject({ bytes: 200, retransmissions: 1 });
  });

  it("a snaplen-cut tail is declared lost by the peer's ACK", () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(64), missing: 1384 }));
    r.segment(cv.s({ seq: 1, ack: 1449, flags: ACK }));
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 64, seq: 65, length: 1384 }]);
  });
});

describe('Reassembler: FIN and RST', () => {
  it('ends with fin after all data before the FIN, delivering held data first', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 19);
    r.segment(cv.c({ seq: 101, payload: all.subarray(100, 200) })); // held
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    const f = cv.c({ seq: 201, payload: all.subarray(200, 300), flags: FA });
    r.segment(f);
    const rec = recs[0]!.directions[0];
    expect(rec.events.map((e) => e.kind)).toEqual(['data', 'data', 'data', 'end']);
    expect(rec.events.at(-1)).toEqual({ kind: 'end', reason: 'fin', frame: f.frame });
    expect(rec.bytes()).toEqual(all);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ closed: 'fin', bytes: 300 });
    // a retransmitted FIN is a retransmission, not a second end
    r.segment(cv.c({ seq: 301, flags: FA }));
    expect(rec.ends()).toHaveLength(1);
    expect(r.flows()[0]!.directions[0].retransmissions).toBe(1);
    r.finish();
    expect(rec.ends()).toHaveLength(1);
    expect(recs[0]!.directions[1].ends()).toEqual([{ kind: 'end', reason: 'eof', frame: null }]);
  });

  it('a bare FIN after in-order data ends the direction right away', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 21);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    r.segment(cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    r.segment(cv.c({ seq: 201, payload: all.subarray(200, 300) }));
    r.segment(cv.c({ seq: 301, flags: FA }));
    expect(recs[0]!.directions[0].events.map((e) => e.kind)).toEqual(['data', 'data', 'data', 'end']);
  });

  it('a FIN with a hole before it declares the hole a gap, then ends', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    r.segment(cv.c({ seq: 201, payload: pattern(100) }));
    const f = cv.c({ seq: 301, flags: FA });
    r.segment(f);
    const ev = recs[0]!.directions[0].events;
    expect(ev.map((e) => e.kind)).toEqual(['data', 'gap', 'data', 'end']);
    expect(ev.at(-1)).toEqual({ kind: 'end', reason: 'fin', frame: f.frame });
    expect(sink.of('tcp.capture-loss')[0]!.message).toMatch(/FIN/);
  });

  it('a FIN ahead of all data reveals lost bytes up to it', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    r.segment(cv.c({ seq: 501, flags: FA }));
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 100, seq: 101, length: 400 }]);
    expect(r.flows()[0]!.directions[0].gaps).toEqual([{ seq: 101, length: 400 }]);
  });

  it('reports data after the FIN (later segments and held data beyond it)', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const beyond = cv.c({ seq: 301, payload: pattern(50) }); // held, then found beyond the FIN
    r.segment(beyond);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    const f = cv.c({ seq: 101, payload: pattern(100), flags: FA }); // FIN at offset 200
    r.segment(f);
    expect(sink.of('tcp.data-after-fin')).toEqual([
      expect.objectContaining({ frames: [beyond.frame, f.frame], seq: 301 }),
    ]);
    const late = cv.c({ seq: 195, payload: pattern(20) }); // 6 old octets, 14 after the FIN
    r.segment(late);
    expect(sink.of('tcp.data-after-fin')[1]).toMatchObject({ frames: [late.frame], seq: 201 });
    expect(sink.of('tcp.data-after-fin')[1]!.message).toMatch(/^14 octet/);
    expect(recs[0]!.directions[0].bytes()).toHaveLength(200);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ bytes: 200, closed: 'fin' });
    expect(sink.of('tcp.capture-loss')).toEqual([]); // [200,300) is after the FIN, not a loss
  });

  it('the FIN segment itself may not carry data beyond an earlier FIN', () => {
    const { r, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(10), flags: FA }));
    r.segment(cv.c({ seq: 11, payload: pattern(10), flags: FA }));
    expect(sink.of('tcp.data-after-fin')).toHaveLength(1);
  });

  it('RST ends the direction at once: pending holes become gaps, held data is delivered first', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    r.segment(cv.c({ seq: 201, payload: pattern(100) }));
    const rst = cv.c({ seq: 301, flags: RA });
    r.segment(rst);
    const ev = recs[0]!.directions[0].events;
    expect(ev.map((e) => e.kind)).toEqual(['data', 'gap', 'data', 'end']);
    expect(ev.at(-1)).toEqual({ kind: 'end', reason: 'rst', frame: rst.frame });
    expect(r.flows()[0]!.directions[0].closed).toBe('rst');
    // the other direction stays open until its own close or the end of capture
    r.segment(cv.s({ seq: 1, payload: pattern(10), flags: PA }));
    expect(dataOf(recs[0]!.directions[1].events)).toHaveLength(1);
    r.finish();
    expect(recs[0]!.directions[1].ends()).toEqual([{ kind: 'end', reason: 'eof', frame: null }]);
    expect(r.flows()[0]!.directions[1].closed).toBeNull();
  });

  it('a bare RST with a far-off sequence number invents no gap', () => {
    const { r, recs, cv } = setup();
    handshake(r, cv, 0, 0);
    r.segment(cv.c({ seq: 1, payload: pattern(100) }));
    r.segment(cv.c({ seq: 0x40000000, flags: TCP_RST }));
    expect(recs[0]!.directions[0].gaps()).toEqual([]);
    expect(recs[0]!.directions[0].ends()).toEqual([{ kind: 'end', reason: 'rst', frame: 5 }]);
  });
});

describe('Reassembler: flows', () => {
  it('numbers flows in order of first appearance, both directions in one flow', () => {
    const { r, cv } = setup();
    const b = new Conv('10.0.0.3', 5000, '10.0.0.4', 80);
    r.segment(cv.c({ seq: 1, payload: pattern(5) }));
    r.segment(b.s({ seq: 1, payload: pattern(5) }));
    r.segment(cv.s({ seq: 9, payload: pattern(5) }));
    const fl = r.flows();
    expect(fl.map((f) => [f.id, f.client, f.server])).toEqual([
      [1, '10.0.0.1:40001', '10.0.0.2:4420'],
      [2, '10.0.0.4:80', '10.0.0.3:5000'], // first sender is the client when no SYN is seen
    ]);
    expect(fl[0]!.directions.map((d) => d.bytes)).toEqual([5, 5]);
  });

  it('client is the SYN sender; a SYN-ACK seen first makes its sender the server', () => {
    const { r, cv } = setup();
    r.segment(cv.s({ seq: 500, ack: 1001, flags: SYNACK, mss: 1400 }));
    r.segment(cv.c({ seq: 1001, ack: 501, payload: pattern(10) }));
    const [f] = r.flows();
    expect([f!.client, f!.server]).toEqual(['10.0.0.1:40001', '10.0.0.2:4420']);
    expect(f!.directions[1]).toMatchObject({ mss: 1400, segments: 1 });
    expect(f!.directions[0]).toMatchObject({ bytes: 10, mss: null });
  });

  it('starts mid-stream without a SYN: offset 0 is the first captured data octet', () => {
    const { r, recs, handles, cv } = setup();
    r.segment(cv.c({ seq: 777777, ack: 3, flags: ACK })); // pure ACK: no base yet
    r.segment(cv.c({ seq: 777777, payload: pattern(10) }));
    r.segment(cv.c({ seq: 777787, payload: pattern(10) }));
    expect(handles[0]!.info(0).baseSeq).toBe(777777);
    expect(dataOf(recs[0]!.directions[0].events).map((e) => [e.offset, e.seq])).toEqual([
      [0, 777777],
      [10, 777787],
    ]);
  });

  it('a retransmitted SYN (same ISN) is not a new flow', () => {
    const { r, cv, recs } = setup();
    r.segment(cv.c({ seq: 42, flags: SYN, mss: 1460 }));
    r.segment(cv.c({ seq: 42, flags: SYN, mss: 1460 }));
    r.segment(cv.s({ seq: 9, ack: 43, flags: SYNACK }));
    r.segment(cv.c({ seq: 43, ack: 10, payload: pattern(20) }));
    expect(r.flows()).toHaveLength(1);
    expect(recs).toHaveLength(1);
    expect(r.flows()[0]!.directions[0]).toMatchObject({ segments: 3, retransmissions: 1, bytes: 20 });
  });

  it('a SYN with a new ISN after FIN or RST starts a new flow (port reuse)', () => {
    const { r, cv, recs, handles } = setup();
    handshake(r, cv, 100, 200);
    r.segment(cv.c({ seq: 101, payload: pattern(10), flags: PA }));
    r.segment(cv.c({ seq: 111, flags: FA }));
    r.segment(cv.s({ seq: 201, ack: 112, flags: FA }));
    r.segment(cv.c({ seq: 112, ack: 202, flags: ACK }));
    // same 4-tuple, new ISN
    r.segment(cv.c({ seq: 90000, flags: SYN }));
    r.segment(cv.s({ seq: 7, ack: 90001, flags: SYNACK }));
    r.segment(cv.c({ seq: 90001, ack: 8, payload: pattern(5) }));
    const fl = r.flows();
    expect(fl.map((f) => f.id)).toEqual([1, 2]);
    expect(fl[0]!.directions.map((d) => d.closed)).toEqual(['fin', 'fin']);
    expect(fl[0]!.lastFrame).toBe(7);
    expect(fl[1]).toMatchObject({ firstFrame: 8, lastFrame: 10 });
    expect(fl[1]!.directions[0]).toMatchObject({ bytes: 5, segments: 2 });
    expect(recs).toHaveLength(2);
    expect(handles[1]!.info(0).baseSeq).toBe(90001);
    expect(dataOf(recs[1]!.directions[0].events)).toHaveLength(1);
    // a retransmitted SYN of the new connection stays in it
    r.segment(cv.c({ seq: 90000, flags: SYN }));
    expect(r.flows()).toHaveLength(2);
  });

  it('port reuse after RST ends the open direction of the old flow with eof', () => {
    const { r, cv, recs } = setup();
    handshake(r, cv, 100, 200);
    r.segment(cv.c({ seq: 101, payload: pattern(10) }));
    r.segment(cv.s({ seq: 201, flags: TCP_RST }));
    r.segment(cv.c({ seq: 5555, flags: SYN }));
    expect(recs[0]!.directions[0].ends()).toEqual([{ kind: 'end', reason: 'eof', frame: null }]);
    expect(recs[0]!.directions[1].ends()).toEqual([{ kind: 'end', reason: 'rst', frame: 5 }]);
    expect(r.flows().map((f) => f.id)).toEqual([1, 2]);
  });

  it('keeps flows apart that share ports or differ only in high port bits or addresses', () => {
    const { r, recs } = setup();
    const convs = [
      new Conv('10.0.0.1', 5000, '10.0.0.2', 4420),
      new Conv('10.0.0.1', 5000, '10.0.0.2', 4420 + 16384), // same low 14 bits of the port
      new Conv('10.0.0.9', 5000, '10.0.0.2', 4420), // same ports, other client
      new Conv('fd00::1', 5000, 'fd00::2', 4420),
    ];
    for (let round = 0; round < 3; round++) {
      convs.forEach((cv, i) => {
        r.segment(cv.c({ seq: 1 + round * 4, payload: pattern(4, i) }));
        r.segment(cv.s({ seq: 1 + round * 2, payload: pattern(2, 10 + i) }));
      });
    }
    expect(r.flows().map((f) => [f.id, f.client, f.server])).toEqual([
      [1, '10.0.0.1:5000', '10.0.0.2:4420'],
      [2, '10.0.0.1:5000', '10.0.0.2:20804'],
      [3, '10.0.0.9:5000', '10.0.0.2:4420'],
      [4, '[fd00::1]:5000', '[fd00::2]:4420'],
    ]);
    recs.forEach((rec, i) => {
      expect(rec.directions[0].bytes()).toHaveLength(12);
      expect(rec.directions[1].bytes()).toHaveLength(6);
      expect(rec.directions[0].bytes().subarray(0, 4)).toEqual(pattern(4, i));
    });
  });

  it('uses bracketed IPv6 endpoints', () => {
    const { r } = setup();
    const cv = new Conv('fd00::1', 40009, 'fd00::2', 4420);
    r.segment(cv.c({ seq: 1, flags: SYN }));
    expect(r.flows()[0]).toMatchObject({ client: '[fd00::1]:40009', server: '[fd00::2]:4420' });
  });

  it('keeps the first 10000 gaps and counts the rest', () => {
    const { r, cv } = setup();
    const p = pattern(2);
    for (let i = 0; i < 10005; i++) r.segment(cv.c({ seq: 1 + i * 4, payload: p }));
    r.finish();
    const d = r.flows()[0]!.directions[0];
    expect(d.gaps).toHaveLength(10000);
    expect(d.gapsOmitted).toBe(4);
    expect(d.bytes).toBe(20010);
  });
});

describe('Reassembler: memory bounds', () => {
  it('reaching maxBufferedPerFlow turns the oldest hole into a gap with a finding', () => {
    const { r, recs, cv, sink } = setup({ maxBufferedPerFlow: 1000 });
    handshake(r, cv, 0, 0);
    const all = pattern(5000, 20);
    r.segment(cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    // lose [100,200) and keep sending
    for (let o = 200; o < 5000; o += 100) r.segment(cv.c({ seq: o + 1, payload: all.subarray(o, o + 100) }));
    const caps = sink.of('tcp.buffer-cap');
    expect(caps.length).toBe(1);
    expect(caps[0]).toMatchObject({ flow: 1, seq: 101 });
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 100, seq: 101, length: 100 }]);
    expect(recs[0]!.directions[0].bytes()).toEqual(new Uint8Array([...all.subarray(0, 100), ...all.subarray(200)]));
    expect(sink.of('tcp.capture-loss')).toEqual([]);
  });

  it('picks the oldest hole across directions and flows under maxBufferedTotal', () => {
    const { r, recs, sink } = setup({ maxBufferedTotal: 2000 });
    const a = new Conv('10.0.0.1', 1, '10.0.0.2', 2);
    const b = new Conv('10.0.0.3', 3, '10.0.0.4', 4);
    r.segment(a.c({ seq: 1, payload: pattern(10) }));
    r.segment(b.c({ seq: 1, payload: pattern(10) }));
    r.segment(a.c({ seq: 101, payload: pattern(700) })); // flow 1 hole first
    r.segment(b.c({ seq: 101, payload: pattern(700) }));
    expect(sink.of('tcp.buffer-cap')).toHaveLength(0);
    r.segment(b.c({ seq: 801, payload: pattern(700) })); // over the total: flow 1's hole goes
    expect(sink.of('tcp.buffer-cap')).toEqual([expect.objectContaining({ flow: 1, seq: 11 })]);
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 10, seq: 11, length: 90 }]);
    expect(recs[1]!.directions[0].gaps()).toEqual([]);
    expect(r.flows()[0]!.directions[0].bytes).toBe(710);
  });

  it('survives a segment larger than the caps', () => {
    const { r, recs, cv, sink } = setup({ maxBufferedPerFlow: 100, maxBufferedTotal: 100, reorderWindow: 50 });
    r.segment(cv.c({ seq: 1, payload: pattern(10) }));
    r.segment(cv.c({ seq: 1001, payload: pattern(5000) }));
    expect(recs[0]!.directions[0].bytes()).toHaveLength(5010);
    expect(sink.findings.length).toBeGreaterThan(0);
  });

  it('holds no more than the total cap over many lossy flows', () => {
    const sink = new SinkRecorder();
    const r = new Reassembler(sink, () => null, {
      maxBufferedTotal: 64 * 1024,
      maxBufferedPerFlow: 32 * 1024,
      historyBytes: 4096,
      maxHistoryTotal: 64 * 1024,
    });
    const p = pattern(1000);
    for (let f = 0; f < 200; f++) {
      const cv = new Conv('10.1.0.1', 1000 + f, '10.1.0.2', 80);
      r.segment(cv.c({ seq: 1, payload: p }));
      for (let i = 2; i < 40; i++) r.segment(cv.c({ seq: 1 + i * 1000, payload: p }));
    }
    expect(r.bufferedBytes()).toBeLessThanOrEqual(64 * 1024);
    const held = r.flows().reduce((n, f) => n + f.directions[0].bytes, 0);
    expect(held).toBe(200 * 39 * 1000); // nothing lost from the counts
    expect(sink.of('tcp.buffer-cap').length).toBeGreaterThan(0);
    r.finish();
    expect(r.bufferedBytes()).toBe(0);
  });
});

describe('Reassembler: history budget', () => {
  it('with one ring for all, a second direction goes without history until the ring is free', () => {
    const { r, sink } = setup({ historyBytes: 1024, maxHistoryTotal: 1024 });
    const a = new Conv('10.0.0.1', 1, '10.0.0.2', 2);
    const b = new Conv('10.0.0.3', 3, '10.0.0.4', 4);
    const pa = pattern(100, 1);
    const pb = pattern(6000, 2);
    r.segment(a.c({ seq: 1, payload: pa })); // a takes the ring
    r.segment(b.c({ seq: 1, payload: pb.subarray(0, 100) })); // busy: b waits
    const flip = (p: Uint8Array, i: number) => {
      const q = p.slice();
      q[i] ^= 1;
      return q;
    };
    r.segment(b.c({ seq: 1, payload: flip(pb.subarray(0, 100), 3) }));
    expect(sink.of('tcp.overlap-conflict')).toHaveLength(0); // unverifiable
    r.segment(a.c({ seq: 1, payload: flip(pa, 3) }));
    expect(sink.of('tcp.overlap-conflict')).toEqual([expect.objectContaining({ flow: 1 })]);
    r.segment(a.c({ seq: 101, flags: FA })); // a's direction ends: its ring is freed
    r.segment(b.c({ seq: 101, payload: pb.subarray(100, 200) })); // b still backs off (4 ring-fulls)
    r.segment(b.c({ seq: 101, payload: flip(pb.subarray(100, 200), 1) }));
    expect(sink.of('tcp.overlap-conflict')).toHaveLength(1);
    r.segment(b.c({ seq: 201, payload: pb.subarray(200, 5000) })); // back-off over: b takes the free ring
    r.segment(b.c({ seq: 5001, payload: pb.subarray(5000, 6000) }));
    r.segment(b.c({ seq: 5001, payload: flip(pb.subarray(5000, 6000), 10) }));
    expect(sink.of('tcp.overlap-conflict')).toEqual([
      expect.objectContaining({ flow: 1 }),
      expect.objectContaining({ flow: 2, seq: 5011 }),
    ]);
  });

  it('charges held data by slab and returns to zero when the holes fill', () => {
    const { r, cv } = setup();
    r.segment(cv.c({ seq: 1, payload: pattern(10) }));
    for (let i = 1; i <= 200; i++) r.segment(cv.c({ seq: 1 + i * 1000, payload: pattern(1000, i) }));
    const held = r.bufferedBytes();
    expect(held).toBeGreaterThanOrEqual(200 * 1000);
    expect(held).toBeLessThan(2 * 200 * 1000 + 256 * 1024); // slabs grow to 256 KiB; little waste
    r.segment(cv.c({ seq: 11, payload: pattern(990) }));
    expect(r.bufferedBytes()).toBe(0);
    expect(r.flows()[0]!.directions[0].bytes).toBe(201 * 1000);
  });
});

describe('TCP rules', () => {
  it('declares the rules of this layer with summary and explanation', () => {
    const byId = new Map(TCP_RULES.map((x) => [x.id, x]));
    expect(byId.get('tcp.overlap-conflict')?.severity).toBe('warning');
    expect(byId.get('tcp.buffer-cap')?.severity).toBe('warning');
    expect(byId.get('tcp.data-after-fin')?.severity).toBe('warning');
    expect(byId.get('tcp.capture-loss')?.severity).toBe('info');
    for (const x of TCP_RULES) {
      expect(x.summary.length).toBeGreaterThan(10);
      expect(x.explanation.length).toBeGreaterThan(50);
      expect(x.rfcErrorCode).toBeNull();
    }
  });
});
