import { it } from 'vitest';
import { buildScenario } from '../../src/generate/scenario.js';
import { alignedStream, markerStream, ulpPdus } from '../../src/generate/tuf.js';
import { analyzeBytes } from '../helpers/analyze.js';
it('dbg', async () => {
  const KEY = 0x1a2b3c4d5e6f;
  const a = alignedStream(KEY, ulpPdus([100, 200, 300, 50, 700, 64], 3));
  const b = alignedStream(0x0badc0ffee11, ulpPdus([40, 80, 120, 33], 4));
  const sc = buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }, { dir: 1, bytes: b.bytes, cut: b.cut }]);
  const r = await analyzeBytes(sc.pcap, { onTuf: (x) => console.log(x.seq, x.length, x.key, x.aligned, x.frames) });
  console.log(JSON.stringify(r.report.flows[0]!.tuf), r.report.findings);
  const m = markerStream(ulpPdus([100, 3000, 20, 500, 4000, 10], 5), 512);
  const sc2 = buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }, { dir: 1, bytes: new TextEncoder().encode('hello there'), cut: 'mss' }]);
  const r2 = await analyzeBytes(sc2.pcap, { onTuf: (x) => console.log(x.seq, x.length, x.markers.length, x.frames) });
  console.log(JSON.stringify(r2.report.flows[0]!.tuf), r2.report.findings, m.pduStarts);
});
