import { it } from 'vitest';
import { generate } from '../../src/generate/generate.js';
import { analyzedWithSeqs } from './helpers.js';
it('probe', async () => {
  const names = (process.env.SC ?? 'smbd-clean').split(',');
  for (const n of names) {
    const g = generate(n, JSON.parse(process.env.KN ?? '{}'), Number(process.env.SEED ?? 1), 'pcap');
    const got = await analyzedWithSeqs(g.capture);
    const want = JSON.stringify(g.truth.findings);
    const gotF = JSON.stringify(got.findings);
    console.log(n, want === gotF ? 'FINDINGS OK' : `FINDINGS DIFFER\n want ${want}\n got  ${gotF}`);
    console.log(' flows', JSON.stringify(got.flows) === JSON.stringify(g.truth.flows) ? 'OK' : `DIFFER\n want ${JSON.stringify(g.truth.flows)}\n got ${JSON.stringify(got.flows)}`);
    const ws = Object.fromEntries(Object.entries(g.truth.fpduSeqs ?? {}).filter(([, v]) => v.length > 0).sort());
    const gs = Object.fromEntries(Object.entries(got.fpduSeqs).sort());
    console.log(' seqs', JSON.stringify(ws) === JSON.stringify(gs) ? 'OK' : 'DIFFER');
  }
});
