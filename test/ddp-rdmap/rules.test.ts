/**
 * One test per rule of dissectors/ddp-rdmap/rules.ts on input built for it, and one clean
 * conversation where no rule fires. The last test checks every rule of the table was exercised.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DDP_RULES } from '../../dissectors/ddp-rdmap/rules.js';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import type { DdpAnalyzerOptions } from '../../dissectors/ddp-rdmap/types.js';
import {
  atomicRequest,
  atomicResponse,
  filled,
  immediate,
  readRequest,
  readResponse,
  send,
  sendSegments,
  Stream,
  tagged,
  taggedSegments,
  terminate,
  untagged,
  write,
} from '../helpers/ddp-encoder.js';
import { setup } from './util.js';

const fired = new Set<string>();

/** An analyzer plus one stream per direction (0 = Initiator by default). */
function conv(ctx: Partial<MpaContext> = {}, opts: DdpAnalyzerOptions = {}) {
  const s = setup(ctx, opts);
  const A = new Stream(0, 1000, 1);
  const B = new Stream(1, 5000, 2);
  const a = (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(A.next(ul, o));
  const b = (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(B.next(ul, o));
  const done = () => {
    for (const f of s.sink.findings) fired.add(f.rule);
  };
  return { an: s.a, sink: s.sink, messages: s.done, A, B, a, b, done };
}

/** Runs `body`, then expects exactly the given rules (in any order, with multiplicity) to have fired. */
function expectRules(c: ReturnType<typeof conv>, rules: string[]): void {
  c.done();
  expect(c.sink.rules().sort()).toEqual([...rules].sort());
}

describe('a clean conversation fires nothing', () => {
  it('RTR, Sends, Writes, Reads, Immediate, Atomics, both directions, closed by FIN', () => {
    const c = conv({ rev: 2, p2p: true, rtr: 'read', requestIrd: 8, requestOrd: 8, replyIrd: 8, replyOrd: 8 });
    // RTR: zero-length Read Request answered by a zero-length Read Response (STag/TO unchecked).
    c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 0, srcStag: 0, srcTo: 0 }));
    c.b(readResponse(0x77, 5));
    for (const seg of sendSegments(1, filled(3000), 1000)) c.a(seg);
    for (const seg of taggedSegments(0x0, 0x100, 0x10000n, filled(2500), 1000)) c.a(seg);
    c.b(send(1, 'reply'));
    c.a(readRequest({ msn: 2, sinkStag: 0x200, sinkTo: 0x7000n, size: 1500, srcStag: 0x300, srcTo: 0x0n }));
    for (const seg of taggedSegments(0x2, 0x200, 0x7000n, filled(1500), 1000)) c.b(seg);
    c.b(send(2, 'bye', { invalidate: 0x200 }));
    c.a(send(2, 'x', { se: true }));
    c.a(send(3, 'y', { se: true, invalidate: 0x100 }));
    c.b(immediate({ msn: 3, data: 42n }));
    c.b(immediate({ msn: 4, data: 43n, se: true }));
    c.a(atomicRequest({ msn: 3, atomicOpcode: 0, requestId: 9, remoteStag: 0x400, remoteTo: 0x8n, data: 1n }));
    c.b(atomicResponse({ msn: 1, originalRequestId: 9, value: 100n }));
    c.a(write(0x100, 0, ''));
    c.a(send(4, ''));
    c.b(send(5, ''));
    c.an.end(0, 'fin');
    c.an.end(1, 'fin');
    c.done();
    expect(c.sink.findings).toEqual([]);
    expect(c.an.directionStats(0)).toMatchObject({
      segments: 13,
      messages: 9,
      rtr: 'read',
      byOpcode: { 'read-request': 2, send: 4, 'send-se': 1, 'send-se-invalidate': 1, write: 4, 'atomic-request': 1 },
      msnErrors: 0,
      moErrors: 0,
      messagesComplete: 9,
      messagesIncomplete: 0,
    });
    expect(c.an.directionStats(1)).toMatchObject({
      segments: 9,
      rtr: null,
      byOpcode: {
        'read-response': 3,
        send: 2,
        'send-invalidate': 1,
        'immediate-data': 1,
        'immediate-data-se': 1,
        'atomic-response': 1,
      },
      readResponses: 2,
    });
  });
});

