import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { analyzeBytes } from '../helpers/analyze.js';

const le32 = (v: number) => (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;

/** Read Request header (28 octets); `hostOrder` writes every field little-endian, as SoftUiWarp does. */
function readRequestHeader(hostOrder: boolean, sink: number, to: bigint, size: number): Uint8Array {
  const h = new Uint8Array(28);
  const v = new DataView(h.buffer);
  v.setUint32(0, sink, hostOrder);
  v.setBigUint64(4, to, hostOrder);
  v.setUint32(12, size, hostOrder);
  v.setUint32(16, 0x5057a000, hostOrder);
  v.setBigUint64(20, 0x7f0e5057a000n, hostOrder);
  return h;
}

function conversation(hostOrder: boolean) {
  const i2r: FpduSpec[] = [];
  const r2i: FpduSpec[] = [{ ulpdu: sendUlpdu(1, patternBytes(24, 1)) }];
  for (let i = 0; i < 3; i++) {
    const to = 0x7f29a5aa9000n + BigInt(i * 0x10000);
    i2r.push({ ulpdu: sendUlpdu(i + 1, readRequestHeader(hostOrder, 0xa5aa9000, to, 1024), { opcode: 0x1, qn: 1 }) });
    const resp = writeUlpdu(0xa5aa9000, Number(to), patternBytes(1024, i));
    resp[1] = (resp[1]! & 0xf0) | 0x2;
    r2i.push({ ulpdu: resp });
  }
  // A Send of 3000 octets in three segments; the later segments' MO in host order when asked.
  const payload = patternBytes(3000, 9);
  for (let k = 0; k < 3; k++) {
    const mo = k * 1000;
    r2i.push({
      ulpdu: sendUlpdu(2, payload.subarray(mo, mo + 1000), {
        mo: hostOrder && mo !== 0 ? le32(mo) : mo,
        last: k === 2,
      }),
    });
  }
  return buildMpaConnection({ request: { m: false, c: false }, reply: { m: false, c: false }, i2r, r2i });
}

describe('byte-swapped Read Request fields and untagged MO (generated capture)', () => {
  it('host-order fields: one finding for the Read Requests of the direction, one for MO; Responses paired; nothing else', async () => {
    const c = conversation(true);
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    const errors = r.report.findings.filter((f) => f.severity !== 'info');
    expect(errors.map((f) => f.rule).sort()).toEqual(['ddp.mo-byte-order', 'rdmap.read-request-byte-order']);
    expect(errors.find((f) => f.rule === 'ddp.mo-byte-order')!.message).toMatch(
      /MO 0xe8030000 \(3892510720\) in network byte order is 1000 byte-swapped/,
    );
    expect(errors.find((f) => f.rule === 'rdmap.read-request-byte-order')!.message).toMatch(
      /RDMA Read Message Size 262144 \(swapped 1024\)/,
    );
    // The three Requests of the initiator: one listed, all three counted in its DDP summary.
    const dirs = r.report.flows[0]!.mpa!['directions'] as Array<{ ddp: { readRequestsByteSwapped?: number } }>;
    const ddp = dirs[0]!.ddp;
    expect(ddp.readRequestsByteSwapped).toBe(3);
  });

  it('the same conversation in network order: silent', async () => {
    const r = await analyzeBytes(conversation(false).pcap, { upper: defaultUpper });
    expect(r.report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  });
});
