/**
 * Real traffic from an independent stack: SoftUiWarp talking to itself over loopback, captured with
 * `tcpdump -i lo` (../shared/captures/real/softuiwarp-loopback, described in its README). Each
 * file holds the iWARP connection and the harness's plain-TCP sync connection. What is checked is
 * what that README says a correct analysis shows.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport, type ReportDocument } from '../../src/report/json-report.js';
import { fpduEvent } from '../../src/report/ndjson.js';
import { sharedCaptures } from '../helpers/analyze.js';

const REAL = sharedCaptures('real');
const DIR = REAL ? join(REAL, 'softuiwarp-loopback') : '';
const present = REAL !== null && existsSync(DIR);

interface Fpdu {
  dir: 0 | 1;
  frames: number[];
  ulpduLength: number;
  opcodeName: string | null;
  last: boolean | null;
  qn: number | null;
  msn: number | null;
  to: string | null;
}

async function run(name: string): Promise<{ doc: ReportDocument; fpdus: Fpdu[] }> {
  const fpdus: Fpdu[] = [];
  const r = await analyze(join(DIR, name), {
    upper: defaultUpper,
    onFpdu: (f) => {
      const e = fpduEvent(f) as { ddp: Record<string, unknown> | null };
      const d = e.ddp;
      fpdus.push({
        dir: f.dir,
        frames: [...f.frames],
        ulpduLength: f.ulpduLength,
        opcodeName: (d?.['opcodeName'] as string | undefined) ?? null,
        last: (d?.['last'] as boolean | undefined) ?? null,
        qn: (d?.['qn'] as number | null | undefined) ?? null,
        msn: (d?.['msn'] as number | null | undefined) ?? null,
        to: (d?.['to'] as string | null | undefined) ?? null,
      });
    },
  });
  return { doc: buildReport(r), fpdus };
}

const lengths = (fs: Fpdu[], dir: 0 | 1) => fs.filter((f) => f.dir === dir).map((f) => f.ulpduLength);
const errorsBy = (doc: ReportDocument) => {
  const m: Record<string, number> = {};
  for (const f of doc.findings) if (f.severity === 'error') m[f.rule] = (m[f.rule] ?? 0) + 1;
  return m;
};

/** Every file: the iWARP flow is MPA Rev 1, M=0 C=0, no PD; the sync flow is plain TCP, not MPA. */
function commonChecks(doc: ReportDocument, fpdus: Fpdu[]): void {
  expect(doc.flows).toHaveLength(2);
  const [iw, sync] = doc.flows;
  const m = iw!.mpa as {
    detection: string;
    crc: boolean;
    request: Record<string, unknown>;
    reply: Record<string, unknown>;
    directions: Array<{ markers: boolean }>;
  };
  expect(m.detection).toBe('startup');
  expect(m.crc).toBe(false);
  for (const s of [m.request, m.reply]) expect([s['rev'], s['m'], s['c'], s['pdLength']]).toEqual([1, false, false, 0]);
  expect(m.directions.map((d) => d.markers)).toEqual([false, false]);
  expect(sync!.mpa).toBeNull(); // the 8-octet zero words of the sync socket are not taken for MPA
  expect(doc.findings.filter((f) => f.flow === sync!.id)).toEqual([]);
  // Every run begins with one 24-octet Send each way (ULPDU_Length 42, MSN 1).
  for (const dir of [0, 1] as const) {
    const first = fpdus.find((f) => f.dir === dir)!;
    expect([first.ulpduLength, first.opcodeName, first.msn]).toEqual([42, 'Send', 1]);
  }
  // No CRC negotiated: the zero CRC fields are never a CRC finding.
  expect(doc.findings.filter((f) => f.rule.startsWith('mpa.crc'))).toEqual([]);
}

