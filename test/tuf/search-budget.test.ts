/**
 * The marker-grid search against octets that look like markers (issue 26): its work is bounded by
 * a budget linear in the octets (tuf.marker-search-budget when spent), and filler whose 16-bit
 * halves repeat, or that repeats with a short period, is never claimed as marker mode: a claim
 * needs two markers pointing at one PDU start and PDU octets that do not look like markers.
 */
import { describe, expect, it } from 'vitest';
import { findMarkerGrid, GRID_BUDGET, GridSearch } from '../../dissectors/tuf/detect.js';
import { Hold } from '../../dissectors/tuf/hold.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { markerStream, ulpPdus } from '../../src/generate/tuf.js';
import { runTuf } from './helpers.js';

const MSS = 1460;

/** Filler: `kind` over n octets, four zero octets at every segment start (each a zero-marker candidate). */
function filler(kind: 'period' | 'counter' | 'pairs' | 'small', n: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = 1;
  const pat = [0, 0, 0, 0, 0, 1, 0, 1, 0, 2, 0, 2, 0, 3, 0, 3, 0, 4, 0, 4, 0, 5, 0, 5, 0, 6, 0, 6, 0, 7, 0, 7];
  for (let i = 0; i + 4 <= n; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    const v =
      kind === 'counter'
        ? (i / 4) & 0xffff
        : kind === 'pairs'
          ? (x >>> 16) & 0xffff
          : kind === 'small'
            ? (x >>> 16) & 0x3f
            : -1;
    if (v < 0) for (let j = 0; j < 4; j++) b[i + j] = pat[(i + j) % pat.length]!;
    else b.set([v >> 8, v & 0xff, v >> 8, v & 0xff], i);
  }
  for (let i = 0; i < n; i += MSS) b.fill(0, i, Math.min(n, i + 4));
  return b;
}

describe('marker-grid search budget', () => {
  it('work stays within the budget, linear in the octets, on filler that looks like markers', () => {
    const n = 1 << 20;
    const data = filler('period', n);
    const run = (budget: { initial: number; perOctet: number }) => {
      const h = new Hold();
      const g = new GridSearch(budget);
      let starts: number[] = [];
      let searches = 0;
      // As the direction does: a segment at a time, a search every 8 KiB held, the hold dropped at 256 KiB.
      for (let off = 0, last = 0; off < n; off += MSS) {
        const seg = data.subarray(off, Math.min(n, off + MSS));
        h.append(off, seg, off / MSS);
        g.offer(seg.length);
        if (starts.length < 64) starts.push(off);
        if (h.length - last >= 8192) {
          last = h.length;
          if (g.spent < g.granted) {
            searches++;
            expect(findMarkerGrid(h, starts, null, g)).toBeNull();
          }
        }
        if (h.length > 256 * 1024) {
          h.reset(h.end);
          starts = [];
          last = 0;
          g.forget();
        }
      }
      return { g, searches };
    };
    const free = run({ initial: 1e12, perOctet: 0 });
    expect(free.g.exhausted).toBe(false);
    // What the filler costs unbounded is more than a small budget grants: the budget must stop it.
    const small = { initial: 100_000, perOctet: 1 };
    expect(free.g.spent).toBeGreaterThan(small.initial + small.perOctet * n);
    const capped = run(small);
    expect(capped.g.exhausted).toBe(true);
    // One attempt may overrun by what it charges in one go (a pass over the open intervals).
    expect(capped.g.spent).toBeLessThanOrEqual(small.initial + small.perOctet * n + 65536);
    // The default budget is linear too.
    const dflt = run(GRID_BUDGET);
    expect(dflt.g.spent).toBeLessThanOrEqual(GRID_BUDGET.initial + GRID_BUDGET.perOctet * n + 65536);
  });

  it('tuf.marker-search-budget on a TUF flow whose other direction is such filler', async () => {
    const m = markerStream(ulpPdus([3000, 2500, 4100, 2200, 5000, 2100], 5), 2048);
    const sc = buildScenario([
      { dir: 0, bytes: filler('period', 2 << 20), cut: 'mss' },
      { dir: 1, bytes: m.bytes, cut: 'mss' },
    ]);
    const r = await runTuf(sc.pcap);
    expect(r.tuf).toMatchObject({ mode: 'markers', detection: 'heuristic' });
    const budget = r.findings.filter((f) => f.rule === 'tuf.marker-search-budget');
    expect(budget).toHaveLength(1);
    expect(budget[0]!.severity).toBe('warning');
    expect(budget[0]!.message).toMatch(/^marker-grid search gave up at seq \d+ after \d+ units of work/);
    // The real direction is framed as before: every PDU, no finding of its own.
    const d1 = (r.tuf!['directions'] as Array<Record<string, unknown>>)[1]!;
    expect(d1).toMatchObject({ interval: 2048, pdus: 6 });
    expect(r.rules.filter((x) => x !== 'tuf.marker-search-budget')).toEqual([]);
  });

  it('silent on a real marker stream', async () => {
    const m = markerStream(ulpPdus([3000, 2500, 4100, 2200, 5000, 2100], 5), 512);
    const sc = buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }]);
    const r = await runTuf(sc.pcap);
    expect(r.tuf).toMatchObject({ mode: 'markers' });
    expect(r.rules).toEqual([]);
  });
});

describe('filler is not marker mode', () => {
  for (const kind of ['period', 'counter', 'pairs', 'small'] as const) {
    it(`${kind}: no TUF flow, no tuf.* finding`, async () => {
      const sc = buildScenario([
        { dir: 0, bytes: filler(kind, 400_000), cut: 'mss' },
        { dir: 1, bytes: new TextEncoder().encode('OK\r\n'), cut: 'mss' },
      ]);
      const r = await runTuf(sc.pcap);
      expect(r.tuf).toBeNull();
      expect(r.records).toEqual([]);
      expect(r.rules.filter((x) => x.startsWith('tuf.'))).toEqual([]);
    });
  }
});
