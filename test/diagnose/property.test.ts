import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, rng, sendUlpdu, writeUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { MPA_RULES } from '../../dissectors/mpa/rules.js';
import { analyzeBytes } from '../helpers/analyze.js';

/** Rules that only a diagnosis of broken framing or byte order raises. */
const DIAGNOSES = new Set([
  'mpa.framing-lost',
  ...MPA_RULES.filter((r) => /pad-miscomputed|pad-omitted|ulpdu-length-|markers-|marker-phase/.test(r.id)).map(
    (r) => r.id,
  ),
  'rdmap.read-request-byte-order',
  'ddp.mo-byte-order',
]);

/** Sends, Writes and Read Requests of every size class, with Read Responses back. */
function traffic(r: () => number): { i2r: FpduSpec[]; r2i: FpduSpec[] } {
  const i2r: FpduSpec[] = [];
  const r2i: FpduSpec[] = [];
  let msn = 1;
  let rmsn = 1;
  const n = 4 + Math.floor(r() * 10);
  for (let i = 0; i < n; i++) {
    const k = r();
    const size = r() < 0.1 ? 2000 + Math.floor(r() * 60000) : Math.floor(r() * 700);
    if (k < 0.5) i2r.push({ ulpdu: sendUlpdu(msn++, patternBytes(size, i)) });
    else if (k < 0.8) i2r.push({ ulpdu: writeUlpdu(0x100 + i, i * 65536, patternBytes(size, i)) });
    else {
      const rr = new Uint8Array(28);
      const v = new DataView(rr.buffer);
      const sink = 0x2000 + i;
      v.setUint32(0, sink);
      v.setBigUint64(4, BigInt(0x10000 * (i + 1)));
      v.setUint32(12, size);
      v.setUint32(16, 0x3000 + i);
      v.setBigUint64(20, BigInt(0x40000));
      i2r.push({ ulpdu: sendUlpdu(rmsn++, rr, { opcode: 0x1, qn: 1 }) });
      r2i.push({ ulpdu: writeUlpdu(sink, 0x10000 * (i + 1), patternBytes(size, i + 99)) });
      r2i.at(-1)!.ulpdu[1] = (r2i.at(-1)!.ulpdu[1]! & 0xf0) | 0x2; // Read Response
    }
  }
  return { i2r, r2i };
}

describe('property: random conforming traffic gets no diagnosis', () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))('seed %i', async (seed) => {
    const r = rng(seed * 977);
    const crc = r() < 0.5;
    const mI = r() < 0.3;
    const mR = r() < 0.3;
    const { i2r, r2i } = traffic(r);
    const c = buildMpaConnection({
      request: { m: mR, c: crc },
      reply: { m: mI, c: crc },
      i2r,
      r2i,
      cutI2r: { random: 1, seed: seed * 3 + 1, max: 1 + Math.floor(r() * 2000) },
      cutR2i: { random: 1, seed: seed * 3 + 2, max: 1 + Math.floor(r() * 2000) },
      scenario: {
        mss: 65000,
        isn: [Math.floor(r() * 2 ** 32), Math.floor(r() * 2 ** 32)],
        close: r() < 0.5 ? 'fin' : 'rst',
      },
    });
    const res = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(res.report.findings.filter((f) => DIAGNOSES.has(f.rule))).toEqual([]);
    const m = res.report.flows[0]!.mpa as unknown as {
      directions: Array<{ fpdus: number; senderMistakeFpdus: number }>;
    };
    expect(m.directions.map((d) => d.fpdus)).toEqual([c.fpduSeqs[0].length, c.fpduSeqs[1].length]);
    expect(m.directions.map((d) => d.senderMistakeFpdus)).toEqual([0, 0]);
  });
});
