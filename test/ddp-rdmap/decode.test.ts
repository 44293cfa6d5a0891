import { describe, expect, it } from 'vitest';
import {
  decodeDdp,
  decodeDdpHeader,
  type DdpPdu,
  type TaggedPdu,
  type TerminateMessage,
  type UntaggedPdu,
} from '../../dissectors/ddp-rdmap/decode.js';
import {
  atomicRequest,
  atomicResponse,
  crc32c,
  fpdu,
  hex,
  immediate,
  readRequest,
  readResponse,
  send,
  tagged,
  terminate,
  untagged,
  write,
} from '../helpers/ddp-encoder.js';

const dec = (b: Uint8Array, length = b.length): DdpPdu => decodeDdp(b.slice(0, 96), length);
function asUntagged(p: DdpPdu): UntaggedPdu {
  if (p.kind !== 'untagged') throw new Error(`expected untagged, got ${p.kind}`);
  return p;
}
function asTagged(p: DdpPdu): TaggedPdu {
  if (p.kind !== 'tagged') throw new Error(`expected tagged, got ${p.kind}`);
  return p;
}
function term(p: DdpPdu): TerminateMessage {
  const u = asUntagged(p);
  if (u.body.type !== 'terminate') throw new Error(`expected terminate, got ${u.body.type}`);
  return u.body.term;
}
/** The ULPDU inside a marker-less FPDU given as hex: after the 2-octet length, `length` octets. */
function ulpduOf(fpduHex: string): { ul: Uint8Array; crc: number; whole: Uint8Array } {
  const b = hex(fpduHex);
  const len = (b[0]! << 8) | b[1]!;
  const crc = new DataView(b.buffer).getUint32(b.length - 4, true);
  return { ul: b.slice(2, 2 + len), crc, whole: b };
}

