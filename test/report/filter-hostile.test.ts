/**
 * Hostile display filters end in bounded time with a clear error or a right answer: flat chains
 * of 16,000 terms (they used to overflow the stack), oversized filters, and backtracking regular
 * expressions (matches runs RE2, linear in the input).
 */
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '../../src/vocabulary/fields.js';
import { compileEventFilter } from '../../src/report/fields.js';
import { compileFilter, FilterError, formatFilterError } from '../../src/report/filter/filter.js';
import { MAX_FILTER_LENGTH, MAX_FILTER_TOKENS } from '../../src/report/filter/lexer.js';
import { cli } from '../cli/helpers.js';

const known = (f: string): boolean => f === 'tcp.port' || f === 'finding.message' || f === 'tcp';
type Rec = Readonly<Record<string, readonly FieldValue[]>>;
const run = (filter: string, rec: Rec): boolean => compileFilter(filter, known).matches((f) => rec[f]);

function fail(filter: string): FilterError {
  try {
    compileFilter(filter, known);
  } catch (e) {
    if (e instanceof FilterError) return e;
    throw e;
  }
  throw new Error(`expected ${filter.slice(0, 40)}… to fail`);
}

const chain = (op: string, n: number): string =>
  Array.from({ length: n }, (_, i) => `tcp.port == ${i}`).join(` ${op} `);

describe('long flat chains', () => {
  it('16,000 "||" terms compile and evaluate', () => {
    const f = chain('||', 16_000);
    expect(run(f, { 'tcp.port': [15_999] })).toBe(true);
    expect(run(f, { 'tcp.port': [16_000] })).toBe(false);
  });
  it('16,000 "&&" terms compile and evaluate', () => {
    const f = Array.from({ length: 16_000 }, () => 'tcp.port > 1').join(' && ');
    expect(run(f, { 'tcp.port': [2] })).toBe(true);
    expect(run(f, { 'tcp.port': [1] })).toBe(false);
  });
  it('xor over a chain is parity; mixed or/xor stays left-associative', () => {
    expect(run('tcp ^^ tcp ^^ tcp', { tcp: [true] })).toBe(true);
    expect(run('tcp ^^ tcp', { tcp: [true] })).toBe(false);
    // ((tcp || tcp) ^^ tcp) = (true ^^ true) = false
    expect(run('tcp || tcp ^^ tcp', { tcp: [true] })).toBe(false);
  });
  it('alternating operators nest, and the nesting limit still holds', () => {
    const f = Array.from({ length: 4_000 }, () => 'tcp')
      .join(' || ')
      .replace(/\|\| tcp \|\|/g, '|| tcp ^^');
    expect(fail(f).message).toBe('The filter expression is nested too deeply.');
    expect(fail('!'.repeat(20_000) + 'tcp').message).toBe('The filter expression is nested too deeply.');
    expect(fail('('.repeat(20_000) + 'tcp' + ')'.repeat(20_000)).message).toBe(
      'The filter expression is nested too deeply.',
    );
  });
  it('a filter beyond the size limits is one line, without the filter echoed', () => {
    const many = Array.from({ length: MAX_FILTER_TOKENS / 2 + 1 }, () => 'tcp').join('||');
    const e = fail(many);
    expect(e.pointed).toBe(false);
    expect(e.message).toMatch(/^The filter expression is too large: more than 250000 /);
    expect(formatFilterError(many, e)).toBe(e.message);
    const long = 'tcp' + ' '.repeat(MAX_FILTER_LENGTH);
    expect(fail(long).message).toMatch(/too large: 1000003 characters/);
  });
  it('an error in a long filter shows a window around the caret, not the whole filter', () => {
    const f = `${chain('||', 2_000)} || tcp.port == "x`;
    const e = fail(f);
    const text = formatFilterError(f, e);
    const lines = text.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]!.length).toBeLessThan(140);
    const at = lines[2]!.indexOf('^');
    expect(lines[1]!.slice(at, at + 2)).toBe('"x');
    expect(lines[1]!.startsWith('    …')).toBe(true);
  });
});