describe('header rules', () => {
  it('ddp.truncated', () => {
    const c = conv();
    c.a(send(1, 'abc').slice(0, 12));
    expectRules(c, ['ddp.truncated']);
  });

  it('ddp.invalid-dv and rdmap.invalid-rv after Rev 1 (and Rev 0)', () => {
    const c = conv({ rev: 1 });
    c.a(send(1, 'x', { dv: 0 }));
    c.a(send(2, 'x', { rv: 0 }));
    expectRules(c, ['ddp.invalid-dv', 'rdmap.invalid-rv']);
    const z = conv({ rev: 0 });
    z.a(send(1, 'x'));
    expectRules(z, ['ddp.invalid-dv', 'rdmap.invalid-rv']);
    const ok = conv({ rev: 0 });
    ok.a(send(1, 'x', { dv: 0, rv: 0 }));
    expectRules(ok, []);
  });

  it('ddp.invalid-dv / rdmap.invalid-rv without a startup: only 0 and 1 exist', () => {
    const c = conv({ rev: null, initiatorDir: null });
    c.a(send(1, 'x', { dv: 2, rv: 3 }));
    expectRules(c, ['ddp.invalid-dv', 'rdmap.invalid-rv']);
  });

  it("ddp.version-mix: DV differs from RV, or from the connection's version", () => {
    const c = conv({ rev: null, initiatorDir: null });
    c.a(send(1, 'x', { dv: 1, rv: 0 }));
    c.a(send(2, 'x')); // version 1: establishes it
    c.b(send(1, 'x', { dv: 0, rv: 0 })); // other direction on version 0
    expectRules(c, ['ddp.version-mix', 'ddp.version-mix']);
    expect(c.sink.findings[1]!.message).toMatch(/connection started with version 1/);
  });

  it('ddp.reserved-nonzero', () => {
    const c = conv();
    c.a(send(1, 'x', { rsvd: 0x4 }));
    expectRules(c, ['ddp.reserved-nonzero']);
    expect(c.sink.findings[0]!.severity).toBe('warning');
  });

  it('rdmap.reserved-nonzero: Rsv bits, reserved word, Terminate and Atomic reserved bits', () => {
    const c = conv();
    c.a(send(1, 'x', { rsv: 1 }));
    c.a(send(2, 'x', { word: 0xdead }));
    c.a(atomicRequest({ msn: 1, atomicOpcode: 0, requestId: 1, remoteStag: 1, remoteTo: 0, reserved: 3 }));
    c.a(terminate({ layer: 2, etype: 0, code: 2, hdrctRsvd: 1 }));
    c.done();
    expect(c.sink.problems().map((f) => f.rule)).toEqual([
      'rdmap.reserved-nonzero',
      'rdmap.reserved-nonzero',
      'rdmap.reserved-nonzero',
      'rdmap.reserved-nonzero',
      'rdmap.terminate-unexplained',
    ]);
  });

  it('ddp.invalid-qn', () => {
    const c = conv();
    c.a(send(1, 'x', { qn: 1 }));
    c.a(readRequest({ msn: 1, qn: 0, sinkStag: 1, sinkTo: 0, size: 1, srcStag: 1, srcTo: 0 }));
    c.a(send(1, 'x', { qn: 7 }));
    expectRules(c, ['ddp.invalid-qn', 'ddp.invalid-qn', 'ddp.invalid-qn']);
    expect(c.sink.findings[2]!.message).toMatch(/Invalid QN/);
  });

  it('rdmap.rfc7306-qn is a warning', () => {
    const c = conv();
    c.a(immediate({ msn: 1, data: 1n, qn: 2 }));
    c.a(atomicRequest({ msn: 1, qn: 0, atomicOpcode: 0, requestId: 1, remoteStag: 1, remoteTo: 0 }));
    expectRules(c, ['rdmap.rfc7306-qn', 'rdmap.rfc7306-qn']);
    expect(c.sink.findings.every((f) => f.severity === 'warning')).toBe(true);
  });

  it('rdmap.unexpected-opcode', () => {
    const c = conv();
    c.a(untagged({ opcode: 0xc, qn: 0, msn: 1 }));
    c.a(tagged({ opcode: 0xf, stag: 1, to: 0 }));
    expectRules(c, ['rdmap.unexpected-opcode', 'rdmap.unexpected-opcode']);
    expect(c.sink.findings[1]!.message).toMatch(/experiments/);
  });

  it('rdmap.opcode-buffer-model', () => {
    const c = conv();
    c.a(send(1, 'x', { t: true }));
    c.a(untagged({ opcode: 0x0, qn: 0, msn: 1, body: new Uint8Array(4) }));
    expectRules(c, ['rdmap.opcode-buffer-model', 'rdmap.opcode-buffer-model']);
  });

  it('rdmap.not-single-segment: Read Request split or with payload, Terminate with L=0', () => {
    const c = conv();
    c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 8, srcStag: 2, srcTo: 0, l: false }));
    c.a(readRequest({ msn: 2, sinkStag: 1, sinkTo: 0, size: 8, srcStag: 2, srcTo: 0, extra: new Uint8Array(4) }));
    c.a(terminate({ layer: 0, etype: 0, code: 0, l: false }));
    c.done();
    expect(c.sink.problems().map((f) => f.rule)).toEqual([
      'rdmap.not-single-segment',
      'rdmap.not-single-segment',
      'rdmap.not-single-segment',
    ]);
  });

  it('rdmap.truncated-header', () => {
    const c = conv();
    c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 8, srcStag: 2, srcTo: 0 }).slice(0, 40));
    c.a(terminate({ layer: 1, etype: 2, code: 3, m: true, d: true, segLen: 20 }));
    c.done();
    expect(c.sink.problems().map((f) => f.rule)).toEqual(['rdmap.truncated-header', 'rdmap.truncated-header']);
  });

  it('rdmap.immediate-length is a warning', () => {
    const c = conv();
    c.a(immediate({ msn: 1, data: new Uint8Array(12) }));
    c.a(immediate({ msn: 2, data: new Uint8Array(4) }));
    expectRules(c, ['rdmap.immediate-length', 'rdmap.immediate-length']);
    expect(c.sink.findings.every((f) => f.severity === 'warning')).toBe(true);
  });
});

