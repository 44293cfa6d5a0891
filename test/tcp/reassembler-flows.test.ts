/** Reassembler: flow identity and port reuse, statistics, memory caps, the history budget, its rules. */
import { describe, expect, it } from 'vitest';
import { TCP_RST } from '../../src/net/segment.js';
import { Reassembler } from '../../src/tcp/reassembler.js';
import { TCP_RULES } from '../../src/tcp/rules.js';
import { Conv, SinkRecorder, pattern } from '../helpers/tcp-stream.js';
import { SYN, SYNACK, ACK, PA, FA, setup, dataOf, handshake } from './reassembler-harness.js';

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