describe('SPEC-NOTES worked FPDUs (ULPDU bytes)', () => {
  it('Send "ping", QN0 MSN1', () => {
    const { ul, crc, whole } = ulpduOf(
      '00 16 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 70 69 6e 67 a5 48 7f a7',
    );
    expect(crc).toBe(0xa77f48a5);
    const p = asUntagged(dec(ul));
    expect(p.ddp).toMatchObject({ t: false, l: true, rsvd: 0, dv: 1 });
    expect(p.rdmap).toMatchObject({ rv: 1, rsv: 0, opcode: 0x3 });
    expect([p.qn, p.msn, p.mo, p.payloadLength, p.headerLength]).toEqual([0, 1, 0, 4, 18]);
    expect(p.reservedWord).toBe(0);
    expect(p.invalidateStag).toBeNull();
    // The test encoder produces the identical FPDU, CRC included.
    expect(fpdu(send(1, 'ping'))).toEqual(whole);
  });

  it('Send "hello" with PAD 3', () => {
    const { ul, crc, whole } = ulpduOf(
      '00 17 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 68 65 6c 6c 6f 00 00 00 b9 90 b1 0c',
    );
    expect(crc).toBe(0x0cb190b9);
    const p = asUntagged(dec(ul));
    expect(p.payloadLength).toBe(5);
    expect(p.msn).toBe(1);
    expect(fpdu(send(1, 'hello'))).toEqual(whole);
  });

  it('zero-length Send RTR', () => {
    const { ul, crc, whole } = ulpduOf('00 12 41 43 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 58 7b e8 c4');
    expect(crc).toBe(0xc4e87b58);
    const p = asUntagged(dec(ul));
    expect([p.rdmap.opcode, p.qn, p.msn, p.mo, p.payloadLength, p.ddp.l]).toEqual([3, 0, 1, 0, 0, true]);
    expect(fpdu(send(1))).toEqual(whole);
  });

  it('zero-length Write, STag 1, TO 0', () => {
    const { ul, crc, whole } = ulpduOf('00 0e c1 40 00 00 00 01 00 00 00 00 00 00 00 00 eb d3 4c 5f');
    expect(crc).toBe(0x5f4cd3eb);
    const p = asTagged(dec(ul));
    expect(p.ddp).toMatchObject({ t: true, l: true, dv: 1 });
    expect(p.rdmap.opcode).toBe(0);
    expect(p.stag).toBe(1);
    expect(p.to).toBe(0n);
    expect(p.payloadLength).toBe(0);
    expect(fpdu(write(1, 0))).toEqual(whole);
  });

  it('Terminate LLP/MPA/0x07, no headers', () => {
    const { ul, crc, whole } = ulpduOf(
      '00 16 41 47 00 00 00 00 00 00 00 02 00 00 00 01 00 00 00 00 20 07 00 00 1b d2 ba be',
    );
    expect(crc).toBe(0xbebad21b);
    const p = asUntagged(dec(ul));
    expect([p.qn, p.msn, p.mo]).toEqual([2, 1, 0]);
    const t = term(p);
    expect(t).toMatchObject({
      layer: 2,
      etype: 0,
      code: 7,
      layerName: 'LLP',
      etypeName: 'MPA Error',
      codeName: 'No matching RTR option',
    });
    expect([t.m, t.d, t.r, t.ddpSegmentLength, t.ddpHeader, t.rdmapHeader]).toEqual([
      false,
      false,
      false,
      null,
      null,
      null,
    ]);
    expect(fpdu(terminate({ layer: 2, etype: 0, code: 7 }))).toEqual(whole);
  });

  it('draft-00 Figures 5 and 6 (markers removed): version-0 Sends MSN 1 and 2', () => {
    // Figure 5: marker 00000000, then ULPDU_Length 0x2a, ULPDU; Figure 6 has a marker at offset 20.
    const f5 = hex('00000000 002a4003 00000000 00000000 00000001 00000000' + '00'.repeat(24));
    const f6 = hex('002a4003 00000000 00000000 00000002 00000000 00000014' + '00'.repeat(24));
    const ul5 = f5.slice(6, 6 + 42);
    const ul6 = new Uint8Array([...f6.slice(2, 20), ...f6.slice(24)]);
    expect(ul6.length).toBe(42);
    for (const [ul, msn] of [
      [ul5, 1],
      [ul6, 2],
    ] as const) {
      const p = asUntagged(dec(ul));
      expect(p.ddp).toMatchObject({ t: false, l: true, dv: 0 });
      expect(p.rdmap).toMatchObject({ rv: 0, opcode: 3 });
      expect([p.qn, p.msn, p.mo, p.payloadLength]).toEqual([0, msn, 0, 24]);
    }
  });

  it('the encoder CRC is CRC-32C', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
  });
});

