import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import {
  patternBytes,
  rng,
  sendUlpdu,
  writeUlpdu,
  type FpduFault,
  type FpduSpec,
} from '../../src/generate/mpa-encoder.js';
import { analyzeBytes } from '../helpers/analyze.js';

/** Random ULPDU sizes: mostly small, some up to the 64768 maximum (RFC 5044 §5.2). */
function randomFpdus(r: () => number, n: number): FpduSpec[] {
  return Array.from({ length: n }, (_, i) => {
    const big = r() < 0.1;
    const size = big ? 1000 + Math.floor(r() * (64768 - 18 - 1000)) : Math.floor(r() * 1500);
    const payload = patternBytes(size, Math.floor(r() * 1e9));
    return { ulpdu: r() < 0.5 ? sendUlpdu(i + 1, payload) : writeUlpdu(0x100 + i, i * 4096, payload) };
  });
}

function build(
  seed: number,
  fault?: (fpdus: FpduSpec[], markers: boolean, crc: boolean) => { index: number; rule: string } | null,
) {
  const r = rng(seed);
  const mI = r() < 0.5;
  const mR = r() < 0.5;
  const crc = r() < 0.7;
  const i2r = randomFpdus(r, 3 + Math.floor(r() * 8));
  const r2i = randomFpdus(r, 1 + Math.floor(r() * 4));
  const injected = fault ? fault(i2r, mI, crc) : null;
  const c = buildMpaConnection({
    request: { m: mR, c: crc },
    reply: { m: mI, c: crc },
    i2r,
    r2i,
    cutI2r: { random: 1, seed: seed * 7 + 1, max: 1 + Math.floor(r() * 3000) },
    cutR2i: { random: 1, seed: seed * 7 + 2, max: 1 + Math.floor(r() * 3000) },
    scenario: {
      mss: 65000,
      isn: [Math.floor(r() * 2 ** 32), Math.floor(r() * 2 ** 32)],
      // Reorder within a direction only: across directions it changes what capture order says.
      swapWithNext: (_i, a, b) => a === b && r() < 0.15,
      duplicate: () => r() < 0.05,
    },
  });
  return { c, mI, mR, crc, injected };
}

const SEEDS = Array.from({ length: 30 }, (_, i) => i + 1);

describe('property: random FPDU streams', () => {
  it.each(SEEDS)('seed %i: exact FPDU counts, ULPDU bytes and no findings', async (seed) => {
    const { c } = build(seed);
    const r = await analyzeBytes(c.pcap);
    const bad = r.report.findings.filter((f) => f.severity !== 'info');
    expect(bad).toEqual([]);
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(c.fpduSeqs[0].length);
    expect(m.directions[1].fpdus).toBe(c.fpduSeqs[1].length);
    expect(
      m.directions[0].crcErrors +
        m.directions[1].crcErrors +
        m.directions[0].markerErrors +
        m.directions[1].markerErrors,
    ).toBe(0);
  });

  it.each(SEEDS)('seed %i: one injected fault gives exactly that fault', async (seed) => {
    const { c, injected } = build(seed, (fpdus, markers, crc) => {
      const r = rng(seed * 31);
      const idx = Math.floor(r() * fpdus.length);
      const f = fpdus[idx]!;
      const len = f.ulpdu.length;
      const options: Array<[FpduFault, string]> = [];
      if (crc) options.push([{ badCrc: true }, 'mpa.crc-mismatch'], [{ crcByteSwap: true }, 'mpa.crc-byte-order']);
      if ((2 + len) % 4 !== 0) options.push([{ padByte: 0x55 }, 'mpa.pad-not-zero']);
      // An inner marker exists when the FPDU spans a 512 boundary; use a big FPDU to be sure.
      if (markers && len > 1100)
        options.push(
          [{ fpduptrDelta: 8 }, 'mpa.fpduptr-mismatch'],
          [{ markerReserved: 0x1234 }, 'mpa.marker-reserved'],
        );
      if (options.length === 0) return null;
      const [fault, rule] = options[Math.floor(r() * options.length)]!;
      f.fault = fault;
      return { index: idx, rule };
    });
    const r = await analyzeBytes(c.pcap);
    const bad = r.report.findings.filter((f) => f.severity !== 'info');
    if (!injected) {
      expect(bad).toEqual([]);
      return;
    }
    expect(bad.map((f) => [f.rule, f.seq])).toEqual([[injected.rule, c.fpduSeqs[0][injected.index]]]);
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(c.fpduSeqs[0].length);
  });
});
