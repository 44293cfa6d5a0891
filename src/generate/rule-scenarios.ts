/**
 * Scenarios that show chosen rules where no knob reaches them (DDP/RDMAP semantics, startup
 * variants, marker fields), each a small connection (rule-case.ts) with the findings its author
 * built in. Named rule-<what>; the corpus (scripts/make-corpus.ts) writes each one.
 */
import type { Scenario } from './scenario-table.js';
import { buildRuleCase, type ExpectedFinding, type RuleCase } from './rule-case.js';
import {
  atomicRequest,
  atomicResponse,
  filled,
  immediate,
  readRequest,
  readResponse,
  send,
  terminate,
  untagged,
  write,
} from './ddp-ulpdu.js';
import { enhancedPd, type FpduSpec } from './mpa-encoder.js';

const u = (ulpdu: Uint8Array, fault?: FpduSpec['fault']): FpduSpec => ({ ulpdu, ...(fault ? { fault } : {}) });
const rr = (msn: number, size: number, sinkStag = 0x10, sinkTo = 0x1000n) =>
  readRequest({ msn, sinkStag, sinkTo, size, srcStag: 0x20, srcTo: 0n });
const x = (rule: string, dir: 0 | 1 | null, at: ExpectedFinding['at']): ExpectedFinding => ({ rule, dir, at });
const REV1 = { request: { c: true }, reply: { c: true } };

function rc(name: string, summary: string, c: RuleCase): Scenario {
  return { name, summary, uses: [], build: () => buildRuleCase(c) };
}

