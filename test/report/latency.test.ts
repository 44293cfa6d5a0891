/**
 * The latency collector (src/report/latency.ts) on hand-made request timings: histogram buckets at
 * their bounds, the three phases, queues, the slowest and never-answered lists and their caps.
 * Times are whole microseconds after a base, so every expected figure is exact.
 */
import { describe, expect, it } from 'vitest';
import type { RequestTiming } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { BUCKETS_US, LATENCY_BUCKETS, LatencyCollector, unansweredText } from '../../src/report/latency.js';
import { TopN } from '../../src/report/top-n.js';

const BASE = 1_700_000_000;
const at = (us: number): number => BASE + us / 1e6;

function timing(o: {
  command?: string;
  queue?: string;
  req: number;
  first?: number;
  last?: number;
  rsp?: number;
  frame?: number;
}): RequestTiming {
  return {
    program: 'SMB2',
    command: o.command ?? 'READ',
    code: o.command === 'WRITE' ? 9 : 8,
    queue: o.queue ?? 'flow 1',
    request: at(o.req),
    firstData: o.first === undefined ? Number.NaN : at(o.first),
    lastData: o.last === undefined ? Number.NaN : at(o.last),
    response: o.rsp === undefined ? Number.NaN : at(o.rsp),
    requestFrame: o.frame ?? 1,
    ...(o.first !== undefined ? { firstDataFrame: (o.frame ?? 1) + 1 } : {}),
    ...(o.last !== undefined ? { lastDataFrame: (o.frame ?? 1) + 2 } : {}),
    ...(o.rsp !== undefined ? { responseFrame: (o.frame ?? 1) + 3 } : {}),
  };
}

describe('histogram buckets', () => {
  it('are 1, 2, 5 per decade from 1 µs to 100 s', () => {
    expect(BUCKETS_US.slice(0, 7)).toEqual([1, 2, 5, 10, 20, 50, 100]);
    expect(BUCKETS_US.at(-1)).toBe(100_000_000);
    expect(LATENCY_BUCKETS[3]).toBe(1e-5);
  });

  it('count a latency equal to a bound in that bound’s bucket, one above it in the next', () => {
    const c = new LatencyCollector();
    c.add(timing({ req: 0, rsp: 50 })); // bucket of 50 µs (index 5)
    c.add(timing({ req: 100, rsp: 151 })); // 51 µs: bucket of 100 µs (index 6)
    c.add(timing({ req: 200, rsp: 200 + 200_000_000 })); // 200 s: above every bound
    const h = c.report().commands[0]!.histogram;
    expect(h).toHaveLength(BUCKETS_US.length + 1);
    expect(h[5]).toBe(1);
    expect(h[6]).toBe(1);
    expect(h[BUCKETS_US.length]).toBe(1);
    expect(h.reduce((a, b) => a + b, 0)).toBe(3);
  });
});

describe('per command', () => {
  it('gives the SRT figures, the phases of the requests that moved data, and the queues', () => {
    const c = new LatencyCollector();
    c.add(timing({ req: 0, first: 30, last: 80, rsp: 100, queue: 'flow 1' }));
    c.add(timing({ req: 1000, first: 1010, last: 1300, rsp: 1400, queue: 'flow 2' }));
    c.add(timing({ req: 2000, rsp: 2007, queue: 'flow 2' })); // no data moved
    const [read] = c.report().commands;
    expect(read).toMatchObject({ program: 'SMB2', command: 'READ', code: 8, calls: 3 });
    expect(read!.min).toBe(7e-6);
    expect(read!.max).toBe(400e-6);
    expect(read!.sum).toBe(507e-6);
    expect(read!.p50).toBe(100e-6);
    expect(read!.phases.toFirstData).toMatchObject({ calls: 2, min: 10e-6, max: 30e-6, sum: 40e-6 });
    expect(read!.phases.firstToLastData).toMatchObject({ calls: 2, min: 50e-6, max: 290e-6 });
    expect(read!.phases.lastDataToResponse).toMatchObject({ calls: 2, min: 20e-6, max: 100e-6 });
    expect(read!.queues.map((q) => [q.queue, q.calls, q.max])).toEqual([
      ['flow 1', 1, 100e-6],
      ['flow 2', 2, 400e-6],
    ]);
    expect(c.report().queues.map((q) => [q.queue, q.calls])).toEqual([
      ['flow 1', 1],
      ['flow 2', 2],
    ]);
  });

  it('lists at most 256 queues per command; the rest count in its figures', () => {
    const c = new LatencyCollector();
    for (let i = 0; i < 300; i++) c.add(timing({ req: i * 10, rsp: i * 10 + 5, queue: `flow ${i}` }));
    const [read] = c.report().commands;
    expect(read!.calls).toBe(300);
    expect(read!.queues).toHaveLength(256);
    expect(read!.queuesOmitted).toBe(44);
  });
});

