/**
 * --annotate with several captures: the value names a directory, and each capture gets its own
 * annotated pcapng there, named after it, byte for byte what --annotate writes for that capture run
 * alone (whose comments test/report/annotate-tshark.test.ts checks against tshark).
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'annotate-multi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const A = join(CAPTURES, 'corpus', 'bad-crc.pcap');
const B = join(CAPTURES, 'corpus', 'rule-rejected.pcap');
const C = join(CAPTURES, 'corpus', 'clean-rev2-markers-both-crc-on.pcapng');

describe('--annotate DIR with several captures', () => {
  it('one annotated pcapng per capture, each as the capture alone would give it', () => {
    const out = join(dir, 'annotated');
    const r = cli(['-q', '--annotate', out, A, B, C]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1); // bad-crc.pcap has an error
    expect(readdirSync(out).sort()).toEqual([
      'bad-crc.pcapng',
      'clean-rev2-markers-both-crc-on.pcapng',
      'rule-rejected.pcapng',
    ]);
    for (const [capture, name] of [
      [A, 'bad-crc.pcapng'],
      [B, 'rule-rejected.pcapng'],
      [C, 'clean-rev2-markers-both-crc-on.pcapng'],
    ] as const) {
      const alone = join(dir, `alone-${name}`);
      expect(cli(['-q', '--annotate', alone, capture]).code).toBeLessThan(2);
      expect(readFileSync(join(out, name)).equals(readFileSync(alone)), name).toBe(true);
    }
  });

  it('two captures of the same name get their position in the list; the directory is made', () => {
    const out = join(dir, 'made', 'here');
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    writeFileSync(join(sub, 'bad-crc.pcap'), readFileSync(A));
    const r = cli(['-q', '--annotate', out, A, join(sub, 'bad-crc.pcap')]);
    expect(r.code).toBe(1);
    expect(readdirSync(out).sort()).toEqual(['bad-crc-1.pcapng', 'bad-crc-2.pcapng']);
  });

  it('a file where the directory should be: one line, exit 2', () => {
    const f = join(dir, 'a-file');
    writeFileSync(f, 'x');
    const r = cli(['-q', '--annotate', f, A, B]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/--annotate .*a-file: with several captures, a directory .*; that is a file/);
  });
});