describe.skipIf(!present)('SoftUiWarp over loopback (real captures)', () => {
  it('sends.pcap: 7 FPDUs one way, 8 the other, the two 65018-octet ULPDUs over 64768 are the only errors', async () => {
    const { doc, fpdus } = await run('sends.pcap');
    commonChecks(doc, fpdus);
    expect(lengths(fpdus, 0)).toEqual([42, 34, 118, 1042, 1478, 4018, 65018]);
    expect(lengths(fpdus, 1)).toEqual([42, 34, 118, 1042, 1478, 4018, 65018, 26]);
    expect(errorsBy(doc)).toEqual({ 'mpa.ulpdu-too-long': 2 });
  });

  it('write-1k.pcap: 4 and 5 FPDUs, six 1038-octet Writes, three Sends, no errors', async () => {
    const { doc, fpdus } = await run('write-1k.pcap');
    commonChecks(doc, fpdus);
    expect([lengths(fpdus, 0).length, lengths(fpdus, 1).length]).toEqual([4, 5]);
    const writes = fpdus.filter((f) => f.opcodeName === 'RDMA Write');
    expect(writes.map((f) => f.ulpduLength)).toEqual(Array(6).fill(1038));
    expect(fpdus.filter((f) => f.opcodeName === 'Send')).toHaveLength(3);
    expect(errorsBy(doc)).toEqual({});
  });

  it('write-64k.pcap: each Write is 65028 (L=0) + 536 (L=1) with TO advancing by 65014; each 65028 ULPDU is an error', async () => {
    const { doc, fpdus } = await run('write-64k.pcap');
    commonChecks(doc, fpdus);
    expect([lengths(fpdus, 0).length, lengths(fpdus, 1).length]).toEqual([7, 8]);
    const writes = fpdus.filter((f) => f.opcodeName === 'RDMA Write');
    expect(writes).toHaveLength(12);
    for (const dir of [0, 1] as const) {
      const w = writes.filter((f) => f.dir === dir);
      for (let i = 0; i < w.length; i += 2) {
        expect([w[i]!.ulpduLength, w[i]!.last, w[i + 1]!.ulpduLength, w[i + 1]!.last]).toEqual([
          65028,
          false,
          536,
          true,
        ]);
        expect(BigInt(w[i + 1]!.to!) - BigInt(w[i]!.to!)).toBe(65014n);
      }
    }
    expect(errorsBy(doc)).toEqual({ 'mpa.ulpdu-too-long': 6 });
  });

  it('read-1k.pcap: 3 Read Requests (46, QN 1, MSN 1-3) and 3 Read Responses (1038); the byte-swapped requests are reported', async () => {
    const { doc, fpdus } = await run('read-1k.pcap');
    commonChecks(doc, fpdus);
    const req = fpdus.filter((f) => f.opcodeName === 'Read Request');
    expect(req.map((f) => [f.ulpduLength, f.qn, f.msn])).toEqual([
      [46, 1, 1],
      [46, 1, 2],
      [46, 1, 3],
    ]);
    expect(fpdus.filter((f) => f.opcodeName === 'Read Response').map((f) => f.ulpduLength)).toEqual([1038, 1038, 1038]);
    // The README: errors are right, the cause is the byte order (which rule names it may change).
    expect(doc.summary.errors).toBeGreaterThan(0);
    expect(doc.findings.filter((f) => f.rule.startsWith('mpa.'))).toEqual(
      doc.findings.filter((f) => f.rule === 'mpa.tcp-closed-between'),
    );
  });

  // The README's "frame 8" and "frame 10" count the iWARP connection's own frames (tcp.stream 0):
  // they are frames 15 and 17 of the file, as Wireshark numbers them (the sync connection interleaves).
  it('read-64k.pcap: each Response is 65028 + 536, and the Responder sent first (its 8th frame, 15, before the 10th, 17)', async () => {
    const { doc, fpdus } = await run('read-64k.pcap');
    commonChecks(doc, fpdus);
    const resp = fpdus.filter((f) => f.opcodeName === 'Read Response');
    expect(resp.map((f) => f.ulpduLength)).toEqual([65028, 536, 65028, 536, 65028, 536]);
    const rf = doc.findings.filter((f) => f.rule === 'mpa.responder-first');
    expect(rf).toHaveLength(1);
    expect(rf[0]!.severity).toBe('error');
    expect(rf[0]!.frames).toEqual([15]);
    expect(fpdus.find((f) => f.dir === 1)!.frames[0]).toBe(15);
    expect(fpdus.find((f) => f.dir === 0)!.frames[0]).toBe(17);
    expect(errorsBy(doc)['mpa.ulpdu-too-long']).toBe(3);
    expect(doc.summary.errors).toBeGreaterThan(4); // and the byte-swapped Read Requests
  });
});

if (!present) {
  describe('SoftUiWarp over loopback (real captures)', () => {
    it.skip('../shared/captures/real/softuiwarp-loopback is absent: real-traffic checks skipped', () => {});
  });
}
