import { describe, expect, it } from 'vitest';
import { buildMpaConnection, type MpaConnectionSpec } from '../../src/generate/mpa-connection.js';
import {
  encodeFpdus,
  enhancedPd,
  patternBytes,
  sendUlpdu,
  startupFrame,
  writeUlpdu,
  type FpduSpec,
} from '../../src/generate/mpa-encoder.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { MPA_RULES } from '../../dissectors/mpa/rules.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';

const sends = (n: number, size = 100, seed = 1): FpduSpec[] =>
  Array.from({ length: n }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(size + i, seed + i)) }));

async function run(spec: MpaConnectionSpec) {
  const c = buildMpaConnection(spec);
  return { c, r: await analyzeBytes(c.pcap) };
}

const CLEAN_INFO = new Set(['mpa.tcp-closed-between']);
function unexpected(rules: string[], allowed: string[]): string[] {
  return rules.filter((r) => !allowed.includes(r) && !CLEAN_INFO.has(r));
}

describe('MPA rules stay silent on clean captures', () => {
  const variants: Array<[string, MpaConnectionSpec]> = [
    [
      'markers both ways, CRC, random segmentation',
      {
        request: { m: true, c: true },
        reply: { m: true, c: true },
        i2r: sends(12, 300),
        r2i: sends(9, 700),
        cutI2r: { random: 1, seed: 7, max: 600 },
        cutR2i: { random: 1, seed: 9, max: 900 },
      },
    ],
    ['no markers, no CRC', { request: {}, reply: {}, i2r: sends(5), r2i: sends(5) }],
    [
      'markers one way only',
      { request: { m: false, c: true }, reply: { m: true, c: true }, i2r: sends(8, 600), r2i: sends(8, 600) },
    ],
    [
      'Rev 2 peer-to-peer with write RTR',
      {
        request: {
          rev: 2,
          enhanced: true,
          c: true,
          pd: enhancedPd({ ird: 16, ord: 16, p2p: true, write: true, read: true }),
        },
        reply: { rev: 2, enhanced: true, c: true, pd: enhancedPd({ ird: 16, ord: 16, p2p: true, write: true }) },
        i2r: [{ ulpdu: writeUlpdu(1, 0, new Uint8Array(0)) }, ...sends(3)],
        r2i: sends(3),
      },
    ],
    [
      'Rev 0 (RDMA Consortium)',
      {
        request: { rev: 0, c: true },
        reply: { rev: 0, c: true },
        i2r: Array.from({ length: 3 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(40, i), { dv: 0 }) })),
        r2i: [],
      },
    ],
    [
      'FPDUs packed several per segment',
      { request: { m: true, c: true }, reply: { m: true, c: true }, i2r: sends(30, 20), cutI2r: [400, 400, 400, 400] },
    ],
    [
      'IPv6',
      {
        request: { c: true },
        reply: { c: true },
        i2r: sends(4),
        r2i: sends(4),
        scenario: { client: { addr: 'fd00::1', port: 40009 }, server: { addr: 'fd00::2', port: 4420 } },
      },
    ],
    [
      'delayed startup after streaming data',
      {
        request: { c: true, m: true },
        reply: { c: true, m: true },
        i2r: sends(4, 600),
        r2i: sends(4, 600),
        streamingPrefix: [new TextEncoder().encode('HELLO SERVER\r\n'), new TextEncoder().encode('HELLO\r\n')],
      },
    ],
    [
      'sequence wrap near 2^32',
      {
        request: { m: true, c: true },
        reply: { m: true, c: true },
        i2r: sends(10, 800),
        r2i: sends(3),
        scenario: { isn: [0xfffff000, 0xffffff00] },
      },
    ],
  ];
  for (const [name, spec] of variants) {
    it(name, async () => {
      const { c, r } = await run(spec);
      expect(unexpected(rulesOf(r), [])).toEqual([]);
      const m = r.report.flows[0]!.mpa as Record<string, any>;
      expect(m.directions[0].fpdus).toBe(c.fpduSeqs[0].length);
      expect(m.directions[1].fpdus).toBe(c.fpduSeqs[1].length);
      expect(m.directions[0].seqStart).toBe(c.seqStart[0]);
      expect(m.directions[1].seqStart).toBe(c.seqStart[1]);
    });
  }
});