describe('sequence rules', () => {
  it('ddp.msn-first (warning), only when the startup was captured', () => {
    const c = conv();
    c.a(send(5, 'x'));
    expectRules(c, ['ddp.msn-first']);
    expect(c.sink.findings[0]!.severity).toBe('warning');
    const mid = conv({ rev: null, initiatorDir: null });
    mid.a(send(5, 'x'));
    mid.a(send(6, 'x'));
    expectRules(mid, []);
  });

  it('ddp.msn-gap', () => {
    const c = conv();
    c.a(send(1, 'x'));
    c.a(send(3, 'x'));
    expectRules(c, ['ddp.msn-gap']);
    expect(c.sink.findings[0]!.message).toMatch(/MSN 3, expected 2 \(1 message missing\)/);
    expect(c.an.directionStats(0).msnErrors).toBe(1);
  });

  it('ddp.msn-duplicate', () => {
    const c = conv();
    c.a(send(1, 'x'));
    c.a(send(2, 'x'));
    c.a(send(2, 'x'));
    expectRules(c, ['ddp.msn-duplicate']);
  });

  it('ddp.msn-reorder', () => {
    const c = conv();
    c.a(send(1, 'x'));
    c.a(send(3, 'x'));
    c.a(send(2, 'x'));
    expectRules(c, ['ddp.msn-gap', 'ddp.msn-reorder']);
  });

  it('MSN wraps modulo 2^32 without a finding', () => {
    const c = conv({ rev: null, initiatorDir: null });
    c.a(send(0xfffffffe, 'x'));
    c.a(send(0xffffffff, 'x'));
    c.a(send(0, 'x'));
    c.a(send(1, 'x'));
    expectRules(c, []);
  });

  it('ddp.invalid-mo: gap and overlap', () => {
    const c = conv();
    c.a(send(1, filled(10), { mo: 0, l: false }));
    c.a(send(1, filled(10), { mo: 20, l: false }));
    c.a(send(1, filled(10), { mo: 25, l: true }));
    expectRules(c, ['ddp.invalid-mo', 'ddp.invalid-mo']);
    expect(c.sink.findings[0]!.message).toMatch(/MO=20, expected 10 \(10 octets missing\)/);
    expect(c.sink.findings[1]!.message).toMatch(/MO=25, expected 30 \(5 octets overlap\)/);
    expect(c.an.directionStats(0).moErrors).toBe(2);
  });

  it('ddp.invalid-mo: a new message not starting at MO 0', () => {
    const c = conv();
    c.a(send(1, 'x', { mo: 100 }));
    expectRules(c, ['ddp.invalid-mo']);
  });

  it('ddp.missing-last', () => {
    const c = conv();
    c.a(send(1, 'part', { l: false }));
    c.a(send(2, 'x'));
    expectRules(c, ['ddp.missing-last']);
    expect(c.an.directionStats(0)).toMatchObject({ messages: 2, messagesComplete: 1, messagesIncomplete: 1 });
  });

  it('ddp.to-discontinuity', () => {
    const c = conv();
    c.a(write(7, 0x1000n, filled(100), { l: false }));
    c.a(write(7, 0x1100n, filled(100), { l: true }));
    expectRules(c, ['ddp.to-discontinuity']);
    expect(c.sink.findings[0]!.message).toMatch(/TO=0x1100, expected 0x1064 \(156 octets missing\)/);
    expect(c.an.directionStats(0).toErrors).toBe(1);
  });

  it('ddp.tagged-interleaved (warning), both messages still tracked', () => {
    const c = conv();
    c.a(write(1, 0, filled(10), { l: false }));
    c.a(write(2, 0, filled(10), { l: false }));
    c.a(write(1, 10, filled(10), { l: true }));
    c.a(write(2, 10, filled(10), { l: true }));
    expectRules(c, ['ddp.tagged-interleaved']);
    expect(c.an.directionStats(0).messagesComplete).toBe(2);
  });

  it('ddp.capture-loss: jumps after a CRC-bad segment, a sequence gap or a noted capture gap', () => {
    const c = conv();
    c.a(send(1, 'x'));
    c.a(send(2, 'x'), { crc: 'bad' });
    c.a(send(3, 'x'));
    c.A.seq += 100; // 100 octets never reach the analyzer
    c.a(send(5, 'x'));
    c.an.noteCaptureGap(0, 9999, 1448);
    c.a(send(9, 'x'));
    expectRules(c, ['ddp.after-crc-discard', 'ddp.capture-loss', 'ddp.capture-loss']);
    expect(c.sink.findings[0]!.rule).toBe('ddp.after-crc-discard'); // not capture loss: the analyzer left it out
    expect(c.sink.findings[0]!.message).toMatch(/MSN 3, expected 2 .*left out because its CRC does not verify/);
    expect(c.sink.findings[1]!.message).toMatch(/100 octets missing from the stream/);
    expect(c.sink.findings[2]!.message).toMatch(/capture gap of 1448 octets at seq 9999/);
    expect(c.an.directionStats(0)).toMatchObject({ msnErrors: 0, skipped: 1, lossExplained: 3 });
  });

  it('ddp.incomplete-message on FIN, not at the end of the capture', () => {
    const c = conv();
    c.a(send(1, 'x', { l: false }));
    c.b(write(1, 0, 'y', { l: false }));
    c.an.end(0, 'fin');
    c.an.end(1, 'eof');
    expectRules(c, ['ddp.incomplete-message']);
  });
});