describe('every opcode', () => {
  it('0x0 RDMA Write with a 64-bit TO', () => {
    const p = asTagged(dec(write(0xdeadbeef, 0xfedcba9876543210n, 'abcdef', { l: false })));
    expect(p.stag).toBe(0xdeadbeef);
    expect(p.to).toBe(0xfedcba9876543210n);
    expect(p.ddp.l).toBe(false);
    expect(p.payloadLength).toBe(6);
    expect(p.body.type).toBe('none');
  });

  it('0x1 Read Request', () => {
    const p = asUntagged(
      dec(
        readRequest({ msn: 3, sinkStag: 0x11, sinkTo: 0x1000n, size: 4096, srcStag: 0x22, srcTo: 0xffffffff00000000n }),
      ),
    );
    expect([p.qn, p.msn, p.length, p.payloadLength]).toEqual([1, 3, 46, 28]);
    expect(p.body).toEqual({
      type: 'read-request',
      rr: { sinkStag: 0x11, sinkTo: 0x1000n, size: 4096, srcStag: 0x22, srcTo: 0xffffffff00000000n },
    });
  });

  it('0x2 Read Response', () => {
    const p = asTagged(dec(readResponse(0x11, 0x1000n, new Uint8Array(100))));
    expect(p.rdmap.opcode).toBe(2);
    expect(p.payloadLength).toBe(100);
  });

  it('0x3-0x6 Sends, with and without Invalidate STag', () => {
    expect(asUntagged(dec(send(1, 'x'))).rdmap.opcode).toBe(3);
    const inv = asUntagged(dec(send(2, 'x', { invalidate: 0xabcd0001 })));
    expect(inv.rdmap.opcode).toBe(4);
    expect(inv.invalidateStag).toBe(0xabcd0001);
    expect(inv.reservedWord).toBeNull();
    const se = asUntagged(dec(send(3, 'x', { se: true, word: 0x5 })));
    expect(se.rdmap.opcode).toBe(5);
    expect(se.reservedWord).toBe(5);
    const seInv = asUntagged(dec(send(4, 'x', { se: true, invalidate: 7 })));
    expect(seInv.rdmap.opcode).toBe(6);
    expect(seInv.invalidateStag).toBe(7);
  });

  it('0x8 / 0x9 Immediate Data', () => {
    const p = asUntagged(dec(immediate({ msn: 5, data: 0x0102030405060708n })));
    expect(p.rdmap.opcode).toBe(8);
    expect(p.body).toEqual({ type: 'immediate', data: Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]) });
    expect(asUntagged(dec(immediate({ msn: 6, data: 1n, se: true }))).rdmap.opcode).toBe(9);
  });

  it('0xA Atomic Request (CmpSwap)', () => {
    const p = asUntagged(
      dec(
        atomicRequest({
          msn: 1,
          atomicOpcode: 2,
          requestId: 77,
          remoteStag: 0x99,
          remoteTo: 0x8n,
          data: 5n,
          mask: 0xffn,
          compareData: 4n,
          compareMask: 0xf0n,
        }),
      ),
    );
    expect(p.length).toBe(70);
    expect(p.body).toEqual({
      type: 'atomic-request',
      req: {
        reserved: 0,
        atomicOpcode: 2,
        requestId: 77,
        remoteStag: 0x99,
        remoteTo: 8n,
        data: 5n,
        mask: 0xffn,
        compareData: 4n,
        compareMask: 0xf0n,
      },
    });
  });

  it('0xB Atomic Response', () => {
    const p = asUntagged(dec(atomicResponse({ msn: 1, originalRequestId: 77, value: 0x1234567890n })));
    expect([p.qn, p.length]).toEqual([3, 30]);
    expect(p.body).toEqual({ type: 'atomic-response', resp: { originalRequestId: 77, originalValue: 0x1234567890n } });
  });

  it('0xC-0xF decode by their T bit, with no RDMAP body', () => {
    for (const op of [0xc, 0xd, 0xe, 0xf]) {
      const u = asUntagged(dec(untagged({ opcode: op, qn: 0, msn: 1, word: 0x55 })));
      expect(u.rdmap.opcode).toBe(op);
      expect(u.body.type).toBe('none');
      expect(u.reservedWord).toBeNull();
      expect(asTagged(dec(tagged({ opcode: op, stag: 1, to: 0 }))).rdmap.opcode).toBe(op);
    }
  });

  it('reserved and version bits are decoded', () => {
    const p = asUntagged(dec(send(1, '', { rsvd: 0xf, dv: 2, rv: 3, rsv: 2 })));
    expect(p.ddp).toMatchObject({ rsvd: 0xf, dv: 2 });
    expect(p.rdmap).toMatchObject({ rv: 3, rsv: 2 });
  });
});

