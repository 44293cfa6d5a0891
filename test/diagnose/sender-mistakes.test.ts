import { describe, expect, it } from 'vitest';
import { buildMpaConnection, type MistakeOption } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import { analyzeBytes } from '../helpers/analyze.js';
import { defaultUpper } from '../../src/analysis/upper.js';

/** Sends whose ULPDUs (18 + payload) cover every (len+2) mod 4. */
function sends(payloads: readonly number[]): FpduSpec[] {
  return payloads.map((n, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(n, 7 + i)) }));
}

const rfcPad = (len: number) => (4 - ((2 + len) % 4)) % 4;

async function run(o: {
  payloads: number[];
  mistake: MistakeOption;
  crc?: boolean;
  /** Markers the peer asked for in this direction (the Reply's M for Initiator FPDUs). */
  negotiatedMarkers?: boolean;
  /** Markers the sender actually puts in (default: as negotiated). */
  sentMarkers?: boolean;
}) {
  const fpdus = sends(o.payloads);
  const c = buildMpaConnection({
    request: { m: false, c: !!o.crc },
    reply: { m: !!o.negotiatedMarkers, c: !!o.crc },
    i2r: fpdus,
    r2i: sends([8]),
    senderMistake: [o.mistake, undefined],
    ...(o.sentMarkers !== undefined ? { encodeMarkers: [o.sentMarkers, false] as [boolean, boolean] } : {}),
  });
  const records: FpduRecord[] = [];
  const r = await analyzeBytes(c.pcap, { upper: defaultUpper, onFpdu: (f) => records.push(f) });
  const m = r.report.flows[0]!.mpa as unknown as {
    directions: Array<{ fpdus: number; senderMistake: string | null; senderMistakeFpdus: number }>;
  };
  const lens = fpdus.map((f) => f.ulpdu.length);
  return { c, r, m, records, lens, errors: r.report.findings.filter((f) => f.severity !== 'info') };
}

const PAYLOADS = [16, 17, 18, 19, 16, 17, 22, 23, 100, 101];

