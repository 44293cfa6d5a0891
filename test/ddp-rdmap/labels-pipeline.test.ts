import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { enhancedPd, patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { analyzeBytes } from '../helpers/analyze.js';

const rpc8797 = Uint8Array.from([0xf6, 0xab, 0x0e, 0x18, 1, 1, 0, 0]);

describe('upper-layer labels through the pipeline', () => {
  it('NFS over RDMA from RFC 8797 private data after the RFC 6581 block', async () => {
    const c = buildMpaConnection({
      request: { rev: 2, enhanced: true, c: true, pd: enhancedPd({ ird: 8, ord: 8 }, rpc8797) },
      reply: { rev: 2, enhanced: true, c: true, pd: enhancedPd({ ird: 8, ord: 8 }) },
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(40, 1)) }],
      scenario: { server: { addr: '10.0.0.2', port: 20049 } },
    });
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(r.flows[0]!.upperLayer).toMatchObject({ protocol: 'NFS over RDMA', basis: 'private-data' });
  });

  it('no label when the evidence is not clear', async () => {
    const c = buildMpaConnection({
      request: {},
      reply: {},
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(40, 1)) }],
      scenario: { server: { addr: '10.0.0.2', port: 7777 } },
    });
    const r = await analyzeBytes(c.pcap, { upper: defaultUpper });
    expect(r.flows[0]!.upperLayer).toBeNull();
  });
});