describe('pairing rules', () => {
  const rr = (msn: number, size: number, sinkStag = 0x10, sinkTo: bigint = 0x1000n) =>
    readRequest({ msn, sinkStag, sinkTo, size, srcStag: 0x20, srcTo: 0n });

  it('rdmap.read-response-unsolicited', () => {
    const c = conv();
    c.b(readResponse(0x10, 0x1000n, 'x'));
    expectRules(c, ['rdmap.read-response-unsolicited']);
  });

  it('no unsolicited finding when the startup (and maybe the Request) precede the capture', () => {
    const c = conv({ rev: null, initiatorDir: null });
    c.b(readResponse(0x10, 0x1000n, 'x'));
    expectRules(c, []);
  });

  it('rdmap.read-response-mismatch', () => {
    const c = conv();
    c.a(rr(1, 4));
    c.b(readResponse(0x11, 0x1000n, 'abcd'));
    c.a(rr(2, 4));
    c.b(readResponse(0x10, 0x2000n, 'abcd'));
    expectRules(c, ['rdmap.read-response-mismatch', 'rdmap.read-response-mismatch']);
  });

  it('rdmap.read-response-size: longer and shorter than asked', () => {
    const c = conv();
    c.a(rr(1, 100));
    for (const s of taggedSegments(0x2, 0x10, 0x1000n, filled(150), 60)) c.b(s);
    c.a(rr(2, 100));
    c.b(readResponse(0x10, 0x1000n, filled(50)));
    expectRules(c, ['rdmap.read-response-size', 'rdmap.read-response-size']);
    expect(c.sink.findings[0]!.message).toMatch(/already 120 octets.*asked for 100/);
    expect(c.sink.findings[1]!.message).toMatch(/Read Response of 50 octets.*asked for 100/);
  });

  it("rdmap.read-unanswered when the responder's direction closes", () => {
    const c = conv();
    c.a(rr(1, 100));
    c.a(rr(2, 100));
    c.b(readResponse(0x10, 0x1000n, filled(100)));
    c.an.end(1, 'fin');
    expectRules(c, ['rdmap.read-unanswered']);
    expect(c.sink.findings[0]!.seq).toBe(1000 + 52); // the second Read Request (FPDU of 2 + 46 + 4)
    const eof = conv();
    eof.a(rr(1, 100));
    eof.an.end(1, 'eof');
    expectRules(eof, []);
  });

  it('rdmap.ird-exceeded (warning) from the RFC 6581 IRD/ORD', () => {
    const c = conv({ rev: 2, requestIrd: 16, requestOrd: 2, replyIrd: 4, replyOrd: 16 });
    c.a(rr(1, 1));
    c.a(rr(2, 1));
    c.a(rr(3, 1));
    expectRules(c, ['rdmap.ird-exceeded']);
    expect(c.sink.findings[0]!.message).toMatch(
      /3 Read Requests outstanding; the negotiated limit is 2 \(Initiator ORD 2, Responder IRD 4\)/,
    );
    // 0x3FFF means "no value" (Intel drivers): no limit.
    const n = conv({ rev: 2, requestOrd: 0x3fff, replyIrd: 0x3fff });
    for (let i = 1; i <= 5; i++) n.a(rr(i, 1));
    expectRules(n, []);
  });

  it('rdmap.atomic-response-unmatched', () => {
    const c = conv();
    c.a(atomicRequest({ msn: 1, atomicOpcode: 0, requestId: 5, remoteStag: 1, remoteTo: 0 }));
    c.b(atomicResponse({ msn: 1, originalRequestId: 6, value: 0 }));
    expectRules(c, ['rdmap.atomic-response-unmatched']);
  });
});

