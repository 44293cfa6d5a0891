import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { committedResults, gate, type GateResults } from '../../scripts/bench-gate.js';

const results = (
  commit: string,
  date: string,
  cases: Array<[id: string, cpu: number, rss: number, bytes?: number]>,
  over: Partial<GateResults> = {},
): GateResults => ({
  commit,
  date,
  quick: false,
  node: '20.20.2',
  cores: 2,
  cases: cases.map(([id, cpu, rss, bytes]) => ({
    id,
    name: `case ${id}`,
    file: { bytes: bytes ?? 1e9 },
    run: { seconds: cpu * 1.3, cpuSeconds: cpu, rssMB: rss },
  })),
  ...over,
});

describe('bench regression gate', () => {
  it('names each case whose CPU time or peak RSS grew by more than 10%', () => {
    const old = results('aaa', '2026-11-01T00:00:00Z', [
      ['a', 10, 100],
      ['c', 10, 100],
      ['g', 10, 100],
    ]);
    const now = results('bbb', '2026-11-26T00:00:00Z', [
      ['a', 11.5, 100],
      ['c', 10, 115],
      ['g', 10.9, 109],
    ]);
    const v = gate(now, [old]);
    expect(v.regressions).toHaveLength(2);
    expect(v.regressions[0]).toMatch(/^REGRESSION \(a\) case a: CPU 11\.50 s, was 10\.00 s \(x1\.15/);
    expect(v.regressions[1]).toMatch(/^REGRESSION \(c\) case c: peak RSS 115 MB, was 100 MB/);
  });

  it('stays silent within 10%, and when nothing of the same class and size was committed', () => {
    const old = results('aaa', '2026-11-01T00:00:00Z', [['a', 10, 100]]);
    expect(gate(results('b', '2026-11-26T00:00:00Z', [['a', 10.9, 110]]), [old]).regressions).toEqual([]);
    const bigger = results('b', '2026-11-26T00:00:00Z', [['a', 30, 300, 2e9]]);
    expect(gate(bigger, [old]).regressions).toEqual([]);
    expect(gate(bigger, [old]).notes[0]).toMatch(/no committed results/);
    for (const other of [{ cores: 8 }, { node: '22.1.0' }, { quick: true }]) {
      const o = results('aaa', '2026-11-01T00:00:00Z', [['a', 1, 10]], other);
      expect(gate(results('b', '2026-11-26T00:00:00Z', [['a', 10, 100]]), [o]).regressions).toEqual([]);
    }
  });

  it('compares with the newest committed file that measured the case', () => {
    const older = results('old', '2026-10-01T00:00:00Z', [['a', 20, 100]]);
    const newer = results('new', '2026-11-01T00:00:00Z', [['a', 5, 100]]);
    const onlyH = results('hhh', '2026-11-20T00:00:00Z', [['h', 1, 1]]);
    const v = gate(results('b', '2026-11-26T00:00:00Z', [['a', 10, 100]]), [older, onlyH, newer]);
    expect(v.regressions).toHaveLength(1);
    expect(v.regressions[0]).toMatch(/against new \(2026-11-01\)/);
  });

  it('reads the committed results files of this repository', () => {
    const committed = committedResults(join(import.meta.dirname, '..', '..'));
    expect(committed.length).toBeGreaterThan(0);
    for (const r of committed) expect(r.cases.length).toBeGreaterThan(0);
  });
});
