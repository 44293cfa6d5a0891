/**
 * The fuzzer's upper-layer target (scripts/fuzz/mutate-ulp.ts): each named hostile case of issue 19
 * reaches the upper layer through valid MPA and DDP (good CRCs, no framing finding), is decoded
 * there, and ends with a bounded number of findings; random cases never throw.
 */
import { describe, expect, it } from 'vitest';
import type { UlpFlowSummary } from '../../dissectors/ddp-rdmap/ulp-handoff.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { rng } from '../../src/generate/mpa-encoder.js';
import { mutationsFor, ulpCase, type UlpBase, type UlpMutation } from '../../scripts/fuzz/mutate-ulp.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';

/** Lower-layer findings a mutated upper layer may cause: the connection's order and its clean end. */
const LOWER_ALLOWED = new Set(['mpa.tcp-closed-between', 'mpa.responder-first']);
/** More findings than this from one small connection would mean a finding per octet or per descriptor. */
const BOUND = 100;

async function run(base: UlpBase, kind: UlpMutation, seed = 3) {
  const c = ulpCase(rng(seed), base, [kind]);
  const r = await analyzeBytes(c.capture, { upper: defaultUpper });
  const rules = rulesOf(r);
  return { name: c.name, rules, ulp: (r.report.flows[0]?.mpa as { ulp?: UlpFlowSummary } | null)?.ulp ?? null };
}

const NAMED: Array<[UlpBase, UlpMutation, string | null]> = [
  ['smb-direct', 'smbd-channel-info-max', 'smb2.channel-info-invalid'],
  ['smb-direct', 'smbd-4gb-length', 'smb_direct.data-transfer.fragment-too-large'],
  ['smb-direct', 'smbd-credits-65535', null],
  ['smb-direct', 'smbd-messageid-reused', 'smb2.messageid-reused'],
  ['rpc-rdma', 'rpc-chunks-endless', 'rpcordma.chunk-lists-malformed'],
  ['rpc-rdma', 'rpc-segment-count-millions', 'rpcordma.chunk-lists-malformed'],
  ['rpc-rdma', 'rpc-credits-65535', null],
  ['rpc-rdma', 'rpc-xid-reused', null],
];

describe('fuzz ulp target: the named hostile cases', () => {
  for (const [base, kind, rule] of NAMED) {
    it(`${kind}: reaches ${base} through valid MPA/DDP, bounded${rule ? `, ${rule}` : ''}`, async () => {
      const { rules, ulp } = await run(base, kind);
      expect(rules.filter((x) => /^(mpa|ddp|rdmap|tcp)\./.test(x) && !LOWER_ALLOWED.has(x))).toEqual([]);
      expect(ulp?.protocol).toBe(base);
      expect(ulp!.messages).toBeGreaterThan(5);
      expect(rules.length).toBeLessThan(BOUND);
      if (rule) expect(rules).toContain(rule);
    });
  }

  it('a clean base connection draws no finding beyond its close (the mutation is what the rules see)', async () => {
    for (const base of ['smb-direct', 'rpc-rdma'] as const) {
      const c = ulpCase(rng(3), base, []);
      const r = await analyzeBytes(c.capture, { upper: defaultUpper });
      expect(rulesOf(r).filter((x) => !LOWER_ALLOWED.has(x))).toEqual([]);
    }
  });
});

describe('fuzz ulp target: random cases', () => {
  it('never throws and stays bounded on 40 seeded cases of every mutation', async () => {
    const r = rng(1919);
    for (let i = 0; i < 40; i++) {
      const c = ulpCase(r);
      const res = await analyzeBytes(c.capture, { upper: defaultUpper });
      expect(rulesOf(res).length, c.name).toBeLessThan(BOUND);
    }
    expect(mutationsFor('smb-direct')).not.toContain('rpc-xid-reused');
  }, 60_000);
});
