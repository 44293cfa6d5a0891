/** The CLI's other promises: help, the rules and fields listings, colour, -w, thresholds, stdin. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCapture } from '../../src/capture/read-capture.js';
import { RULES } from '../../src/analysis/rules-catalog.js';
import { THRESHOLD_RULES } from '../../src/analysis/threshold-rules.js';
import { CAPTURES, cli } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-cli-'));
});

async function framesOf(path: string): Promise<number[]> {
  const out: number[] = [];
  await readCapture(path, (p) => {
    out.push(p.frame);
  });
  return out;
}

/** Each frame's bytes as hex, by frame number. */
async function bytesOf(path: string): Promise<string[]> {
  const out: string[] = [];
  await readCapture(path, (p) => {
    out[p.frame] = Buffer.from(p.data).toString('hex');
  });
  return out;
}

describe('--help', () => {
  it('shows an example for each everyday use and the exit statuses', () => {
    const r = cli(['--help']);
    expect(r.code).toBe(0);
    const h = r.stdout.replace(/\s+/g, ' ');
    expect(h).toContain('desk check');
    expect(h).toContain('CI gate');
    expect(h).toContain("--mpa 'flow=port:4420,markers=both,crc=on'");
    expect(h).toContain('mid-stream');
    expect(h).toMatch(/tcpdump -i eth0 -U -w - port 4420 \| mpa-dissect -l -/);
    expect(h).toMatch(/0 +nothing at or above --fail-on was found/);
    expect(h).toMatch(/1 +a finding at or above --fail-on/);
    expect(h).toMatch(/2 +usage error/);
    expect(h).toContain('always describe the whole capture');
    for (const flag of [
      '-Y',
      '-V',
      '-x',
      '-w',
      '--write-filter',
      '--json',
      '--ndjson',
      '--junit',
      '--rules',
      '--stats',
      '--fail-on',
      '-q',
      '-l',
      '-r',
    ]) {
      expect(h).toContain(flag);
    }
  });
});