describe('Terminate shapes', () => {
  const sendHdr = send(5, 'payload').slice(0, 18);
  const writeHdr = write(0x1234, 0x10n, 'x').slice(0, 14);
  const rrFull = readRequest({ msn: 2, sinkStag: 1, sinkTo: 2n, size: 3, srcStag: 4, srcTo: 5n });

  it('siw M+D with an untagged DDP header (DDP error)', () => {
    const t = term(dec(terminate({ layer: 1, etype: 2, code: 3, m: true, d: true, segLen: 25, ddpHeader: sendHdr })));
    expect(t).toMatchObject({
      layer: 1,
      etype: 2,
      code: 3,
      codeName: 'Invalid MSN - MSN range is not valid',
      m: true,
      d: true,
      r: false,
      ddpSegmentLength: 25,
    });
    expect(t.ddpHeader?.offset).toBe(24);
    expect(t.ddpHeader?.bytes).toEqual(sendHdr);
    expect(t.ddpHeader?.header).toMatchObject({ kind: 'untagged', qn: 0, msn: 5, mo: 0 });
    expect(t.rdmapHeader).toBeNull();
    expect(t.problems).toEqual([]);
  });

  it('M+D with a tagged DDP header: 14 octets chosen by its own T bit', () => {
    // EType 2 (untagged) with a tagged header: Wireshark would take 18 octets; the T bit says 14.
    const t = term(dec(terminate({ layer: 1, etype: 2, code: 1, m: true, d: true, segLen: 15, ddpHeader: writeHdr })));
    expect(t.ddpHeader?.bytes.length).toBe(14);
    expect(t.ddpHeader?.header).toMatchObject({ kind: 'tagged', stag: 0x1234, to: 0x10n });
  });

  it('siw M+D+R for a Read Request: 18 + 28 octets, the RDMAP header decoded again', () => {
    const t = term(
      dec(
        terminate({
          layer: 0,
          etype: 1,
          code: 2,
          m: true,
          d: true,
          r: true,
          segLen: 46,
          ddpHeader: rrFull.slice(0, 18),
          rdmapHeader: rrFull.slice(18),
        }),
      ),
    );
    expect(t.codeName).toBe('Access rights violation');
    expect(t.rdmapHeader?.readRequest).toEqual({ sinkStag: 1, sinkTo: 2n, size: 3, srcStag: 4, srcTo: 5n });
    expect(t.rdmapHeader?.offset).toBe(42);
    const whole = terminate({
      layer: 0,
      etype: 1,
      code: 2,
      m: true,
      d: true,
      r: true,
      segLen: 46,
      ddpHeader: rrFull.slice(0, 18),
      rdmapHeader: rrFull.slice(18),
    });
    expect(whole.length).toBe(18 + 52); // the cxgb4 maximum
  });

  it('siw M+D+R for a Send: R set but only the 18-octet header follows', () => {
    const t = term(
      dec(terminate({ layer: 0, etype: 1, code: 0, m: true, d: true, r: true, segLen: 25, ddpHeader: sendHdr })),
    );
    expect(t.ddpHeader?.header).not.toBeNull();
    expect(t.rdmapHeader).toBeNull();
    expect(t.problems).toEqual(['R is set but no terminated RDMAP header follows']);
  });

  it('D without M still reads the segment length (provisional 5)', () => {
    const t = term(dec(terminate({ layer: 1, etype: 2, code: 4, d: true, segLen: 30, ddpHeader: sendHdr })));
    expect(t.ddpSegmentLength).toBe(30);
    expect(t.ddpHeader?.header).not.toBeNull();
  });

  it('M only: segment length, no header', () => {
    const t = term(dec(terminate({ layer: 1, etype: 1, code: 0, m: true, segLen: 99 })));
    expect([t.ddpSegmentLength, t.ddpHeader]).toEqual([99, null]);
  });

  it('D set but the copied header is cut short', () => {
    const t = term(
      dec(terminate({ layer: 1, etype: 2, code: 1, m: true, d: true, segLen: 25, ddpHeader: sendHdr.slice(0, 10) })),
    );
    expect(t.ddpHeader?.bytes.length).toBe(10);
    expect(t.ddpHeader?.header).toBeNull();
    expect(t.problems[0]).toMatch(/only 10 of the 18 octets/);
  });

  it('RDMAP Local Catastrophic (code ALL), unknown layer, reserved bits', () => {
    expect(term(dec(terminate({ layer: 0, etype: 0, code: 0x42 }))).codeName).toBe('Local Catastrophic Error');
    const u = term(dec(terminate({ layer: 3, etype: 0, code: 0, hdrctRsvd: 0x1fff })));
    expect([u.layerName, u.codeName, u.rsvd]).toEqual([null, null, 0x1fff]);
    expect(term(dec(terminate({ layer: 1, etype: 2, code: 0x09 }))).codeName).toBeNull();
  });

  it('a Terminate too short for its control word is a truncated body', () => {
    const b = terminate({ layer: 2, etype: 0, code: 2 }).slice(0, 20);
    const p = asUntagged(dec(b));
    expect(p.body).toEqual({ type: 'truncated', what: 'Terminate Control', need: 22, have: 20 });
  });
});