describe('matches: RE2 (linear time), case-insensitive as Wireshark', () => {
  const long = 'a'.repeat(50_000) + '!';
  it('a backtracking pattern against a long value returns at once', () => {
    const t0 = Date.now();
    expect(run('finding.message matches "^([a-z0-9 ]+ ?)*$"', { 'finding.message': [long] })).toBe(false);
    expect(run('finding.message matches "^(a|aa)+$"', { 'finding.message': [long] })).toBe(false);
    expect(run('finding.message matches "^([a-z0-9 ]+ ?)*!$"', { 'finding.message': [long] })).toBe(true);
    // Backtracking engines take minutes here; generous bound for a loaded machine.
    expect(Date.now() - t0).toBeLessThan(10_000);
  });
  it('is case-insensitive unless the pattern says (?-i); (?i) is accepted', () => {
    const rec = { 'finding.message': ['CRC 0x339b50b3 on the wire'] };
    expect(run('finding.message matches "crc 0x339B50B3"', rec)).toBe(true);
    expect(run('finding.message matches "(?i)crc"', rec)).toBe(true);
    expect(run('finding.message matches "(?-i)crc"', rec)).toBe(false);
    expect(run('finding.message matches "(?-i)CRC"', rec)).toBe(true);
    expect(run('finding.message ~ "wire$"', rec)).toBe(true);
  });
  it('refuses what RE2 does not take (PCRE2 backreferences, lookaround) with the caret on the pattern', () => {
    for (const [pattern, why] of [
      [
        '"(a)\\\\1"',
        /invalid escape sequence: `\\1` \(RE2 syntax: no backreferences, lookaround or other PCRE2-only constructs; see docs\/filters-and-fields\.md\)/,
      ],
      ['"a(?=b)"', /unsupported Perl syntax: `\(\?=` \(RE2 syntax/],
      ['"(?<!a)b"', /\(RE2 syntax: no backreferences, lookaround/],
      ['"a++"', /nested repetition operator: `\+\+` \(RE2 syntax/],
      ['"a{2000}"', /invalid repeat count/],
    ] as const) {
      const e = fail(`finding.message matches ${pattern}`);
      expect(e.message).toMatch(why);
      expect(e.column).toBe(25);
    }
  });
});

describe('matches: program size', () => {
  it('a pattern too large to run fast is refused (RE2 time grows with the program too)', () => {
    const e = fail(`finding.message matches "${'[a-z]{1000}'.repeat(3)}"`);
    expect(e.message).toMatch(
      /is too large a regular expression for a display filter \(\d+ RE2 instructions, at most 1000\)\.$/,
    );
    expect(e.column).toBe(25);
    expect(() =>
      compileFilter('finding.message matches "^mpa\\\\.(crc|fpduptr)-[a-z-]+ [0-9a-f]{8}$"', known),
    ).not.toThrow();
  });
});

describe('CLI: hostile -Y and --write-filter', () => {
  // Short terms: one argument may hold at most 128 KiB on Linux.
  const flat = (op: string): string => Array.from({ length: 16_000 }, () => 'tcp').join(op);
  it('-Y with 16,000 "||" terms works, in seconds', () => {
    const r = cli(['-Y', flat('||'), 'golden.pcap']);
    expect(r.stderr).not.toMatch(/stack|RangeError|at .*\.js/);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\s+6 /m);
  }, 30_000);
  it('-Y with 16,000 "&&" terms, and --write-filter with 16,000 "||" terms', () => {
    expect(cli(['-q', '-Y', flat('&&'), 'golden.pcap']).code).toBe(1);
    const w = cli(['-q', '-w', '/dev/null', '--write-filter', flat('||'), 'golden.pcap']);
    expect(w.stderr).not.toMatch(/stack|RangeError/);
    expect(w.code).toBe(1);
  }, 30_000);
  it('nesting beyond the limit is one clear error and exit 2', () => {
    const r = cli(['-Y', '!'.repeat(30_000) + 'tcp', 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('mpa-dissect: -Y: column 501: The filter expression is nested too deeply.');
    expect(r.stderr.length).toBeLessThan(600);
  }, 30_000);
  it('a backtracking regular expression against the findings returns', () => {
    const r = cli(['-Y', 'finding.message matches "^([a-z0-9 ]+ ?)*$"', 'errors.pcap']);
    expect(r.code).toBe(1);
  }, 30_000);
  it('a backreference is a filter error with the caret, exit 2', () => {
    const r = cli(['-Y', 'finding.message matches "(crc).*\\\\1"', 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('RE2 syntax: no backreferences, lookaround or other PCRE2-only constructs');
    expect(r.stderr).toMatch(/\n {28}\^~+\n?$/);
  }, 30_000);
});

describe('the event filter (what -Y compiles) reads the same chains', () => {
  it('16,000 terms through compileEventFilter', () => {
    const f = compileEventFilter(Array.from({ length: 16_000 }, (_, i) => `iwarp_ddp.msn == ${i}`).join(' || '));
    expect(f.matches((n) => (n === 'iwarp_ddp.msn' ? [12_345] : undefined))).toBe(true);
  });
});