describe('slowest and never answered', () => {
  it('lists the slowest first with their frames and phases, bounded', () => {
    const c = new LatencyCollector(3);
    for (let i = 0; i < 10; i++)
      c.add(timing({ req: i * 1000, rsp: i * 1000 + ((i * 37) % 10) * 10 + 1, frame: i * 10 }));
    const s = c.slowest();
    // Latencies (i * 37 % 10) * 10 + 1 µs: the largest at i = 7, 4, 1.
    expect(s.map((r) => r.latency)).toEqual([91e-6, 81e-6, 71e-6]);
    expect(s.map((r) => r.requestFrame)).toEqual([70, 40, 10]);
    expect(s[0]).toMatchObject({ answered: true, responseFrame: 73, firstDataFrame: null });
    expect(c.report(2).slowest).toHaveLength(2);
  });

  it('lists requests never answered by how long they waited until the capture ended', () => {
    const c = new LatencyCollector(2);
    c.add(timing({ req: 500, command: 'WRITE', frame: 5 }));
    c.add(timing({ req: 100, first: 120, last: 130, frame: 1 }));
    c.add(timing({ req: 900, frame: 9 }));
    c.end(at(10_000));
    const u = c.report().unanswered;
    expect(u.count).toBe(3);
    expect(u.more).toBe(1);
    expect(u.listed.map((r) => [r.requestFrame, r.latency, r.answered])).toEqual([
      [1, 9900e-6, false],
      [5, 9500e-6, false],
    ]);
    expect(u.listed[0]).toMatchObject({ toFirstData: 20e-6, firstToLastData: 10e-6, lastDataToResponse: null });
    expect(c.report().commands).toEqual([]); // none answered: no statistics row
    const text = unansweredText(c, 'SMB2');
    expect(text).toContain('SMB2 requests never answered: 3');
    expect(text).toMatch(/\n\s+1\s+0\.009900\s+READ\s+flow 1\n/);
    expect(text).toContain('1 more not listed');
    expect(unansweredText(c, 'NFSv3')).toBe('');
  });
});

describe('bounded whatever comes', () => {
  it('200,000 requests answered and unanswered, on 5,000 queues: lists, queues and JSON stay capped', () => {
    const c = new LatencyCollector(500);
    for (let i = 0; i < 100_000; i++) {
      c.add(timing({ req: i * 10, rsp: i * 10 + (i % 1000) + 1, queue: `flow ${i % 5000}`, frame: i }));
      c.add(timing({ req: i * 10 + 5, queue: `flow ${i % 5000}`, frame: i }));
    }
    c.add({ ...timing({ req: 0 }), request: Number.NaN }); // a request of unknown time: counted, not listed
    c.end(at(2_000_000));
    expect(c.slowest()).toHaveLength(500);
    expect(c.slowest()[0]!.latency).toBe(1000e-6);
    expect(c.neverAnswered()).toHaveLength(500);
    expect(c.neverAnswered()[0]!.requestFrame).toBe(0); // the oldest waited longest
    const r = c.report();
    expect(r.slowest).toHaveLength(100);
    expect(r.unanswered).toMatchObject({ count: 100_001, more: 100_001 - 100 });
    expect(r.unanswered.listed).toHaveLength(100);
    expect(r.queues).toHaveLength(4096);
    expect(r.queuesOmitted).toBe(100_000 - (100_000 / 5000) * 4096);
    expect(r.commands[0]!.queues).toHaveLength(256);
    expect(r.commands[0]!.calls).toBe(100_000);
    expect(JSON.stringify(r).length).toBeLessThan(2_000_000);
  });
});

describe('TopN', () => {
  it('keeps the largest keys, ties to the first seen, NaN never', () => {
    const t = new TopN<string>(3);
    for (const [k, v] of [
      [5, 'a'],
      [Number.NaN, 'nan'],
      [9, 'b'],
      [5, 'c'],
      [1, 'd'],
      [9, 'e'],
      [5, 'f'],
    ] as const)
      t.add(v, k);
    expect(t.sorted()).toEqual(['b', 'e', 'a']);
    expect(t.offered).toBe(7);
  });
});
