/**
 * DDP/RDMAP on top of the real pipeline, on the independent encoder's reference captures
 * (../shared/captures/reference): byOpcode and rtr per direction must match expected.json, and
 * this layer must add no warning or error (the captures are clean above MPA; their CRC errors,
 * marker errors and capture gaps are explained, not DDP violations). Skips when the folder is absent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/pipeline.js';
import { buildReport } from '../../src/report/json-report.js';
import { ddpUpperFactory, isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { segmentInfo } from '../../dissectors/ddp-rdmap/tree.js';
import { sharedCaptures } from '../helpers/analyze.js';

const dir = sharedCaptures('reference');

interface ExpDir {
  byOpcode: Record<string, number>;
  rtr: string | null;
  gaps: unknown[];
  fpdus: number;
  fpdusRecoverable: number;
}
interface ExpFlow {
  initiator: string;
  client: string;
  i2r: ExpDir;
  r2i: ExpDir;
}

describe.skipIf(!dir)(
  `DDP/RDMAP on the reference captures${dir ? '' : ' (skipped: ../shared/captures/reference is absent)'}`,
  () => {
    const expected = dir
      ? (JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Record<string, { flows: ExpFlow[] }>)
      : {};
    for (const [file, exp] of Object.entries(expected)) {
      it(file, async () => {
        const infos: string[] = [];
        const r = await analyze(join(dir!, file), {
          upper: ddpUpperFactory(),
          onFpdu: (f) => {
            if (isDdpSegmentRecord(f.upper)) infos.push(segmentInfo(f.upper));
          },
        });
        const doc = buildReport(r) as unknown as {
          flows: Array<{
            client: string;
            mpa: {
              initiator: string | null;
              directions: Array<{ from: string; ddp: Record<string, unknown> | null }>;
            } | null;
          }>;
          findings: Array<{ rule: string; severity: string; message: string }>;
        };
        expect(infos.length).toBeGreaterThan(0);
        const ours = doc.findings.filter((f) => /^(ddp|rdmap)\./.test(f.rule) && f.severity !== 'info');
        expect(ours).toEqual([]);
        for (const ef of exp.flows) {
          const flow = doc.flows.find((f) => f.client === ef.client)!;
          const m = flow.mpa!;
          const ini = m.initiator ?? flow.client;
          for (const [k, from] of [
            ['i2r', ini],
            ['r2i', null],
          ] as const) {
            const md = from ? m.directions.find((d) => d.from === from)! : m.directions.find((d) => d.from !== ini)!;
            const e = ef[k];
            expect(md.ddp, `${k} ddp`).not.toBeNull();
            expect(md.ddp!['rtr'], `${k} rtr`).toBe(e.rtr);
            // With FPDUs lost to a capture gap the counts can only cover what was framed.
            if (e.fpdusRecoverable === e.fpdus) expect(md.ddp!['byOpcode'], `${k} byOpcode`).toEqual(e.byOpcode);
            else expect(md.ddp!['segments'], `${k} segments`).toBe(e.fpdusRecoverable);
          }
        }
      });
    }
  },
);
