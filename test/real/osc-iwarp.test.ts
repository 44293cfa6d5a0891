/**
 * Real traffic from an independent pre-standard stack: OSC iWarp (2005, draft-ietf-rddp-mpa-00 with
 * markers and CRC, no startup frames) talking to itself over loopback
 * (../shared/captures/real/osc-iwarp). What is checked is each statement of that folder's README
 * under "What a correct analysis shows", from the octets it lists.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import { sharedCaptures } from '../helpers/analyze.js';

const REAL = sharedCaptures('real');
const FILE = REAL ? join(REAL, 'osc-iwarp', 'osc-iwarp-send-markers-crc.pcap') : '';
const present = REAL !== null && existsSync(FILE);
const CLIENT = '127.0.0.1:48818';
const SERVER = '127.0.0.1:5728';

describe.skipIf(!present)('real capture: OSC iWarp, pre-standard MPA with markers and CRC', () => {
  if (!present) {
    it.skip('../shared/captures/real/osc-iwarp is absent: real-capture checks skipped', () => {});
    return;
  }

  it('what its README says a correct analysis shows', async () => {
    const fpdus: FpduRecord[] = [];
    const r = await analyze(FILE, { upper: defaultUpper, onFpdu: (f) => fpdus.push(f) });
    const doc = buildReport(r);
    expect(doc.flows).toHaveLength(1);
    const m = doc.flows[0]!.mpa as Record<string, any>;
    const at = (rule: string, from: string) => doc.findings.filter((f) => f.rule === rule && f.from === from);

    // MPA found without startup frames in both directions, at ISN+1 (the stream's first octet, a
    // zero leading marker), markers and CRC on, FPDUPTR from the FPDU's first octet (draft-00 §7.1).
    expect(m.detection).toBe('prestandard');
    expect(m.request).toBeNull();
    expect(m.reply).toBeNull();
    expect(m.crc).toBe(true);
    expect(m.directions.map((d: { seqStart: number }) => d.seqStart)).toEqual([3523815428, 2332395778]);
    for (const from of [CLIENT, SERVER]) {
      const en = at('mpa.enabled-without-startup', from);
      expect(en).toHaveLength(1);
      expect(en[0]!.message).toContain("(the stream's first octet)");
      expect(en[0]!.message).toContain('markers on, CRC on');
      expect(en[0]!.message).toContain("FPDUPTR counted from the FPDU's first octet (draft-ietf-rddp-mpa-00 §7.1)");
    }
    expect(m.enablement).toEqual([
      { seq: 3523815428, frame: 4, zeroMarker: true, fpduptrRule: 'draft-00' },
      { seq: 2332395778, frame: 8, zeroMarker: true, fpduptrRule: 'draft-00' },
    ]);

    // Two FPDUs each way, at the octets the README lists; every CRC verifies (over the leading marker).
    const c = fpdus.filter((f) => f.dir === 0);
    const s = fpdus.filter((f) => f.dir === 1);
    expect(c.map((f) => [f.seq, f.ulpduLength, f.crcStatus])).toEqual([
      [3523815432, 1042, 'good'],
      [3523816488, 1042, 'good'],
    ]);
    expect(s.map((f) => [f.seq, f.ulpduLength, f.crcStatus])).toEqual([
      [2332395782, 22, 'good'],
      [2332395810, 26, 'good'],
    ]);
    expect(c[0]!.markers.map((k) => [k.seq, k.fpduptr])).toEqual([
      [3523815428, 0],
      [3523815940, 2],
      [3523816452, 4],
    ]);
    expect(m.directions.map((d: { crcErrors: number }) => d.crcErrors)).toEqual([0, 0]);
    expect(doc.findings.filter((f) => f.rule.startsWith('mpa.crc'))).toEqual([]);

    // 1. FPDUPTR in host byte order in FPDU 1 (error code 3), named as such, not as a plain mismatch.
    const order = at('mpa.marker-byte-order', CLIENT);
    expect(order).toMatchObject([{ seq: 3523815432, rfcErrorCode: 3, frames: [4] }]);
    expect(order[0]!.message).toContain('seq 3523815940 reads Reserved 0x0000 FPDUPTR 2, meant FPDUPTR 512');
    expect(order[0]!.message).toContain('seq 3523816452 reads Reserved 0x0000 FPDUPTR 4, meant FPDUPTR 1024');
    expect(doc.findings.filter((f) => f.rule === 'mpa.fpduptr-mismatch' || f.rule === 'mpa.fpduptr-low-bits')).toEqual(
      [],
    );
    // 2. Markers stop: reported at FPDU 2, which is framed by its length.
    expect(at('mpa.markers-missing', CLIENT)).toMatchObject([{ seq: 3523816488, frames: [6] }]);
    // 3. MSN 1 repeated on QN 0 (RFC 5041 §6.3).
    expect(at('ddp.msn-duplicate', CLIENT)).toMatchObject([{ seq: 3523816488 }]);
    // Server to client is clean.
    expect(
      doc.findings.filter((f) => f.from === SERVER && f.severity !== 'info').map((f) => `${f.rule}: ${f.message}`),
    ).toEqual([]);
  });
});
