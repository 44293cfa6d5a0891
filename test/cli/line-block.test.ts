/**
 * cli/line-block.ts: the text output's lines, encoded into one reused block when the output takes
 * octets. Whatever the lines (multi-byte characters, lone surrogates, lines longer than the block),
 * given as strings or as their UTF-8, the octets written are the UTF-8 of the lines each followed
 * by a newline, as the string path writes them, and a block goes out at least every `maxLines` lines and on flush().
 */
import { describe, expect, it } from 'vitest';
import { LineBlock, Utf8Slab } from '../../cli/line-block.js';
import { randomInts } from '../helpers/random.js';

/** A LineBlock that writes octets, each write copied into `into` (the block is reused once a write returns). */
function collecting(into: Buffer[], maxLines: number, blockBytes: number): LineBlock {
  const io = {
    out: (s: string) => into.push(Buffer.from(s, 'utf8')),
    err: () => {},
    outBytes: (b: Uint8Array) => into.push(Buffer.from(b)),
  };
  return new LineBlock(io, maxLines, blockBytes);
}

const PIECES = ['a', '0f ', '   ', '→', 'é', '\u{1f600}', '\ud83d', '\ude00', '\n', ''];

describe('LineBlock', () => {
  it('writes the UTF-8 of the lines as the string path does, in blocks of at most maxLines lines', () => {
    const rnd = randomInts(5);
    for (let round = 0; round < 40; round++) {
      const maxLines = 1 + rnd(20);
      const blockBytes = 16 + rnd(400);
      const lines = Array.from({ length: rnd(200) }, () => {
        // Now and then a line longer than the block.
        const n = rnd(10) === 0 ? blockBytes + rnd(200) : rnd(40);
        let s = '';
        for (let i = 0; i < n; i++) s += PIECES[rnd(PIECES.length)];
        return s;
      });
      const bytes: Buffer[] = [];
      const strings: string[] = [];
      const viaBytes = collecting(bytes, maxLines, blockBytes);
      const viaStrings = new LineBlock({ out: (s) => strings.push(s), err: () => {} }, maxLines, blockBytes);
      let sinceFlush = 0;
      for (const l of lines) {
        const before = bytes.length;
        // Given as a string or as its UTF-8, at random.
        viaBytes.line(rnd(2) === 0 ? l : Buffer.from(l, 'utf8'));
        viaStrings.line(l);
        sinceFlush = bytes.length > before ? 0 : sinceFlush + 1;
        expect(sinceFlush).toBeLessThan(maxLines);
        if (rnd(30) === 0) {
          viaBytes.flush();
          viaStrings.flush();
          sinceFlush = 0;
        }
      }
      viaBytes.flush();
      viaStrings.flush();
      const want = lines.length ? Buffer.from(`${lines.join('\n')}\n`, 'utf8') : Buffer.alloc(0);
      expect(Buffer.concat(bytes).equals(want)).toBe(true);
      expect(Buffer.from(strings.join(''), 'utf8').equals(want)).toBe(true);
      // The string path writes in the same places: every maxLines lines and on flush.
      expect(strings.every((s) => s.endsWith('\n'))).toBe(true);
    }
  });
  it('grows its block from 64 KiB as long lines need, writing the same octets', () => {
    const rnd = randomInts(41);
    for (let round = 0; round < 6; round++) {
      const blockBytes = 65536 * (1 + rnd(6));
      const unit = ['ab', '→é', '\u{1f600}'][rnd(3)]!;
      // Lines of a few octets to several hundred KiB (longer than the largest block).
      const lines = Array.from({ length: 30 }, () => unit.repeat([0, 10, 5000, 30000, 150000][rnd(5)]!));
      const bytes: Buffer[] = [];
      const b = collecting(bytes, 7, blockBytes);
      for (const l of lines) b.line(rnd(2) === 0 ? l : Buffer.from(l, 'utf8'));
      b.flush();
      expect(Buffer.concat(bytes).equals(Buffer.from(`${lines.join('\n')}\n`, 'utf8'))).toBe(true);
      // No write larger than the block can grow to, but a line alone (as octets, or a string with its newline).
      const alone = new Set(lines.flatMap((l) => [Buffer.byteLength(l), Buffer.byteLength(l) + 1]));
      for (const w of bytes) expect(w.length <= blockBytes || alone.has(w.length)).toBe(true);
    }
  });
  it('takes octets only where it writes octets', () => {
    expect(new LineBlock({ out: () => {}, err: () => {}, outBytes: () => {} }).takesBytes).toBe(true);
    const strings = new LineBlock({ out: () => {}, err: () => {} });
    expect(strings.takesBytes).toBe(false);
    expect(() => strings.line(new Uint8Array(1))).toThrow(/internal/);
  });
  it('writes nothing when it holds nothing', () => {
    const writes: unknown[] = [];
    const b = new LineBlock({ out: (s) => writes.push(s), err: () => {}, outBytes: (x) => writes.push(x) });
    b.flush();
    b.flush();
    expect(writes).toEqual([]);
    b.line('');
    b.flush();
    expect(writes.map((w) => Buffer.from(w as Uint8Array).toString())).toEqual(['\n']);
  });
});

describe('Utf8Slab', () => {
  it('encodes a group of lines as their join, and a view stays as it was while later groups are encoded', () => {
    const rnd = randomInts(23);
    const slab = new Utf8Slab();
    const kept: Array<{ view: Uint8Array; want: Buffer }> = [];
    for (let g = 0; g < 3000; g++) {
      // Now and then a group larger than a slab (256 KiB).
      const big = rnd(500) === 0;
      const lines = Array.from({ length: big ? 3000 : rnd(12) }, () => {
        let s = '';
        for (let i = 0, n = big ? 100 : rnd(90); i < n; i++) s += PIECES[rnd(PIECES.length)];
        return s;
      });
      const view = slab.encodeLines(lines);
      const want = Buffer.from(lines.join('\n'), 'utf8');
      expect(Buffer.from(view).equals(want)).toBe(true);
      kept.push({ view, want });
    }
    expect(kept.every(({ view, want }) => Buffer.from(view).equals(want))).toBe(true);
  });
});
