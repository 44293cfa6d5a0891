/**
 * A capture of many concurrent MPA connections (for `--threads`): groups of `concurrent`
 * connections whose segments are interleaved round robin, each a Request/Reply with markers and
 * CRC, then Send FPDUs both ways cut into MSS segments, then FIN. The work is spread over flows as
 * in a storage test, so worker threads sharded by 4-tuple all have some.
 */
import { buildMpaConnection } from '../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../src/generate/mpa-encoder.js';
import { PcapFileWriter, LINKTYPE_ETHERNET, type PcapFrame } from '../src/report/pcap-writer.js';

export interface ManyFlowsSpec {
  flows: number;
  /** Connections open at once (interleaved). */
  concurrent: number;
  /** FPDUs each way per connection. */
  fpdus: number;
}

/**
 * Connections' frames round robin, one frame of each in turn, with fresh increasing timestamps
 * (`stepUs` apart from `startUs` on): connections open at once, as on a busy link.
 */
export function interleave(groups: ReadonlyArray<readonly PcapFrame[]>, startUs = 0, stepUs = 5): PcapFrame[] {
  const out: PcapFrame[] = [];
  let us = startUs;
  for (let k = 0, left = true; left; k++) {
    left = false;
    for (const frames of groups) {
      const f = frames[k];
      if (!f) continue;
      left = true;
      us += stepUs;
      out.push({ tsSec: 1_700_000_000 + Math.floor(us / 1e6), tsNsec: (us % 1e6) * 1000, data: f.data });
    }
  }
  return out;
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
      const ulpdus = (dir: number) =>
        Array.from({ length: spec.fpdus }, (_, k) => ({
          ulpdu: sendUlpdu(k + 1, bodies[(k + dir + i) % bodies.length]!),
        }));
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
    const frames = interleave(group, us, 2);
    for (const f of frames) {
      w.write(f);
      packets++;
      bytes += 16 + f.data.length;
    }
    us += 2 * frames.length;
  }
  w.close();
  return { packets, bytes };
}

// `node dist/scripts/bench-threads-generate.js FILE [FLOWS [CONCURRENT [FPDUS]]]`
if (process.argv[1]?.endsWith('bench-threads-generate.js')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: bench-threads-generate FILE [FLOWS [CONCURRENT [FPDUS]]]');
  const r = generateManyMpaFlows(file, {
    flows: Number(process.argv[3] ?? 2000),
    concurrent: Number(process.argv[4] ?? 500),
    fpdus: Number(process.argv[5] ?? 60),
  });
  console.log(`${file}: ${r.packets} packets, ${(r.bytes / 1e6).toFixed(1)} MB`);
}
