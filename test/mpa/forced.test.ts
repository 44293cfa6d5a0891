import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { parseForcedMpa, UsageError } from '../../cli/options.js';
import { analyzeBytes } from '../helpers/analyze.js';

describe('--mpa forces MPA on a flow', () => {
  // CRC off, no markers, and payloads the DDP plausibility test rejects (DV 2): no heuristic can lock.
  const ulpdus = Array.from({ length: 6 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(100, i), { dv: 2 }) }));
  const c = buildMpaConnection({
    request: {},
    reply: {},
    i2r: ulpdus,
    r2i: ulpdus.slice(0, 2),
    scenario: { noHandshake: true, skipBytes: [20, 20] },
  });

  it('without --mpa the flow is not recognised', async () => {
    const r = await analyzeBytes(c.pcap);
    expect(r.report.flows[0]!.mpa).toBeNull();
  });

  it('with flow, markers, CRC and SeqStart given, FPDUs are framed exactly', async () => {
    const forced = parseForcedMpa(`flow=all,markers=none,crc=off,seqstart=${c.seqStart[0]}:${c.seqStart[1]}`);
    const r = await analyzeBytes(c.pcap, { forced: [forced] });
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.detection).toBe('forced');
    expect(m.directions[0].fpdus).toBe(6);
    expect(m.directions[1].fpdus).toBe(2);
    expect(m.directions[0].seqStart).toBe(c.seqStart[0]);
  });

  it('selects flows by id, port and endpoint', () => {
    expect(parseForcedMpa('flow=3').selector).toEqual({ kind: 'id', id: 4 }); // tcp.stream 3 is flow id 4
    expect(parseForcedMpa('flow=0').selector).toEqual({ kind: 'id', id: 1 });
    expect(parseForcedMpa('flow=port:4420').selector).toEqual({ kind: 'port', port: 4420 });
    expect(parseForcedMpa('flow=[fd00::1]:40009,markers=c2s').selector).toEqual({
      kind: 'endpoint',
      endpoint: '[fd00::1]:40009',
    });
    expect(parseForcedMpa('flow=all,markers=s2c,crc=off')).toMatchObject({
      markers: [false, true],
      crc: false,
      seqStart: [null, null],
    });
  });

  it('rejects malformed specifications with a usage error', () => {
    expect(() => parseForcedMpa('flow=x')).toThrow(UsageError);
    expect(() => parseForcedMpa('markers=sometimes')).toThrow(/markers/);
    expect(() => parseForcedMpa('crc=maybe')).toThrow(/crc/);
    expect(() => parseForcedMpa('colour=red')).toThrow(/unknown key/);
    expect(() => parseForcedMpa('seqstart=abc')).toThrow(/seqstart/);
  });
});

describe('--mpa without SeqStart: marker phase found from the traffic', () => {
  it('frames with markers whose phase is not 0', async () => {
    const ulpdus = Array.from({ length: 12 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(700, i), { dv: 2 }) }));
    const c = buildMpaConnection({
      request: {},
      reply: { m: true },
      i2r: ulpdus,
      scenario: { noHandshake: true, skipBytes: [20 + 300, 20] },
    });
    const r = await analyzeBytes(c.pcap, { forced: [parseForcedMpa('flow=all,markers=c2s,crc=off')] });
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.detection).toBe('forced');
    expect(m.directions[0].fpdus).toBeGreaterThanOrEqual(10);
    expect(((m.directions[0].seqStart - c.seqStart[0]) >>> 0) % 512).toBe(0);
    expect(r.report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
