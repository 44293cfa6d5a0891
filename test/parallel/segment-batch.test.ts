/**
 * A SegmentBatchWriter starts with small buffers and grows them as a batch needs: every segment
 * read back from its batch (the worker's SegmentBatchReader) is the segment added, whatever the
 * batch sizes, payload sizes (0 to 64 KiB) and reuse of buffers given back.
 */
import { describe, expect, it } from 'vitest';
import { SegmentBatchReader, SegmentBatchWriter } from '../../src/analysis/parallel/segment-batch.js';
import { blankSegment, type TcpSegment } from '../../src/net/segment.js';
import { randomInts } from '../helpers/random.js';

const PATTERN = Uint8Array.from({ length: 65536 + 251 }, (_, k) => (k * 7 + (k >> 8)) & 0xff);

describe('SegmentBatchWriter', () => {
  it('gives back every segment as added, across batches of any size, growing and reusing its buffers', () => {
    const rnd = randomInts(17);
    const w = new SegmentBatchWriter(2048, 256 * 1024);
    const r = new SegmentBatchReader();
    w.addTuple(0, '10.0.0.1', 1000, '10.0.0.2', 2000);
    let frame = 0;
    for (let b = 0; b < 30; b++) {
      const sent: Array<{ s: TcpSegment; slot: number; reverse: boolean }> = [];
      // Empty, tiny and large batches; payloads of 0 octets up to 64 KiB.
      const count = [0, 1, 5, 70, 300, 2100][rnd(6)]!;
      for (let i = 0; i < count; i++) {
        const s = blankSegment();
        const reverse = rnd(2) === 0;
        s.frame = ++frame;
        s.src = reverse ? '10.0.0.2' : '10.0.0.1';
        s.srcPort = reverse ? 2000 : 1000;
        s.dst = reverse ? '10.0.0.1' : '10.0.0.2';
        s.dstPort = reverse ? 1000 : 2000;
        s.seq = rnd(0x7fffffff);
        s.flags = 0x18;
        const n = rnd(8) === 0 ? rnd(65536) : rnd(1500);
        const at = frame % 251; // a different pattern in each segment
        s.payload = PATTERN.subarray(at, at + n);
        w.add(s, frame, 0, reverse, 0, 0);
        sent.push({ s, slot: frame, reverse });
      }
      expect(w.segments).toBe(count);
      const { batch } = w.take();
      expect(w.segments).toBe(0);
      expect(r.begin(batch)).toBe(count);
      // One assertion per batch (thousands of segments): headers as text, payloads compared.
      const show = (t: TcpSegment, slot: number) =>
        `${slot} ${t.frame} ${t.src}:${t.srcPort} ${t.dst}:${t.dstPort} ${t.seq} ${t.payload.length}`;
      const got: string[] = [];
      const payloadsDiffer: number[] = [];
      sent.forEach(({ s }, i) => {
        const t = r.read(batch, i);
        got.push(show(t, r.slot));
        if (!Buffer.from(t.payload).equals(Buffer.from(s.payload))) payloadsDiffer.push(i);
      });
      expect(got).toEqual(sent.map(({ s, slot }) => show(s, slot)));
      expect(payloadsDiffer).toEqual([]);
      // As the worker's answer does, now and then: the buffers come back for later batches.
      if (rnd(2) === 0) w.recycle(batch.rows, batch.payload);
    }
  });
});
