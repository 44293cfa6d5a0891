/**
 * The pcapng writer's blocks against the pcapng draft's layout (sections 3, 4.1-4.3), the packet
 * comments' text and bounds, and the streaming window's delay.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BlockFile,
  epbBlock,
  BT_EPB,
  idbBlock,
  shbBlock,
  splitTimestamp,
  stringOption,
} from '../../src/report/pcapng-writer.js';
import { findingComment, FrameComments, MAX_MESSAGE, MAX_PER_FRAME } from '../../src/report/packet-comments.js';
import { StreamAnnotator } from '../../src/report/annotate-stream.js';
import type { Finding } from '../../src/vocabulary/findings.js';
import type { PacketRecord } from '../../src/capture/packet.js';
import { readCapture } from '../../src/capture/read-capture.js';

/** Options of a block from `at` (code, length, value), read as the draft lays them out, up to opt_endofopt. */
function options(b: Uint8Array, at: number, le = true): Array<{ code: number; value: Uint8Array }> {
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const out: Array<{ code: number; value: Uint8Array }> = [];
  for (;;) {
    const code = v.getUint16(at, le);
    const len = v.getUint16(at + 2, le);
    if (code === 0) {
      expect(len).toBe(0);
      expect(at + 4).toBe(b.length - 4); // opt_endofopt is last, then the trailing length
      return out;
    }
    out.push({ code, value: b.subarray(at + 4, at + 4 + len) });
    for (let i = at + 4 + len; i < at + 4 + ((len + 3) & ~3); i++) expect(b[i]).toBe(0); // zero padding
    at += 4 + ((len + 3) & ~3);
  }
}

const finding = (o: Partial<Finding> = {}): Finding => ({
  rule: 'mpa.crc-mismatch',
  severity: 'error',
  rfcErrorCode: 2,
  flow: 1,
  from: '10.0.0.1:1',
  frames: [3],
  seq: 1000,
  message: 'CRC bad',
  ...o,
});

describe('blocks', () => {
  it.each([0, 1, 2, 3, 4, 5, 7, 8])(
    'an EPB with %i data octets and comments of 1 to 5 octets: lengths, padding, options',
    (n) => {
      const data = Uint8Array.from({ length: n }, (_, i) => i + 1);
      const texts = ['a', 'bb', 'ccc', 'dddd', 'eéé'];
      const b = epbBlock(
        BT_EPB,
        { ifid: 2, tsHi: 7, tsLo: 9, origLen: n + 10 },
        data,
        true,
        null,
        texts.map((t) => stringOption(1, t)),
      );
      const v = new DataView(b.buffer);
      expect(b.length % 4).toBe(0);
      expect(v.getUint32(0, true)).toBe(6);
      expect(v.getUint32(4, true)).toBe(b.length);
      expect(v.getUint32(b.length - 4, true)).toBe(b.length);
      expect([v.getUint32(8, true), v.getUint32(12, true), v.getUint32(16, true)]).toEqual([2, 7, 9]);
      expect([v.getUint32(20, true), v.getUint32(24, true)]).toEqual([n, n + 10]);
      expect(b.subarray(28, 28 + n)).toEqual(data);
      const opts = options(b, 28 + ((n + 3) & ~3));
      expect(opts.map((o) => o.code)).toEqual([1, 1, 1, 1, 1]);
      expect(opts.map((o) => new TextDecoder().decode(o.value))).toEqual(texts);
    },
  );

  it('no comments: no options field at all (the block ends after the padded data)', () => {
    const b = epbBlock(BT_EPB, { ifid: 0, tsHi: 0, tsLo: 0, origLen: 3 }, Uint8Array.of(1, 2, 3), true, null, []);
    expect(b.length).toBe(32 + 4);
  });

  it('big-endian sections are written big-endian throughout', () => {
    const shb = shbBlock(false, []);
    const v = new DataView(shb.buffer);
    expect(v.getUint32(0, false)).toBe(0x0a0d0d0a);
    expect(v.getUint32(8, false)).toBe(0x1a2b3c4d);
    expect(v.getBigInt64(16, false)).toBe(-1n); // section length unknown
    const idb = idbBlock(105, 65535, false, [{ code: 9, value: Uint8Array.of(9) }]);
    const iv = new DataView(idb.buffer);
    expect([iv.getUint16(8, false), iv.getUint32(12, false)]).toEqual([105, 65535]);
    expect(options(idb, 16, false)).toEqual([{ code: 9, value: Uint8Array.of(9) }]);
  });

  it('timestamps split into 32-bit halves exactly, also beyond 2^53 units (nanoseconds today)', () => {
    for (const [sec, frac, unit] of [
      [0, 0, 1e6],
      [1_700_000_000, 123_456, 1e6],
      [1_700_000_000, 999_999_999, 1e9],
      [4_294_967_295, 999_999_999, 1e9],
      [65_536, 1, 1e9],
    ] as const) {
      const [hi, lo] = splitTimestamp(sec, frac, unit);
      const want = BigInt(sec) * BigInt(unit) + BigInt(frac);
      expect((BigInt(hi) << 32n) | BigInt(lo)).toBe(want);
      expect(lo).toBeLessThan(2 ** 32);
    }
  });

  it('a write to a full disk throws ENOSPC (the CLI turns it into one line)', () => {
    const f = new BlockFile('/dev/full');
    f.write(new Uint8Array(16));
    expect(() => f.close()).toThrow(/ENOSPC/);
  });
});

