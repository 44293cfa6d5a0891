/**
 * The SMB Direct and NFS-over-RDMA scenarios (src/generate/smbd-scenarios.ts,
 * nfsrdma-scenarios.ts): the clean captures of the corpus give no finding at all, the upper layer
 * is chosen from the MPA private data and decoded, and `mpa-dissect -V` shows the upper-layer
 * trees; every rule scenario expects at least one finding, an upper-layer one at a message of the capture.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from '../../src/generate/generate.js';
import { allScenarios } from '../../src/generate/registry.js';
import { CAPTURES, cli } from '../cli/helpers.js';
import { analyzedTruth } from './helpers.js';

const CORPUS = join(CAPTURES, 'corpus');

describe('clean SMB Direct and NFS-over-RDMA captures', () => {
  it.each(['smbd-clean.pcap', 'nfsrdma-clean.pcap'])('%s: no finding at all, FPDUs both ways', async (file) => {
    const got = await analyzedTruth(readFileSync(join(CORPUS, file)));
    expect(got.findings).toEqual([]);
    const dirs = got.flows[0]!.mpa!.directions;
    expect(dirs[0].fpdus).toBeGreaterThan(10);
    expect(dirs[1].fpdus).toBeGreaterThan(10);
  });

  it('the JSON report names the upper layer, chosen from the private data', () => {
    for (const [file, protocol] of [
      ['smbd-clean.pcap', 'smb-direct'],
      ['nfsrdma-clean.pcap', 'rpc-rdma'],
    ] as const) {
      const r = cli(['--json', file], { cwd: CORPUS });
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout) as {
        findings: unknown[];
        flows: Array<{ mpa: { ulp?: { protocol: string; basis: string; messages: number } } }>;
      };
      expect(doc.findings).toEqual([]);
      expect(doc.flows[0]!.mpa.ulp).toMatchObject({ protocol, basis: 'private-data' });
      expect(doc.flows[0]!.mpa.ulp!.messages).toBeGreaterThan(10);
    }
  });

  it('--threads with upper layers on: one thread, said once on stderr; the output is that of one thread', () => {
    const one = cli(['-q', '-z', 'smb2,srt', '--threads', '1', 'smbd-clean.pcap'], { cwd: CORPUS });
    const two = cli(['-q', '-z', 'smb2,srt', '--threads', '2', 'smbd-clean.pcap'], { cwd: CORPUS });
    expect(one.stderr).toBe('');
    expect(two.stderr).toBe(
      'mpa-dissect: --threads 2: upper layers above RDMAP (SMB Direct, RPC-over-RDMA) are decoded on one thread, so this run uses one; --ulp flow=all,proto=none lets --threads apply\n',
    );
    expect(two.stdout).toBe(one.stdout);
    expect(two.stdout).toContain('SMB2 SRT Statistics:');
    const off = cli(['-q', '--threads', '2', '--ulp', 'flow=all,proto=none', 'smbd-clean.pcap'], { cwd: CORPUS });
    expect(off.stderr).toBe('');
  });

  it('-Y and -T fields reach the upper layers: smb2 and rpc fields filter and print', () => {
    // smbd-clean has one READ (MessageId 4) and one WRITE (5); nfsrdma-clean one NFSv3 READ (procedure 6).
    const y = cli(['-Y', 'smb2.cmd == 8', 'smbd-clean.pcap'], { cwd: CORPUS });
    expect(y.code).toBe(0);
    const lines = y.stdout.split('\n').filter((l) => / FPDU seq=/.test(l));
    expect(lines.map((l) => l.replace(/^.* {2}(SMB2 \S+ \S+ MessageId \d+).*$/, '$1'))).toEqual([
      'SMB2 READ Request MessageId 4',
      'SMB2 READ Response MessageId 4',
    ]);
    const t = cli(['-T', 'fields', '-e', 'smb2.msg_id', '-Y', 'smb2.cmd == 9', 'smbd-clean.pcap'], { cwd: CORPUS });
    expect(t.stdout.trim().split('\n')).toEqual(['5', '5']);
    const n = cli(['-T', 'fields', '-e', 'rpc.xid', '-Y', 'nfs.procedure_v3 == 6', 'nfsrdma-clean.pcap'], {
      cwd: CORPUS,
    });
    expect(n.stdout.trim().split('\n').length).toBe(2);
    expect(n.stdout).toMatch(/^0x[0-9a-f]{8}\n0x[0-9a-f]{8}\n$/);
  });

  it('-V shows the SMB Direct and SMB2 decode', () => {
    const r = cli(['-V', 'smbd-clean.pcap'], { cwd: CORPUS });
    expect(r.code).toBe(0);
    for (const s of [
      'SMB Direct Negotiate Request',
      'SMB-Direct (SMB RDMA Transport)',
      'SMB2 SESSION_SETUP Request MessageId 1 [reassembled from 2 fragments',
      'SMB2 READ Request MessageId 4',
      'via RDMA_V1',
      'SMB2 READ Response MessageId 4 DataRemaining 65536',
      'via RDMA_V1_INVALIDATE',
      'SMB2 WRITE Response MessageId 5 Count 32768',
      'response requested',
      'SMB2 CLOSE Response',
    ])
      expect(r.stdout).toContain(s);
  });

  it('-V shows the RPC-over-RDMA, RPC and NFS decode', () => {
    const r = cli(['-V', 'nfsrdma-clean.pcap'], { cwd: CORPUS });
    expect(r.code).toBe(0);
    for (const s of [
      'RPC Call NFSv3 NULL',
      'RPC Call NFSv3 READ',
      'RPC Reply NFSv3 READ',
      'RDMA Write into write chunk',
      'RDMA Read Request of read chunk',
      'RPC Reply NFSv3 WRITE',
      'RDMA_NOMSG',
      'NFSv4 COMPOUND (SEQUENCE, PUTFH, READ)',
      'Remote Invalidation',
    ])
      expect(r.stdout).toContain(s);
  });
});

describe('rule scenarios', () => {
  const rules = allScenarios().filter((s) => /^(smbd|nfsrdma|nvme)-/.test(s.name) && !s.name.endsWith('-clean'));
  it.each(rules.map((s) => [s.name] as const))('%s expects a finding at a message of its capture', (name) => {
    const g = generate(name, {}, 1, 'pcap');
    expect(g.truth.findings.length).toBeGreaterThan(0);
    const seqs = new Set(Object.values(g.truth.fpduSeqs ?? {}).flat());
    // Upper-layer and ledger findings are at the first FPDU of an RDMAP message.
    for (const f of g.truth.findings)
      if (f.seq !== null && /^(smb_direct|smb2|rpcordma|nvme-rdma|ulp)\./.test(f.rule))
        expect(seqs.has(f.seq), `${f.rule} at ${f.seq}`).toBe(true);
  });
});