describe('RTR rules', () => {
  it('rdmap.rtr-mismatch (code 7) on a wrong first FPDU', () => {
    const c = conv({ rev: 2, p2p: true, rtr: 'write' });
    c.a(send(1, 'hello'));
    expectRules(c, ['rdmap.rtr-mismatch']);
    expect(c.sink.findings[0]).toMatchObject({ severity: 'warning', rfcErrorCode: 7, seq: 1000 });
  });

  it('rdmap.rtr-without-p2p (info)', () => {
    const c = conv({ rev: 1, p2p: false });
    c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 0, srcStag: 0, srcTo: 0 }));
    c.b(readResponse(1, 0));
    expectRules(c, ['rdmap.rtr-without-p2p']);
    expect(c.an.directionStats(0).rtr).toBeNull();
  });
});

describe('Terminate rules', () => {
  it('rdmap.terminate (info) and rdmap.terminate-unexplained', () => {
    const c = conv();
    c.a(send(1, 'x'));
    c.b(terminate({ layer: 2, etype: 0, code: 2 }));
    expectRules(c, ['rdmap.terminate', 'rdmap.terminate-unexplained']);
    expect(c.sink.of('rdmap.terminate')[0]!.message).toMatch(/^Terminate LLP\/MPA: MPA CRC Error/);
  });

  it('rdmap.terminate-unknown-code', () => {
    const c = conv();
    c.a(terminate({ layer: 1, etype: 2, code: 0x09 }));
    expectRules(c, ['rdmap.terminate', 'rdmap.terminate-unknown-code']);
  });

  it('rdmap.after-terminate, once per direction', () => {
    const c = conv();
    c.a(terminate({ layer: 0, etype: 2, code: 6 }));
    c.a(send(1, 'x'));
    c.a(send(2, 'x'));
    expectRules(c, ['rdmap.terminate', 'rdmap.after-terminate']);
  });
});