describe('sender mistakes that break the ULPDU_Length chain are diagnosed, and framing goes on', () => {
  it.each([
    ['mpa.pad-miscomputed', { pad: 'len-plus-2' } as MistakeOption, (len: number) => (2 + len) % 4 !== rfcPad(len)],
    ['mpa.pad-omitted', { pad: 'none' } as MistakeOption, (len: number) => rfcPad(len) !== 0],
  ])(
    '%s (CRC off): named once at the first affected FPDU, every FPDU counted, affected ones marked',
    async (rule, mistake, affected) => {
      const { c, m, records, lens, errors } = await run({ payloads: PAYLOADS, mistake });
      const firstAffected = lens.findIndex(affected);
      const mine = errors.filter((f) => f.rule === rule);
      expect(mine.map((f) => f.seq)).toEqual([c.fpduSeqs[0][firstAffected]]);
      expect(mine[0]!.message).toMatch(/RFC 5044 section 4\.2/);
      // The break itself: one framing-lost error where the RFC reading went wrong, nothing else.
      expect(errors.map((f) => f.rule).sort()).toEqual(['mpa.framing-lost', rule].sort());
      expect(m.directions[0]!.fpdus).toBe(PAYLOADS.length);
      expect(m.directions[0]!.senderMistake).toBe(rule);
      expect(m.directions[0]!.senderMistakeFpdus).toBe(lens.filter(affected).length);
      const i2r = records.filter((f) => f.dir === 0);
      expect(i2r.map((f) => f.seq)).toEqual(c.fpduSeqs[0]);
      expect(i2r.filter((f) => f.senderMistake === rule).map((f) => f.seq)).toEqual(
        c.fpduSeqs[0].filter((_, i) => affected(lens[i]!)),
      );
      // The rest of the connection is decoded: every Send reached DDP/RDMAP with its MSN.
      expect(i2r.at(-1)!.upper).toMatchObject({ pdu: { msn: PAYLOADS.length } });
    },
  );

  it('PAD (len+2) mod 4 with CRC: the CRC proves the reading, framing goes on', async () => {
    const { m, errors } = await run({ payloads: PAYLOADS, mistake: { pad: 'len-plus-2' }, crc: true });
    expect(errors.some((f) => f.rule === 'mpa.pad-miscomputed')).toBe(true);
    expect(m.directions[0]!.fpdus).toBe(PAYLOADS.length);
    expect(m.directions[0]!.senderMistake).toBe('mpa.pad-miscomputed');
  });

  it.each([
    ['mpa.ulpdu-length-counts-header', { lengthCounts: 'length-field' } as MistakeOption],
    ['mpa.ulpdu-length-counts-crc', { lengthCounts: 'crc' } as MistakeOption],
    ['mpa.ulpdu-length-byte-order', { lengthLittleEndian: true } as MistakeOption],
  ])('%s: diagnosed, every FPDU framed and marked', async (rule, mistake) => {
    const { c, m, records, errors } = await run({ payloads: PAYLOADS, mistake });
    expect(errors.filter((f) => f.rule === rule).map((f) => f.seq)).toEqual([c.fpduSeqs[0][0]]);
    expect(m.directions[0]!.fpdus).toBe(PAYLOADS.length);
    expect(m.directions[0]!.senderMistake).toBe(rule);
    expect(m.directions[0]!.senderMistakeFpdus).toBe(PAYLOADS.length);
    const i2r = records.filter((f) => f.dir === 0);
    expect(i2r.at(-1)!.seq).toBe(c.fpduSeqs[0].at(-1));
    expect(i2r.at(-1)!.ulpduLength).toBe(18 + PAYLOADS.at(-1)!);
  });

  const BIG = [300, 301, 302, 303, 300, 301, 302, 303, 300, 301];
  it.each([
    ['mpa.markers-unrequested', { negotiatedMarkers: false, sentMarkers: true, mistake: {} }],
    ['mpa.markers-missing', { negotiatedMarkers: true, sentMarkers: false, mistake: {} }],
    ['mpa.marker-phase', { negotiatedMarkers: true, mistake: { markerOrigin: 'stream-start' } as MistakeOption }],
    ['mpa.marker-phase', { negotiatedMarkers: true, mistake: { markerOrigin: 'startup-start' } as MistakeOption }],
  ])('%s: diagnosed, every FPDU framed', async (rule, o) => {
    const { m, errors } = await run({ payloads: BIG, ...o });
    expect(errors.filter((f) => f.rule === rule)).toHaveLength(1);
    expect(
      errors.filter(
        (f) =>
          f.rule.startsWith('mpa.') &&
          f.rule !== rule &&
          f.rule !== 'mpa.framing-lost' &&
          !f.rule.startsWith('mpa.marker') &&
          !f.rule.startsWith('mpa.fpduptr'),
      ),
    ).toEqual([]);
    expect(m.directions[0]!.fpdus).toBe(BIG.length);
    expect(m.directions[0]!.senderMistake).toBe(rule);
  });

  it('a conforming stream of the same FPDUs gives no diagnosis', async () => {
    const c = buildMpaConnection({
      request: { m: false, c: false },
      reply: { m: false, c: false },
      i2r: sends(PAYLOADS),
      r2i: sends([8]),
    });
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(r.report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });

  it.each([
    ['mpa.pad-miscomputed', { pad: 'len-plus-2' } as MistakeOption],
    ['mpa.pad-omitted', { pad: 'none' } as MistakeOption],
    ['mpa.ulpdu-length-counts-crc', { lengthCounts: 'crc' } as MistakeOption],
  ])('%s with CRC: the same findings whatever the segmentation (issue 21)', async (rule, mistake) => {
    // A bad CRC under RFC framing waits for the FPDU after it: judged before it arrived, the first
    // FPDU was reported as a CRC mismatch with a non-zero PAD beside the diagnosis.
    const fpdus = sends(PAYLOADS);
    const found = async (cut: Parameters<typeof buildMpaConnection>[0]['cutI2r']) => {
      const c = buildMpaConnection({
        request: { m: false, c: true },
        reply: { m: false, c: true },
        i2r: fpdus,
        r2i: sends([8]),
        senderMistake: [mistake, undefined],
        ...(cut ? { cutI2r: cut } : {}),
      });
      const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
      return r.report.findings.map((f) => `${f.rule} ${f.seq}`).sort();
    };
    const whole = await found([1 << 20]);
    const rules = whole.map((x) => x.split(' ')[0]).filter((x) => x !== 'mpa.tcp-closed-between');
    expect(rules.sort()).toEqual(['mpa.framing-lost', rule].sort());
    for (const cut of [undefined, [1, 2, 3, 5, 7, 11, 13, 17, 19, 23], { random: 1, seed: 5, max: 40 }] as const)
      expect(await found(cut as Parameters<typeof buildMpaConnection>[0]['cutI2r'])).toEqual(whole);
  });

  it('one FPDU with a garbage header amid good ones is not a sender mistake: framing stays', async () => {
    const fpdus = sends(PAYLOADS);
    fpdus[3]!.ulpdu[1] = 0x4c; // unassigned opcode 0xC
    const c = buildMpaConnection({
      request: { m: false, c: false },
      reply: { m: false, c: false },
      i2r: fpdus,
      r2i: sends([8]),
    });
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(
      r.report.findings.map((f) => f.rule).filter((x) => x.startsWith('mpa.') && x !== 'mpa.tcp-closed-between'),
    ).toEqual([]);
    expect((r.report.flows[0]!.mpa as unknown as { directions: Array<{ fpdus: number }> }).directions[0]!.fpdus).toBe(
      PAYLOADS.length,
    );
  });
});
