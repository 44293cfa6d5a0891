/**
 * Out-of-order insertion stays cheap per segment (issue 8): one-octet segments arriving in reverse
 * order used to cost O(n) each (a sorted array spliced at its front), 15 s for 200,000 of them.
 * The bounds here are generous "does not hang" limits; speed itself is measured by `npm run bench`.
 */
import { describe, expect, it } from 'vitest';
import { TCP_ACK, TCP_SYN, type TcpSegment } from '../../src/net/segment.js';
import { Reassembler } from '../../src/tcp/reassembler.js';
import type { DirectionConsumer, StreamChunk } from '../../src/tcp/stream.js';
import { HeldQueue } from '../../src/tcp/held-queue.js';
import { SinkRecorder, mkSeg } from '../helpers/tcp-stream.js';

/** Checks the delivered stream is 0, 1, 2, ... (mod 256) without keeping it. */
class OrderChecker implements DirectionConsumer {
  next = 0;
  chunks = 0;
  gaps = 0;
  bad = 0;
  data(c: StreamChunk): void {
    this.chunks++;
    if (c.offset !== this.next) this.bad++;
    for (let i = 0; i < c.data.length; i++) if (c.data[i] !== ((c.offset + i) & 0xff)) this.bad++;
    this.next = c.offset + c.data.length;
  }
  gap(offset: number, _seq: number, length: number): void {
    this.gaps++;
    this.next = offset + length;
  }
  end(): void {}
}

/** A SYN, then n one-octet segments from the last to the first. */
function reversed(r: Reassembler, n: number): void {
  const isn = 5000;
  r.segment(mkSeg({ frame: 1, seq: isn, flags: TCP_SYN }));
  // One segment object, refilled: the test measures the reassembler, not the allocation of segments.
  const seg: TcpSegment = mkSeg({ frame: 2, seq: 0, flags: TCP_ACK, payload: new Uint8Array(1) });
  const payload = seg.payload;
  for (let k = 0; k < n; k++) {
    const i = n - 1 - k;
    seg.frame = k + 2;
    seg.seq = (isn + 1 + i) >>> 0;
    payload[0] = i & 0xff;
    r.segment(seg);
  }
}

describe('out-of-order insertion at scale', () => {
  it('1,000,000 one-octet segments in reverse order are delivered in order, in seconds', { timeout: 60_000 }, () => {
    const n = 1_000_000;
    const dir = new OrderChecker();
    const sink = new SinkRecorder();
    const r = new Reassembler(sink, () => ({ directions: [dir, new OrderChecker()] }), {
      // Room for all of it: the point is the insertion cost, not the caps.
      maxBufferedPerFlow: 1024 * 1024 * 1024,
      maxBufferedTotal: 1024 * 1024 * 1024,
      reorderWindow: 2 * n,
    });
    const t0 = performance.now();
    reversed(r, n);
    r.finish();
    const ms = performance.now() - t0;
    expect(dir.bad).toBe(0);
    expect(dir.gaps).toBe(0);
    expect(dir.next).toBe(n);
    expect(dir.chunks).toBe(n);
    expect(r.flows()[0]!.directions[0].bytes).toBe(n);
    expect(ms).toBeLessThan(30_000);
  });

  it('with the default caps the same input ends in bounded buffers and a buffer-cap finding', {
    timeout: 60_000,
  }, () => {
    const n = 1_000_000;
    const dir = new OrderChecker();
    const sink = new SinkRecorder();
    const r = new Reassembler(sink, () => ({ directions: [dir, new OrderChecker()] }));
    reversed(r, n);
    expect(r.bufferedBytes()).toBeLessThanOrEqual(16 * 1024 * 1024 + 64);
    r.finish();
    expect(dir.bad).toBe(0);
    expect(dir.next).toBe(n);
    expect(sink.of('tcp.buffer-cap').length).toBeGreaterThan(0);
  });
});

describe('HeldQueue', () => {
  it('keeps pieces sorted whatever the insertion order, and takes from both ends', () => {
    const q = new HeldQueue<{ off: number; end: number }>();
    // A deterministic shuffle of 5,000 disjoint pieces [2k, 2k+1).
    const order = Array.from({ length: 5000 }, (_, k) => (k * 2903) % 5000);
    for (const k of order) q.insert({ off: 2 * k, end: 2 * k + 1 });
    expect(q.size).toBe(5000);
    expect(q.ceilEnd(0)!.off).toBe(0);
    expect(q.ceilEnd(1)!.off).toBe(2);
    expect(q.ceilEnd(7)!.off).toBe(8);
    expect(q.ceilEnd(9999)).toBeNull();
    expect(q.pop().off).toBe(9998);
    expect(q.last()!.off).toBe(9996);
    const seen: number[] = [];
    q.forEach((p) => {
      seen.push(p.off);
    });
    expect(seen).toEqual(Array.from({ length: 4999 }, (_, k) => 2 * k));
    for (let k = 0; k < 100; k++) expect(q.shift().off).toBe(2 * k);
    // Insert in front of the first piece (a slot freed by shift), then in the middle again.
    q.insert({ off: 199, end: 200 });
    expect(q.first()!.off).toBe(199);
    q.insert({ off: 5001, end: 5002 });
    expect(q.ceilEnd(5001)!.off).toBe(5001);
    let prev = -1;
    let count = 0;
    q.forEach((p) => {
      expect(p.off).toBeGreaterThan(prev);
      prev = p.off;
      count++;
    });
    expect(count).toBe(q.size);
    while (q.size > 0) q.shift();
    expect(q.first()).toBeNull();
    expect(q.last()).toBeNull();
  });

  it('in reverse order: new first chunks filled from their ends, still sorted, taken from both ends', () => {
    const q = new HeldQueue<{ off: number; end: number }>();
    const n = 2000; // several chunks of 256 before a full one
    for (let k = n - 1; k >= 0; k--) q.insert({ off: 2 * k, end: 2 * k + 1 });
    // One in the middle and one in front of everything, between the pieces.
    q.insert({ off: 1001, end: 1002 });
    expect(q.size).toBe(n + 1);
    const seen: number[] = [];
    q.forEach((p) => {
      seen.push(p.off);
    });
    const want = Array.from({ length: n }, (_, k) => 2 * k);
    want.splice(501, 0, 1001);
    expect(seen).toEqual(want);
    expect(q.ceilEnd(1001)!.off).toBe(1001);
    expect(q.ceilEnd(1002)!.off).toBe(1002);
    expect(q.first()!.off).toBe(0);
    expect(q.last()!.off).toBe(2 * (n - 1));
    expect(q.shift().off).toBe(0);
    expect(q.pop().off).toBe(2 * (n - 1));
    const rest: number[] = [];
    while (q.size > 0) rest.push(q.size % 2 ? q.shift().off : q.pop().off);
    expect(rest.sort((a, b) => a - b)).toEqual(want.slice(1, -1));
    expect(q.first()).toBeNull();
  });
});
