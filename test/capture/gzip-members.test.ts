/**
 * gunzip() member by member (RFC 1952): every member's data, the trailer checked, and octets after
 * the last member reported once (as `gunzip -c` does) with the data before them kept whole.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gunzip } from '../../src/capture/gzip.js';

async function all(parts: Uint8Array[], chunk = 7): Promise<{ out: Buffer; trailing: number[] }> {
  const whole = Buffer.concat(parts);
  const pieces: Uint8Array[] = [];
  for (let i = 0; i < whole.length; i += chunk) pieces.push(whole.subarray(i, i + chunk));
  const trailing: number[] = [];
  const out: Buffer[] = [];
  for await (const c of gunzip(
    (async function* () {
      yield* pieces;
    })(),
    (n) => trailing.push(n),
  ))
    out.push(Buffer.from(c));
  return { out: Buffer.concat(out), trailing };
}

const data = (n: number, seed: number) =>
  Buffer.from(Array.from({ length: n }, (_, i) => (i * seed + (i >> 7)) & 0xff));

describe('gunzip', () => {
  it('several members, fed in any piece size: their data in order, nothing trailing', async () => {
    const a = data(100_000, 7);
    const b = data(3, 11);
    for (const chunk of [1, 7, 4096, 1 << 20]) {
      const r = await all([gzipSync(a), gzipSync(b), gzipSync(Buffer.alloc(0))], chunk);
      expect(r.out.equals(Buffer.concat([a, b]))).toBe(true);
      expect(r.trailing).toEqual([]);
    }
  });

  it('a header with FEXTRA, FNAME, FCOMMENT and FHCRC is skipped as RFC 1952 section 2.3 lays it out', async () => {
    const a = data(1000, 3);
    const plain = gzipSync(a);
    const head = Buffer.from([0x1f, 0x8b, 8, 2 | 4 | 8 | 16, 0, 0, 0, 0, 0, 3, 3, 0, 1, 2, 3]);
    const member = Buffer.concat([head, Buffer.from('name\0comment\0'), Buffer.from([0xaa, 0xbb]), plain.subarray(10)]);
    expect((await all([member])).out.equals(a)).toBe(true);
  });

  it('junk after the last member: the data kept whole, one report of the junk octets; zero padding is silent', async () => {
    const a = data(300_000, 5);
    for (const junk of ['JUNKJUNKJUNK', '\x1f\x8bJUNK', '\x1f']) {
      const r = await all([gzipSync(a), Buffer.from(junk, 'latin1')], 4096);
      expect(r.out.equals(a)).toBe(true);
      expect(r.trailing).toEqual([junk.length]);
    }
    const padded = await all([gzipSync(a), Buffer.alloc(512)]);
    expect(padded.trailing).toEqual([]);
  });

  it('a member cut short, a wrong CRC, no gzip at all: "gzip: ..." errors', async () => {
    const z = gzipSync(data(50_000, 9));
    await expect(all([z.subarray(0, z.length - 3)])).rejects.toThrow('gzip: unexpected end of file');
    await expect(all([z.subarray(0, 200)])).rejects.toThrow('gzip: unexpected end of file');
    const bad = Buffer.from(z);
    bad[bad.length - 6]! ^= 1;
    await expect(all([bad])).rejects.toThrow('gzip: incorrect data check');
    await expect(all([Buffer.from('not gzip')])).rejects.toThrow('gzip: incorrect header check');
  });
});
