/**
 * The NVMe/RDMA scenarios (src/generate/nvme-rdma-scenarios.ts): analysing each capture gives
 * exactly the findings the scenario's author expected (the clean queues none), under the default
 * settings and under random segmentation, markers, CRC, IP version and seq wrap; the upper layer is
 * chosen from the CM private data.
 */
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate/generate.js';
import { KnobError } from '../../src/generate/knobs.js';
import { rng } from '../../src/generate/mpa-encoder.js';
import { allScenarios } from '../../src/generate/registry.js';
import { analyzedTruth, analyzedWithSeqs } from '../generate/helpers.js';

const names = allScenarios()
  .map((s) => s.name)
  .filter((n) => n.startsWith('nvme-'));

function settings(seed: number): Record<string, string> {
  const r = rng(seed * 31 + 5);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return {
    segmentation: pick(['one-per-segment', 'packed', 'mss', 'random']),
    mss: String(pick([536, 1460, 9000])),
    markers: pick(['none', 'i2r', 'r2i', 'both']),
    crc: r() < 0.85 ? 'on' : 'off',
    ip: pick(['4', '6']),
    'seq-wrap': r() < 0.2 ? 'yes' : 'no',
  };
}

describe('NVMe/RDMA scenarios', () => {
  it('has a clean admin and I/O queue and one scenario per rule', () => {
    expect(names).toContain('nvme-admin-clean');
    expect(names).toContain('nvme-io-clean');
    expect(names.length).toBeGreaterThan(20);
  });

  it.each(names)('%s: exactly the expected findings (default settings)', async (name) => {
    const g = generate(name, {}, 1, 'pcap');
    const got = await analyzedTruth(g.capture);
    expect(got.findings).toEqual(g.truth.findings);
    if (name.endsWith('-clean')) expect(got.findings).toEqual([]);
    else expect(got.findings.length).toBeGreaterThan(0);
  });

  it('two queues of one host in one capture: findings, flows and every FPDU seq as the generator says', async () => {
    const host = ['nvme-host-clean', 'nvme-nlb-length-mismatch', 'nvme-connect-cntlid-mismatch'];
    for (const [i, name] of host.entries()) {
      for (const seed of [11 + i, 316]) {
        const o: Record<string, string> =
          seed === 316 ? { segmentation: 'random', mss: '536', markers: 'i2r', 'seq-wrap': 'yes', close: 'fin' } : {};
        const g = generate(name, o, seed, 'pcap');
        const got = await analyzedWithSeqs(g.capture);
        const sorted = (x: Record<string, number[]>) =>
          Object.fromEntries(
            Object.entries(x)
              .filter(([, v]) => v.length > 0)
              .sort(),
          );
        expect(
          { findings: got.findings, flows: got.flows, fpduSeqs: sorted(got.fpduSeqs) },
          `${name} seed ${seed}`,
        ).toEqual({
          findings: g.truth.findings,
          flows: g.truth.flows,
          fpduSeqs: sorted(g.truth.fpduSeqs ?? {}),
        });
        expect(got.flows.length).toBe(2);
      }
    }
  });

  it('every scenario under two random settings, exactly as the generator says', { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    let seed = 3;
    for (const name of names) {
      for (let k = 0; k < 2; k++, seed++) {
        let g;
        try {
          g = generate(name, settings(seed), seed, seed % 2 ? 'pcap' : 'pcapng');
        } catch (e) {
          if (e instanceof KnobError) continue;
          throw e;
        }
        const got = await analyzedTruth(g.capture);
        if (JSON.stringify(got.findings) !== JSON.stringify(g.truth.findings))
          failures.push(`${name} seed ${seed}: ${JSON.stringify(got.findings)} != ${JSON.stringify(g.truth.findings)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
