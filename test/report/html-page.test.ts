/**
 * The HTML report's pieces without a browser: the bounded bins (counts conserved, never more than
 * their cap, the hover point of a bin its first bad one), the size buckets against the -z
 * fpdu-sizes table, and escaping of every text that comes from a capture.
 */
import { describe, expect, it } from 'vitest';
import { AdaptiveBins, FPDU_LENGTH_BUCKETS, lengthBucket, spanBucket } from '../../src/report/html/bins.js';
import { esc } from '../../src/report/html/escape.js';
import type { CaptureView } from '../../src/report/html/model.js';
import { htmlPage } from '../../src/report/html/page.js';

describe('AdaptiveBins', () => {
  it('keeps every count within its cap of bins, however far the points go', () => {
    const b = new AdaptiveBins(2, 50, 1);
    let n = 0;
    for (let x = 0; x < 1_000_000; x += 7) {
      b.add(x, x % 2, x, x + 1);
      n++;
    }
    const v = b.view();
    expect(v.bins.length).toBeLessThanOrEqual(50);
    expect(v.bins.reduce((a, x) => a + x.n[0]! + x.n[1]!, 0)).toBe(n);
    expect(v.width * 50).toBeGreaterThanOrEqual(1_000_000 - 7);
    // Each bin's hover point is a point that fell in it.
    for (const bin of v.bins) {
      expect(bin.frame).toBeGreaterThanOrEqual(bin.x);
      expect(bin.frame).toBeLessThan(bin.x + v.width);
    }
  });

  it('a bin shows its first bad point, also after merging', () => {
    const b = new AdaptiveBins(1, 4, 1);
    b.add(0, 0, 10, 100);
    b.add(1, 0, 11, 101, true, 'rule.a');
    b.add(2, 0, 12, 102, true, 'rule.b');
    b.add(100, 0, 13, 103); // merges until 100 fits
    const first = b.view().bins[0]!;
    expect([first.frame, first.seq, first.label]).toEqual([11, 101, 'rule.a']);
  });

  it('negative and non-finite points count in the first bin', () => {
    const b = new AdaptiveBins(1, 4, 1);
    b.add(-5, 0, 1, 1);
    b.add(Number.NaN, 0, 2, 2);
    expect(b.view().bins).toHaveLength(1);
    expect(b.view().bins[0]!.n[0]).toBe(2);
  });
});

describe('FPDU size buckets', () => {
  it('every ULPDU_Length falls in the bucket whose range holds it (tshark plen buckets, as -z fpdu-sizes)', () => {
    const wrong: number[] = [];
    for (let len = 0; len <= 65535; len++) {
      const i = lengthBucket(len);
      const hi = FPDU_LENGTH_BUCKETS[i + 1] ?? 65536;
      if (len < FPDU_LENGTH_BUCKETS[i]! || len >= hi) wrong.push(len);
    }
    expect(wrong).toEqual([]);
  });

  it('segments per FPDU: 1, 2, 3, 4-7, 8+', () => {
    expect([1, 2, 3, 4, 7, 8, 100].map(spanBucket)).toEqual([0, 1, 2, 3, 3, 4, 4]);
  });
});

const EVIL = `</script><script>alert(1)</script><img src=x onerror="alert(2)">'`;

function hostileView(): CaptureView {
  return {
    path: EVIL,
    format: EVIL,
    packets: 1,
    bytes: 1,
    duration: 0,
    start: 0,
    live: false,
    exit: { code: 1, why: EVIL },
    error: EVIL,
    summary: { flows: 1, mpaFlows: 1, fpdus: 1, errors: 1, warnings: 0, infos: 0 },
    flows: [
      {
        id: 1,
        stream: 0,
        client: EVIL,
        server: EVIL,
        detection: EVIL,
        rev: 1,
        markers: EVIL,
        crc: EVIL,
        fpdus: 1,
        errors: 1,
        warnings: 0,
        infos: 0,
        verdict: 'error',
        closed: EVIL,
        frames: '1-2',
        upper: EVIL,
        ladder: [{ kind: 'request', from: EVIL, frame: 1, seq: 1, time: 0, text: EVIL }],
      },
    ],
    flowsOmitted: 0,
    rules: [{ rule: EVIL, severity: 'error', ref: EVIL, code: null, summary: EVIL, count: 1 }],
    findings: [{ rule: EVIL, severity: 'error', flow: 1, from: EVIL, frames: [1], seq: 1, message: EVIL, time: 0 }],
    findingsOmitted: 0,
    plots: [
      {
        flow: 1,
        dir: 0,
        from: EVIL,
        to: EVIL,
        fpdus: 1,
        sizes: FPDU_LENGTH_BUCKETS.map(() => 1),
        spans: [1, 0, 0, 0, 0],
        alignment: { segments: 1, fpduAligned: 1, headerAligned: 1, spanning: 0 },
        along: { width: 1, bins: [{ x: 0, n: [1, 0, 0, 0, 0], frame: 1, seq: 1, label: EVIL }] },
        findings: { width: 1, bins: [{ x: 0, n: [1, 0, 0], frame: 1, seq: 1, label: EVIL }] },
      },
    ],
    plotsOmitted: 0,
    timeline: { width: 1, bins: [{ x: 0, n: [1, 0, 0], frame: 1, seq: 1, label: EVIL }] },
    srt: {
      buckets: [1e-6],
      commands: [{ program: EVIL, command: EVIL, calls: 1, min: 0, max: 0, avg: 0, p50: 0, p99: 0, histogram: [1, 0] }],
    },
  };
}

describe('htmlPage', () => {
  it('escapes every text from a capture: flows, rules, findings, ladders, tips, file names', () => {
    const html = htmlPage([hostileView(), hostileView()], {
      exit: { code: 1, why: EVIL },
      tool: EVIL,
      generated: new Date(0),
    });
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/onerror="/);
    expect(html).toContain(esc(EVIL));
  });
});
