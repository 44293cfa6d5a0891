/**
 * Throughput of the reassembler alone (no capture parsing). Skipped unless TCP_BENCH=1:
 *   TCP_BENCH=1 npx vitest run test/tcp/throughput.test.ts
 */
import { describe, expect, it } from 'vitest';
import { TCP_ACK, TCP_PSH, TCP_SYN } from '../../src/net/segment.js';
import { Reassembler } from '../../src/tcp/reassembler.js';
import type { FlowConsumer } from '../../src/tcp/stream.js';
import { SinkRecorder, mkSeg, pattern } from '../helpers/tcp-stream.js';

const BENCH = process.env['TCP_BENCH'] === '1';
const MSS = 1448;
const TOTAL = 1 << 30; // 1 GiB of payload per scenario

function counting(): { consumer: FlowConsumer; bytes: () => number } {
  let n = 0;
  const dir = { data: (c: { data: Uint8Array }) => void (n += c.data.length), gap: () => {}, end: () => {} };
  return { consumer: { directions: [dir, dir] }, bytes: () => n };
}

function report(name: string, segments: number, bytes: number, ns: bigint): void {
  const s = Number(ns) / 1e9;
  const rss = process.memoryUsage().rss / (1024 * 1024);
  console.log(
    `${name}: ${(segments / s / 1e6).toFixed(2)} M segments/s, ${(bytes / s / 1e9).toFixed(2)} GB/s, ` +
      `${s.toFixed(2)} s, rss ${rss.toFixed(0)} MiB`,
  );
}

describe.skipIf(!BENCH)('Reassembler throughput', () => {
  it('in-order 1448-octet segments, one flow, an ACK every second segment', () => {
    const { consumer, bytes } = counting();
    const r = new Reassembler(new SinkRecorder(), () => consumer);
    const payload = pattern(MSS);
    const data = mkSeg({ seq: 1, flags: TCP_ACK | TCP_PSH, payload });
    const ack = mkSeg({ src: '10.0.0.2', srcPort: 4420, dst: '10.0.0.1', dstPort: 40001, seq: 1, flags: TCP_ACK });
    const n = Math.floor(TOTAL / MSS);
    let frame = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      data.frame = ++frame;
      data.seq = (1 + i * MSS) >>> 0;
      r.segment(data);
      if (i & 1) {
        ack.frame = ++frame;
        ack.ack = (1 + (i + 1) * MSS) >>> 0;
        r.segment(ack);
      }
    }
    const dt = process.hrtime.bigint() - t0;
    report('in-order + ACKs', frame, n * MSS, dt);
    expect(bytes()).toBe(n * MSS);
  });

  it.each([64 * 1024, 0])('in-order, 1000 flows interleaved (flow lookup on every segment), history %i', (historyBytes) => {
    const { consumer, bytes } = counting();
    const r = new Reassembler(new SinkRecorder(), () => consumer, { historyBytes });
    const payload = pattern(MSS);
    const flows = 1000;
    const segs = Array.from({ length: flows }, (_, f) => mkSeg({ srcPort: 10000 + f, seq: 1, payload }));
    const n = Math.floor(TOTAL / MSS);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const s = segs[i % flows]!;
      s.frame = i + 1;
      r.segment(s);
      s.seq = (s.seq + MSS) >>> 0;
    }
    const dt = process.hrtime.bigint() - t0;
    report(`1000 flows interleaved, history ${historyBytes}`, n, n * MSS, dt);
    expect(bytes()).toBe(n * MSS);
  });

  it('pairwise swapped segments (every other segment held and copied)', () => {
    const { consumer, bytes } = counting();
    const r = new Reassembler(new SinkRecorder(), () => consumer);
    const payload = pattern(MSS);
    r.segment(mkSeg({ seq: 0, flags: TCP_SYN }));
    const s = mkSeg({ seq: 1, payload });
    const n = Math.floor(TOTAL / MSS) & ~1;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i += 2) {
      s.frame = i + 1;
      s.seq = (1 + (i + 1) * MSS) >>> 0;
      r.segment(s);
      s.frame = i + 2;
      s.seq = (1 + i * MSS) >>> 0;
      r.segment(s);
    }
    const dt = process.hrtime.bigint() - t0;
    report('pairwise swapped', n, n * MSS, dt);
    expect(bytes()).toBe(n * MSS);
  });

  it('lossy: one segment in 50 never captured, resolved by the reorder window', () => {
    const { consumer, bytes } = counting();
    const r = new Reassembler(new SinkRecorder(), () => consumer, { reorderWindow: 256 * 1024 });
    const payload = pattern(MSS);
    const s = mkSeg({ seq: 1, payload });
    const n = Math.floor(TOTAL / MSS);
    let sent = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      if (i % 50 === 7) continue;
      s.frame = i + 1;
      s.seq = (1 + i * MSS) >>> 0;
      r.segment(s);
      sent += MSS;
    }
    r.finish();
    const dt = process.hrtime.bigint() - t0;
    report('lossy 2%', n, sent, dt);
    expect(bytes()).toBe(sent);
  });
});
