/**
 * NVMe/RDMA on the command line: `-z nvme,srt` prints tshark's SRT table per command, `--ulp
 * proto=nvme` is accepted and `proto=none` turns the decode off, `-V` nests the NVMe tree under
 * the RDMAP message, and the JSON report names the upper layer and carries the NVMe SRT rows.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';

const CORPUS = join(CAPTURES, 'corpus');

describe('NVMe/RDMA from the command line', () => {
  it('-z nvme,srt: one row per command, calls counted', () => {
    const r = cli(['-q', '-z', 'nvme,srt', 'nvme-io-clean.pcap'], { cwd: CORPUS });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NVMe SRT Statistics:');
    expect(r.stdout).toContain('Filter: nvme.cmd.opc');
    const rows = Object.fromEntries(
      r.stdout
        .split('\n')
        .map((l) => /^\s*(\d+)\s{2}(\S+)\s+(\d+)\s/.exec(l))
        .filter((m) => m !== null)
        .map((m) => [m[2]!, [Number(m[1]), Number(m[3])]]),
    );
    expect(rows).toEqual({ Flush: [0, 1], Write: [1, 2], Read: [2, 2], Connect: [0x7f01, 1], Disconnect: [0x7f08, 1] });
  });

  it('--ulp proto=nvme is accepted; proto=none leaves the capsules undecoded', () => {
    const on = cli(['--ulp', 'flow=all,proto=nvme', 'nvme-admin-clean.pcap'], { cwd: CORPUS });
    expect(on.code).toBe(0);
    expect(on.stdout).toContain('NVMeOF CQE for Connect cid=1');
    expect(on.stdout).toContain('NVMe Identify cid=5');
    const off = cli(['--ulp', 'flow=all,proto=none', 'nvme-admin-clean.pcap'], { cwd: CORPUS });
    expect(off.code).toBe(0);
    expect(off.stdout).not.toContain('NVMe');
  });

  it('-V nests the capsule under the RDMAP message; JSON names the upper layer and its SRT', () => {
    const v = cli(['-V', 'nvme-io-clean.pcap'], { cwd: CORPUS });
    expect(v.code).toBe(0);
    for (const s of [
      '[NVM Express Fabrics RDMA, I/O queue 1]',
      '[RDMA CM private data, REQ qid 1 (I/O), hsqsize 127, hrqsize 128; REP crqsize 128]',
      'Fabric Command Type: Connect (0x01)',
      'Host NQN: nqn.2014-08.org.nvmexpress:uuid:7d6c1e2a-host-iwarp',
      'SGL1, Keyed SGL Data Block, Invalidate Key: 131072 octets',
      '[Invalidated Key: 0x',
      'Status Field: 0x0000: Successful Completion',
    ])
      expect(v.stdout).toContain(s);
    const j = cli(['--json', 'nvme-io-clean.pcap'], { cwd: CORPUS });
    const doc = JSON.parse(j.stdout) as {
      findings: unknown[];
      flows: Array<{ mpa: { ulp?: { protocol: string; basis: string } } }>;
      srt?: Array<{ program: string; command: string; calls: number }>;
    };
    expect(doc.findings).toEqual([]);
    expect(doc.flows[0]!.mpa.ulp).toMatchObject({ protocol: 'nvme', basis: 'private-data' });
    expect(doc.srt?.filter((x) => x.program === 'NVMe').map((x) => [x.command, x.calls])).toEqual([
      ['Connect', 1],
      ['Write', 2],
      ['Read', 2],
      ['Flush', 1],
      ['Disconnect', 1],
    ]);
  });

  it('-Y and -T fields read the NVMe fields (Wireshark names) off the decoded capsules', () => {
    const r = cli(
      [
        '-Y',
        'nvme.cmd.opc == 2',
        '-T',
        'fields',
        '-e',
        'frame.number',
        '-e',
        'nvme.cmd.sgl1.len',
        '-e',
        'nvme.cmd.nlb',
        'nvme-io-clean.pcap',
      ],
      { cwd: CORPUS },
    );
    expect(r.code).toBe(0);
    // The two Reads: 32 blocks of 4096 into a keyed SGL, then one block.
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').slice(1)),
    ).toEqual([
      ['131072', '32'],
      ['4096', '1'],
    ]);
    const e = cli(['-Y', 'nvme.cqe.status.dnr', 'nvme-error-status.pcap'], { cwd: CORPUS });
    expect(e.stdout).toContain('NVMe CQE for Read cid=2 [LBA Out of Range]');
  });
});
