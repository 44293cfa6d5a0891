/** The default of --threads: one thread unless a capture file is big enough and cores are left over. */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultThreads, THREADS_MIN_BYTES } from '../../src/analysis/parallel/thread-count.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-thread-count-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('defaultThreads', () => {
  const small = join(dir, 'small.pcap');
  writeFileSync(small, new Uint8Array(1000));
  const big = join(dir, 'big.pcap');
  writeFileSync(big, new Uint8Array(0));
  truncateSync(big, THREADS_MIN_BYTES); // sparse: the size is what counts

  it('is 1 for a small file, a stream, and a file that cannot be read', () => {
    expect(defaultThreads(small, false)).toBe(1);
    expect(defaultThreads(big, true)).toBe(1);
    expect(defaultThreads(join(dir, 'absent.pcap'), false)).toBe(1);
  });
  it(`for a big file: the cores but one when that is at least 2, else 1 (${availableParallelism()} cores here)`, () => {
    const spare = availableParallelism() - 1;
    expect(defaultThreads(big, false)).toBe(spare >= 2 ? Math.min(16, spare) : 1);
  });
});
