/**
 * The iSER scenarios (src/generate/iser-scenarios.ts) through the whole analyzer: each, under three
 * random segmentation/marker/CRC/IP settings, gives exactly the findings, flows and FPDU positions
 * the generator declared (the round trip of test/generate/round-trip.test.ts, for iSER); the clean
 * ones are chosen as iSER from the private data or the streaming login and show the decode in -V.
 */
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate/generate.js';
import { KnobError } from '../../src/generate/knobs.js';
import { allScenarios } from '../../src/generate/registry.js';
import { analyzedWithSeqs } from '../generate/helpers.js';
import { cli } from '../cli/helpers.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function settings(seed: number): Record<string, string> {
  let x = seed * 2654435761;
  const r = (): number => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return {
    segmentation: pick(['one-per-segment', 'packed', 'mss', 'random']),
    mss: String(pick([536, 1460, 9000])),
    markers: pick(['none', 'i2r', 'r2i', 'both']),
    crc: r() < 0.85 ? 'on' : 'off',
    ip: pick(['4', '6']),
    'seq-wrap': r() < 0.2 ? 'yes' : 'no',
    close: pick(['none', 'fin', 'rst']),
  };
}

const names = allScenarios()
  .map((s) => s.name)
  .filter((n) => n.startsWith('iser-'));

describe('iSER scenarios round trip', () => {
  it('covers every iSER rule that a small capture can show', () => {
    expect(names.length).toBeGreaterThanOrEqual(25);
  });
  it('every scenario, three random settings each, exactly as the generator says', { timeout: 240_000 }, async () => {
    const failures: string[] = [];
    let seed = 11;
    for (const name of names) {
      for (let k = 0; k < 3; k++, seed++) {
        let g;
        try {
          g = generate(name, settings(seed), seed, seed % 2 ? 'pcap' : 'pcapng');
        } catch (e) {
          if (!(e instanceof KnobError)) throw e;
          continue;
        }
        const got = await analyzedWithSeqs(g.capture);
        const seqs = Object.fromEntries(
          Object.entries(g.truth.fpduSeqs ?? {})
            .filter(([, v]) => v.length > 0)
            .sort(),
        );
        got.fpduSeqs = Object.fromEntries(Object.entries(got.fpduSeqs).sort());
        const want = { findings: g.truth.findings, flows: g.truth.flows, fpduSeqs: seqs };
        if (JSON.stringify(got) !== JSON.stringify(want))
          failures.push(
            `${name} seed ${seed} ${JSON.stringify(settings(seed))}\n  got  ${JSON.stringify(got.findings)}\n  want ${JSON.stringify(want.findings)}`,
          );
      }
    }
    expect(failures.slice(0, 3).join('\n')).toBe('');
  });
  it('rule scenarios expect an iSER/iSCSI or ledger finding', () => {
    for (const n of names.filter((x) => !/-(clean|streaming-login|no-invalidate)$/.test(x))) {
      const g = generate(n, {}, 1, 'pcap');
      expect(
        g.truth.findings.some((f) => /^(iser|iscsi|ulp)\./.test(f.rule)),
        n,
      ).toBe(true);
    }
  });
});

describe('clean iSER captures in the analyzer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'iser-'));
  for (const n of ['iser-clean', 'iser-streaming-login'])
    writeFileSync(join(dir, `${n}.pcap`), generate(n, {}, 1, 'pcap').capture);

  it('JSON names iSER chosen from the private data, with its messages', () => {
    for (const n of ['iser-clean', 'iser-streaming-login']) {
      const r = cli(['--json', `${n}.pcap`], { cwd: dir });
      expect(r.code).toBe(0);
      const doc = JSON.parse(r.stdout) as {
        findings: unknown[];
        flows: Array<{ mpa: { ulp?: { protocol: string; basis: string; messages: number } } }>;
      };
      expect(doc.findings).toEqual([]);
      expect(doc.flows[0]!.mpa.ulp).toMatchObject({ protocol: 'iser', basis: 'private-data' });
      expect(doc.flows[0]!.mpa.ulp!.messages).toBeGreaterThan(10);
    }
  });

  it('event lines read as tshark iSCSI Info; -V nests iSER and iSCSI under the RDMAP message', () => {
    const r = cli(['-V', 'iser-clean.pcap'], { cwd: dir });
    for (const s of [
      'iSER Hello iSER-IRD 16',
      'Login Response (Success)',
      'SCSI: Read(10) LUN: 0x00 (LBA: 0x00000100, Len: 32)',
      'SCSI: Response LUN: 0x00 (Read(10)) (Good)',
      'SCSI: Write(16) LUN: 0x00 (LBA: 131072, Len: 8)',
      'SCSI: Data Out LUN: 0x00 (Write(10) Request Data)',
      'Read STag: 0x',
      'ExpectedDataTransferLength: 16384',
      'Octets moved by RDMA: 16384',
    ])
      expect(r.stdout).toContain(s);
    const s = cli(['-V', 'iser-streaming-login.pcap'], { cwd: dir });
    expect(s.stdout).toContain('2 Login PDUs before MPA, Full Feature Phase reached');
    expect(s.stdout).toContain('KeyValue: RDMAExtensions=Yes');
  });

  it('--ulp proto=iser forces it (basis forced), proto=none turns it off', () => {
    const forced = JSON.parse(
      cli(['--json', '--ulp', 'flow=all,proto=iser', 'iser-clean.pcap'], { cwd: dir }).stdout,
    ) as {
      flows: Array<{ mpa: { ulp?: { protocol: string; basis: string } } }>;
    };
    expect(forced.flows[0]!.mpa.ulp).toMatchObject({ protocol: 'iser', basis: 'forced' });
    const off = cli(['--ulp', 'flow=all,proto=none', 'iser-clean.pcap'], { cwd: dir });
    expect(off.stdout).not.toContain('SCSI:');
  });

  it('-Y and -T fields read the iSCSI fields', () => {
    const r = cli(
      [
        '-T',
        'fields',
        '-e',
        'iscsi.initiatortasktag',
        '-e',
        'scsi_sbc.opcode',
        '-Y',
        'iscsi.opcode == 0x01',
        'iser-clean.pcap',
      ],
      { cwd: dir },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').length).toBe(5);
  });

  it('-z scsi,srt: one row per SCSI operation, as -z smb2,srt lays it out', () => {
    for (const z of ['scsi,srt', 'scsi,srt,0']) {
      const r = cli(['-q', '-z', z, 'iser-clean.pcap'], { cwd: dir });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('SCSI SRT Statistics:');
      for (const op of ['Inquiry', 'Read(10)', 'Write(10)', 'Read(16)', 'Write(16)'])
        expect(r.stdout).toMatch(new RegExp(`\\n\\s+\\d+\\s+${op.replace(/[()]/g, '\\$&')}\\s+1 `));
    }
  });
});
