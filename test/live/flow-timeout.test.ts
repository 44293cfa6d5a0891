/**
 * --flow-timeout: a flow idle that long is finished (its directions end as at the end of a
 * capture), reported once through onFlowEnd with what the final result lists for it, and let go:
 * a later segment on the same 4-tuple opens a new flow. Judged here on packet timestamps, as a
 * live source's packets carry them (the source's ticks do the same when no packet comes).
 */
import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../../src/report/pcap-writer.js';
import type { FlowResult } from '../../src/analysis/pipeline.js';
import { analyzeBytes } from '../helpers/analyze.js';

function at(frames: readonly PcapFrame[], sec: number): PcapFrame[] {
  return frames.map((f, i) => ({ ...f, tsSec: sec, tsNsec: i * 1000 }));
}

describe('idle flows finished by flowTimeout', () => {
  const a = buildMpaConnection({
    request: { c: true },
    reply: { c: true },
    i2r: [{ ulpdu: sendUlpdu(1, patternBytes(200, 1)) }],
    scenario: { client: { addr: '10.0.0.1', port: 40001 }, close: 'none' },
  });
  const b = buildMpaConnection({
    request: { c: true },
    reply: { c: true },
    i2r: [{ ulpdu: sendUlpdu(1, patternBytes(300, 2)) }],
    scenario: { client: { addr: '10.0.0.3', port: 40003 }, close: 'fin' },
  });

  it('a flow idle past the timeout is reported once, with its MPA summary, when time moves on', async () => {
    const pcap = buildPcap(LINKTYPE_ETHERNET, [...at(a.frames, 1000), ...at(b.frames, 1400)]);
    const ended: FlowResult[] = [];
    const r = await analyzeBytes(pcap, { flowTimeout: 300, onFlowEnd: (f) => ended.push(f) });
    expect(ended.map((f) => f.tcp.id)).toEqual([1]);
    expect(ended[0]!.mpa?.directions[0].fpdus).toBe(1);
    expect(ended[0]!.tcp.lastFrame).toBe(a.frames.length);
    // The final result still lists it, the same as reported.
    expect(r.flows.map((f) => f.tcp.id)).toEqual([1, 2]);
    expect(r.flows[0]!.mpa?.directions[0].fpdus).toBe(1);
    expect(r.report.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });

  it('stays silent while the flow is younger than the timeout, and without a timeout', async () => {
    const pcap = buildPcap(LINKTYPE_ETHERNET, [...at(a.frames, 1000), ...at(b.frames, 1299)]);
    const ended: number[] = [];
    await analyzeBytes(pcap, { flowTimeout: 300, onFlowEnd: (f) => ended.push(f.tcp.id) });
    expect(ended).toEqual([]);
    const late = buildPcap(LINKTYPE_ETHERNET, [...at(a.frames, 1000), ...at(b.frames, 99999)]);
    await analyzeBytes(late, { onFlowEnd: (f) => ended.push(f.tcp.id) });
    expect(ended).toEqual([]);
  });

  it('a segment on the 4-tuple of a finished flow opens a new flow', async () => {
    const again = at(a.frames.slice(-1), 1500); // the last data segment of flow 1, once more
    const pcap = buildPcap(LINKTYPE_ETHERNET, [...at(a.frames, 1000), ...at(b.frames, 1400), ...again]);
    const r = await analyzeBytes(pcap, { flowTimeout: 300 });
    expect(r.flows.map((f) => [f.tcp.id, f.tcp.client])).toEqual([
      [1, '10.0.0.1:40001'],
      [2, '10.0.0.3:40003'],
      [3, '10.0.0.1:40001'],
    ]);
  });
});