describe('byte order of RDMAP and DDP fields', () => {
  // SoftUiWarp writes the Read Request in host (little-endian) order: the Response matches it swapped.
  const le32 = (v: number) => (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
  const le64 = (v: bigint) => {
    let r = 0n;
    for (let i = 0; i < 8; i++) r = (r << 8n) | ((v >> BigInt(8 * i)) & 0xffn);
    return r;
  };
  it('rdmap.read-request-byte-order: one finding per direction naming every swapped field, later Requests counted, Responses paired under the swapped reading', () => {
    const c = conv();
    for (let i = 1; i <= 3; i++) {
      c.a(
        readRequest({
          msn: i,
          sinkStag: le32(0xa5aa9000),
          sinkTo: le64(0x7f29a5aa9000n),
          size: le32(1024),
          srcStag: le32(0x5057a000),
          srcTo: le64(0x7f0e5057a000n),
        }),
      );
      c.b(readResponse(0xa5aa9000, 0x7f29a5aa9000n, filled(1024)));
    }
    c.an.end(1, 'fin');
    expectRules(c, ['rdmap.read-request-byte-order']);
    const m = c.sink.findings[0]!.message;
    // Both readings of each field, in one finding on the first Request.
    expect(m).toMatch(/Data Sink STag 0x0090aaa5 \(swapped 0xa5aa9000\)/);
    expect(m).toMatch(/Data Sink TO 0x90aaa5297f0000 \(swapped 0x7f29a5aa9000\)/);
    expect(m).toMatch(/RDMA Read Message Size 262144 \(swapped 1024\)/);
    expect(m).toMatch(/Data Source STag 0x00a05750 \(swapped 0x5057a000\)/);
    expect(m).toMatch(/Data Source TO 0xa057500e7f0000 \(swapped 0x7f0e5057a000\)/);
    expect(m).toMatch(/later ones in this direction are counted, not listed$/);
    expect(m.length).toBeLessThan(450);
    // The three Requests are counted; every Response paired and sized under the swapped reading.
    expect(c.an.directionStats(0).readRequestsByteSwapped).toBe(3);
    expect(c.an.directionStats(0).readRequests).toBe(3);
    expect(c.an.outstandingReads(0)).toBe(0);
  });

  it('rdmap.read-request-byte-order stays silent when Request and Response agree in network order, or disagree otherwise', () => {
    const c = conv();
    c.a(readRequest({ msn: 1, sinkStag: 0xa5aa9000, sinkTo: 0x7f29a5aa9000n, size: 1024, srcStag: 1, srcTo: 2n }));
    c.b(readResponse(0xa5aa9000, 0x7f29a5aa9000n, filled(1024)));
    c.a(readRequest({ msn: 2, sinkStag: 0x11, sinkTo: 0x1000n, size: 4, srcStag: 1, srcTo: 2n }));
    c.b(readResponse(0x12, 0x1000n, 'abcd'));
    expectRules(c, ['rdmap.read-response-mismatch']);
  });

  it("ddp.mo-byte-order: a later segment's MO in host order, once per direction", () => {
    const c = conv();
    const payload = filled(3000);
    const segs = sendSegments(1, payload, 1000);
    // MO of the later segments written little-endian (1000 -> 0xe8030000).
    for (const [i, s] of segs.entries()) {
      if (i > 0) new DataView(s.buffer, s.byteOffset).setUint32(14, le32(i * 1000));
      c.a(s);
    }
    for (const s of sendSegments(2, payload, 1000)) c.a(s);
    expectRules(c, ['ddp.mo-byte-order']);
    expect(c.sink.findings[0]!.message).toMatch(/MO 0xe8030000 .* is 1000 byte-swapped/);
    expect(c.an.directionStats(0).messagesComplete).toBe(2);
  });
});

describe('finding volume is bounded', () => {
  it('maxFindingsPerRule caps what reaches the sink and says how many were held back', () => {
    const c = conv({}, { maxFindingsPerRule: 3 });
    for (let i = 1; i <= 10; i++) c.a(send(i, 'x', { rsvd: 1 }));
    c.an.end(0, 'fin');
    c.done();
    const f = c.sink.of('ddp.reserved-nonzero');
    expect(f.length).toBe(4);
    expect(f[3]!.message).toMatch(/7 further ddp.reserved-nonzero findings/);
  });
});

afterAll(() => {
  const missing = DDP_RULES.map((r) => r.id).filter((id) => !fired.has(id));
  expect(missing, 'rules never exercised by a test').toEqual([]);
});

describe('the rule table', () => {
  it('ids are unique, namespaced, explained; provisional rules are not errors', () => {
    const ids = DDP_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of DDP_RULES) {
      expect(r.id).toMatch(/^(ddp|rdmap)\.[a-z0-9-]+$/);
      expect(r.summary.length).toBeGreaterThan(10);
      expect(r.explanation.length).toBeGreaterThan(40);
      if ((r.ref ?? '').includes('[RFC?]') || r.explanation.includes('hence a warning'))
        expect(r.severity, r.id).not.toBe('error');
    }
  });
});