describe('MPA rules fire on captures built for them', () => {
  const cases: Array<[string, MpaConnectionSpec, string[]?]> = [
    ['mpa.bad-key', { request: {}, reply: { key: 'MPA ID Rxp Frame' }, i2r: sends(1) }],
    ['mpa.pd-length-too-long', { request: { pd: new Uint8Array(600) }, reply: {}, i2r: sends(1) }],
    ['mpa.unsupported-rev', { request: { rev: 3 }, reply: { rev: 3 }, i2r: sends(1) }],
    ['mpa.reserved-flags', { request: { res: 0x08 }, reply: { res: 0x08 }, i2r: sends(1) }],
    ['mpa.initiator-initiator', { request: {}, reply: { key: 'MPA ID Req Frame' }, i2r: sends(1) }],
    ['mpa.reply-without-request', { request: null, reply: {}, r2i: sends(1) }],
    [
      'mpa.v2-fallback-invalid',
      {
        request: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1 }) },
        reply: { rev: 2, pd: new Uint8Array(0) },
        i2r: sends(1),
      },
    ],
    [
      'mpa.v2-pd-too-short',
      {
        request: { rev: 2, enhanced: true, pd: new Uint8Array(2) },
        reply: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1 }) },
        i2r: sends(1),
      },
    ],
    [
      'mpa.v2-p2p-not-echoed',
      {
        request: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1, p2p: true, write: true }) },
        reply: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1, write: true }) },
        i2r: sends(1),
      },
    ],
    [
      'mpa.v2-rtr-not-offered',
      {
        request: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1, p2p: true, write: true }) },
        reply: { rev: 2, enhanced: true, pd: enhancedPd({ ird: 1, ord: 1, p2p: true, read: true }) },
        i2r: sends(1),
      },
    ],
    ['mpa.rejected', { request: { m: true }, reply: { r: true } }],
    ['mpa.fpdu-after-reject', { request: { c: true }, reply: { r: true, c: true }, i2r: sends(3) }],
    [
      'mpa.responder-first',
      { request: { c: true }, reply: { c: true }, i2r: sends(1), r2i: sends(1), responderFirst: true },
    ],
    [
      'mpa.coalesced-startup',
      { request: { c: true }, reply: { c: true }, i2r: sends(2), r2i: sends(3, 40), coalesce: true },
    ],
    [
      'mpa.crc-mismatch',
      {
        request: { c: true },
        reply: {},
        i2r: [...sends(2), { ulpdu: sendUlpdu(3, patternBytes(50, 3)), fault: { badCrc: true } }, ...sends(2)],
      },
    ],
    [
      'mpa.crc-byte-order',
      {
        request: { c: true },
        reply: {},
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(50, 3)), fault: { crcByteSwap: true } }],
      },
    ],
    [
      'mpa.fpduptr-mismatch',
      {
        request: {},
        reply: { m: true, c: true },
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(1200, 3)), fault: { fpduptrDelta: 8 } }, ...sends(2)],
      },
    ],
    [
      'mpa.marker-reserved',
      {
        request: {},
        reply: { m: true, c: true },
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(1200, 3)), fault: { markerReserved: 1 } }],
      },
    ],
    [
      'mpa.fpduptr-low-bits',
      {
        request: {},
        reply: { m: true, c: true },
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(1200, 3)), fault: { fpduptrLowBits: 1 } }],
      },
    ],
    [
      'mpa.pad-not-zero',
      {
        request: { c: true },
        reply: {},
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(21, 3)), fault: { padByte: 0xaa } }],
      },
    ],
    ['mpa.ulpdu-too-long', { request: { c: true }, reply: {}, i2r: [{ ulpdu: sendUlpdu(1, patternBytes(65000, 3)) }] }],
    [
      'mpa.fpdu-exceeds-emss',
      { request: { c: true, res: 0x08 }, reply: { res: 0x08 }, i2r: [{ ulpdu: sendUlpdu(1, patternBytes(3000, 3)) }] },
    ],
    [
      'mpa.after-error',
      {
        request: { c: true },
        reply: {},
        i2r: [{ ulpdu: sendUlpdu(1, patternBytes(50, 3)), fault: { badCrc: true } }, ...sends(2)],
      },
    ],
    ['mpa.tcp-closed-between', { request: {}, reply: {}, i2r: sends(2) }],
  ];
  for (const [rule, spec] of cases) {
    it(rule, async () => {
      const { r } = await run(spec);
      expect(rulesOf(r)).toContain(rule);
      const f = r.report.findings.find((x) => x.rule === rule)!;
      expect(f.frames.length).toBeGreaterThan(0);
      expect(f.flow).toBe(1);
    });
  }

  it('mpa.fpduptr-mismatch is error 3 only with a valid CRC; a bad CRC is error 2 alone', async () => {
    const { r } = await run({
      request: {},
      reply: { m: true, c: true },
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(1200, 3)), fault: { fpduptrDelta: 8, badCrc: true } }, ...sends(3)],
    });
    const rules = rulesOf(r);
    expect(rules).toContain('mpa.crc-mismatch');
    expect(rules).not.toContain('mpa.fpduptr-mismatch');
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(4);
    expect(r.report.findings.find((x) => x.rule === 'mpa.crc-mismatch')!.rfcErrorCode).toBe(2);
  });

  it('mpa.responder-responder', async () => {
    const rep = startupFrame({ kind: 'reply' });
    const s = buildScenario([
      { dir: 0, bytes: rep },
      { dir: 1, bytes: rep },
    ]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).toContain('mpa.responder-responder');
  });

  it('mpa.startup-after-mpa (a second Request in the same direction)', async () => {
    const req = startupFrame({ kind: 'request' });
    const s = buildScenario([
      { dir: 0, bytes: req },
      { dir: 0, bytes: req },
      { dir: 1, bytes: startupFrame({ kind: 'reply' }) },
    ]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).toContain('mpa.startup-after-mpa');
  });

  it('mpa.pd-short when the stream closes inside the Private Data', async () => {
    const req = startupFrame({ kind: 'request', pd: new Uint8Array(10), pdLength: 100 });
    const s = buildScenario([{ dir: 0, bytes: req }]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).toContain('mpa.pd-short');
  });

  it('mpa.initiator-before-reply', async () => {
    const req = startupFrame({ kind: 'request', c: true });
    const fp = encodeFpdus(sends(2), { markers: false, crc: true }).bytes;
    const s = buildScenario([
      { dir: 0, bytes: req },
      { dir: 0, bytes: fp },
      { dir: 1, bytes: startupFrame({ kind: 'reply', c: true }) },
    ]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).toContain('mpa.initiator-before-reply');
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(2);
  });

  it('mpa.fpdu-truncated-by-gap and mpa.resync after capture loss (markers)', async () => {
    const { c, r } = await run({
      request: { m: true, c: true },
      reply: { m: true, c: true },
      i2r: sends(40, 300),
      scenario: { drop: (i, d) => d === 0 && i === 3 },
    });
    const rules = rulesOf(r);
    expect(rules).toContain('mpa.fpdu-truncated-by-gap');
    expect(rules).toContain('mpa.resync');
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBeLessThan(c.fpduSeqs[0].length);
    expect(m.directions[0].fpdus).toBeGreaterThan(c.fpduSeqs[0].length - 10);
    expect(m.directions[0].crcErrors).toBe(0);
  });

  it('mpa.resync after capture loss without markers (CRC chain)', async () => {
    const { c, r } = await run({
      request: { c: true },
      reply: { c: true },
      i2r: sends(40, 300),
      scenario: { drop: (i, d) => d === 0 && i === 3 },
    });
    expect(rulesOf(r)).toContain('mpa.resync');
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].crcErrors).toBe(0);
    expect(m.directions[0].fpdus).toBeGreaterThan(c.fpduSeqs[0].length - 10);
  });

  it('mpa.framing-lost when nothing frames again', async () => {
    const req = startupFrame({ kind: 'request', c: true });
    const good = encodeFpdus(
      [
        ...sends(1),
        { ulpdu: sendUlpdu(2, patternBytes(40, 2)), fault: { badCrc: true } },
        { ulpdu: sendUlpdu(3, patternBytes(40, 3)), fault: { badCrc: true } },
      ],
      { markers: false, crc: true },
    ).bytes;
    const s = buildScenario([
      { dir: 0, bytes: req },
      { dir: 1, bytes: startupFrame({ kind: 'reply', c: true }) },
      { dir: 0, bytes: good },
      { dir: 0, bytes: patternBytes(3000, 99).map((b) => b | 0x80) },
    ]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).toContain('mpa.framing-lost');
  });

  it('mpa.tcp-closed-mid-fpdu (error code 1) when FIN cuts an FPDU', async () => {
    const fp = encodeFpdus(sends(2), { markers: false, crc: true }).bytes;
    const s = buildScenario([
      { dir: 0, bytes: startupFrame({ kind: 'request', c: true }) },
      { dir: 1, bytes: startupFrame({ kind: 'reply' }) },
      { dir: 0, bytes: fp.subarray(0, fp.length - 10) },
    ]);
    const r = await analyzeBytes(s.pcap);
    const f = r.report.findings.find((x) => x.rule === 'mpa.tcp-closed-mid-fpdu');
    expect(f?.rfcErrorCode).toBe(1);
    expect(f?.severity).toBe('error');
  });

  it('mpa.mid-stream: lock-on without startup frames (markers and CRC inferred)', async () => {
    const { c, r } = await run({
      request: { m: true, c: true },
      reply: { m: true, c: true },
      i2r: sends(30, 400),
      r2i: sends(30, 300),
      scenario: { noHandshake: true, skipBytes: [20 + 700, 20 + 500] },
    });
    expect(rulesOf(r)).toContain('mpa.mid-stream');
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.detection).toBe('heuristic');
    expect(m.crc).toBe(true);
    expect(m.directions[0].markers).toBe(true);
    expect(((m.directions[0].seqStart - c.seqStart[0]) >>> 0) % 512).toBe(0);
    expect(m.directions[0].fpdus).toBeGreaterThan(25);
    expect(m.directions[0].crcErrors + m.directions[1].crcErrors).toBe(0);
  });

  it('mid-stream lock-on without markers, CRC on', async () => {
    const { r } = await run({
      request: { c: true },
      reply: { c: true },
      i2r: sends(30, 100),
      scenario: { noHandshake: true, skipBytes: [20 + 50, 20] },
    });
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.detection).toBe('heuristic');
    expect(m.directions[0].markers).toBe(false);
    expect(m.directions[0].fpdus).toBeGreaterThan(26);
  });

  it('every MPA rule in the catalog is exercised by this file', () => {
    const tested = new Set([
      ...cases.map((c) => c[0]),
      'mpa.responder-responder',
      'mpa.startup-after-mpa',
      'mpa.pd-short',
      'mpa.initiator-before-reply',
      'mpa.fpdu-truncated-by-gap',
      'mpa.resync',
      'mpa.framing-lost',
      'mpa.tcp-closed-mid-fpdu',
      'mpa.mid-stream',
      // Sender mistakes: fire and stay silent in test/diagnose/sender-mistakes.test.ts.
      'mpa.pad-miscomputed',
      'mpa.pad-omitted',
      'mpa.ulpdu-length-counts-header',
      'mpa.ulpdu-length-counts-crc',
      'mpa.ulpdu-length-byte-order',
      'mpa.markers-unrequested',
      'mpa.markers-missing',
      'mpa.marker-phase',
      'mpa.lock-on-budget', // test/mpa/lock-on-budget.test.ts
      // Pre-standard MPA and RDMA Consortium peers: fire and stay silent in test/mpa/prestandard.test.ts
      // and test/mpa/rdmac.test.ts.
      'mpa.enabled-without-startup',
      'mpa.enablement-error',
      'mpa.marker-byte-order',
      'mpa.rdmac-interop',
      'mpa.rdmac-must-close',
    ]);
    expect(MPA_RULES.map((r) => r.id).filter((id) => !tested.has(id))).toEqual([]);
  });
});
