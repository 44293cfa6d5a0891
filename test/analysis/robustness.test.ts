/**
 * Bad input is normal input: corrupted captures, hostile lengths and garbage fields must give
 * findings or one clear read error, never an exception or a hang, and what precedes is analyzed.
 */
import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, rng, sendUlpdu, startupFrame, writeUlpdu } from '../../src/generate/mpa-encoder.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { analyzeBytes } from '../helpers/analyze.js';

function base(seed: number): Uint8Array {
  const r = rng(seed);
  const f = Array.from({ length: 12 }, (_, i) => ({
    ulpdu:
      i % 2
        ? writeUlpdu(i, i * 10, patternBytes(Math.floor(r() * 2000), i))
        : sendUlpdu(i + 1, patternBytes(Math.floor(r() * 1500), i)),
  }));
  return buildMpaConnection({
    request: { m: r() < 0.5, c: true, rev: 1 },
    reply: { m: r() < 0.5, c: true },
    i2r: f,
    r2i: f.slice(0, 4),
    cutI2r: { random: 1, seed, max: 1500 },
  }).pcap;
}

describe('robustness: corrupted captures', () => {
  it.each(Array.from({ length: 40 }, (_, i) => i + 1))(
    'seed %i: random octets flipped anywhere in the file',
    async (seed) => {
      const r = rng(seed * 101);
      const pcap = base(seed).slice();
      const n = 1 + Math.floor(r() * 20);
      for (let k = 0; k < n; k++) pcap[24 + Math.floor(r() * (pcap.length - 24))] = Math.floor(r() * 256);
      const res = await analyzeBytes(pcap, { upper: defaultUpper });
      expect(res.report.schema).toBe('mpa-dissect/report/v1');
    },
  );

  it.each(Array.from({ length: 20 }, (_, i) => i + 1))('seed %i: truncated at a random point', async (seed) => {
    const pcap = base(seed);
    const cut = 24 + Math.floor(rng(seed)() * (pcap.length - 24));
    const res = await analyzeBytes(pcap.subarray(0, cut), { upper: defaultUpper });
    // Cut inside a record: reading stops with one error naming offset and frame; earlier frames were analyzed.
    if (res.capture.error) {
      expect(res.capture.error.offset).toBeGreaterThanOrEqual(24);
      expect(res.capture.error.frame).toBe(res.capture.packets + 1);
      expect(res.report.findings.some((f) => f.rule === 'capture.truncated' || f.rule === 'capture.read-error')).toBe(
        true,
      );
    }
  });

  it('hostile startup frame lengths and garbage after them', async () => {
    const s = buildScenario([
      { dir: 0, bytes: startupFrame({ kind: 'request', rev: 0, pdLength: 65535, pd: patternBytes(3000, 1) }) },
      { dir: 1, bytes: startupFrame({ kind: 'reply', rev: 2, enhanced: true, pdLength: 2, pd: new Uint8Array(2) }) },
      { dir: 1, bytes: patternBytes(70000, 2) },
    ]);
    const res = await analyzeBytes(s.pcap, { upper: defaultUpper });
    expect(res.report.findings.map((f) => f.rule)).toContain('mpa.pd-short');
  });

  it('garbage TCP payloads do not turn into MPA', async () => {
    const s = buildScenario([
      { dir: 0, bytes: patternBytes(300000, 7) },
      { dir: 1, bytes: patternBytes(100000, 8) },
    ]);
    const res = await analyzeBytes(s.pcap, { upper: defaultUpper });
    expect(res.report.flows[0]!.mpa).toBeNull();
    expect(res.report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
