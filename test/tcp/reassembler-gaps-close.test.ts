/** Reassembler: holes declared lost (end, reorder window, ACK, snaplen), sequence wrap, FIN and RST. */
import { describe, expect, it } from 'vitest';
import { TCP_RST } from '../../src/net/segment.js';
import { pattern } from '../helpers/tcp-stream.js';
import { ACK, PA, FA, RA, setup, type Data, dataOf, handshake } from './reassembler-harness.js';

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

  it('passes the missing tail of a snaplen-cut segment on at once as a cut, summed up once per direction', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(300, 18);
    const cut = cv.c({ seq: 1, payload: all.slice(0, 60), missing: 40 });
    r.segment(cut);
    expect(recs[0]!.directions[0].events.at(-1)).toMatchObject({ kind: 'gap', offset: 60, length: 40, cut: true });
    r.segment(cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    r.segment(cv.c({ seq: 201, payload: all.slice(200, 250), missing: 50 }));
    r.finish();
    const rec = recs[0]!.directions[0];
    expect(rec.gaps()).toEqual([
      { offset: 60, seq: 61, length: 40 },
      { offset: 250, seq: 251, length: 50 },
    ]);
    // Not listed as gaps (a tracer that cuts every frame would list every segment): counted.
    expect(r.flows()[0]!.directions[0]).toMatchObject({
      bytes: 210,
      gaps: [],
      snaplenCut: { segments: 2, octets: 90 },
    });
    expect(sink.of('tcp.capture-loss')).toHaveLength(0);
    expect(sink.of('tcp.snaplen-cut')).toHaveLength(1);
    expect(sink.of('tcp.snaplen-cut')[0]!.message).toContain('2 segment(s)');

    // A full copy captured later finds the range already passed on: the layers above never wait
    // for octets that a snaplen, not the network, took away.
    const t = setup();
    handshake(t.r, t.cv, 0, 0);
    t.r.segment(t.cv.c({ seq: 1, payload: all.slice(0, 60), missing: 40 }));
    t.r.segment(t.cv.c({ seq: 101, payload: all.subarray(100, 200) }));
    t.r.segment(t.cv.c({ seq: 1, payload: all.subarray(0, 100) }));
    t.r.finish();
    expect(t.recs[0]!.directions[0].gaps()).toEqual([{ offset: 60, seq: 61, length: 40 }]);
    expect(t.r.flows()[0]!.directions[0]).toMatchObject({ bytes: 160, retransmissions: 1 });
  });

  it('a cut whose octets were captured already (held beyond it) is passed on only up to them', () => {
    const { r, recs, cv, sink } = setup();
    handshake(r, cv, 0, 0);
    const all = pattern(200, 5);
    r.segment(cv.c({ seq: 81, payload: all.subarray(80, 200) }));
    r.segment(cv.c({ seq: 1, payload: all.slice(0, 60), missing: 40 }));
    r.finish();
    expect(recs[0]!.directions[0].gaps()).toEqual([{ offset: 60, seq: 61, length: 20 }]);
    expect(recs[0]!.directions[0].bytes()).toEqual(new Uint8Array([...all.subarray(0, 60), ...all.subarray(80, 200)]));
    expect(sink.of('tcp.snaplen-cut')).toHaveLength(1);
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
