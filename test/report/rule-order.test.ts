/**
 * compareRuleIds orders as localeCompare does (the findings-by-rule tables print in that order),
 * in this process's locale: over every catalog identifier, over random strings of the identifier
 * alphabet, and for strings outside it (which go to localeCompare).
 */
import { describe, expect, it } from 'vitest';
import { allRules } from '../../src/analysis/rules-catalog.js';
import { compareRuleIds } from '../../src/report/rule-order.js';

const sign = (n: number): number => Math.sign(n);

/** A small deterministic generator (xorshift32), so a failure names strings that reproduce. */
function strings(count: number, alphabet: string, seed: number): string[] {
  let x = seed;
  const next = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let s = '';
    const len = 1 + Math.floor(next() * 8);
    for (let j = 0; j < len; j++) s += alphabet[Math.floor(next() * alphabet.length)];
    out.push(s);
  }
  return out;
}

function disagreements(ids: readonly string[]): string[] {
  const bad: string[] = [];
  for (const a of ids) {
    for (const b of ids) {
      if (sign(compareRuleIds(a, b)) !== sign(a.localeCompare(b))) bad.push(`${a} vs ${b}`);
    }
  }
  return bad;
}

describe('compareRuleIds', () => {
  it('orders every catalog identifier as localeCompare does', () => {
    const ids = allRules().map((r) => r.id);
    expect(ids.length).toBeGreaterThan(100);
    expect(disagreements(ids)).toEqual([]);
  });

  it('orders random identifiers of the alphabet as localeCompare does, prefixes and equals included', () => {
    const ids = strings(400, '_-.0123456789abcdefghijklmnopqrstuvwxyz', 0x2545f491);
    ids.push('mpa', 'mpa.', 'mpa.crc', 'mpa_crc', 'mpa-crc', 'mpa.crc', 'a', 'a0', 'a_', '_', '-', '.');
    expect(disagreements(ids)).toEqual([]);
  });

  it('leaves other characters to localeCompare (upper case, spaces, accents, astral)', () => {
    const ids = strings(150, 'aAbB_-. zZ0é§😀', 0x1234567);
    ids.push('smb_direct.x', 'SMB_direct.x', 'smb direct', 'Ä', 'a', 'z');
    expect(disagreements(ids)).toEqual([]);
  });
});
