/**
 * Statements of ../shared/captures/real/README.md that test/mpa/real.test.ts and
 * test/real/softuiwarp-loopback.test.ts do not check yet: MO 0 of the Sends and the closing RSTs of
 * softuiwarp_uiwarp.pcap, the DDP control octet 0x40 of softuiwarp_uiwarp_8cdd2a5.pcap, the Send
 * with Solicited Event rounds and the final 8-octet Send of sends.pcap, and for the Reads that the
 * cause of the errors is the byte order: each Response matches the byte-swapped Request.
 */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import { sharedCaptures } from '../helpers/analyze.js';

const REAL = sharedCaptures('real');
const LOOP = REAL ? join(REAL, 'softuiwarp-loopback') : '';

async function run(path: string) {
  const fpdus: FpduRecord[] = [];
  const r = await analyze(path, { upper: defaultUpper, onFpdu: (f) => fpdus.push(f) });
  return { doc: buildReport(r), fpdus };
}
const u32 = (h: Uint8Array, o: number) => new DataView(h.buffer, h.byteOffset, h.length).getUint32(o);

describe.skipIf(!REAL)('real captures: the README statements the other tests leave out', () => {
  if (!REAL) {
    it.skip('../shared/captures/real is absent: real-capture checks skipped', () => {});
    return;
  }
  it('softuiwarp_uiwarp.pcap: the Sends carry MO 0; RSTs in frames 14 and 15 end the connection', async () => {
    const { doc, fpdus } = await run(join(REAL, 'softuiwarp_uiwarp.pcap'));
    expect(fpdus.filter((f) => f.dir === 0).map((f) => u32(f.head, 14))).toEqual([0, 0, 0, 0]);
    // The Responder's FIN (frame 11) closes its direction; its RST (frame 14, repeated in 15) ends
    // the Initiator's, which was still sending: both are closes during full operation (error code 1).
    const closes = doc.findings.filter((f) => f.rule === 'mpa.tcp-closed-between');
    expect(closes.map((f) => [f.from, f.frames, f.rfcErrorCode])).toEqual([
      ['10.10.1.2:9999', [11], 1],
      ['10.10.1.1:42742', [14], 1],
    ]);
    expect(doc.flows[0]!.lastFrame).toBe(15);
  });

  it("softuiwarp_uiwarp_8cdd2a5.pcap: the Send's DDP control octet is 0x40 (DV 0) under RDMAP version 1", async () => {
    const { fpdus } = await run(join(REAL, 'softuiwarp_uiwarp_8cdd2a5.pcap'));
    expect(fpdus).toHaveLength(1);
    expect(fpdus[0]!.head[0]).toBe(0x40);
    expect(fpdus[0]!.head[1]! >> 6).toBe(1);
  });

  const loop = existsSync(LOOP);
  const noLoop = loop ? '' : ' (skipped: ../shared/captures/real/softuiwarp-loopback is absent)';
  it.skipIf(!loop)(
    `sends.pcap: Sends with Solicited Event in odd rounds, and the final 8-octet Send from the server${noLoop}`,
    async () => {
      const { fpdus } = await run(join(LOOP, 'sends.pcap'));
      const ops = (dir: 0 | 1) => fpdus.filter((f) => f.dir === dir).map((f) => f.head[1]! & 0x0f);
      // Opcode 0x3 Send, 0x5 Send with SE: both appear each way, and the server's last FPDU is an 8-octet Send (ULPDU 26).
      for (const dir of [0, 1] as const) expect(new Set(ops(dir))).toEqual(new Set([0x3, 0x5]));
      const last = fpdus.filter((f) => f.dir === 1).at(-1)!;
      expect([last.ulpduLength, last.ulpduLength - 18]).toEqual([26, 8]);
    },
  );

  it.skipIf(!loop).each(['read-1k.pcap', 'read-64k.pcap'])(
    `%s: the errors come from the byte order: each Response matches the byte-swapped Request${noLoop}`,
    async (name) => {
      const { doc, fpdus } = await run(join(LOOP, name));
      const rules = doc.findings.map((f) => f.rule);
      expect(rules).toContain('rdmap.read-request-byte-order');
      expect(rules).not.toContain('rdmap.read-response-mismatch');
      expect(rules).not.toContain('rdmap.read-response-unsolicited');
      // The size 1024 (or 65536) sent little-endian reads as 262144 (or 16777216... 0x00000100) on the wire.
      const req = fpdus.filter((f) => (f.head[0]! & 0x80) === 0 && (f.head[1]! & 0x0f) === 0x1);
      expect(req).toHaveLength(3);
      const size = name === 'read-1k.pcap' ? 1024 : 65536;
      const swapped =
        ((size & 0xff) << 24) | (((size >> 8) & 0xff) << 16) | (((size >> 16) & 0xff) << 8) | ((size >>> 24) & 0xff);
      for (const r of req) expect(u32(r.head, 18 + 12)).toBe(swapped >>> 0);
    },
  );
});
