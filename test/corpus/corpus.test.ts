/**
 * The corpus (captures/corpus/, written by scripts/make-corpus.ts): each capture analysed gives
 * exactly the findings and per-direction counts stored next to it (FILE.json, the generator's
 * ground truth), except the differences recorded there as known; each capture is what its
 * scenario, knobs and seed generate today (byte for byte); and every rule of the catalog is shown
 * by some capture, or listed in captures/corpus/uncovered.json with the reason.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { allRules } from '../../src/analysis/rules-catalog.js';
import { generate } from '../../src/generate/generate.js';
import { truthOfReport, type GroundTruth } from '../../src/generate/truth.js';
import { cli, CAPTURES } from '../cli/helpers.js';
import { analyzedTruth } from '../generate/helpers.js';

const DIR = join(CAPTURES, 'corpus');
type Expected = GroundTruth & {
  file: string;
  knownDifferences?: Array<{ path: string; truth: unknown; analyzer: unknown; why: string }>;
};
const expected: Expected[] = readdirSync(DIR)
  .filter((f) => f.endsWith('.json') && f !== 'uncovered.json' && !f.endsWith('.rules.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Expected);

function at(o: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((x, p) => (x as Record<string, unknown>)[p], o);
}
function set(o: unknown, path: string, v: unknown): void {
  const parts = path.split('.');
  const last = parts.pop()!;
  (parts.reduce<unknown>((x, p) => (x as Record<string, unknown>)[p], o) as Record<string, unknown>)[last] = v;
}

describe('corpus: every capture gives its expected findings and counts', () => {
  it('holds captures', () => expect(expected.length).toBeGreaterThan(50));
  it.each(expected.map((e) => [e.file, e] as const))('%s', async (_file, e) => {
    const capture = readFileSync(join(DIR, e.file));
    // Captures read with options go through the CLI as a user would; the rest in process (faster).
    let got;
    if (e.args.length > 0) {
      const r = cli(['--json', ...e.args, e.file], { cwd: DIR });
      expect(
        r.code === 0 || r.code === 1 || (r.code === 2 && e.findings.some((f) => f.rule === 'capture.read-error')),
      ).toBe(true);
      got = truthOfReport(JSON.parse(r.stdout));
    } else {
      got = await analyzedTruth(capture);
    }
    const want = structuredClone({ findings: e.findings, flows: e.flows });
    for (const k of e.knownDifferences ?? []) {
      // The analyzer's side of a known difference is asserted too: a fix or a drift shows here.
      expect(at(want, k.path)).toEqual(k.truth);
      set(want, k.path, k.analyzer);
    }
    expect(got).toEqual(want);
  });
});

describe('corpus: each capture is what the generator makes of its scenario, knobs and seed', () => {
  it.each(expected.map((e) => [e.file, e] as const))('%s', (_file, e) => {
    const res = generate(e.scenario, e.knobs, e.seed, e.file.endsWith('.pcapng') ? 'pcapng' : 'pcap');
    expect(Buffer.from(res.capture).equals(readFileSync(join(DIR, e.file)))).toBe(true);
    expect(res.truth.findings).toEqual(e.findings);
    expect(res.truth.flows).toEqual(e.flows);
  });
});

describe('corpus: every catalog rule is shown by a capture', () => {
  const uncoveredPath = join(DIR, 'uncovered.json');
  const uncovered = existsSync(uncoveredPath)
    ? (JSON.parse(readFileSync(uncoveredPath, 'utf8')) as Record<string, string>)
    : {};
  const covered = new Set(expected.flatMap((e) => e.findings.map((f) => f.rule)));
  it('each rule is covered or listed, with a reason, as not coverable by a capture file', () => {
    const missing = allRules()
      .map((r) => r.id)
      .filter((id) => !covered.has(id) && !(id in uncovered));
    expect(missing).toEqual([]);
  });
  it('nothing listed as uncovered is covered, every reason is given, every listed rule exists', () => {
    const ids = new Set(allRules().map((r) => r.id));
    for (const [id, why] of Object.entries(uncovered)) {
      expect(covered.has(id), id).toBe(false);
      expect(ids.has(id), id).toBe(true);
      expect(why.length).toBeGreaterThan(20);
    }
  });
  it('the README table lists every capture', () => {
    const readme = readFileSync(join(CAPTURES, 'README.md'), 'utf8');
    for (const e of expected) expect(readme).toContain(`corpus/${e.file}`);
  });
});