describe('rules and fields listings', () => {
  it('rules lists every rule with severity, code and reference, threshold rules included', () => {
    const r = cli(['rules']);
    expect(r.code).toBe(0);
    for (const id of [...RULES.keys(), ...THRESHOLD_RULES.map((x) => x.id)]) expect(r.stdout).toContain(id);
    expect(r.stdout).toMatch(/mpa\.crc-mismatch +error +2 +RFC 5044 §4\.4, §8/);
  });
  it('rules --json is machine-readable; with --rules it shows what is in force', () => {
    const f = join(dir, 'r.json');
    writeFileSync(f, JSON.stringify({ rules: { 'mpa.pad-not-zero': 'off', 'mpa.crc-mismatch': 'warning' } }));
    const list = JSON.parse(cli(['rules', '--json', '--rules', f]).stdout) as Array<{
      id: string;
      severity: string;
      inForce: string;
      rfcErrorCode: number | null;
    }>;
    const byId = new Map(list.map((x) => [x.id, x]));
    expect(byId.get('mpa.pad-not-zero')!.inForce).toBe('off');
    expect(byId.get('mpa.crc-mismatch')).toMatchObject({ severity: 'error', inForce: 'warning', rfcErrorCode: 2 });
    expect(byId.get('mpa.rejected')!.inForce).toBe('info');
  });
  it("fields lists the filter names, Wireshark's and ours", () => {
    const r = cli(['fields']);
    for (const f of [
      'iwarp_mpa.crc_status',
      'iwarp_mpa.marker_fpduptr',
      'iwarp_ddp.msn',
      'iwarp_rdma.opcode',
      'finding.rule',
      'finding.code',
      'frame.number',
      'tcp.stream',
      'ip.src',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^${f.replace(/\./g, '\\.')} `, 'm'));
    }
  });
});

describe('colour', () => {
  it('none in pipes or with NO_COLOR; --color forces it', () => {
    expect(cli(['golden.pcap']).stdout).not.toContain('\x1b[');
    const forced = cli(['--color', 'golden.pcap']).stdout;
    expect(forced).toContain('\x1b[31mCRC BAD\x1b[39m');
    expect(forced).toContain('\x1b[31merror  \x1b[39m mpa.crc-mismatch');
  });
  it('no progress bar when stderr is not a terminal', () => {
    expect(cli(['-q', 'golden.pcap']).stderr).toBe('');
  });
});

describe('-w: frames for a colleague', () => {
  it('by default writes the connections of the findings, whole: an evidence file that reproduces them', async () => {
    const out = join(dir, 'findings.pcap');
    const r = cli(['-q', '-w', out, 'golden.pcap']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const report = JSON.parse(cli(['--json', 'golden.pcap']).stdout) as {
      findings: Array<{ frames: number[] }>;
    };
    // The findings are on frames 7-12 of the first connection (frames 1-12: SYN, SYN-ACK, ACK,
    // Request 4, Reply 5, ...); the second connection (13-19) has none and is left out.
    const behind = [...new Set(report.findings.flatMap((f) => f.frames))].sort((a, b) => a - b);
    expect(behind).toEqual([7, 8, 9, 11, 12]);
    const want = Array.from({ length: 12 }, (_, i) => i + 1);
    // Copies of the original frames, in capture order.
    const orig = await bytesOf(join(CAPTURES, 'golden.pcap'));
    const written = await bytesOf(out);
    expect(written.slice(1)).toEqual(want.map((f) => orig[f]));
    // Re-analysed, the file shows the same findings.
    const again = JSON.parse(cli(['--json', out]).stdout) as { findings: Array<{ rule: string; seq: number }> };
    const key = (fs: Array<{ rule: string; seq?: number | null }>) => fs.map((f) => `${f.rule} ${f.seq}`).sort();
    expect(key(again.findings)).toEqual(key(report.findings as never));
  });
  it('--write-filter chooses the events (their connection written with them); standard input works too', async () => {
    const out = join(dir, 'crc.pcap');
    const input = readFileSync(join(CAPTURES, 'golden.pcap'));
    cli(['-q', '-w', out, '--write-filter', 'iwarp_mpa.crc_status == "bad"', '-'], { input });
    // The bad CRC (frame 9) with its connection, frames 1-12, from the window standard input keeps.
    const orig = await bytesOf(join(CAPTURES, 'golden.pcap'));
    expect((await bytesOf(out)).slice(1)).toEqual(orig.slice(1, 13));
    expect(cli(['-q', '-Y', 'iwarp_mpa.crc_status == "bad"', out]).stdout).toMatch(/mpa\.crc-mismatch/);
  });
  it('an empty selection still writes a valid pcap', async () => {
    const out = join(dir, 'none.pcap');
    expect(cli(['-q', '-w', out, '--write-filter', 'frame.number == 9999', 'golden.pcap']).code).toBe(1);
    expect(readFileSync(out).length).toBe(24);
    expect(await framesOf(out)).toEqual([]);
  });
  it.skipIf(!HAVE_TSHARK)(
    `the file opens in tshark, which sees the MPA startup frames${HAVE_TSHARK ? '' : ' (skipped: tshark is not installed)'}`,
    () => {
      const out = join(dir, 'ws.pcap');
      cli(['-q', '-w', out, 'golden.pcap']);
      const r = spawnSync(
        'tshark',
        ['-r', out, '-o', 'tcp.try_heuristic_first:TRUE', '--disable-heuristic', 'rpcrdma_iwarp'],
        { encoding: 'utf8' },
      );
      expect(r.status).toBe(0);
      expect(r.stdout).toContain('MPA Request Frame');
      expect(r.stdout).toContain('MPA Reply Frame');
    },
  );
});

describe('thresholds from the rules file', () => {
  it('alignment minimum per direction and a minimum number of MPA flows', () => {
    const f = join(dir, 'th.json');
    writeFileSync(
      f,
      JSON.stringify({ thresholds: { 'alignment.minFpduAlignedPercent': 50, 'capture.minMpaFlows': 2 } }),
    );
    const r = cli(['--ndjson', '--rules', f, 'golden.pcap']);
    const found = r.stdout
      .trimEnd()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { type: string; rule?: string; message?: string; severity?: string; flow?: number | null },
      );
    const th = found.filter((x) => x.type === 'finding' && x.rule!.startsWith('threshold.'));
    expect(th.map((x) => x.rule)).toEqual(['threshold.fpdu-alignment', 'threshold.min-mpa-flows']);
    expect(th[0]).toMatchObject({
      severity: 'error',
      flow: 1,
      message: 'FPDU alignment 25% (1 of 4 whole segments from 10.0.0.1:40001) is below the minimum 50%',
    });
    expect(th[1]).toMatchObject({
      flow: null,
      message: '1 MPA connection in the capture, the rules file requires at least 2',
    });
    const summary = found.at(-1) as { errors?: number };
    expect(summary.errors).toBe(4);
  });
  it('a threshold rule can be demoted like any rule', () => {
    const f = join(dir, 'th2.json');
    writeFileSync(f, JSON.stringify({ rules: { 'threshold.*': 'warning' }, thresholds: { 'capture.minMpaFlows': 3 } }));
    const r = cli(['-q', '--rules', f, 'sample.pcap']);
    expect(r.stdout).toMatch(/warning +threshold\.min-mpa-flows/);
    expect(r.code).toBe(0);
  });
});

describe('reading', () => {
  it('-r names the capture as tshark -r does; two different captures are refused', () => {
    expect(cli(['-r', 'golden.pcap']).stdout).toBe(cli(['golden.pcap']).stdout);
    const r = cli(['-r', 'golden.pcap', 'sample.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('two captures given');
  });
  it('-w - and --junit - are refused: standard output carries the report', () => {
    expect(cli(['-w', '-', 'golden.pcap']).code).toBe(2);
    expect(cli(['--junit', '-', 'golden.pcap']).code).toBe(2);
  });
  it('-q keeps only the summary', () => {
    const q = cli(['-q', 'golden.pcap']).stdout;
    expect(q.startsWith('Flows\n')).toBe(true);
    expect(q).not.toContain('FPDU seq=');
  });
});

describe('JSON forms keep standard output parseable', () => {
  it('--stats goes to stderr with --json and --ndjson', () => {
    const j = cli(['--json', '-z', 'conv', 'golden.pcap']);
    expect(() => JSON.parse(j.stdout) as unknown).not.toThrow();
    expect(j.stderr).toContain('TCP conversations');
    const n = cli(['--ndjson', '-z', 'rules', 'golden.pcap']);
    for (const l of n.stdout.trimEnd().split('\n')) expect(() => JSON.parse(l) as unknown).not.toThrow();
    expect(n.stderr).toContain('Findings by rule');
  });
});

describe('the README CI recipe', () => {
  it('runs as written: exit 1 on errors, JUnit, report and frames kept', () => {
    const readme = readFileSync(join(CAPTURES, '..', 'README.md'), 'utf8');
    const recipe = /```sh\n(# ci\/check-capture\.sh[\s\S]*?)```/.exec(readme)![1]!;
    const rules = /`ci\/mpa-rules\.json`:\n\n```json\n([\s\S]*?)```/.exec(readme)![1]!;
    const work = mkdtempSync(join(tmpdir(), 'mpa-ci-'));
    writeFileSync(join(work, 'capture.pcap'), readFileSync(join(CAPTURES, 'golden.pcap')));
    mkdirSync(join(work, 'ci'));
    writeFileSync(join(work, 'ci', 'mpa-rules.json'), rules);
    // The recipe calls the installed command (a line starting `mpa-dissect`): here, the built CLI.
    const script = recipe.replace(
      /^mpa-dissect /m,
      `"${process.execPath}" "${join(CAPTURES, '..', 'dist', 'cli', 'main.js')}" `,
    );
    expect(script).not.toBe(recipe);
    const r = spawnSync('sh', ['-c', script], {
      cwd: work,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Findings by rule');
    const report = JSON.parse(readFileSync(join(work, 'artifacts', 'mpa-report.json'), 'utf8')) as {
      summary: { errors: number };
    };
    expect(report.summary.errors).toBe(3); // two protocol errors and the alignment threshold
    expect(readFileSync(join(work, 'artifacts', 'mpa-junit.xml'), 'utf8')).toMatch(/^<\?xml/);
    expect(readFileSync(join(work, 'artifacts', 'mpa-findings.pcap')).length).toBeGreaterThan(24);
  });
});
