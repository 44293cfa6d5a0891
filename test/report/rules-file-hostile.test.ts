/**
 * --rules against hostile files: an endless file, deep nesting, huge ids. Each ends at once
 * with one line naming the file, exit 2, never a stack trace.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRulesFile, MAX_RULES_FILE_BYTES, parseRulesFile, RulesFileError } from '../../src/report/rules-file.js';
import { cli } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-rules-'));
const file = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);

function error(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(RulesFileError);
    return (e as Error).message;
  }
  throw new Error('expected a RulesFileError');
}

describe('rules file: hostile input', () => {
  it('a file larger than 1 MB is refused without reading it all (/dev/zero ends at once)', () => {
    expect(error(() => loadRulesFile('/dev/zero'))).toBe(
      '/dev/zero: larger than 1 MB; a rules file is a small JSON document',
    );
    const big = file('big.json', `{"$comment": "${'x'.repeat(MAX_RULES_FILE_BYTES)}"}`);
    expect(error(() => loadRulesFile(big))).toMatch(/big\.json: larger than 1 MB/);
  });
  it('a file of exactly the limit is read', () => {
    const body = '{"$comment": ""}';
    const p = file('limit.json', body.slice(0, -2) + ' '.repeat(MAX_RULES_FILE_BYTES - body.length) + '"}');
    expect(() => loadRulesFile(p)).not.toThrow();
  });
  it('a value nested 5,000 deep is described, not echoed (no stack overflow)', () => {
    const m = error(() => parseRulesFile('r.json', `{"rules": {"mpa.pad-not-zero": ${deep(5000)}}}`));
    expect(m).toBe('r.json: rule "mpa.pad-not-zero": an array is not one of "off", "on", "error", "warning", "info"');
    const t = error(() =>
      parseRulesFile('r.json', `{"thresholds": {"alignment.minFpduAlignedPercent": {"a": ${deep(5000)}}}}`),
    );
    expect(t).toMatch(/threshold "alignment\.minFpduAlignedPercent": an object must be a number/);
    expect(error(() => parseRulesFile('r.json', deep(100_000)))).toMatch(/must be a JSON object/);
  });
  it('a huge unknown id is cut when echoed and gets no "did you mean" (bounded work)', () => {
    const id = `mpa.crc-mismatch${'x'.repeat(900_000)}`;
    const t0 = Date.now();
    const m = error(() => parseRulesFile('r.json', JSON.stringify({ rules: { [id]: 'off' } })));
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(m.length).toBeLessThan(200);
    expect(m).toMatch(/^r\.json: unknown rule "mpa\.crc-mismatchx+"… \(mpa-dissect rules lists them\)$/);
  });
  it('long values and keys are cut too', () => {
    expect(
      error(() => parseRulesFile('r.json', JSON.stringify({ rules: { 'mpa.pad-not-zero': 'y'.repeat(100_000) } })))
        .length,
    ).toBeLessThan(200);
    expect(error(() => parseRulesFile('r.json', JSON.stringify({ ['k'.repeat(100_000)]: 1 }))).length).toBeLessThan(
      200,
    );
    expect(
      error(() => parseRulesFile('r.json', JSON.stringify({ thresholds: { ['t'.repeat(100_000)]: 1 } }))).length,
    ).toBeLessThan(400);
  });
  it('a short typo still gets its suggestion', () => {
    expect(error(() => parseRulesFile('r.json', JSON.stringify({ rules: { 'mpa.crc-mismatc': 'off' } })))).toMatch(
      /did you mean "mpa\.crc-mismatch"\?/,
    );
  });
});

describe('CLI --rules: one line, exit 2', () => {
  const oneLine = (stderr: string): void => {
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/RangeError|at .*\.js:\d+/);
  };
  it('--rules /dev/zero', () => {
    const r = cli(['--rules', '/dev/zero', 'golden.pcap']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain('/dev/zero: larger than 1 MB');
    expect(r.stdout).toBe('');
  }, 30_000);
  it('--rules with a value nested 5,000 deep, and with a 900 KB unknown id', () => {
    for (const p of [
      file('deep.json', `{"rules": {"mpa.pad-not-zero": ${deep(5000)}}}`),
      file('id.json', JSON.stringify({ rules: { ['z'.repeat(900_000)]: 'off' } })),
    ]) {
      const r = cli(['--rules', p, 'golden.pcap']);
      expect(r.code, p).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr.length).toBeLessThan(400);
    }
  }, 30_000);
});
