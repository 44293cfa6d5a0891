/**
 * The collector's findings are made by a constructor (so V8 does not pretenure them, see
 * finding-collector.ts): they must still look exactly like the Finding object literal to every
 * output (own keys in the interface's order, JSON, spreads) and own their frames.
 */
import { describe, expect, it } from 'vitest';
import { FindingCollector, MAX_KEPT_FINDINGS } from '../../src/analysis/finding-collector.js';
import { RULES } from '../../src/analysis/rules-catalog.js';

describe('FindingCollector findings', () => {
  it('have the Finding keys in order and serialise as the literal did', () => {
    const c = new FindingCollector();
    const seen: unknown[] = [];
    c.onFinding((f) => seen.push(f));
    const frames = [3, 1, 2];
    c.report('net.link-malformed', { flow: 7, from: '10.0.0.1:1', frames, seq: 9, message: 'm "q"\n' });
    frames.push(99); // the reporter's array is not the finding's
    const f = c.findings[0]!;
    const rule = RULES.get('net.link-malformed')!;
    const literal = {
      rule: 'net.link-malformed',
      severity: rule.severity,
      rfcErrorCode: rule.rfcErrorCode,
      flow: 7,
      from: '10.0.0.1:1',
      frames: [3, 1, 2],
      seq: 9,
      message: 'm "q"\n',
    };
    expect(Object.keys(f)).toEqual(Object.keys(literal));
    expect(JSON.stringify(f)).toBe(JSON.stringify(literal));
    expect(JSON.stringify({ type: 'finding', ...f })).toBe(JSON.stringify({ type: 'finding', ...literal }));
    expect(seen).toEqual([f]);
  });

  it('keeps at most MAX_KEPT_FINDINGS and counts the rest', () => {
    const c = new FindingCollector();
    let streamed = 0;
    c.onFinding(() => streamed++);
    const n = MAX_KEPT_FINDINGS + 5;
    for (let i = 0; i < n; i++)
      c.report('net.link-malformed', { flow: null, from: null, frames: [i], seq: null, message: 'x' });
    expect(c.findings.length).toBe(MAX_KEPT_FINDINGS);
    expect(c.omitted).toBe(5);
    expect(streamed).toBe(n);
    expect(c.findings[MAX_KEPT_FINDINGS - 1]!.frames).toEqual([MAX_KEPT_FINDINGS - 1]);
  });
});
