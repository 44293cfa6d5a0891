/**
 * A capture of many concurrent MPA connections (for `--threads`): groups of `concurrent`
 * connections whose segments are interleaved round robin, each a Request/Reply with markers and
 * CRC, then Send FPDUs both ways cut into MSS segments, then FIN. The work is spread over flows as
 * in a storage test, so worker threads sharded by 4-tuple all have some.
 */
import { buildMpaConnection } from '../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../src/generate/mpa-encoder.js';
import { PcapFileWriter, LINKTYPE_ETHERNET } from '../src/report/pcap-writer.js';

export interface ManyFlowsSpec {
  flows: number;
  /** Connections open at once (interleaved). */
  concurrent: number;
  /** FPDUs each way per connection. */
  fpdus: number;
}

export function generateManyMpaFlows(file: string, spec: ManyFlowsSpec): { packets: number; bytes: number } {
  const w = new PcapFileWriter(file, LINKTYPE_ETHERNET, false);
  const sizes = [64, 300, 1000, 1400, 4000, 8192];
  const bodies = sizes.map((n, i) => patternBytes(n, i + 1));
  let packets = 0;
  let bytes = 0;
  let us = 0;
  for (let first = 0; first < spec.flows; first += spec.concurrent) {
    const group = [];
    for (let i = first; i < Math.min(spec.flows, first + spec.concurrent); i++) {
      const ulpdus = (dir: number) => Array.from({ length: spec.fpdus }, (_, k) => ({ ulpdu: sendUlpdu(k + 1, bodies[(k + dir + i) % bodies.length]!) }));
      const c = buildMpaConnection({
        request: { m: true, c: true },
        reply: { m: true, c: true },
        i2r: ulpdus(0),
        r2i: ulpdus(1),
        scenario: {
          client: { addr: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, port: 10000 + (i % 50000) },
          server: { addr: '10.200.0.1', port: 4420 },
          mss: 1448,
        },
      });
      group.push(c.frames);
    }
    // Round robin over the group's connections, one frame each, with fresh increasing timestamps.
    for (let k = 0, left = true; left; k++) {
      left = false;
      for (const frames of group) {
        const f = frames[k];
        if (!f) continue;
        left = true;
        us += 2;
        w.write({ tsSec: 1_700_000_000 + Math.floor(us / 1e6), tsNsec: (us % 1e6) * 1000, data: f.data });
        packets++;
        bytes += 16 + f.data.length;
      }
    }
  }
  w.close();
  return { packets, bytes };
}

// `node dist/scripts/bench-threads-generate.js FILE [FLOWS [CONCURRENT [FPDUS]]]`
if (process.argv[1]?.endsWith('bench-threads-generate.js')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: bench-threads-generate FILE [FLOWS [CONCURRENT [FPDUS]]]');
  const r = generateManyMpaFlows(file, { flows: Number(process.argv[3] ?? 2000), concurrent: Number(process.argv[4] ?? 500), fpdus: Number(process.argv[5] ?? 60) });
  console.log(`${file}: ${r.packets} packets, ${(r.bytes / 1e6).toFixed(1)} MB`);
}
