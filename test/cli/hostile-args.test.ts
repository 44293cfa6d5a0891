/**
 * Hostile command-line values (issue: hostile input on the newer surfaces): each is one line on
 * standard error, exit 2, never a JavaScript word ("NaN"), never the whole of a huge value, never
 * a capture replaced by its truth file.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-hostile-args-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const oneLine = (stderr: string) => expect(stderr.split('\n').filter(Boolean)).toHaveLength(1);

describe('hostile option values', () => {
  it('--jobs abc: says it is not a number, not "NaN"', () => {
    const r = cli(['--jobs', 'abc', 'sample.pcap', 'golden.pcap']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/--jobs: not a number: give a whole number of workers from 1 to 1024/);
    expect(r.stderr).not.toMatch(/NaN/);
  });

  it('a bad --capture-backend: one line naming the choices', () => {
    const r = cli(['--capture-backend', 'bogus', '-i', 'lo']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/capture-backend.*"bogus".*"auto", "cap", "tcpdump", "dumpcap"/);
  });

  for (const opt of ['--mpa', '--tuf', '--ulp'])
    it(`a 100 KB ${opt} value: echoed cut, with its length, in one line`, () => {
      const r = cli([opt, 'x'.repeat(100_000), 'sample.pcap']);
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr.length).toBeLessThan(400);
      expect(r.stderr).toContain('(100000 characters)');
    });

  it('control characters in a value are escaped in the message', () => {
    const r = cli(['--mpa', 'flow=all,markers=\u001b[2J', 'sample.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\u001b');
    expect(r.stderr).toContain('\\u001b[2J');
  });

  it('generate -o X --truth X: refused, and X is not written', () => {
    const x = join(tmp, 'same.pcap');
    const r = cli(['generate', 'clean', '-o', x, '--truth', join(tmp, '.', 'same.pcap')]);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(/-o and --truth name the same file/);
    expect(existsSync(x)).toBe(false);
    // Two files: the capture is a capture, the truth is JSON.
    const t = join(tmp, 'truth.json');
    expect(cli(['generate', 'clean', '-o', x, '--truth', t]).code).toBe(0);
    expect(readFileSync(x).readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(JSON.parse(readFileSync(t, 'utf8'))).toHaveProperty('findings');
  });

  it('-w onto the capture being read: refused', () => {
    const r = cli(['-w', 'sample.pcap', 'sample.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/-w sample\.pcap: that is the capture being read/);
  });

  it('-w /dev/full: one line naming the file', () => {
    const r = cli(['-w', '/dev/full', 'sample.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: -w \/dev\/full: cannot write: no space left on device\n$/);
  });
});