describe('comments', () => {
  it('severity, rule, MPA error code, stream (from 0), seq and message', () => {
    expect(findingComment(finding())).toBe(
      'mpa-dissect: error mpa.crc-mismatch [MPA error 2] stream 0 seq 1000: CRC bad',
    );
    expect(findingComment(finding({ rfcErrorCode: null, flow: null, seq: null, severity: 'info' }))).toBe(
      'mpa-dissect: info mpa.crc-mismatch: CRC bad',
    );
  });

  it('control characters are escaped and a long message is cut', () => {
    const c = findingComment(finding({ message: 'a\nb\x1b[2Jc\x00' }));
    expect(c).toContain('a\\nb\\x1b[2Jc\\x00');
    expect(c).not.toMatch(/[\x00-\x1f]/);
    const long = findingComment(finding({ message: 'x'.repeat(100_000) }));
    expect(long.length).toBeLessThan(MAX_MESSAGE + 100);
    expect(long.endsWith('…')).toBe(true);
  });

  it('one comment per frame named, once per frame; beyond the per-frame cap, one line counting the rest', () => {
    const c = new FrameComments();
    c.add(finding({ frames: [3, 3, 4] }));
    expect(c.get(3)).toHaveLength(1);
    expect(c.get(4)).toHaveLength(1);
    expect(c.get(5)).toHaveLength(0);
    for (let i = 0; i < MAX_PER_FRAME + 5; i++) c.add(finding({ frames: [9], seq: i }));
    const l = c.get(9);
    expect(l).toHaveLength(MAX_PER_FRAME + 1);
    expect(l.at(-1)).toBe('mpa-dissect: 5 more findings on this frame (see the report)');
  });

  it('findings naming no frame go to the section', () => {
    const c = new FrameComments();
    c.add(finding({ frames: [] }));
    expect(c.section).toHaveLength(1);
    expect(c.size).toBe(0);
  });
});

describe('streaming window', () => {
  const rec = (frame: number): PacketRecord => ({
    frame,
    tsSec: 1_700_000_000,
    tsNsec: frame,
    linkType: 1,
    data: new Uint8Array(60),
    origLen: 60,
    fileOffset: 0,
    interfaceId: 0,
  });

  it('a frame waits for its findings until the window passes it; a finding after that is counted late', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-ann-'));
    try {
      const out = new BlockFile(join(dir, 'x.pcapng'));
      const c = new FrameComments();
      const w = new StreamAnnotator(out, c, 'test', 0, { frames: 3, bytes: Infinity, ms: Infinity });
      for (let f = 1; f <= 4; f++) w.note(rec(f)); // frame 1 leaves the window (3 held)
      expect(w.written).toBe(1);
      c.add(finding({ frames: [2] })); // still held: carried
      c.add(finding({ frames: [1] })); // already written: late
      w.end();
      out.close();
      expect(c.late).toBe(1);
      const file = readFileSync(join(dir, 'x.pcapng'));
      expect(file.includes(Buffer.from('CRC bad'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('held bytes live in a ring of the window size: frames of many sizes come out whole and in order', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-ann-'));
    try {
      const path = join(dir, 'ring.pcapng');
      const out = new BlockFile(path);
      const w = new StreamAnnotator(out, new FrameComments(), 'test', 0, { frames: 1000, bytes: 256, ms: Infinity });
      const sizes = [60, 90, 10, 0, 120, 200, 256, 300, 33, 77, 1, 180, 64, 64, 64, 64, 5];
      // A reused buffer, as the capture readers lend theirs: the ring must hold copies.
      const lent = new Uint8Array(400);
      sizes.forEach((n, i) => {
        lent.fill(i + 1, 0, n);
        w.note({ ...rec(i + 1), data: lent.subarray(0, n), origLen: n });
        lent.fill(0xee);
      });
      w.end();
      out.close();
      const back: Array<[number, number[]]> = [];
      await readCapture(path, (p) => back.push([p.tsNsec, [...new Set(p.data)]]));
      expect(back.map(([ns]) => ns)).toEqual(sizes.map((_, i) => i + 1));
      expect(back.map(([, v]) => v)).toEqual(sizes.map((n, i) => (n === 0 ? [] : [i + 1])));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('live: frames older than the delay are written on a tick', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-ann-'));
    try {
      const out = new BlockFile(join(dir, 'x.pcapng'));
      const w = new StreamAnnotator(out, new FrameComments(), 'test', 0, { frames: 100, bytes: Infinity, ms: 1000 });
      w.note(rec(1), 0);
      w.note(rec(2), 500);
      w.age(999);
      expect(w.written).toBe(0);
      w.age(1000);
      expect(w.written).toBe(1);
      w.end();
      out.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
