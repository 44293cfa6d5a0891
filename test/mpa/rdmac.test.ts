/**
 * RDMA Consortium (Rev 0) peers, RFC 5044 Appendix C (seed 001): each combination of Figures 15 to
 * 17 on generated captures, reported with its outcome, the combinations that must close flagged,
 * every FPDU framed as its sender really sends it, no false CRC or marker errors.
 */
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRdmacConnection, type RdmacSpec } from '../../src/generate/prestandard.js';
import { encodeFpdus, patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { ddpUpperFactory } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

type Json = Record<string, any>;
const upper = ddpUpperFactory();
/**
 * DDP/RDMAP version `dv` Sends (and one Write) of sizes around and above the 512-octet marker
 * interval. The first FPDU starts with the marker at SeqStart and holds the next one: its FPDUPTR
 * is 4 more under draft-00's rule (from the leading marker) than under RFC 5044's.
 */
const traffic = (n: number, dv: number, seed: number): FpduSpec[] =>
  Array.from({ length: n }, (_, i) =>
    i === 2
      ? { ulpdu: writeUlpdu(0x1234, 0, patternBytes(1100, seed + i), { dv }) }
      : {
          ulpdu: sendUlpdu(i < 2 ? i + 1 : i, patternBytes(i === 0 ? 1000 : 200 + ((i * 211) % 1000), seed + i), {
            dv,
          }),
        },
  );

async function run(spec: RdmacSpec) {
  const c = buildRdmacConnection(spec);
  const r = await analyzeBytes(c.pcap, { upper });
  const m = (r.report.flows[0] as Json).mpa as Json;
  return { c, r, m };
}

const RDMAC = { rev: 0, m: true, c: true } as const;

function expectFramed(c: { fpduSeqs: [number[], number[]] }, m: Json, markers: [boolean, boolean]): void {
  for (const dir of [0, 1] as const) {
    const d = m.directions[dir];
    expect(d.fpdus).toBe(c.fpduSeqs[dir].length);
    expect(d.crcErrors).toBe(0);
    expect(d.markerErrors).toBe(0);
    expect(d.bytesSkipped).toBe(0);
    if (c.fpduSeqs[dir].length > 0) {
      expect(d.markers).toBe(markers[dir]);
      expect(d.ddp.byOpcode.unknown ?? 0).toBe(0);
      expect(d.ddp.segments).toBe(c.fpduSeqs[dir].length);
    }
  }
}

/** Findings that would be false alarms on a combination that works. */
const FALSE_ALARMS =
  /^(mpa\.(crc|fpduptr|marker|framing|resync|pad|ulpdu|markers|v2-)|ddp\.(invalid-dv|version-mix)|rdmap\.invalid-rv)/;

describe('Appendix C: combinations that interoperate (Figure 16: V=0, M=1/1)', () => {
  it('RDMAC Initiator, RDMAC (or permissive IETF) Responder: Rev 0 both ways (C.2.4)', async () => {
    const { c, r, m } = await run({
      request: RDMAC,
      reply: RDMAC,
      markers: [true, true],
      i2r: traffic(8, 0, 1),
      r2i: traffic(6, 0, 50),
    });
    expectFramed(c, m, [true, true]);
    expect(m.rdmac).toMatchObject({ figure: 16, initiator: 'rdmac', version: 0, markers: '1/1', mustClose: false });
    expect(rulesOf(r)).toContain('mpa.rdmac-interop');
    expect(rulesOf(r)).not.toContain('mpa.rdmac-must-close');
    expect(rulesOf(r).filter((x) => FALSE_ALARMS.test(x))).toEqual([]);
  });

  for (const requestM of [false, true]) {
    it(`permissive IETF Initiator (Rev 1, M=${+requestM}) and an RDMAC Responder (Rev 0, M=1): the RDMAC side sends markers and CRC (C.2.3, C.2.5)`, async () => {
      const { c, r, m } = await run({
        request: { rev: 1, m: requestM, c: true },
        reply: RDMAC,
        markers: [true, true],
        i2r: traffic(7, 0, 3),
        r2i: traffic(9, 0, 90),
        cutR2i: { random: 1, seed: 5, max: 900 },
      });
      expectFramed(c, m, [true, true]);
      expect(m.rdmac).toMatchObject({
        figure: 16,
        initiator: 'ietf-permissive',
        responder: 'rdmac',
        version: 0,
        mustClose: false,
      });
      expect(rulesOf(r)).toContain('mpa.rdmac-interop');
      expect(rulesOf(r).filter((x) => FALSE_ALARMS.test(x))).toEqual([]);
    });
  }

  it('a permissive Initiator that keeps DDP version 1 after a Rev 0 Reply is caught by the DDP layer, framing intact', async () => {
    const { c, r, m } = await run({
      request: { rev: 1, m: false, c: true },
      reply: RDMAC,
      markers: [true, true],
      i2r: traffic(4, 1, 3),
      r2i: traffic(4, 0, 9),
    });
    expect(m.directions[0].fpdus).toBe(c.fpduSeqs[0].length);
    expect(m.directions[1].crcErrors + m.directions[0].crcErrors).toBe(0);
    expect(rulesOf(r)).toContain('ddp.invalid-dv');
  });

  it('Rev 0 frames have no R bit: flag 0x20 is reserved, not a reject; Private Data up to 65535 octets', async () => {
    const { c, r, m } = await run({
      request: { ...RDMAC, pd: patternBytes(65535, 4) },
      reply: { ...RDMAC, res: 0, r: true },
      markers: [true, true],
      i2r: traffic(3, 0, 1),
      r2i: traffic(3, 0, 2),
    });
    expect(m.rejected).toBe(false);
    expect(m.reply.r).toBe(false);
    expect(m.request.pdLength).toBe(65535);
    expect(rulesOf(r)).toContain('mpa.reserved-flags');
    expect(rulesOf(r)).not.toContain('mpa.rejected');
    expect(rulesOf(r)).not.toContain('mpa.pd-length-too-long');
    expectFramed(c, m, [true, true]);
  });
});

describe('Appendix C: combinations that must close (Figure 15)', () => {
  for (const replyM of [false, true]) {
    it(`RDMAC Initiator, non-permissive IETF Responder (Rev 1 Reply, M=${+replyM}) closes (C.2.1)`, async () => {
      const { r, m } = await run({
        request: RDMAC,
        reply: { rev: 1, m: replyM, c: true },
        markers: [true, replyM],
        closer: 1,
      });
      expect(m.rdmac).toMatchObject({
        figure: 15,
        initiator: 'rdmac',
        responder: 'ietf-non-permissive',
        version: null,
        mustClose: true,
      });
      const f = r.report.findings.filter((x) => x.rule === 'mpa.rdmac-must-close');
      expect(f).toHaveLength(1);
      expect(f[0]!.from).toBe('10.0.0.2:4420');
      expect(m.directions[0].fpdus + m.directions[1].fpdus).toBe(0);
      expect(rulesOf(r)).not.toContain('mpa.rdmac-interop');
    });
  }

  for (const requestM of [false, true]) {
    it(`non-permissive IETF Initiator (Rev 1, M=${+requestM}) closes after a Rev 0 Reply (C.2.2)`, async () => {
      const { r, m } = await run({
        request: { rev: 1, m: requestM, c: true },
        reply: RDMAC,
        markers: [true, true],
        closer: 0,
      });
      expect(m.rdmac).toMatchObject({
        figure: 15,
        initiator: 'ietf-non-permissive',
        responder: 'rdmac',
        mustClose: true,
      });
      expect(rulesOf(r)).toContain('mpa.rdmac-must-close');
      expect(rulesOf(r)).not.toContain('mpa.rdmac-interop');
      expect(rulesOf(r).filter((x) => FALSE_ALARMS.test(x))).toEqual([]);
    });
  }
});

describe('Appendix C: an outcome the capture does not show', () => {
  it('Rev 1 Request, Rev 0 Reply, then the capture ends: undecided, nothing flagged', async () => {
    const { r, m } = await run({
      request: { rev: 1, m: true, c: true },
      reply: RDMAC,
      markers: [true, true],
      scenario: { close: 'none' },
    });
    expect(m.rdmac).toMatchObject({ decided: false, figure: null, mustClose: false });
    expect(rulesOf(r).filter((x) => x.startsWith('mpa.rdmac'))).toEqual([]);
  });
});

describe('Appendix C: IETF RNICs with each other (Figure 17) stay RFC 5044', () => {
  for (const [qm, pm] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ] as const) {
    it(`Rev 1 Request M=${+qm}, Rev 1 Reply M=${+pm}: markers as negotiated (M=${+qm}/${+pm}), RFC 5044 FPDUPTR, no Appendix C outcome`, async () => {
      const { c, r, m } = await run({
        request: { rev: 1, m: qm, c: true },
        reply: { rev: 1, m: pm, c: true },
        markers: [pm, qm],
        i2r: traffic(6, 1, 7),
        r2i: traffic(5, 1, 8),
      });
      expectFramed(c, m, [pm, qm]);
      expect(m.rdmac).toBeUndefined();
      expect(rulesOf(r).filter((x) => x.startsWith('mpa.rdmac'))).toEqual([]);
      expect(rulesOf(r).filter((x) => FALSE_ALARMS.test(x))).toEqual([]);
    });
  }
});

