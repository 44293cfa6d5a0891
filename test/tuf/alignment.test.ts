/** PDU alignment mode (draft-ietf-tsvwg-tcp-ulp-frame-00 §5): generated captures, exact counts. */
import { describe, expect, it } from 'vitest';
import { buildScenario } from '../../src/generate/scenario.js';
import { alignedStream, ulpPdus } from '../../src/generate/tuf.js';
import { KEY_C, KEY_S, runTuf } from './helpers.js';

const sizesC = [100, 200, 300, 50, 700, 64, 1000, 17];
const sizesS = [40, 80, 120, 33, 900];

describe('TUF alignment mode', () => {
  it('clean: one framing PDU per segment, both keys learnt, exact counts, no findings', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3));
    const b = alignedStream(KEY_S, ulpPdus(sizesS, 4));
    const sc = buildScenario([
      { dir: 0, bytes: a.bytes, cut: a.cut },
      { dir: 1, bytes: b.bytes, cut: b.cut },
    ]);
    const r = await runTuf(sc.pcap);
    expect(r.findings).toEqual([]);
    expect(r.report.flows[0]!.mpa).toBeNull();
    expect(r.tuf).toMatchObject({ mode: 'alignment', detection: 'heuristic' });
    expect(r.tuf!['directions']).toEqual([
      {
        from: '10.0.0.1:40001',
        to: '10.0.0.2:4420',
        key: '1a2b3c4d5e6f',
        start: sc.dataSeq[0],
        framingPdus: 8,
        alignedSegments: 8,
        unalignedSegments: 0,
        interval: null,
        markers: null,
        pdus: null,
        splitMarkers: null,
      },
      {
        from: '10.0.0.2:4420',
        to: '10.0.0.1:40001',
        key: '0badc0ffee11',
        start: sc.dataSeq[1],
        framingPdus: 5,
        alignedSegments: 5,
        unalignedSegments: 0,
        interval: null,
        markers: null,
        pdus: null,
        splitMarkers: null,
      },
    ]);
    expect(r.records.filter((x) => x.dir === 0).map((x) => x.length)).toEqual(sizesC);
    expect(r.records.every((x) => x.aligned && x.keyOk && x.segments === 1)).toBe(true);
  });

  it('packed ULP PDUs: Length counts all of them, not the header', async () => {
    const a = alignedStream(KEY_C, ulpPdus([10, 20, 30, 40, 50, 60, 70, 80], 5), { pack: 2 });
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(r.records.map((x) => [x.length, x.wireSize])).toEqual([
      [30, 38],
      [70, 78],
      [110, 118],
      [150, 158],
    ]);
  });

  it('re-segmented by a middlebox: key learnt by chaining Lengths, one middlebox finding, exact counts', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3));
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: { random: 1, seed: 9, max: 400 } }]);
    const r = await runTuf(sc.pcap);
    expect(r.tuf!['mode']).toBe('alignment');
    const d = (r.tuf!['directions'] as Array<Record<string, unknown>>)[0]!;
    expect(d['key']).toBe('1a2b3c4d5e6f');
    expect(d['framingPdus']).toBe(8);
    expect(d['alignedSegments']).toBe(0);
    expect(r.rules).toEqual(['tuf.middlebox']);
    expect(r.findings[0]!.severity).toBe('warning');
    expect(r.records.map((x) => x.length)).toEqual(sizesC);
    expect(r.records.every((x) => !x.aligned)).toBe(true);
  });

  it('a sender split (EMSS reduced): one info finding, not a middlebox', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3));
    // The fifth framing PDU (708 octets) goes out as 300 + 408.
    const cut = [...a.cut.slice(0, 4), 300, 408, ...a.cut.slice(5)];
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.sender-split']);
    expect(r.findings[0]!.severity).toBe('info');
    const d = (r.tuf!['directions'] as Array<Record<string, unknown>>)[0]!;
    expect([d['framingPdus'], d['alignedSegments'], d['unalignedSegments']]).toEqual([8, 7, 2]);
    expect(r.records[4]).toMatchObject({ aligned: false, segments: 2 });
  });

  it('two framing PDUs in one segment: against §5.1', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3));
    const cut = [a.cut[0]!, a.cut[1]! + a.cut[2]!, ...a.cut.slice(3)];
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.two-pdus-in-segment']);
    expect(r.records.length).toBe(8);
  });

  it('a second key in one direction: error, and its framing PDUs still counted', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3), { keys: (i) => (i === 5 ? 0x665544332211 : KEY_C) });
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.second-key']);
    expect(r.findings[0]!.severity).toBe('error');
    expect(r.findings[0]!.message).toMatch(/key 0x665544332211; this direction's key is 0x1a2b3c4d5e6f/);
    expect(r.records.length).toBe(8);
    expect(r.records.filter((x) => !x.keyOk).map((x) => x.length)).toEqual([64]);
  });

  it('a Length the stream contradicts: error naming both positions, framing resumes', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3), { length: (i, n) => (i === 3 ? n + 10 : n) });
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }]);
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual(['tuf.length-contradicted']);
    expect(r.findings[0]!.message).toMatch(/10 octets earlier/);
    // The next framing PDUs are found again: every later one is framed.
    expect(r.records.slice(-3).map((x) => x.length)).toEqual([64, 1000, 17]);
  });

  it('--tuf key= frames a flow too short for the heuristic (one framing PDU)', async () => {
    const a = alignedStream(KEY_C, ulpPdus([120], 3));
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }]);
    expect((await runTuf(sc.pcap)).tuf).toBeNull();
    const r = await runTuf(sc.pcap, {
      forcedTuf: [
        {
          selector: { kind: 'all' },
          tuf: { mode: 'alignment', key: [KEY_C, KEY_C], interval: null, start: [null, null] },
        },
      ],
    });
    expect(r.tuf).toMatchObject({ mode: 'alignment', detection: 'forced' });
    expect(r.records.map((x) => x.length)).toEqual([120]);
  });

  it('captured mid-stream: the recurring key is learnt from passing segments', async () => {
    const a = alignedStream(KEY_C, ulpPdus(sizesC, 3));
    const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }], {
      noHandshake: true,
      skipBytes: [a.cut[0]! + 5, 0],
    });
    const r = await runTuf(sc.pcap);
    expect(r.rules).toEqual([]);
    expect(r.records.map((x) => x.length)).toEqual(sizesC.slice(2)); // the first two were cut by the capture start
  });
});

describe('TUF rules that need --tuf', () => {
  it('tuf.length-too-long fires on a Length above 65528 and stays silent at 65528', async () => {
    for (const [n, fires] of [
      [65530, true],
      [65528, false],
    ] as const) {
      const a = alignedStream(KEY_C, ulpPdus([n, 100], 3));
      const first = a.pdus[0]!.length;
      const cut = [...new Array<number>(Math.floor(first / 1460)).fill(1460), first % 1460, a.pdus[1]!.length];
      const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut }]);
      const r = await runTuf(sc.pcap, {
        forcedTuf: [
          {
            selector: { kind: 'all' },
            tuf: { mode: 'alignment', key: [KEY_C, null], interval: null, start: [sc.dataSeq[0], null] },
          },
        ],
      });
      expect(r.records.map((x) => x.length)).toEqual([n, 100]);
      // Sent in MSS-sized pieces: a sender split, said once as info.
      expect(r.rules.filter((x) => x !== 'tuf.sender-split')).toEqual(fires ? ['tuf.length-too-long'] : []);
    }
  });
});
