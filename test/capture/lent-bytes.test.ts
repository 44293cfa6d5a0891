/**
 * Held bytes kept as views into the reader's buffers (src/capture/lent-bytes.ts) read exactly as
 * copies would: a log fed lent views gives the same bytes, frames and replay as one fed copies,
 * whatever is dropped and whenever the reader recycles; and whole analyses read with a tiny read
 * size (the reader recycles a buffer every packet or two, so held views become copies at every
 * point of the framing) equal the analyses read in one piece, for every capture we have.
 */
import { readdirSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ByteLog } from '../../dissectors/mpa/byte-log.js';
import { isLent, lend, recycling, unlend } from '../../src/capture/lent-bytes.js';
import { analyze } from '../../src/analysis/pipeline.js';
import { buildReport } from '../../src/report/json-report.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { sharedCaptures } from '../helpers/analyze.js';

/** Deterministic pseudo-random numbers (the cases must not depend on the run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Dump {
  base: number;
  end: number;
  bytes: Uint8Array;
  pieces: [Uint8Array, number, number, boolean, boolean][];
  frames: number[];
}

function dump(log: ByteLog): Dump {
  const pieces: Dump['pieces'] = [];
  log.replay(log.base, (d, off, fr, s, e) => pieces.push([d.slice(), off, fr, s, e]));
  return { base: log.base, end: log.end, bytes: log.bytes.slice(), pieces, frames: log.framesIn(log.base, log.end) };
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;
const sameNumbers = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

/**
 * expect(dump(a)).toEqual(dump(b)), with the octets compared as octets: deep equality over arrays of
 * numbers per octet was most of this file's time. On a difference the dumps go to toEqual as arrays
 * of numbers, as before, for its message.
 */
function expectSameDump(a: Dump, b: Dump): void {
  const same =
    Object.is(a.base, b.base) &&
    Object.is(a.end, b.end) &&
    sameBytes(a.bytes, b.bytes) &&
    sameNumbers(a.frames, b.frames) &&
    a.pieces.length === b.pieces.length &&
    a.pieces.every((p, i) => {
      const q = b.pieces[i]!;
      return sameBytes(p[0], q[0]) && sameNumbers(p.slice(1), q.slice(1));
    });
  if (same) return;
  const plain = (d: Dump) => ({
    ...d,
    bytes: Array.from(d.bytes),
    pieces: d.pieces.map(([x, ...rest]) => [Array.from(x), ...rest]),
  });
  expect(plain(a)).toEqual(plain(b));
}

/** expect(actual).toBe(expected), through expect only when it fails: 48,000 of them made a tenth of the file's time. */
function toBe(actual: unknown, expected: unknown): void {
  if (!Object.is(actual, expected)) expect(actual).toBe(expected);
}

describe('ByteLog with lent views', () => {
  it('reads as a log of copies through random appends, drops, resets and recycles', () => {
    const r = rng(7);
    for (let round = 0; round < 200; round++) {
      const reader = new Uint8Array(1 << 16);
      for (let i = 0; i < reader.length; i++) reader[i] = (i * 31 + round) & 0xff;
      lend(reader);
      const lentLog = new ByteLog();
      const copyLog = new ByteLog();
      let pos = 0;
      let off = 1000;
      lentLog.reset(off);
      copyLog.reset(off);
      try {
        for (let step = 0; step < 60; step++) {
          const x = r();
          if (x < 0.55) {
            const n = 1 + Math.floor(r() * 1500);
            if (pos + n > reader.length) pos = 0;
            const view = reader.subarray(pos, pos + n);
            const frame = step + 1;
            const s = r() < 0.8;
            const e = r() < 0.8;
            toBe(isLent(view), true);
            lentLog.appendLent(view, frame, s, e);
            copyLog.append(view, 0, n, frame, s, e);
            pos += n;
            off += n;
          } else if (x < 0.8) {
            const to = copyLog.base + Math.floor(r() * (copyLog.length + 10));
            const keep = r() < 0.5;
            lentLog.dropBefore(to, keep);
            copyLog.dropBefore(to, keep);
          } else if (x < 0.9) {
            // The reader reuses its buffer: lent views become copies, then the old bytes are overwritten.
            recycling();
            reader.fill(0xee);
          } else if (x < 0.95) {
            const fresh = new Uint8Array(1 + Math.floor(r() * 300)).fill(round & 0xff);
            toBe(isLent(fresh), false);
            lentLog.appendLent(fresh, 999, true, true);
            copyLog.append(fresh, 0, fresh.length, 999, true, true);
            off += fresh.length;
          } else {
            lentLog.reset(off);
            copyLog.reset(off);
          }
          toBe(lentLog.length, copyLog.length);
          toBe(lentLog.end, copyLog.end);
          toBe(lentLog.base, copyLog.base);
          if (step % 10 === 9) expectSameDump(dump(lentLog), dump(copyLog));
        }
        expectSameDump(dump(lentLog), dump(copyLog));
      } finally {
        recycling();
        unlend(reader);
      }
    }
  });

  it('copies what is not lent at once', () => {
    const log = new ByteLog();
    log.reset(0);
    const own = new Uint8Array([1, 2, 3, 4]);
    log.appendLent(own, 1, true, true);
    own.fill(9);
    expect(Array.from(log.bytes)).toEqual([1, 2, 3, 4]);
  });

  it('keeps a lent view as a view until the reader recycles (no copy per octet)', () => {
    const reader = new Uint8Array(64).fill(5);
    lend(reader);
    try {
      const log = new ByteLog();
      log.reset(0);
      log.appendLent(reader.subarray(0, 8), 1, true, true);
      reader[0] = 6; // still a view: the change shows
      recycling(); // now a copy
      reader[1] = 7;
      expect(Array.from(log.bytes)).toEqual([6, 5, 5, 5, 5, 5, 5, 5]);
    } finally {
      unlend(reader);
    }
  });
});

function capturesIn(dir: string | null): string[] {
  if (dir === null || !existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...capturesIn(p));
    else if (/\.pcap(ng)?$/.test(name)) out.push(p);
  }
  return out;
}

async function analysis(path: string, chunkSize?: number): Promise<string> {
  const records: unknown[] = [];
  const r = await analyze(path, {
    upper: defaultUpper,
    ...(chunkSize !== undefined ? { chunkSize } : {}),
    onFpdu: (f) => records.push([f.seq, f.frames, f.ulpduLength, f.crcStatus, Array.from(f.head)]),
    onStartup: (s) => records.push([s.seq, s.frames, Array.from(s.privateData)]),
  });
  return JSON.stringify({ report: buildReport(r), records });
}

describe('analyses read a packet at a time equal analyses read in one piece', () => {
  const here = join(import.meta.dirname, '..', '..', 'captures');
  const real = sharedCaptures('real');
  const reference = sharedCaptures('reference');
  const files = [...capturesIn(here), ...capturesIn(real), ...capturesIn(reference)];
  if (real === null || reference === null)
    it.skip('../shared/captures/{real,reference} absent: only the project captures are compared', () => {});
  it(`${files.length} captures: sample, corpus, real and reference`, async () => {
    expect(files.length).toBeGreaterThan(100);
    for (const f of files) {
      const whole = await analysis(f);
      // 997 octets a read: every read recycles the other buffer, mid-FPDU and mid-record.
      const small = await analysis(f, 997);
      expect(small.replace(/"path":"[^"]*"/, ''), f).toBe(whole.replace(/"path":"[^"]*"/, ''));
    }
  }, 600_000);
});