describe.skipIf(!HAVE_TSHARK)(
  `Wireshark as oracle (one FPDU per segment, where it is reliable with markers)${HAVE_TSHARK ? '' : ' (skipped: tshark is not installed)'}`,
  () => {
    it('Rev 1 Request M=0, Rev 0 Reply: the same FPDUs, lengths and good CRCs both ways', async () => {
      const i2r = traffic(6, 0, 1);
      const r2i = traffic(7, 0, 50);
      const cut = (f: FpduSpec[]) =>
        encodeFpdus(f, { markers: true, crc: true, fpduptrFrom: 'fpdu' }).fpdus.map((x) => x.endRel - x.startRel);
      const c = buildRdmacConnection({
        request: { rev: 1, m: false, c: true },
        reply: RDMAC,
        markers: [true, true],
        i2r,
        r2i,
        cutI2r: cut(i2r),
        cutR2i: cut(r2i),
      });
      const file = join(mkdtempSync(join(tmpdir(), 'mpa-rdmac-')), 'rdmac.pcap');
      writeFileSync(file, c.pcap);
      // One tshark (it takes most of a CPU second to start): -V gives each FPDU's frame ("Frame N:"),
      // its ULPDU length and its CRC verdict.
      const verbose = execFileSync(
        'tshark',
        [
          '-r',
          file,
          '-o',
          'tcp.try_heuristic_first:TRUE',
          '--disable-heuristic',
          'rpcrdma_iwarp',
          '-V',
          '-Y',
          'iwarp_mpa.ulpdulength',
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const theirs: number[][] = [];
      let frame = 0;
      for (const line of verbose.split('\n')) {
        const fm = /^Frame (\d+):/.exec(line);
        if (fm) frame = Number(fm[1]);
        const lm = /^\s+ULPDU length: (\d+)/.exec(line);
        if (lm) theirs.push([frame, Number(lm[1])]);
      }
      const good = verbose.match(/Good CRC32/g)?.length;
      const mine: number[][] = [];
      const r = await analyzeBytes(c.pcap, {
        upper,
        onFpdu: (f) => mine.push([f.frames[f.frames.length - 1]!, f.ulpduLength]),
      });
      expect(theirs).toHaveLength(13);
      expect(mine.sort((a, b) => a[0]! - b[0]!)).toEqual(theirs);
      expect(good).toBe(13);
      expect(rulesOf(r).filter((x) => FALSE_ALARMS.test(x))).toEqual([]);
    });
  },
);
