/**
 * The FPDU boundary search runs in time linear in the stream with a work budget per direction, and
 * says when it gives up (issue 8: `--mpa flow=all` on 200 KB of garbage took 36 s, 20 MB did not end).
 */
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../dissectors/mpa/crc32c.js';
import { CrcPrefix } from '../../dissectors/mpa/crc32c-span.js';
import { findLock, LockSearch, type LockQuery } from '../../dissectors/mpa/lock-on.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { encodeFpdus, patternBytes, rng, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { concat } from '../../src/generate/frames.js';
import type { ForcedMpaSpec } from '../../src/analysis/pipeline.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';

function garbage(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

const forcedAll: ForcedMpaSpec = {
  selector: { kind: 'all' },
  markers: [false, false],
  crc: true,
  seqStart: [null, null],
};

function query(bytes: Uint8Array, base: number, search?: LockSearch, final = false): LockQuery {
  return {
    bytes,
    base,
    baseSeq: 0,
    final,
    markers: false,
    markerBase: null,
    crc: true,
    alignBase: null,
    preferStart: false,
    plausible: () => true,
    ...(search ? { search } : {}),
  };
}

describe('CRC-32C of a span from prefix CRCs', () => {
  it('equals the CRC computed directly, for spans anywhere and of any length', () => {
    const b = garbage(140_000, 3);
    const p = new CrcPrefix();
    p.cover(b, 17, 139_000);
    const r = rng(5);
    for (let k = 0; k < 300; k++) {
      const i = 17 + Math.floor(r() * 70_000);
      const j = i + Math.floor(r() * Math.min(65_000, 139_000 - i));
      expect(p.span(i, j)).toBe(crc32c(b, i, j));
    }
    expect(p.span(100, 100)).toBe(crc32c(b, 100, 100));
  });
});

describe('boundary search', () => {
  it('finds the same FPDU boundary whether bytes arrive at once or a little at a time', () => {
    const fp = encodeFpdus(
      Array.from({ length: 12 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(900 + 37 * i, i)) })),
      { markers: false, crc: true },
    );
    const junk = garbage(5000, 9);
    const all = concat(junk, fp.bytes);
    const once = findLock(query(all, 1000));
    expect(once?.offset).toBe(1000 + junk.length);
    const s = new LockSearch();
    let found: number | null = null;
    for (let end = 2048; end <= all.length && found === null; end += 2048)
      found = findLock(query(all.subarray(0, end), 1000, s))?.offset ?? null;
    expect(found).toBe(1000 + junk.length);
    expect(s.exhaustions).toBe(0);
  });

  it('stops when its budget is spent, and resumes as octets arrive', () => {
    const b = garbage(300_000, 11);
    const s = new LockSearch({ initial: 10_000, perOctet: 1 });
    expect(findLock(query(b.subarray(0, 100_000), 0, s))).toBeNull();
    expect(s.exhaustions).toBe(1);
    const spent = s.spentUnits;
    expect(spent).toBeLessThanOrEqual(10_000 + 100_000 + 70_000); // one unit of work past the grant at most, plus the prefix pass
    findLock(query(b.subarray(0, 300_000), 0, s));
    expect(s.spentUnits).toBeGreaterThan(spent);
  });

  it('work grows linearly with garbage offered a little at a time', () => {
    const work = (n: number): number => {
      const b = garbage(n, 13);
      const s = new LockSearch({ initial: Infinity, perOctet: 0 });
      for (let end = 2048; end <= n; end += 2048)
        findLock(query(b.subarray(Math.max(0, end - 256 * 1024), end), Math.max(0, end - 256 * 1024), s));
      return s.spentUnits;
    };
    const a = work(200_000);
    const b = work(800_000);
    expect(b / a).toBeLessThan(4 * 1.5);
  });
});

describe('mpa.lock-on-budget', () => {
  it('fires once when a forced flow of garbage exhausts the search, which still ends in seconds', {
    timeout: 60_000,
  }, async () => {
    const s = buildScenario([{ dir: 0, bytes: garbage(3_000_000, 21) }]);
    const t0 = performance.now();
    const r = await analyzeBytes(s.pcap, { forced: [forcedAll] });
    expect(performance.now() - t0).toBeLessThan(45_000);
    const f = r.report.findings.filter((x) => x.rule === 'mpa.lock-on-budget');
    expect(f.length).toBe(1);
    expect(f[0]!.severity).toBe('warning');
    expect(f[0]!.message).toMatch(/gave up at seq \d+/);
  });

  it('stays silent when framing is found again after capture loss', async () => {
    const c = buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: Array.from({ length: 60 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(700 + i, i)) })),
      scenario: { drop: (i, d) => d === 0 && (i === 3 || i === 20) },
    });
    const r = await analyzeBytes(c.pcap);
    const rules = rulesOf(r);
    expect(rules).toContain('mpa.resync');
    expect(rules).not.toContain('mpa.lock-on-budget');
  });

  it('stays silent on garbage that is not MPA (the search stops quietly there)', async () => {
    const s = buildScenario([{ dir: 0, bytes: garbage(3_000_000, 22) }]);
    const r = await analyzeBytes(s.pcap);
    expect(rulesOf(r)).not.toContain('mpa.lock-on-budget');
    expect(r.report.flows[0]!.mpa).toBeNull();
  });
});
