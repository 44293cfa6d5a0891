/**
 * MPA enabled without startup frames (draft-ietf-rddp-mpa-00 §7.1, §8.1; draft-elzur-iwarp-mpa-tcp-
 * analysis-00 §8.1) on generated captures: at the stream's first octet and after a streaming Hello
 * exchange, markers on and off, found without --mpa and with --mpa ...,start=SEQ; FPDUPTR judged by
 * the rule the connection follows; the enablement error of seed 002 §8.
 */
import { describe, expect, it } from 'vitest';
import { buildPrestandardConnection, type PrestandardSpec } from '../../src/generate/prestandard.js';
import { patternBytes, sendUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { parseForcedMpa } from '../../cli/options.js';
import { ddpUpperFactory } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';

const sends = (n: number, size = 100, seed = 1, dv = 1): FpduSpec[] =>
  Array.from({ length: n }, (_, i) => ({
    ulpdu: sendUlpdu(i + 1, patternBytes(size + ((i * 37) % 300), seed + i), { dv }),
  }));

const upper = ddpUpperFactory();

async function run(spec: PrestandardSpec, mpa?: string) {
  const c = buildPrestandardConnection(spec);
  return { c, r: await analyzeBytes(c.pcap, mpa ? { upper, forced: [parseForcedMpa(mpa)] } : { upper }) };
}

type Json = Record<string, any>;
const mpaOf = (r: { report: { flows: unknown[] } }) => (r.report.flows[0] as Json).mpa as Json;
/** Findings other than the enablement notice and a clean close. */
const others = (rules: string[]) =>
  rules.filter((x) => x !== 'mpa.enabled-without-startup' && x !== 'mpa.tcp-closed-between');

describe('MPA enabled without startup frames, found without --mpa', () => {
  const variants: Array<[string, PrestandardSpec]> = [
    [
      'first octet, markers both ways, large FPDUs cut at random',
      {
        i2r: sends(20, 800),
        r2i: sends(15, 1000, 50),
        cutI2r: { random: 1, seed: 3, max: 1400 },
        cutR2i: { random: 1, seed: 4, max: 700 },
      },
    ],
    [
      'first octet, markers both ways, small FPDUs packed',
      { i2r: sends(40, 20), r2i: sends(30, 60, 9), cutI2r: [500, 500, 500, 500] },
    ],
    [
      'after a streaming Hello exchange, markers both ways',
      { hello: true, i2r: sends(20, 700), r2i: sends(12, 1000, 70) },
    ],
    ['first octet, markers off', { markers: [false, false], i2r: sends(12, 300), r2i: sends(9, 500, 20) }],
    [
      'after a streaming Hello exchange, markers off',
      { hello: true, markers: [false, false], i2r: sends(12, 300), r2i: sends(9, 500, 20) },
    ],
    [
      'after a streaming Hello exchange, markers one way',
      { hello: true, markers: [true, false], i2r: sends(12, 800), r2i: sends(9, 500, 20) },
    ],
    ['DDP/RDMAP version 0 (RDMA Consortium headers)', { i2r: sends(10, 600, 1, 0), r2i: sends(10, 600, 5, 0) }],
  ];
  for (const [name, spec] of variants) {
    it(name, async () => {
      const { c, r } = await run(spec);
      const m = mpaOf(r);
      expect(m.detection).toBe('prestandard');
      expect(m.request).toBeNull();
      for (const dir of [0, 1] as const) {
        const d = m.directions[dir];
        expect(d.fpdus).toBe(c.fpduSeqs[dir].length);
        expect(d.crcErrors).toBe(0);
        expect(d.markerErrors).toBe(0);
        expect(d.seqStart).toBe(c.enableSeq[dir]);
        expect(d.markers).toBe((spec.markers ?? [true, true])[dir]);
        expect(d.markerCount).toBe(c.markerCounts[dir]);
        expect(d.bytesSkipped).toBe(0);
        expect(m.enablement[dir].seq).toBe(c.enableSeq[dir]);
        expect(m.enablement[dir].zeroMarker).toBe((spec.markers ?? [true, true])[dir]);
      }
      expect(others(rulesOf(r))).toEqual([]);
      expect(rulesOf(r).filter((x) => x === 'mpa.enabled-without-startup')).toHaveLength(2);
      // Every FPDU's DDP header decoded: no "unknown" opcode.
      expect(m.directions[0].ddp.byOpcode.unknown ?? 0).toBe(0);
    });
  }

  it("FPDUPTR is judged by draft-00: counted from the FPDU's leading marker, so an RFC 5044 receiver would disagree", async () => {
    // One FPDU larger than 512 octets starting with the zero marker: its second marker is 4 octets
    // further from the FPDU start than from ULPDU_Length.
    const { c, r } = await run({ i2r: sends(3, 1000), r2i: [] });
    expect(mpaOf(r).enablement[0].fpduptrRule).toBe('draft-00');
    expect(mpaOf(r).directions[0].markerErrors).toBe(0);
    expect(others(rulesOf(r))).toEqual([]);
    expect(mpaOf(r).directions[0].fpdus).toBe(c.fpduSeqs[0].length);
  });

  it('a pre-standard sender that counts FPDUPTR as RFC 5044 does is judged by that rule', async () => {
    const { r } = await run({ fpduptrFrom: 'length', i2r: sends(4, 1000), r2i: [] });
    expect(mpaOf(r).enablement[0].fpduptrRule).toBe('rfc5044');
    expect(others(rulesOf(r))).toEqual([]);
  });

  it('still reports a wrong FPDUPTR, a host-byte-order marker and a repeated MSN', async () => {
    const i2r = sends(8, 1000);
    i2r[2] = { ...i2r[2]!, fault: { fpduptrDelta: 8 } };
    i2r[4] = { ...i2r[4]!, fault: { markerHostOrder: true } };
    i2r[6] = { ulpdu: sendUlpdu(6, patternBytes(900, 77)) }; // MSN 6 again (the 6th FPDU had it)
    const { c, r } = await run({ i2r, r2i: [] });
    const rules = rulesOf(r);
    expect(rules).toContain('mpa.fpduptr-mismatch');
    expect(rules).toContain('mpa.marker-byte-order');
    expect(rules.some((x) => x.startsWith('ddp.') && x.includes('msn'))).toBe(true);
    expect(rules).not.toContain('mpa.crc-mismatch');
    expect(rules).not.toContain('mpa.marker-reserved');
    expect(mpaOf(r).directions[0].fpdus).toBe(c.fpduSeqs[0].length);
    expect(mpaOf(r).directions[0].markerErrors).toBe(2);
  });

  it('still reports markers missing at grid points', async () => {
    // Server markers on from its zero marker, then a sender that stops inserting them: build the
    // stream by hand from a markers-on prefix and a markers-off tail.
    const { c, r } = await run({ i2r: sends(6, 300), r2i: [] });
    expect(mpaOf(r).directions[0].fpdus).toBe(c.fpduSeqs[0].length);
    const { encodeFpdus } = await import('../../src/generate/mpa-encoder.js');
    const head = encodeFpdus(sends(2, 100), { markers: true, crc: true, fpduptrFrom: 'fpdu' });
    const tail = encodeFpdus(
      sends(10, 700, 40).map((f, i) => ({ ulpdu: sendUlpdu(i + 3, f.ulpdu.subarray(18)) })),
      { markers: false, crc: true, startRel: head.bytes.length },
    );
    const s = buildScenario([
      { dir: 0, bytes: head.bytes },
      { dir: 0, bytes: tail.bytes },
    ]);
    const r2 = await analyzeBytes(s.pcap, { upper });
    expect(mpaOf(r2).detection).toBe('prestandard');
    expect(rulesOf(r2)).toContain('mpa.markers-missing');
    expect(mpaOf(r2).directions[0].fpdus).toBe(head.fpdus.length + tail.fpdus.length);
    expect(rulesOf(r2)).not.toContain('mpa.crc-mismatch');
  });
});

describe('random data and plain protocols are not taken for pre-standard MPA', () => {
  it('random octets, text, and a binary protocol starting with four zero octets', async () => {
    const zeros = new Uint8Array(4000);
    zeros.set(patternBytes(3996, 5), 4); // four zero octets first, then noise
    for (const bytes of [
      patternBytes(50_000, 1),
      new TextEncoder().encode('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(400)),
      zeros,
      new Uint8Array(20_000),
    ]) {
      const s = buildScenario([
        { dir: 0, bytes },
        { dir: 1, bytes: patternBytes(3000, 2) },
      ]);
      const r = await analyzeBytes(s.pcap, { upper });
      expect((r.report.flows[0] as Json).mpa).toBeNull();
      expect(rulesOf(r)).toEqual([]);
    }
  });
});

describe('--mpa ...,start=SEQ', () => {
  it('frames from the given start, draft-00 FPDUPTR, the other direction found by its zero marker', async () => {
    const c = buildPrestandardConnection({
      hello: true,
      i2r: sends(10, 1000),
      r2i: sends(8, 900, 30),
      scenario: { noHandshake: true },
    });
    const r = await analyzeBytes(c.pcap, {
      upper,
      forced: [parseForcedMpa(`flow=all,markers=both,crc=on,start=${c.enableSeq[0]}`)],
    });
    const m = mpaOf(r);
    expect(m.detection).toBe('forced');
    for (const dir of [0, 1] as const) {
      expect(m.directions[dir].fpdus).toBe(c.fpduSeqs[dir].length);
      expect(m.directions[dir].crcErrors).toBe(0);
      expect(m.directions[dir].markerErrors).toBe(0);
      expect(m.directions[dir].seqStart).toBe(c.enableSeq[dir]);
    }
    expect(rulesOf(r)).not.toContain('mpa.enablement-error');
  });

  it('start=C:S with markers off', async () => {
    const c = buildPrestandardConnection({
      hello: true,
      markers: [false, false],
      i2r: sends(10, 300),
      r2i: sends(8, 200, 30),
    });
    const r = await analyzeBytes(c.pcap, {
      upper,
      forced: [parseForcedMpa(`flow=all,markers=none,crc=on,start=${c.enableSeq[0]}:${c.enableSeq[1]}`)],
    });
    const m = mpaOf(r);
    for (const dir of [0, 1] as const) expect(m.directions[dir].fpdus).toBe(c.fpduSeqs[dir].length);
    expect(rulesOf(r).filter((x) => x.startsWith('mpa.') && x !== 'mpa.tcp-closed-between')).toEqual([]);
  });

  it("start=SEQ at the stream's first octet, mid-stream capture (no SYN), large FPDUs", async () => {
    const c = buildPrestandardConnection({
      i2r: sends(8, 1000),
      r2i: sends(6, 700, 3),
      scenario: { noHandshake: true },
    });
    const r = await analyzeBytes(c.pcap, {
      upper,
      forced: [parseForcedMpa(`flow=0,markers=both,crc=on,start=${c.enableSeq[1]}`)],
    });
    const m = mpaOf(r);
    for (const dir of [0, 1] as const) {
      expect(m.directions[dir].fpdus).toBe(c.fpduSeqs[dir].length);
      expect(m.directions[dir].crcErrors + m.directions[dir].markerErrors).toBe(0);
      expect(m.enablement[dir].seq).toBe(c.enableSeq[dir]);
    }
  });

  it('start= is checked: a number or CLIENT:SERVER, not with seqstart=', () => {
    expect(() => parseForcedMpa('flow=all,start=abc')).toThrow(/start "abc" must be/);
    expect(() => parseForcedMpa('flow=all,start=:')).toThrow(/start ":" must be/);
    expect(() => parseForcedMpa('flow=all,start=5,seqstart=1:2')).toThrow(/not both/);
    expect(parseForcedMpa('flow=all,start=4294967295')).toMatchObject({ prestandard: true, startAny: 4294967295 });
    expect(parseForcedMpa('flow=all,start=:77')).toMatchObject({
      prestandard: true,
      startAny: null,
      seqStart: [null, 77],
    });
  });

  it('octet-stream data where MPA was to start is an enablement error', async () => {
    const c = buildPrestandardConnection({ hello: true, i2r: sends(4, 300), r2i: [], scenario: { noHandshake: true } });
    const wrong = (c.enableSeq[0] - 5) >>> 0; // inside the Hello
    const r = await analyzeBytes(c.pcap, {
      upper,
      forced: [parseForcedMpa(`flow=all,markers=both,crc=on,start=${wrong}`)],
    });
    expect(rulesOf(r)).toContain('mpa.enablement-error');
  });
});

describe('MPA enablement error (seed 002 §8, Figures 3 to 5)', () => {
  it('fires: one side sends MPA from a zero marker, the other answers in octet-stream mode', async () => {
    const { r } = await run({
      i2r: sends(6, 400),
      notEnabled: { dir: 1, bytes: new TextEncoder().encode('220 service ready\r\n500 what?\r\n') },
    });
    const f = r.report.findings.find((x) => x.rule === 'mpa.enablement-error');
    expect(f).toBeDefined();
    expect(f!.from).toBe('10.0.0.2:4420');
    expect(f!.severity).toBe('error');
  });

  it('fires after a Hello exchange the passive side did not follow (Figure 5)', async () => {
    const { r } = await run({
      hello: true,
      i2r: sends(6, 400),
      notEnabled: { dir: 1, bytes: new TextEncoder().encode('ERR unknown command\r\n') },
    });
    expect(rulesOf(r)).toContain('mpa.enablement-error');
  });

  it('stays silent when the other side sends nothing after the Hello ACK, or speaks MPA', async () => {
    const a = await run({ hello: true, i2r: sends(6, 400), r2i: [] });
    expect(rulesOf(a.r)).not.toContain('mpa.enablement-error');
    const b = await run({ hello: true, i2r: sends(6, 400), r2i: sends(3, 100) });
    expect(rulesOf(b.r)).not.toContain('mpa.enablement-error');
  });
});
