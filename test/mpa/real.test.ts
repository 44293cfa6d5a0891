/** The two real SoftUiWARP ↔ Linux siw captures must give what ../shared/captures/real/README.md says. */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import { sharedCaptures } from '../helpers/analyze.js';

const dir = sharedCaptures('real');

describe.skipIf(!dir)('real captures (SoftUiWARP client against Linux siw)', () => {
  if (!dir) {
    it.skip('../shared/captures/real is absent: real-capture checks skipped', () => {});
    return;
  }

  it('softuiwarp_uiwarp.pcap: startup, 4 Sends, a Read Request, close during full operation', async () => {
    const fpdus: FpduRecord[] = [];
    const r = await analyze(join(dir, 'softuiwarp_uiwarp.pcap'), { upper: defaultUpper, onFpdu: (f) => fpdus.push(f) });
    const doc = buildReport(r);
    expect(doc.capture.packets).toBe(15);
    expect(doc.flows).toHaveLength(1);
    const f = doc.flows[0]!;
    expect(f.client).toBe('10.10.1.1:42742');
    expect(f.server).toBe('10.10.1.2:9999');
    const m = f.mpa as Record<string, any>;
    expect(m.detection).toBe('startup');
    expect(m.initiator).toBe('10.10.1.1:42742');
    expect(m.request).toMatchObject({ frame: 4, rev: 1, m: false, c: false, r: false, pdLength: 0 });
    expect(m.reply).toMatchObject({ frame: 6, rev: 1, m: false, c: false, r: false, pdLength: 0 });
    expect(m.crc).toBe(false);
    // CRC not negotiated: the zero CRC fields are never reported as errors.
    expect(doc.findings.filter((x) => x.rule.startsWith('mpa.crc'))).toEqual([]);
    const sends = fpdus.filter((x) => x.dir === 0);
    expect(sends.map((x) => x.frames[0])).toEqual([8, 9, 12, 13]);
    expect(sends.map((x) => x.ulpduLength)).toEqual([34, 34, 34, 34]);
    expect(sends.map((x) => x.crcStatus)).toEqual(['unchecked', 'unchecked', 'unchecked', 'unchecked']);
    const head = sends.map((x) => x.head);
    // untagged Send: QN 0 (octets 6-9), MSN 1..4 (10-13), MO 0 (14-17)
    expect(head.map((h) => h[1]! & 0x0f)).toEqual([3, 3, 3, 3]);
    expect(head.map((h) => new DataView(h.buffer, h.byteOffset).getUint32(10))).toEqual([1, 2, 3, 4]);
    const rr = fpdus.filter((x) => x.dir === 1);
    expect(rr).toHaveLength(1);
    expect(rr[0]!.frames).toEqual([10]);
    expect(rr[0]!.ulpduLength).toBe(46);
    const h = rr[0]!.head;
    expect(h[1]! & 0x0f).toBe(1); // RDMA Read Request
    expect(new DataView(h.buffer, h.byteOffset).getUint32(6)).toBe(1); // QN 1
    expect(new DataView(h.buffer, h.byteOffset).getUint32(10)).toBe(1); // MSN 1
    // Read Request after the Initiator's first FPDU: legal (startup rule 4 stays silent).
    expect(doc.findings.map((x) => x.rule)).not.toContain('mpa.responder-first');
    // Frame 11: FIN from the responder during full operation (RFC 5044 error code 1).
    const close = doc.findings.find((x) => x.rule === 'mpa.tcp-closed-between');
    expect(close).toMatchObject({ rfcErrorCode: 1, frames: [11], from: '10.10.1.2:9999' });
    const ddp = m.directions[0].ddp;
    expect(ddp.byOpcode).toEqual({ send: 4 });
    expect(m.directions[1].ddp.byOpcode).toEqual({ 'read-request': 1 });
    expect(doc.findings.filter((x) => x.severity === 'error')).toEqual([]);
  });

  it('softuiwarp_uiwarp_8cdd2a5.pcap: startup, one Send, clean FIN close, one ARP frame', async () => {
    const fpdus: FpduRecord[] = [];
    const r = await analyze(join(dir, 'softuiwarp_uiwarp_8cdd2a5.pcap'), {
      upper: defaultUpper,
      onFpdu: (f) => fpdus.push(f),
    });
    const doc = buildReport(r);
    expect(doc.capture.packets).toBe(14);
    // The README says "one ARP frame"; the capture holds the ARP request and its reply (frames 11
    // and 12, as tshark shows), both counted as non-TCP.
    expect(r.decoder.nonTcp).toBe(2);
    const m = doc.flows[0]!.mpa as Record<string, any>;
    expect(m.request).toMatchObject({ rev: 1, m: false, c: false, r: false, pdLength: 0 });
    expect(m.reply).toMatchObject({ rev: 1, m: false, c: false, r: false, pdLength: 0 });
    expect(fpdus).toHaveLength(1);
    expect(fpdus[0]!.ulpduLength).toBe(34);
    expect(doc.flows[0]!.tcp.directions.map((d) => d['closed'])).toEqual(['fin', 'fin']);
    // This early client build sent DDP version 0 (control octet 0x40) with RDMAP version 1 after a
    // Rev 1 startup: a real bug (tshark shows "DDP protocol version: 0" without flagging it).
    expect(doc.findings.filter((x) => x.severity !== 'info').map((x) => [x.rule, x.frames])).toEqual([
      ['ddp.invalid-dv', [8]],
    ]);
  });
});