describe('truncated and malformed ULPDUs never throw', () => {
  it('ULPDU shorter than the tagged/untagged header', () => {
    const p = dec(write(1, 0).slice(0, 10));
    expect(p).toMatchObject({ kind: 'truncated', truncated: true, length: 10, need: 14 });
    if (p.kind === 'truncated') expect(p.reason).toMatch(/shorter than the 14-octet tagged DDP header/);
    expect(dec(send(1).slice(0, 17))).toMatchObject({ kind: 'truncated', need: 18 });
    expect(dec(new Uint8Array(0))).toMatchObject({ kind: 'truncated', ddp: null, rdmap: null });
    expect(dec(Uint8Array.of(0x41))).toMatchObject({ kind: 'truncated', rdmap: null });
  });

  it('head shorter than length (bytes not available) is reported as such', () => {
    const b = send(1, 'x');
    const p = decodeDdp(b.slice(0, 12), b.length);
    expect(p.kind).toBe('truncated');
    if (p.kind === 'truncated') expect(p.reason).toMatch(/only 12 of the 18/);
  });

  it('RDMAP headers that do not fit are truncated bodies', () => {
    const rr = readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 1, srcStag: 2, srcTo: 0 });
    expect(asUntagged(dec(rr.slice(0, 40))).body).toEqual({
      type: 'truncated',
      what: 'Read Request header',
      need: 46,
      have: 40,
    });
    const ar = atomicRequest({ msn: 1, atomicOpcode: 0, requestId: 1, remoteStag: 1, remoteTo: 0 });
    expect(asUntagged(dec(ar.slice(0, 60))).body).toMatchObject({ type: 'truncated', need: 70 });
    const resp = atomicResponse({ msn: 1, originalRequestId: 1, value: 0 });
    expect(asUntagged(dec(resp.slice(0, 29))).body).toMatchObject({ type: 'truncated', need: 30 });
    expect(asUntagged(dec(immediate({ msn: 1, data: new Uint8Array(3) }))).body).toMatchObject({
      type: 'truncated',
      need: 26,
    });
  });

  it('random bytes of every length decode without throwing', () => {
    let x = 12345;
    for (let n = 0; n < 2000; n++) {
      const len = n % 100;
      const b = new Uint8Array(len);
      for (let i = 0; i < len; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        b[i] = x >>> 24;
      }
      expect(() => decodeDdp(b, len + (n % 3) * 1000)).not.toThrow();
    }
  });

  it('decodeDdpHeader picks 14 or 18 by T', () => {
    expect(decodeDdpHeader(write(1, 2n).slice(0, 14))?.kind).toBe('tagged');
    expect(decodeDdpHeader(send(1).slice(0, 18))?.kind).toBe('untagged');
    expect(decodeDdpHeader(send(1).slice(0, 14))).toBeNull();
  });
});
