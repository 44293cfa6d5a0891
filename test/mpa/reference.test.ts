/**
 * The independent encoder's captures (../shared/captures/reference) must reproduce expected.json
 * exactly: they catch mistakes our own encoder and decoder could share.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../src/analysis/pipeline.js';
import { buildReport } from '../../src/report/json-report.js';
import { sharedCaptures } from '../helpers/analyze.js';
import { defaultUpper } from '../../src/analysis/upper.js';

const dir = sharedCaptures('reference');

interface ExpDir {
  markers: boolean;
  seqStart: number;
  fpdus: number;
  fpdusRecoverable: number;
  crcBad: number[];
  markerBad: number[];
  gaps: { seq: number; length: number }[];
  byOpcode: Record<string, number>;
  rtr: string | null;
}
interface ExpFlow {
  client: string;
  server: string;
  initiator: string;
  responder: string;
  rev: number;
  crc: boolean;
  startupSeen: boolean;
  requestV2: { ird: number; ord: number; p2p: boolean } | null;
  tcpBytes: { i2r: number; r2i: number };
  i2r: ExpDir;
  r2i: ExpDir;
}

describe.skipIf(!dir)('reference captures (independent encoder)', () => {
  if (!dir) {
    it.skip('../shared/captures/reference is absent: reference cross-check skipped', () => {});
    return;
  }
  const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<
    string,
    { packets: number; flows: ExpFlow[] }
  >;
  for (const [file, exp] of Object.entries(expected)) {
    it(file, async () => {
      const r = await analyze(join(dir, file), { upper: defaultUpper });
      const doc = buildReport(r);
      expect(doc.capture.packets).toBe(exp.packets);
      expect(doc.flows).toHaveLength(exp.flows.length);
      exp.flows.forEach((ef, i) => {
        const f = doc.flows[i]!;
        expect(f.client).toBe(ef.client);
        expect(f.server).toBe(ef.server);
        const m = f.mpa as Record<string, any>;
        expect(m).not.toBeNull();
        expect(m.detection).toBe(ef.startupSeen ? 'startup' : 'heuristic');
        if (ef.startupSeen) {
          expect(m.initiator).toBe(ef.initiator);
          expect(m.responder).toBe(ef.responder);
          expect(m.request.rev).toBe(ef.rev);
          expect(m.reply.rev).toBe(ef.rev);
        }
        expect(m.crc).toBe(ef.crc);
        if (ef.requestV2) {
          expect({ ird: m.request.ird, ord: m.request.ord, p2p: m.request.p2p }).toEqual(ef.requestV2);
        } else if (ef.startupSeen) {
          expect(m.request.ird).toBeNull();
        }
        // Initiator-to-Responder direction; mid-stream the Initiator is unknown, so use the client.
        const iniEp = m.initiator ?? f.client;
        const i2rIdx = f.tcp.directions.findIndex((d) => d['from'] === iniEp);
        const idx = { i2r: i2rIdx, r2i: 1 - i2rIdx };
        for (const k of ['i2r', 'r2i'] as const) {
          const e = ef[k];
          const td = f.tcp.directions[idx[k]]!;
          const md = m.directions[idx[k]];
          expect(td['bytes'], `${k} tcp bytes`).toBe(ef.tcpBytes[k]);
          expect(td['gaps'], `${k} gaps`).toEqual(e.gaps);
          expect(md.markers, `${k} markers`).toBe(e.markers);
          if (ef.startupSeen) expect(md.seqStart, `${k} seqStart`).toBe(e.seqStart);
          else expect((md.seqStart - e.seqStart) % 512, `${k} seqStart mod 512`).toBe(0);
          expect(md.fpdus, `${k} fpdus framed`).toBe(e.fpdusRecoverable);
          const from = td['from'];
          const seqsOf = (rule: string) =>
            doc.findings.filter((x) => x.rule === rule && x.from === from).map((x) => x.seq);
          expect(seqsOf('mpa.crc-mismatch'), `${k} crcBad`).toEqual(e.crcBad);
          expect(seqsOf('mpa.fpduptr-mismatch'), `${k} markerBad`).toEqual(e.markerBad);
          expect(md.crcErrors).toBe(e.crcBad.length);
          expect(md.markerErrors).toBe(e.markerBad.length);
          expect(md.ddp, `${k} ddp`).not.toBeNull();
          // byOpcode in expected.json counts every FPDU sent; FPDUs lost in a capture gap cannot be
          // decoded, so with loss the segments seen must equal the recoverable FPDUs instead.
          if (e.fpdusRecoverable === e.fpdus) expect(md.ddp.byOpcode, `${k} byOpcode`).toEqual(e.byOpcode);
          else expect(md.ddp.segments, `${k} DDP segments`).toBe(e.fpdusRecoverable);
          expect(md.ddp.rtr ?? null, `${k} rtr`).toBe(e.rtr);
        }
        // Nothing else is wrong in these captures: no other error or warning.
        const other = doc.findings.filter(
          (x) =>
            x.severity !== 'info' &&
            !['mpa.crc-mismatch', 'mpa.fpduptr-mismatch', 'mpa.fpdu-truncated-by-gap'].includes(x.rule),
        );
        expect(other).toEqual([]);
      });
    });
  }
});
