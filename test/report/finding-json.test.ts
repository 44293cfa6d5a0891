/**
 * The hand-written finding serialiser (src/report/finding-json.ts) against JSON.stringify, its
 * definition: the same text for random and hostile strings (quotes, backslashes, control
 * characters, lone surrogates, U+2028), numbers (negative, fractional, huge, NaN, infinities, -0)
 * and nulls; and JSON.stringify itself for anything not shaped as a FindingRecord.
 */
import { describe, expect, it } from 'vitest';
import { findingEventJson } from '../../src/report/finding-json.js';
import { findingEvent, findingEventLine } from '../../src/report/ndjson.js';
import { type Finding, FindingRecord, type Severity } from '../../src/vocabulary/findings.js';

const reference = (f: Finding, seqRelative: number | null): string =>
  JSON.stringify({ type: 'finding', ...f, seqRelative });

let seed = 2463534242;
const rnd = (m: number): number => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % m;
};
const HOSTILE = [
  '"',
  '\\',
  '\n',
  '\r',
  '\t',
  '\b',
  '\f',
  '\u0000',
  '\u001f',
  '\u007f',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '😀',
  'é',
  '<',
  '/',
  "'",
];
const randomString = (): string => {
  let s = '';
  const n = rnd(12);
  for (let i = 0; i < n; i++) s += rnd(3) === 0 ? HOSTILE[rnd(HOSTILE.length)]! : String.fromCharCode(rnd(0x10000));
  return s;
};
const NUMBERS = [0, -0, 1, -1, 1.5, 2 ** 32 - 1, 2 ** 53, 1e21, 1e-7, Number.NaN, Infinity, -Infinity];
const randomNumber = (): number => (rnd(2) === 0 ? NUMBERS[rnd(NUMBERS.length)]! : rnd(2 ** 31));
const orNull = <T>(v: T): T | null => (rnd(3) === 0 ? null : v);
const SEVERITIES: Severity[] = ['error', 'warning', 'info'];

const record = (): FindingRecord =>
  new FindingRecord(randomString(), SEVERITIES[rnd(3)]!, orNull(randomNumber()), {
    flow: orNull(randomNumber()),
    from: orNull(randomString()),
    frames: Array.from({ length: rnd(6) }, randomNumber),
    seq: orNull(randomNumber()),
    message: randomString(),
  });

describe('findingEventJson', () => {
  it('writes what JSON.stringify writes, for 20,000 random hostile findings', () => {
    for (let i = 0; i < 20_000; i++) {
      const f = record();
      const rel = orNull(randomNumber());
      expect(findingEventJson(f, rel)).toBe(reference(f, rel));
    }
  });

  it('a plain object or values of other types than declared: JSON.stringify decides', () => {
    const f = record();
    const plain: Finding = { ...f };
    expect(findingEventJson(plain, 3)).toBe(reference(plain, 3));
    const odd = record() as unknown as Record<string, unknown>;
    odd['frames'] = [1, '2', undefined];
    odd['seq'] = undefined;
    expect(findingEventJson(odd as unknown as Finding, null)).toBe(reference(odd as unknown as Finding, null));
    const odd2 = record() as unknown as Record<string, unknown>;
    odd2['message'] = 42;
    expect(findingEventJson(odd2 as unknown as Finding, 1)).toBe(reference(odd2 as unknown as Finding, 1));
  });

  it("is ndjson's finding event line: seqRelative from the base", () => {
    const f = new FindingRecord('mpa.crc-mismatch', 'error', 2, {
      flow: 1,
      from: '10.0.0.1:4791',
      frames: [7, 8],
      seq: 5,
      message: 'CRC "bad"',
    });
    for (const base of [null, 0, 6, 2 ** 32 - 1])
      expect(findingEventLine(f, base)).toBe(JSON.stringify(findingEvent(f, base)));
    expect(findingEventLine(f, 6)).toContain('"seqRelative":4294967295}');
  });
});
