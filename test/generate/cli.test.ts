/**
 * `mpa-dissect generate` as a user runs it: --list names every scenario and knob, the same seed
 * writes the same octets, .pcapng writes pcapng, --truth agrees with `mpa-dissect --json`, and a
 * bad option is one line and exit status 2.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOBS } from '../../src/generate/knobs.js';
import { allScenarios } from '../../src/generate/registry.js';
import { truthOfReport } from '../../src/generate/truth.js';
import { spawnSync } from 'node:child_process';
import { CLI, cli } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-generate-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mpa-dissect generate', () => {
  it('--list describes every scenario and every knob', () => {
    const r = cli(['generate', '--list']);
    expect(r.code).toBe(0);
    for (const s of allScenarios()) expect(r.stdout).toContain(`  ${s.name} `);
    for (const k of KNOBS) expect(r.stdout).toContain(`--${k.name}  `);
  });

  it('is deterministic by --seed, and another seed gives another capture', () => {
    const run = (seed: string, name: string) => {
      const f = join(dir, name);
      expect(cli(['generate', 'middlebox', '--seed', seed, '-o', f]).code).toBe(0);
      return readFileSync(f);
    };
    const a = run('5', 'a.pcap');
    expect(run('5', 'b.pcap').equals(a)).toBe(true);
    expect(run('6', 'c.pcap').equals(a)).toBe(false);
  });

  it('writes pcapng for .pcapng (and --format), and its truth is what the analyzer reports', () => {
    const cap = join(dir, 'x.pcapng');
    const truth = join(dir, 'x.json');
    expect(cli(['generate', 'bad-fpduptr', '--ip', '6', '--vlan', '7', '-o', cap, '--truth', truth]).code).toBe(0);
    expect(readFileSync(cap).readUInt32LE(0)).toBe(0x0a0d0d0a);
    const t = JSON.parse(readFileSync(truth, 'utf8'));
    expect(t.schema).toBe('mpa-dissect/truth/v1');
    expect(t.findings.map((f: { rule: string }) => f.rule)).toContain('mpa.fpduptr-mismatch');
    const r = cli(['--json', cap]);
    expect(r.code).toBe(1);
    expect(truthOfReport(JSON.parse(r.stdout))).toEqual({ findings: t.findings, flows: t.flows });
    const p = join(dir, 'y.cap');
    expect(cli(['generate', 'clean', '--format', 'pcapng', '-o', p]).code).toBe(0);
    expect(readFileSync(p).readUInt32LE(0)).toBe(0x0a0d0d0a);
  });

  it.each([
    [['generate', 'nope', '-o', 'x.pcap'], /unknown scenario "nope"/],
    [['generate', 'clean', '--rev', '3', '-o', 'x.pcap'], /--rev: unknown value "3"/],
    [['generate', 'clean', '--count', 'many', '-o', 'x.pcap'], /--count: "many" is not a whole number/],
    [['generate', 'clean'], /-o FILE is required/],
    [['generate', 'clean', '--seed', '-1', '-o', 'x.pcap'], /--seed/],
    [['generate', 'clean', '--format', 'erf', '-o', 'x.pcap'], /--format "erf"/],
    [['generate', 'clean', '--rtr', 'send', '-o', 'x.pcap'], /Rev 2 only/],
    [['generate', 'clean', '--impair', 'bad-fpduptr', '-o', 'x.pcap'], /needs markers/],
    [['generate', 'clean', '--bogus', '1', '-o', 'x.pcap'], /bogus/],
  ])('%j: one line, exit 2', (args, msg) => {
    const r = cli(args, { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(msg);
  });

  it('-o - into a reader that goes away (| head): exit 0, nothing on standard error, the truth written', () => {
    const truth = join(dir, 'head-truth.json');
    // A real pipe: head closes it after 100 octets while the generator has megabytes left to write.
    const r = spawnSync(
      'bash',
      [
        '-c',
        `"${process.execPath}" "${CLI}" generate clean --count 300 --size 4000 -o - --truth "${truth}" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`,
      ],
      { encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('0');
    expect(JSON.parse(readFileSync(truth, 'utf8')).scenario).toBe('clean');
  });
});
