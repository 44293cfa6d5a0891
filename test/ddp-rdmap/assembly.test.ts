import { describe, expect, it } from 'vitest';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import type { DdpAnalyzerOptions } from '../../dissectors/ddp-rdmap/types.js';
import {
  filled,
  readRequest,
  readResponse,
  send,
  sendSegments,
  Stream,
  taggedSegments,
  terminate,
  write,
} from '../helpers/ddp-encoder.js';
import { setup } from './util.js';

function conv(ctx: Partial<MpaContext> = {}, opts: DdpAnalyzerOptions = {}) {
  const s = setup(ctx, opts);
  const A = new Stream(0, 1000, 1);
  const B = new Stream(1, 5000, 2);
  return {
    an: s.a,
    sink: s.sink,
    msgs: s.done,
    A,
    B,
    a: (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(A.next(ul, o)),
    b: (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(B.next(ul, o)),
  };
}

describe('message assembly', () => {
  it('a Send split into many segments is one message', () => {
    const c = conv();
    const segs = sendSegments(1, filled(10_000), 1000);
    expect(segs.length).toBe(10);
    const recs = segs.map((s) => c.a(s));
    expect(recs.map((r) => r.message?.segment)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(recs[4]!.message).toEqual({ index: 1, length: 5000, complete: false, segment: 5 });
    expect(c.msgs).toHaveLength(1);
    expect(c.msgs[0]).toMatchObject({
      dir: 0,
      index: 1,
      opcode: 3,
      key: 'send',
      qn: 0,
      msn: 1,
      length: 10_000,
      segments: 10,
      complete: true,
      startSeen: true,
      firstSeq: 1000,
      frames: [1, 3, 5, 7, 9, 11, 13, 15, 17, 19],
    });
    expect(c.an.directionStats(0)).toMatchObject({
      segments: 10,
      messages: 1,
      byOpcode: { send: 10 },
      sizes: { send: { messages: 1, min: 10_000, max: 10_000, total: 10_000 } },
    });
    expect(c.sink.findings).toEqual([]);
  });

  it('size statistics per opcode', () => {
    const c = conv();
    c.a(send(1, filled(10)));
    c.a(send(2, filled(30)));
    c.a(send(3, filled(20)));
    for (const s of taggedSegments(0x0, 1, 0n, filled(5000), 1400)) c.a(s);
    expect(c.an.directionStats(0).sizes).toEqual({
      send: { messages: 3, min: 10, max: 30, total: 60 },
      write: { messages: 1, min: 5000, max: 5000, total: 5000 },
    });
  });

  it('interleaved queues: Send segments with a Read Request and a Send/SE between them', () => {
    const c = conv();
    const segs = sendSegments(1, filled(3000), 1000);
    c.a(segs[0]!);
    c.a(readRequest({ msn: 1, sinkStag: 9, sinkTo: 0n, size: 10, srcStag: 8, srcTo: 0n }));
    c.a(segs[1]!);
    c.b(readResponse(9, 0n, filled(10)));
    c.a(segs[2]!);
    c.a(send(2, 'after'));
    expect(c.sink.findings).toEqual([]);
    expect(c.msgs.map((m) => [m.dir, m.key, m.msn, m.length, m.complete])).toEqual([
      [0, 'read-request', 1, 28, true],
      [1, 'read-response', null, 10, true],
      [0, 'send', 1, 3000, true],
      [0, 'send', 2, 5, true],
    ]);
  });

  it('tagged messages to different STags interleaved are both assembled', () => {
    const c = conv();
    const w1 = taggedSegments(0x0, 1, 0x100n, filled(300), 100);
    const w2 = taggedSegments(0x0, 2, 0x900n, filled(300), 100);
    for (let i = 0; i < 3; i++) {
      c.a(w1[i]!);
      c.a(w2[i]!);
    }
    expect(c.sink.rules()).toEqual(['ddp.tagged-interleaved']);
    expect(c.msgs.map((m) => [m.stag, m.to, m.length, m.segments, m.complete])).toEqual([
      [1, 0x100n, 300, 3, true],
      [2, 0x900n, 300, 3, true],
    ]);
  });

  it('a segment lost from the capture: MO jump explained, message still completes', () => {
    const c = conv();
    const segs = sendSegments(1, filled(3000), 1000);
    c.a(segs[0]!);
    c.A.next(segs[1]!); // framed by MPA but never handed on (lost)
    c.a(segs[2]!);
    c.a(send(2, 'next'));
    expect(c.sink.rules()).toEqual(['ddp.capture-loss']);
    expect(c.sink.findings[0]!.message).toMatch(
      /MO=2000, expected 1000 \(1000 octets missing\); plausibly explained by 1024 octets missing from the stream/,
    );
    expect(c.msgs[0]).toMatchObject({ msn: 1, length: 3000, segments: 2, complete: true });
    expect(c.an.directionStats(0)).toMatchObject({ moErrors: 0, lossExplained: 1 });
  });

  it('the last segment lost: the next message closes the old one, explained', () => {
    const c = conv();
    const segs = sendSegments(1, filled(2000), 1000);
    c.a(segs[0]!);
    c.A.next(segs[1]!);
    c.a(send(2, 'x'));
    expect(c.sink.rules()).toEqual(['ddp.capture-loss']);
    expect(c.msgs.map((m) => [m.msn, m.complete])).toEqual([
      [1, false],
      [2, true],
    ]);
  });

  it('whole messages lost: MSN gap explained; a CRC-bad segment is decoded but not used', () => {
    const c = conv();
    c.a(send(1, 'a'));
    c.A.next(send(2, 'b'));
    c.A.next(send(3, 'c'));
    c.a(send(4, 'd'));
    const bad = c.a(send(5, 'e'), { crc: 'bad' });
    expect(bad.skipped).toBe('CRC does not verify');
    expect(bad.message).toBeNull();
    c.a(send(6, 'f'));
    expect(c.sink.rules()).toEqual(['ddp.capture-loss', 'ddp.after-crc-discard']);
    expect(c.sink.findings[0]!.message).toMatch(/MSN 4, expected 2 \(2 messages missing\)/);
    expect(c.an.directionStats(0)).toMatchObject({ segments: 4, byOpcode: { send: 4 }, skipped: 1, msnErrors: 0 });
  });

  it('segments reordered by the sender are MO errors, not capture loss', () => {
    const c = conv();
    const segs = sendSegments(1, filled(3000), 1000);
    c.a(segs[0]!);
    c.a(segs[2]!);
    c.a(segs[1]!);
    expect(c.sink.rules()).toEqual(['ddp.invalid-mo', 'ddp.msn-duplicate', 'ddp.invalid-mo']);
  });

  it('segments after an MPA error (good CRC) are still analysed and marked', () => {
    const c = conv();
    c.a(send(1, 'a'));
    const r = c.a(send(3, 'b'), { afterError: true });
    expect(r.afterError).toBe(true);
    expect(r.skipped).toBeNull();
    expect(c.sink.rules()).toEqual(['ddp.msn-gap']);
  });

  it('a capture starting mid-message (no startup) assembles from there without findings', () => {
    const c = conv({ rev: null, initiatorDir: null });
    const segs = sendSegments(41, filled(3000), 1000);
    c.a(segs[1]!);
    c.a(segs[2]!);
    c.a(send(42, 'x'));
    expect(c.sink.findings).toEqual([]);
    expect(c.msgs[0]).toMatchObject({ msn: 41, length: 3000, segments: 2, startSeen: false, complete: true });
  });

  it('open messages are listed, bounded, and closed at end()', () => {
    const c = conv({}, { maxOpenMessages: 4 });
    for (let i = 1; i <= 6; i++) c.a(write(i, 0n, 'x', { l: false }));
    expect(c.an.messages(0).map((m) => m.stag)).toEqual([3, 4, 5, 6]);
    expect(c.msgs.map((m) => [m.stag, m.complete])).toEqual([
      [1, false],
      [2, false],
    ]);
    c.an.end(0, 'eof');
    expect(c.an.messages(0)).toEqual([]);
    expect(c.msgs).toHaveLength(6);
    expect(c.an.directionStats(0)).toMatchObject({ messages: 6, messagesComplete: 0, messagesIncomplete: 6 });
  });

  it('a long message keeps at most 64 frames', () => {
    const c = conv();
    for (const s of sendSegments(1, filled(100 * 100), 100)) c.a(s);
    expect(c.msgs[0]!.frames.length).toBe(64);
    expect(c.msgs[0]!.framesTruncated).toBe(true);
    expect(c.msgs[0]!.segments).toBe(100);
  });

  it('memory stays bounded over many messages', () => {
    const c = conv();
    let n = 0;
    for (let i = 1; i <= 5000; i++) {
      for (const s of sendSegments(i, filled(300), 100)) c.a(s);
      c.b(write(7, BigInt(i) * 100n, filled(100)));
      n++;
    }
    expect(n).toBe(5000);
    expect(c.an.messages(0)).toEqual([]);
    expect(c.an.directionStats(0)).toMatchObject({ messages: 5000, segments: 15000 });
    expect(c.sink.findings).toEqual([]);
  });

  it('MO bookkeeping stays per queue: a Terminate on QN 2 does not disturb QN 0', () => {
    const c = conv();
    const segs = sendSegments(1, filled(2000), 1000);
    c.a(segs[0]!);
    c.a(terminate({ layer: 0, etype: 0, code: 0 }));
    c.a(segs[1]!);
    expect(c.sink.rules()).toEqual(['rdmap.terminate', 'rdmap.after-terminate']);
  });
});

describe('sequence continuity', () => {
  it('marker-sized jumps are not loss: an MSN gap behind them stays an error', () => {
    const c = conv();
    c.a(send(1, filled(600)));
    c.A.seq += 8; // two markers inside the 624-octet FPDU
    c.a(send(2, 'x'));
    c.A.seq += 4; // one marker
    c.a(send(4, 'x'));
    expect(c.sink.rules()).toEqual(['ddp.msn-gap']);
  });

  it('seqContinuity: false turns the inference off', () => {
    const c = conv({}, { seqContinuity: false });
    c.a(send(1, 'x'));
    c.A.seq += 1000;
    c.a(send(3, 'x'));
    expect(c.sink.rules()).toEqual(['ddp.msn-gap']);
  });

  it('sequence numbers wrapping past 2^32 are contiguous', () => {
    const s = setup();
    const A = new Stream(0, 0xffffffe0, 1);
    for (let i = 1; i <= 5; i++) s.a.ulpdu(A.next(send(i, 'abcd')));
    expect(A.seq).toBeLessThan(0x100);
    expect(s.sink.findings).toEqual([]);
  });
});
