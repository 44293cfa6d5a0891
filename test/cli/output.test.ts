/**
 * Standard output and --junit files are encoded piece by piece into one reused buffer
 * (cli/output.ts): the octets must be those of Buffer.from(text) whatever the text, surrogate
 * pairs and lone surrogates across the pieces' boundaries included.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SyncOutput, writeFileOrFail } from '../../cli/output.js';
import { randomInts } from '../helpers/random.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PIECE = 256 * 1024;
const texts = (): string[] => {
  const pair = '😀';
  const out = [
    'a',
    'é'.repeat(PIECE + 3),
    // A pair split by a piece's end, a lone high surrogate there, a lone low one just after.
    `${'x'.repeat(PIECE - 1)}${pair}${'y'.repeat(PIECE)}`,
    `${'x'.repeat(PIECE - 1)}\ud800z${'y'.repeat(10)}`,
    `${'x'.repeat(PIECE)}\udc00${pair.repeat(PIECE)}\ud800`,
  ];
  const rnd = randomInts(99);
  let s = '';
  // A quarter of them surrogates, most of those lone.
  for (let i = 0; i < 3 * PIECE; i++) s += String.fromCharCode(rnd(4) === 0 ? 0xd800 + rnd(0x800) : rnd(0x10000));
  out.push(s);
  return out;
};

describe('output encoding in pieces', () => {
  it('SyncOutput writes the octets Buffer.from gives, in one or many writes', () => {
    const p = join(dir, 'out');
    const fd = openSync(p, 'w');
    const o = new SyncOutput(fd, 'out');
    const all = texts();
    for (const t of all) o.write(t);
    closeSync(fd);
    expect(readFileSync(p).equals(Buffer.concat(all.map((t) => Buffer.from(t, 'utf8'))))).toBe(true);
  });

  it('writeFileOrFail writes the octets Buffer.from gives', () => {
    for (const t of texts()) {
      const p = join(dir, 'j.xml');
      writeFileOrFail(p, '--junit', t);
      expect(readFileSync(p).equals(Buffer.from(t, 'utf8'))).toBe(true);
    }
  });
});
