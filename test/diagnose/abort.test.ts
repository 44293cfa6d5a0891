import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import type { ScenarioOptions } from '../../src/generate/scenario.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { analyze } from '../../src/analysis/pipeline.js';
import { buildReport } from '../../src/report/json-report.js';
import { analyzeBytes, sharedCaptures } from '../helpers/analyze.js';

/**
 * A Read Request from the Initiator, optionally answered by the Responder; or (requester 1) from the
 * Responder after the Initiator's first Send, never answered, as in softuiwarp_uiwarp.pcap.
 */
function readConversation(answered: boolean, closing: ScenarioOptions['closing'], requester: 0 | 1 = 0) {
  const rr = new Uint8Array(28);
  const v = new DataView(rr.buffer);
  v.setUint32(0, 0x2000);
  v.setBigUint64(4, 0x10000n);
  v.setUint32(12, 64);
  v.setUint32(16, 0x3000);
  v.setBigUint64(20, 0x40000n);
  const resp = writeUlpdu(0x2000, 0x10000, patternBytes(64, 3));
  resp[1] = (resp[1]! & 0xf0) | 0x2; // Read Response
  const r2i: FpduSpec[] = [{ ulpdu: sendUlpdu(1, patternBytes(16, 1)) }, ...(answered ? [{ ulpdu: resp }] : [])];
  const request = { ulpdu: sendUlpdu(1, rr, { opcode: 0x1, qn: 1 }) };
  if (requester === 1) {
    return buildMpaConnection({
      request: { m: false, c: false },
      reply: { m: false, c: false },
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(16, 1)) }],
      r2i: [request],
      scenario: { closing },
    });
  }
  return buildMpaConnection({
    request: { m: false, c: true },
    reply: { m: false, c: true },
    i2r: [request],
    r2i,
    scenario: { closing },
  });
}

const FIN_RST_RST = [
  { dir: 1, flag: 'fin' },
  { dir: 1, flag: 'rst' },
  { dir: 1, flag: 'rst' },
] as const;

describe('a RST aborts both directions (RFC 9293 section 3.5.3)', () => {
  it('a Read Request with no Response before the RST is unanswered; FIN then RSTs from one side are one close, the abort is reported once', async () => {
    const c = readConversation(false, FIN_RST_RST, 1);
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    const rstFrame = c.frames.length - 1; // frames are numbered from 1: the second-to-last is the first RST
    const un = r.report.findings.filter((f) => f.rule === 'rdmap.read-unanswered');
    expect(un).toHaveLength(1);
    expect(un[0]!.frames).toContain(rstFrame);
    expect(un[0]!.message).toMatch(new RegExp(`reset \\(RST in frame ${rstFrame}\\)`));
    const closes = r.report.findings.filter((f) => f.rule.startsWith('mpa.tcp-closed'));
    expect(closes.map((f) => f.message.slice(0, 3)).sort()).toEqual(['FIN', 'RST']);
    const abort = closes.find((f) => f.message.startsWith('RST'))!;
    expect(abort.frames).toEqual([rstFrame]);
    expect(abort.rfcErrorCode).toBe(1);
    expect(abort.seq).not.toBeNull();
  });

  it('stays silent about Reads when the Response came before the RST', async () => {
    const c = readConversation(true, FIN_RST_RST);
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(r.report.findings.filter((f) => f.rule === 'rdmap.read-unanswered')).toEqual([]);
    expect(r.report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it('a RST from the requester while its Read is outstanding: one abort, the Read unanswered', async () => {
    const c = readConversation(false, [
      { dir: 0, flag: 'rst' },
      { dir: 1, flag: 'rst' },
    ]);
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(r.report.findings.filter((f) => f.rule.startsWith('mpa.tcp-closed'))).toHaveLength(1);
    expect(r.report.findings.filter((f) => f.rule === 'rdmap.read-unanswered')).toHaveLength(1);
  });

  it('a capture that just ends (no FIN, no RST) does not call a Read unanswered', async () => {
    const c = readConversation(false, []);
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(
      r.report.findings.filter((f) => f.rule === 'rdmap.read-unanswered' || f.rule.startsWith('mpa.tcp-closed')),
    ).toEqual([]);
  });
});

describe('findings about a PDU carry its seq', () => {
  it("mpa.responder-first names the Responder's first FPDU", async () => {
    const c = buildMpaConnection({
      request: { m: false, c: true },
      reply: { m: false, c: true },
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(8, 1)) }],
      r2i: [{ ulpdu: sendUlpdu(1, patternBytes(8, 2)) }],
      responderFirst: true,
    });
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    const f = r.report.findings.filter((x) => x.rule === 'mpa.responder-first');
    expect(f.map((x) => x.seq)).toEqual([c.fpduSeqs[1][0]]);
  });
});

const real = sharedCaptures('real');
describe.skipIf(!real)(
  `softuiwarp_uiwarp.pcap (shared real capture): Read cut by RST${real ? '' : ' (skipped: ../shared/captures/real is absent)'}`,
  () => {
    it('frame 10 Read Request unanswered before RST 14; FIN 11 and the RST abort reported once each', async () => {
      const r = await analyze(join(real!, 'softuiwarp_uiwarp.pcap'), { upper: defaultUpper });
      const doc = buildReport(r);
      const un = doc.findings.filter((f) => f.rule === 'rdmap.read-unanswered');
      expect(un.map((f) => f.frames)).toEqual([[10, 14]]);
      const closes = doc.findings.filter((f) => f.rule.startsWith('mpa.tcp-closed'));
      expect(closes.map((f) => f.frames)).toEqual([[11], [14]]);
      expect(doc.findings.filter((f) => f.severity === 'error')).toEqual([]);
    });
  },
);
