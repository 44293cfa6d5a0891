/**
 * The byte-order diagnosis on SoftUiWarp's own Read captures (shared real captures, README
 * softuiwarp-loopback/): the stack writes the Read Request's fields in host order, and each Read
 * Response matches the byte-swapped Request. The cause is reported once per field; the
 * consequences (read-response-mismatch, read-response-size) are not.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import { sharedCaptures } from '../helpers/analyze.js';

const real = sharedCaptures('real');
const dir = real ? join(real, 'softuiwarp-loopback') : null;
const present = dir !== null && existsSync(dir);

async function run(name: string) {
  return buildReport(await analyze(join(dir!, name), { upper: defaultUpper }));
}

describe.skipIf(!present)(
  `SoftUiWarp loopback Reads: the byte order is the cause${present ? '' : ' (skipped: ../shared/captures/real/softuiwarp-loopback is absent)'}`,
  () => {
    it.each([
      ['read-1k.pcap', 1024, '262144'],
      ['read-64k.pcap', 65536, '256'],
    ])(
      '%s: one byte-order finding naming every Read Request field, Responses paired, no mismatch or size errors',
      async (name, size, wireSize) => {
        const doc = await run(name);
        const bo = doc.findings.filter((f) => f.rule === 'rdmap.read-request-byte-order');
        const fields = [
          'Data Sink STag',
          'Data Sink Tagged Offset',
          'RDMA Read Message Size',
          'Data Source STag',
          'Data Source Tagged Offset',
        ];
        // One finding, from the server (it reads from the client), naming every field and both readings.
        expect(bo).toHaveLength(1);
        for (const f of fields.map((x) => x.replace('Tagged Offset', 'TO'))) expect(bo[0]!.message).toContain(`${f} `);
        expect(bo[0]!.message).toContain(`RDMA Read Message Size ${wireSize} (swapped ${size})`);
        expect(
          doc.findings.filter(
            (f) =>
              f.rule === 'rdmap.read-response-mismatch' ||
              f.rule === 'rdmap.read-response-size' ||
              f.rule === 'rdmap.read-unanswered',
          ),
        ).toEqual([]);
        // No framing diagnosis on these captures: their framing is right.
        expect(
          doc.findings.filter(
            (f) =>
              f.rule === 'mpa.framing-lost' || f.rule.startsWith('mpa.pad-') || f.rule.startsWith('mpa.ulpdu-length-'),
          ),
        ).toEqual([]);
      },
    );

    it.each(['sends.pcap', 'write-1k.pcap', 'write-64k.pcap'])(
      '%s: no byte-order or framing diagnosis',
      async (name) => {
        const doc = await run(name);
        expect(
          doc.findings.filter((f) =>
            /byte-order|framing-lost|pad-miscomputed|pad-omitted|ulpdu-length-|markers-|marker-phase/.test(f.rule),
          ),
        ).toEqual([]);
      },
    );
  },
);
