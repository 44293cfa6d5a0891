/** Reassembler: delivery in stream order, out-of-order data held, retransmissions and overlap conflicts. */
import { describe, expect, it } from 'vitest';
import { Reassembler } from '../../src/tcp/reassembler.js';
import { Conv, SinkRecorder, pattern } from '../helpers/tcp-stream.js';
import { ACK, PA, setup, type Data, dataOf, handshake } from './reassembler-harness.js';

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
      seqRelativeBase: 1000, // the ISN: Wireshark's relative sequence numbers count from it
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