export const RULE_SCENARIOS: readonly Scenario[] = [
  // --- DDP headers (RFC 5041) ---
  rc('rule-ddp-truncated', 'A ULPDU of 12 octets: shorter than the untagged DDP header', {
    spec: { ...REV1, i2r: [u(send(1, 'abc').slice(0, 12))] },
    expect: [x('ddp.truncated', 0, 0)],
  }),
  rc('rule-ddp-version', 'DV 0 and RV 0 after a Rev 1 startup', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { dv: 0 })), u(send(2, 'x', { rv: 0 }))] },
    expect: [x('ddp.invalid-dv', 0, 0), x('rdmap.invalid-rv', 0, 1)],
  }),
  rc(
    'rule-ddp-version-mix',
    'Captured mid-stream: the Initiator runs version 1 then sends DV 1 with RV 0; the Responder runs version 0 throughout',
    {
      spec: {
        request: null,
        reply: null,
        i2r: [u(send(1, 'x')), u(send(2, 'x')), u(send(3, 'x')), u(send(4, 'x', { dv: 1, rv: 0 }))],
        r2i: [u(send(1, 'x', { dv: 0, rv: 0 })), u(send(2, 'x', { dv: 0, rv: 0 })), u(send(3, 'x', { dv: 0, rv: 0 }))],
        scenario: { noHandshake: true },
      },
      // Every version-0 segment differs from the version the connection started with.
      expect: [
        x('mpa.mid-stream', 0, 0),
        x('mpa.mid-stream', 1, 0),
        x('ddp.version-mix', 0, 3),
        x('ddp.version-mix', 1, 0),
        x('ddp.version-mix', 1, 1),
        x('ddp.version-mix', 1, 2),
      ],
    },
  ),
  rc('rule-ddp-reserved', 'DDP reserved control bits, then RDMAP Rsv bits, set', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { rsvd: 4 })), u(send(2, 'x', { rsv: 1 }))] },
    expect: [x('ddp.reserved-nonzero', 0, 0), x('rdmap.reserved-nonzero', 0, 1)],
  }),
  rc('rule-ddp-invalid-qn', 'A Send on queue 7', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { qn: 7 }))] },
    expect: [x('ddp.invalid-qn', 0, 0)],
  }),
  rc('rule-rfc7306-qn', 'Immediate Data on queue 2', {
    spec: { ...REV1, i2r: [u(immediate({ msn: 1, data: 1n, qn: 2 }))] },
    expect: [x('rdmap.rfc7306-qn', 0, 0)],
  }),
  rc('rule-unexpected-opcode', 'RDMAP opcode 0xC (unassigned)', {
    spec: { ...REV1, i2r: [u(untagged({ opcode: 0xc, qn: 0, msn: 1 }))] },
    expect: [x('rdmap.unexpected-opcode', 0, 0)],
  }),
  rc('rule-opcode-buffer-model', 'A Send with the tagged bit set', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { t: true }))] },
    expect: [x('rdmap.opcode-buffer-model', 0, 0)],
  }),
  rc('rule-not-single-segment', 'A Read Request without L', {
    spec: {
      ...REV1,
      i2r: [u(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 8, srcStag: 2, srcTo: 0, l: false }))],
    },
    expect: [x('rdmap.not-single-segment', 0, 0)],
  }),
  rc('rule-truncated-header', 'A Read Request cut to 40 octets', {
    spec: { ...REV1, i2r: [u(rr(1, 8).slice(0, 40))] },
    expect: [x('rdmap.truncated-header', 0, 0)],
  }),
  rc('rule-immediate-length', 'Immediate Data with 12 octets instead of 8', {
    spec: { ...REV1, i2r: [u(immediate({ msn: 1, data: new Uint8Array(12) }))] },
    expect: [x('rdmap.immediate-length', 0, 0)],
  }),
  // --- DDP sequencing ---
  rc('rule-msn-first', 'The first Send has MSN 5', {
    spec: { ...REV1, i2r: [u(send(5, 'x'))] },
    expect: [x('ddp.msn-first', 0, 0)],
  }),
  rc('rule-msn-gap', 'MSN 1 then 3', {
    spec: { ...REV1, i2r: [u(send(1, 'x')), u(send(3, 'x'))] },
    expect: [x('ddp.msn-gap', 0, 1)],
  }),
  rc('rule-msn-duplicate', 'MSN 1, 2, 2', {
    spec: { ...REV1, i2r: [u(send(1, 'x')), u(send(2, 'x')), u(send(2, 'x'))] },
    expect: [x('ddp.msn-duplicate', 0, 2)],
  }),
  rc('rule-msn-reorder', 'MSN 1, 3, 2', {
    spec: { ...REV1, i2r: [u(send(1, 'x')), u(send(3, 'x')), u(send(2, 'x'))] },
    expect: [x('ddp.msn-gap', 0, 1), x('ddp.msn-reorder', 0, 2)],
  }),
  rc('rule-invalid-mo', 'A new message starting at MO 100', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { mo: 100 }))] },
    expect: [x('ddp.invalid-mo', 0, 0)],
  }),
  rc('rule-mo-byte-order', "The second segment's MO sent little-endian (10 as 0x0a000000)", {
    spec: {
      ...REV1,
      i2r: [u(send(1, filled(10), { mo: 0, l: false })), u(send(1, filled(10), { mo: 0x0a000000, l: true }))],
    },
    expect: [x('ddp.mo-byte-order', 0, 1)],
  }),
  rc('rule-missing-last', 'A message without L, then the next message', {
    spec: { ...REV1, i2r: [u(send(1, 'part', { l: false })), u(send(2, 'x'))] },
    expect: [x('ddp.missing-last', 0, 1)],
  }),
  rc('rule-to-discontinuity', "A Write whose second segment's TO skips 156 octets", {
    spec: {
      ...REV1,
      i2r: [u(write(7, 0x1000n, filled(100), { l: false })), u(write(7, 0x1100n, filled(100), { l: true }))],
    },
    expect: [x('ddp.to-discontinuity', 0, 1)],
  }),
  rc('rule-tagged-interleaved', 'Two Writes interleaved segment by segment', {
    spec: {
      ...REV1,
      i2r: [
        u(write(1, 0, filled(10), { l: false })),
        u(write(2, 0, filled(10), { l: false })),
        u(write(1, 10, filled(10))),
        u(write(2, 10, filled(10))),
      ],
    },
    expect: [x('ddp.tagged-interleaved', 0, 1)],
  }),
  rc('rule-incomplete-message', 'A Send without L, then FIN', {
    spec: { ...REV1, i2r: [u(send(1, 'x', { l: false }))], scenario: { close: 'fin' } },
    expect: [
      x('ddp.incomplete-message', 0, 0),
      x('mpa.tcp-closed-between', 0, 'end'),
      x('mpa.tcp-closed-between', 1, 'end'),
    ],
  }),
  // --- RDMAP pairing ---
  rc('rule-read-response-unsolicited', 'A Read Response no Read Request asked for', {
    spec: { ...REV1, i2r: [u(send(1, 'x'))], r2i: [u(readResponse(0x10, 0x1000n, 'x'))] },
    expect: [x('rdmap.read-response-unsolicited', 1, 0)],
  }),
  rc('rule-read-response-mismatch', 'A Read Response to another STag than the Data Sink', {
    spec: { ...REV1, i2r: [u(rr(1, 4))], r2i: [u(readResponse(0x11, 0x1000n, 'abcd'))] },
    expect: [x('rdmap.read-response-mismatch', 1, 0)],
  }),
  rc('rule-read-response-size', 'A Read Response of 50 octets to a Read of 100', {
    spec: { ...REV1, i2r: [u(rr(1, 100))], r2i: [u(readResponse(0x10, 0x1000n, filled(50)))] },
    expect: [x('rdmap.read-response-size', 1, 0)],
  }),
  rc(
    'rule-read-request-byte-order',
    'A Read Request with its Data Sink and Source fields little-endian; the Response shows the swapped STag and TO',
    {
      spec: {
        ...REV1,
        i2r: [
          u(
            readRequest({
              msn: 1,
              sinkStag: 0x10000000,
              sinkTo: 0x0010000000000000n,
              size: 0x04000000,
              srcStag: 0x20000000,
              srcTo: 0n,
            }),
          ),
        ],
        r2i: [u(readResponse(0x10, 0x1000n, 'abcd'))],
      },
      // One finding for the direction (on its first byte-swapped Request), naming every swapped field with both readings.
      expect: [x('rdmap.read-request-byte-order', 0, 0)],
    },
  ),
  rc('rule-read-unanswered', 'Two Reads, one answered, then FIN', {
    spec: {
      ...REV1,
      i2r: [u(rr(1, 100)), u(rr(2, 100))],
      r2i: [u(readResponse(0x10, 0x1000n, filled(100)))],
      scenario: { close: 'fin' },
    },
    expect: [
      x('rdmap.read-unanswered', 0, 1),
      x('mpa.tcp-closed-between', 0, 'end'),
      x('mpa.tcp-closed-between', 1, 'end'),
    ],
  }),
  rc('rule-ird-exceeded', 'Rev 2 with ORD 2: three Reads outstanding', {
    spec: {
      request: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 16, ord: 2 }) },
      reply: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 4, ord: 16 }) },
      i2r: [u(rr(1, 1)), u(rr(2, 1)), u(rr(3, 1))],
    },
    expect: [x('rdmap.ird-exceeded', 0, 2)],
  }),
  rc('rule-atomic-response-unmatched', 'An Atomic Response to request 6 when request 5 was sent', {
    spec: {
      ...REV1,
      i2r: [u(atomicRequest({ msn: 1, atomicOpcode: 0, requestId: 5, remoteStag: 1, remoteTo: 0 }))],
      r2i: [u(atomicResponse({ msn: 1, originalRequestId: 6, value: 0 }))],
    },
    expect: [x('rdmap.atomic-response-unmatched', 1, 0)],
  }),
  rc('rule-rtr-mismatch', 'Rev 2 peer-to-peer with a Write RTR negotiated; the Initiator sends a Send first', {
    spec: {
      request: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
      reply: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
      i2r: [u(send(1, 'hello'))],
    },
    expect: [x('rdmap.rtr-mismatch', 0, 0)],
  }),
  rc('rule-rtr-without-p2p', 'Rev 1: a zero-length Read first, answered', {
    spec: {
      ...REV1,
      i2r: [u(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0, size: 0, srcStag: 0, srcTo: 0 }))],
      r2i: [u(readResponse(1, 0))],
    },
    expect: [x('rdmap.rtr-without-p2p', 0, 0)],
  }),
  rc('rule-terminate-llp', 'A Terminate LLP/MPA CRC Error with no CRC error in the capture', {
    spec: { ...REV1, i2r: [u(send(1, 'x'))], r2i: [u(terminate({ layer: 2, etype: 0, code: 2 }))] },
    expect: [x('rdmap.terminate', 1, 0), x('rdmap.terminate-unexplained', 1, 0)],
  }),
  rc('rule-terminate-unknown', 'A Terminate with an unregistered error type and code, then a Send after it', {
    spec: { ...REV1, i2r: [u(terminate({ layer: 0, etype: 0xf, code: 0x77 })), u(send(1, 'x'))] },
    expect: [x('rdmap.terminate', 0, 0), x('rdmap.terminate-unknown-code', 0, 0), x('rdmap.after-terminate', 0, 1)],
  }),
  // --- MPA startup (RFC 5044 §7.1, RFC 6581 §3) ---
  rc('rule-reserved-flags', 'A Request with reserved flag bits set', {
    spec: { request: { c: true, res: 0x3 }, reply: { c: true }, i2r: [u(send(1, 'x'))] },
    expect: [x('mpa.reserved-flags', 0, 'request')],
  }),
  rc('rule-unsupported-rev', 'A Request and Reply of Rev 3', {
    spec: { request: { c: true, rev: 3 }, reply: { c: true, rev: 3 } },
    expect: [x('mpa.unsupported-rev', 0, 'request'), x('mpa.unsupported-rev', 1, 'reply')],
  }),
  rc('rule-v2-pd-too-short', 'A Rev 2 Request with the enhanced bit and no IRD/ORD block', {
    spec: {
      request: { c: true, rev: 2, enhanced: true },
      reply: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8 }) },
    },
    expect: [x('mpa.v2-pd-too-short', 0, 'request')],
  }),
  rc('rule-v2-fallback-invalid', 'A Rev 2 Request answered by a Rev 2 Reply without the enhanced bit', {
    spec: {
      request: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8 }) },
      reply: { c: true, rev: 2 },
    },
    expect: [x('mpa.v2-fallback-invalid', 1, 'reply')],
  }),
  rc(
    'rule-v2-p2p',
    'Peer-to-peer asked for with a Write RTR; the Reply drops the A bit, a second flow picks a Read RTR not offered',
    {
      spec: {
        request: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
        reply: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: false }) },
      },
      expect: [x('mpa.v2-p2p-not-echoed', 1, 'reply')],
    },
  ),
  rc('rule-v2-rtr-not-offered', 'A Reply choosing a Read RTR when the Request offered Write only', {
    spec: {
      request: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
      reply: { c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, read: true }) },
    },
    expect: [x('mpa.v2-rtr-not-offered', 1, 'reply')],
  }),
  rc('rule-rejected', 'A Reply with R=1, and FPDUs sent anyway', {
    spec: { request: { c: true }, reply: { c: true, r: true }, i2r: [u(send(1, 'x'))] },
    expect: [x('mpa.rejected', 1, 'reply'), x('mpa.fpdu-after-reject', 0, 0)],
  }),
  rc('rule-responder-responder', 'Both ends send an MPA Reply', {
    spec: { request: { c: true, key: 'MPA ID Rep Frame' }, reply: { c: true } },
    expect: [x('mpa.responder-responder', 1, 'reply'), x('mpa.reply-without-request', 0, 'startup')],
  }),
  rc('rule-reply-without-request', 'A Reply with no Request before it', {
    spec: { request: null, reply: { c: true } },
    expect: [x('mpa.reply-without-request', 1, 'reply')],
  }),
  rc('rule-pd-short', 'A Request announcing 100 octets of Private Data, sending 10, then nothing', {
    spec: { request: { c: true, pd: filled(10), pdLength: 100 }, reply: null },
    expect: [x('mpa.pd-short', 0, 'request')],
    noMpa: true,
  }),
  rc('rule-coalesced-startup', "The Responder's first FPDU in the segment of its Reply", {
    spec: { ...REV1, i2r: [u(send(1, 'x'))], r2i: [u(send(1, 'y'))], coalesce: true, cutR2i: undefined },
    expect: [x('mpa.coalesced-startup', 1, 'reply'), x('mpa.responder-first', 1, 0)],
  }),
  // --- FPDU format (RFC 5044 §4) ---
  rc('rule-crc-byte-order', 'A CRC sent most significant octet first', {
    spec: { ...REV1, i2r: [u(send(1, filled(40))), u(send(2, filled(40)), { crcByteSwap: true }), u(send(3, 'x'))] },
    expect: [x('mpa.crc-byte-order', 0, 1), x('mpa.after-error', 0, 2), x('ddp.after-crc-discard', 0, 2)],
  }),
  rc('rule-marker-fields', 'Markers both ways: one marker with Reserved set, one with FPDUPTR low bits set', {
    spec: {
      request: { c: true, m: true },
      reply: { c: true, m: true },
      i2r: [
        u(send(1, filled(1200))),
        u(send(2, filled(1200)), { markerReserved: 0x1234 }),
        u(send(3, filled(1200)), { fpduptrLowBits: 2 }),
      ],
    },
    expect: [x('mpa.marker-reserved', 0, 1), x('mpa.fpduptr-low-bits', 0, 2)],
  }),
  rc('rule-ulpdu-too-long', 'An FPDU with ULPDU_Length 65000, above 64768', {
    spec: { ...REV1, i2r: [u(send(1, filled(65000 - 18)))] },
    expect: [x('mpa.ulpdu-too-long', 0, 0), x('mpa.fpdu-exceeds-emss', 0, 0)],
  }),
  rc('rule-markers-unrequested', 'Markers from the Initiator although the Reply did not ask for them', {
    spec: {
      ...REV1,
      i2r: [u(send(1, filled(700))), u(send(2, filled(700))), u(send(3, filled(700)))],
      encodeMarkers: [true, false],
    },
    expect: [x('mpa.markers-unrequested', 0, 0), x('mpa.framing-lost', 0, 'seqstart')],
  }),
  rc('rule-markers-missing', 'No markers from the Initiator although the Reply asked for them', {
    spec: {
      request: { c: true },
      reply: { c: true, m: true },
      i2r: [u(send(1, filled(700))), u(send(2, filled(700))), u(send(3, filled(700)))],
      encodeMarkers: [false, false],
    },
    expect: [x('mpa.markers-missing', 0, 0), x('mpa.framing-lost', 0, { seq: 1025 })],
  }),
];
