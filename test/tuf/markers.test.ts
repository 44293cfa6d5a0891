/** Marker mode (draft-ietf-tsvwg-tcp-ulp-frame-00 §6): generated captures, exact counts. */
import { describe, expect, it } from 'vitest';
import { buildScenario } from '../../src/generate/scenario.js';
import { markerStream, ulpPdus } from '../../src/generate/tuf.js';
import { runTuf } from './helpers.js';

// PDUs longer than the interval: every PDU start has a marker pointing at it, so the count is exact.
const big = [3000, 2500, 4100, 2200, 5000, 2100];

function dirOf(r: { tuf: Record<string, unknown> | null }, i: 0 | 1): Record<string, unknown> {
  return (r.tuf!['directions'] as Array<Record<string, unknown>>)[i]!;
}

describe('TUF marker mode', () => {
  it('clean, interval 2048 inferred: exact PDU and marker counts, no findings', async () => {
    const m = markerStream(ulpPdus(big, 5), 2048);
    const sc = buildScenario([
      { dir: 0, bytes: m.bytes, cut: 'mss' },
      { dir: 1, bytes: new TextEncoder().encode('OK\r\n'), cut: 'mss' },
    ]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(r.tuf).toMatchObject({ mode: 'markers', detection: 'heuristic' });
    expect(dirOf(r, 0)).toMatchObject({
      start: sc.dataSeq[0],
      interval: 2048,
      markers: m.markerAt.length,
      pdus: big.length,
      key: null,
      framingPdus: null,
    });
    expect(dirOf(r, 1)).toMatchObject({ start: null, markers: 0, pdus: 0 });
    expect(r.records.map((x) => x.length)).toEqual(big);
    expect(r.records.map((x) => (x.seq + (x.pduStart - x.start)) >>> 0)).toEqual(
      m.pduStarts.map((s) => (sc.dataSeq[0] + s) >>> 0),
    );
  });

  it('enabled per direction after a plain-text exchange (§4), a different interval each way: both found where they begin', async () => {
    const enc = new TextEncoder();
    const hello = enc.encode('TUF HELLO markers=2048\r\n');
    const ok = enc.encode('TUF OK markers=1024\r\n');
    const back = [1500, 2600, 1100, 3000];
    const a = markerStream(ulpPdus(big, 5), 2048);
    const b = markerStream(ulpPdus(back, 6), 1024);
    const sc = buildScenario([
      { dir: 0, bytes: hello, cut: 'mss' },
      { dir: 1, bytes: ok, cut: 'mss' },
      { dir: 0, bytes: a.bytes, cut: 'mss' },
      { dir: 1, bytes: b.bytes, cut: 'mss' },
    ]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(r.tuf).toMatchObject({ mode: 'markers', detection: 'heuristic' });
    // Each direction's enablement point is its first octet after its own plain text.
    expect(dirOf(r, 0)).toMatchObject({
      start: (sc.dataSeq[0] + hello.length) >>> 0,
      interval: 2048,
      markers: a.markerAt.length,
      pdus: big.length,
    });
    expect(dirOf(r, 1)).toMatchObject({
      start: (sc.dataSeq[1] + ok.length) >>> 0,
      interval: 1024,
      markers: b.markerAt.length,
      pdus: back.length,
    });
    expect(r.records.filter((x) => x.dir === 0).map((x) => x.length)).toEqual(big);
    expect(r.records.filter((x) => x.dir === 1).map((x) => x.length)).toEqual(back);
  });

  it('split markers are normal: counted, never a finding', async () => {
    const m = markerStream(ulpPdus(big, 5), 512);
    // Segment boundaries two octets into every marker: each copy whole in one segment.
    const sc = buildScenario([{ dir: 0, bytes: m.bytes, cut: [514, ...new Array<number>(80).fill(512)] }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(dirOf(r, 0)).toMatchObject({ interval: 512, markers: m.markerAt.length, pdus: big.length });
    expect(dirOf(r, 0)['splitMarkers']).toBeGreaterThan(3);
  });

  it('framing enabled mid-connection: the first (zero) marker where it starts', async () => {
    const hello = new TextEncoder().encode('HELLO framing=markers interval=1024\r\n');
    const m = markerStream(ulpPdus(big.slice(0, 4), 7), 1024);
    const sc = buildScenario([
      { dir: 0, bytes: hello },
      { dir: 0, bytes: m.bytes, cut: 'mss' },
    ]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(dirOf(r, 0)).toMatchObject({ start: (sc.dataSeq[0] + hello.length) >>> 0, interval: 1024, pdus: 4 });
  });

  it('two copies that disagree: an error on that marker only', async () => {
    const m = markerStream(ulpPdus(big, 5), 2048, { npo2: (k, v) => (k === 3 ? v + 40 : v) });
    const sc = buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.marker-copies-differ']);
    expect(r.findings[0]!.severity).toBe('error');
    expect(r.findings[0]!.seq).toBe((sc.dataSeq[0] + m.markerAt[3]!) >>> 0);
    expect(r.records.map((x) => x.length)).toEqual(big);
  });

  it('a marker pointing inside a PDU other markers delimit', async () => {
    // A 9000-octet PDU spans several markers; one of them (not the first) points 100 octets short.
    const pdus = ulpPdus([3000, 9000, 2500], 5);
    const m = markerStream(pdus, 2048);
    const inside = m.markerAt.findIndex((p) => p > m.pduStarts[1]! + 2048);
    const bad = markerStream(pdus, 2048, { npo: (k, v) => (k === inside ? v - 100 : v) });
    const sc = buildScenario([{ dir: 0, bytes: bad.bytes, cut: 'mss' }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.marker-offset-contradicted']);
    expect(r.findings[0]!.seq).toBe((sc.dataSeq[0] + m.markerAt[inside]!) >>> 0);
    expect(r.records.map((x) => x.length)).toEqual([3000, 9000, 2500]);
  });

  it('the last marker pointing past the end of a closed stream', async () => {
    const m = markerStream(ulpPdus(big, 5), 2048, { npo: (k, v) => (k === 0 || k < 0 ? v : v) });
    const last = m.markerAt.length - 1;
    const bad = markerStream(ulpPdus(big, 5), 2048, { npo: (k, v) => (k === last ? v + 500 : v) });
    const sc = buildScenario([{ dir: 0, bytes: bad.bytes, cut: 'mss' }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.marker-past-end']);
    expect(r.findings[0]!.severity).toBe('warning');
    void m;
  });

  it('--tuf interval=N,start=SEQ frames from the given start', async () => {
    const m = markerStream(ulpPdus([3000, 2500], 5), 2048);
    const sc = buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }]);
    const r = await runTuf(sc.pcap, {
      forcedTuf: [
        {
          selector: { kind: 'all' },
          tuf: { mode: 'markers', key: [null, null], interval: 2048, start: [sc.dataSeq[0], null] },
        },
      ],
    });
    expect(r.tuf).toMatchObject({ mode: 'markers', detection: 'forced' });
    expect(r.rules).toEqual([]);
    expect(dirOf(r, 0)).toMatchObject({ interval: 2048, pdus: 2, markers: m.markerAt.length });
  });
});

describe('TUF marker rules that need --tuf', () => {
  it('tuf.first-marker-not-zero when the given start holds a non-zero marker, silent on the zero one', async () => {
    const m = markerStream(ulpPdus([3000, 2500], 5), 2048);
    const sc = buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }]);
    const at = (off: number) => ({
      forcedTuf: [
        {
          selector: { kind: 'all' as const },
          tuf: {
            mode: 'markers' as const,
            key: [null, null] as [null, null],
            interval: 2048,
            start: [(sc.dataSeq[0] + off) >>> 0, null] as [number, null],
          },
        },
      ],
    });
    expect((await runTuf(sc.pcap, at(0))).rules).toEqual([]);
    const r = await runTuf(sc.pcap, at(2048));
    expect(r.rules).toEqual(['tuf.first-marker-not-zero']);
  });
});
