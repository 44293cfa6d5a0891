/**
 * The real TUI in a real terminal (tmux): what the user sees after real keys. Skipped, with the
 * reason in the test name, when tmux is not installed (.ci/run installs it).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { HAVE_TMUX, Tmux } from './tmux.js';
import type { LatencyRequest } from '../../src/analysis/latency-types.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-e2e-'));
const tui = (args: string): string => `node ${CLI} tui ${args}`;
const errorsPcap = join(ROOT, 'captures', 'errors.pcap');
const smbdClean = join(ROOT, 'captures', 'corpus', 'smbd-clean.pcap');

describe.skipIf(!HAVE_TMUX)(`mpa-dissect tui under tmux${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`, () => {
  let t: Tmux;
  beforeAll(() => requireBuilt());
  afterEach(() => t?.kill());

  const started = async (args: string, w = 120, h = 40): Promise<string> => {
    t = new Tmux();
    t.start(tui(args), w, h, ROOT);
    return t.waitFor((s) => /FPDUs/.test(s) && /errors\.pcap|sample\.pcap|golden\.pcap/.test(s) && !/reading/.test(s));
  };

  it('shows the flow list with the expected flow, tcp.stream counted from 0', async () => {
    const s = await started(errorsPcap);
    expect(s).toMatch(/Stream\s+Client → Server/);
    expect(s).toMatch(
      /\n│\s+0 10\.0\.0\.1:40001 → 10\.0\.0\.2:4420\s+startup\s+2\s+1\s+10\/1\s+\d+\s+NVMe\/iWARP\s+1\s+1\/1/,
    );
    expect(s).toMatch(/21 packets\s+1 flow\s+11 FPDUs\s+2 errors\s+1 warning\b/);
    expect(s).toMatch(/PDUs: all flows, 15 shown/);
  });

  it('n goes to the FPDU with the bad CRC: its tree, and its CRC octets in the bad-CRC colour', async () => {
    await started(errorsPcap);
    t.keys('Tab', 'n');
    const s = await t.waitFor((x) => /CRC: 0xa7f36a54 \[incorrect, should be 0xa6f36a54\]/.test(x));
    // Relative sequence numbers, as Wireshark shows them (absolute 2397).
    expect(s).toMatch(/FPDU at seq 1397, 724 octets, SeqStart\+\d+/);
    expect(s).toMatch(/CRC seen 0xa7f36a54, expected 0xa6f36a54\s+BAD/);
    // Tab to the bytes pane, G to its end: the CRC octets (a7 f3 6a 54 on the wire) on red.
    t.keys('Tab', 'Tab', 'Tab', 'G');
    const e = await t.waitFor(
      (x) => /a7 f3 6a 54|54\s*$/m.test(x.replace(/\x1b\[[0-9;]*m/g, '')) && /\x1b\[[0-9;]*41[0-9;]*ma7/.test(x),
      10_000,
      true,
    );
    const crcRow = e.split('\n').find((l) => /\x1b\[[0-9;]*41[0-9;]*ma7/.test(l))!;
    for (const b of ['a7', 'f3', '6a', '54']) expect(crcRow).toMatch(new RegExp(`\\x1b\\[[0-9;]*41[0-9;]*m${b}`));
  });

  it('a display filter narrows the list', async () => {
    await started(errorsPcap);
    t.keys('/');
    await t.waitFor((s) => s.includes('Display filter:'));
    t.text('iwarp_mpa.crc_status == "bad"');
    t.keys('Enter');
    const s = await t.waitFor((x) => /PDUs: all flows, 1 shown \(filtered\)/.test(x));
    expect(s).toMatch(/filter: iwarp_mpa\.crc_status == "bad"/);
    expect(s).toMatch(/│\s+9 [0-9.]+ →\s+1397 FPDU/); // relative, as Wireshark (absolute 2397)
    expect(s).not.toMatch(/│\s+6-8 [0-9.]+ →/);
  });

  it('a bad filter shows the error with the caret under the column', async () => {
    await started(errorsPcap);
    t.keys('/');
    await t.waitFor((s) => s.includes('Display filter:')); // keys typed before the prompt opens go to the list
    t.text('iwarp_mpa.crc_status == "bad" && iwarp_mpa.bogus');
    t.keys('Enter');
    const s = await t.waitFor((x) => x.includes('^~~~'));
    expect(s).toMatch(/iwarp_mpa\.bogus.*neither a field nor a protocol name/);
    const lines = s.split('\n');
    const f = lines.findIndex((l) => l.includes('    iwarp_mpa.crc_status == "bad" && iwarp_mpa.bogus'));
    expect(f).toBeGreaterThan(0);
    expect(lines[f + 1]!.indexOf('^')).toBe(lines[f]!.indexOf('iwarp_mpa.bogus'));
    // Esc leaves the prompt; the list is unfiltered.
    t.keys('Escape');
    await t.waitFor((x) => /15 shown/.test(x) && !x.includes('^~~~'));
  });

  it('w writes a pcap that the CLI then reads', async () => {
    await started(errorsPcap);
    const out = join(tmp, 'from-tui.pcap');
    t.keys('Down');
    await t.waitFor((s) => s.includes('PDUs: tcp.stream 0'));
    t.keys('w');
    await t.waitFor((s) => s.includes('Write pcap to: errors-stream0.pcap'));
    t.keys('C-u');
    t.text(out);
    t.keys('Enter');
    await t.waitFor((s) => /wrote \d+ frames to/.test(s));
    expect(existsSync(out)).toBe(true);
    const r = spawnSync(process.execPath, [CLI, '-q', out], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/mpa\.crc-mismatch/);
    expect(r.stdout).toMatch(/mpa\.fpduptr-mismatch/);
  });

  it('q leaves a clean terminal: normal screen, cursor visible, exit 0', async () => {
    await started(errorsPcap);
    expect(t.format('#{alternate_on}')).toBe('1');
    t.keys('q');
    const s = await t.waitFor((x) => x.includes('EXIT=0'));
    expect(s).not.toMatch(/Flows \(tcp\.stream/);
    expect(t.format('#{alternate_on}')).toBe('0');
    expect(t.format('#{cursor_flag}')).toBe('1');
  });

  it('Ctrl-C and SIGTERM also give the terminal back', async () => {
    await started(errorsPcap);
    t.keys('C-c');
    await t.waitFor((x) => x.includes('EXIT=0'));
    expect(t.format('#{alternate_on}')).toBe('0');
    expect(t.format('#{cursor_flag}')).toBe('1');
    t.kill();

    await started(errorsPcap);
    const shell = Number(t.format('#{pane_pid}'));
    const child = spawnSync('pgrep', ['-P', String(shell)], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n')[0]!;
    process.kill(Number(child), 'SIGTERM');
    await t.waitFor((x) => x.includes('EXIT=143'));
    expect(t.format('#{alternate_on}')).toBe('0');
    expect(t.format('#{cursor_flag}')).toBe('1');
  });

  it('works at 80x24 and redraws on resize', async () => {
    const s = await started(errorsPcap, 80, 24);
    expect(s.split('\n').every((l) => [...l].length <= 80)).toBe(true);
    expect(s).toMatch(/10\.0\.0\.1:40001 → 10\.0\.0\.2:4420/);
    t.resize(120, 40);
    const big = await t.waitFor((x) => x.split('\n').some((l) => [...l].length > 100) && /Detail/.test(x));
    expect(big).toMatch(/Bytes/);
    t.resize(80, 24);
    await t.waitFor(
      (x) => x.split('\n').filter((l) => l.trim()).length <= 24 && x.split('\n')[0]!.length <= 80 && /Flows/.test(x),
    );
  });

  it('an unreadable capture shows why instead of a blank screen; q quits with exit 2', async () => {
    const bad = join(tmp, 'garbage.pcap');
    writeFileSync(bad, 'not a capture\n');
    t = new Tmux();
    t.start(tui(bad), 120, 40, ROOT);
    const s = await t.waitFor((x) => x.includes('Cannot read the capture'));
    expect(s).toMatch(/garbage\.pcap/);
    t.keys('q');
    // The exit status the CLI gives for an unreadable capture.
    await t.waitFor((x) => x.includes('EXIT=2'));
    expect(t.format('#{alternate_on}')).toBe('0');
  });

  it.skipIf(!existsSync(smbdClean))(
    `r lists the requests slowest first; Enter goes to the slowest one's request PDU${existsSync(smbdClean) ? '' : ' (skipped: captures/corpus/smbd-clean.pcap missing)'}`,
    async () => {
      const r = spawnSync(process.execPath, [CLI, '--json', smbdClean], { encoding: 'utf8' });
      const slowest = (JSON.parse(r.stdout) as { latency: { slowest: LatencyRequest[] } }).latency.slowest[0]!;
      t = new Tmux();
      t.start(tui(smbdClean), 140, 40, ROOT);
      await t.waitFor((x) => /smbd-clean\.pcap/.test(x) && /FPDUs/.test(x) && !/reading/.test(x));
      t.keys('r');
      const s = await t.waitFor((x) => x.includes('Requests by latency') && x.includes('(Enter: request PDU)'));
      const lat = slowest.latency.toFixed(6).replace('.', '\\.');
      // The first row is the slowest request, and the detail under the list names its frames.
      expect(s).toMatch(
        new RegExp(`│\\s*${lat} ${slowest.command}\\s+flow 1\\s+${slowest.requestFrame} → ${slowest.responseFrame}`),
      );
      expect(s).toContain(`SMB2 ${slowest.command}, flow 1: ${slowest.latency.toFixed(6)} s (Enter: request PDU)`);
      expect(s).toContain(`request frame ${slowest.requestFrame}`);
      expect(s).toContain(`→ response frame ${slowest.responseFrame}`);
      // The FPDU that completed the request, as the PDU list shows it: frame, time, direction, seq.
      const row = new RegExp(`│\\s+${slowest.requestFrame} [0-9.]+ → +(\\d+) FPDU`).exec(s);
      expect(row).not.toBeNull();
      t.keys('Enter');
      // The PDU list selects it: the detail and bytes panes show that FPDU.
      const after = await t.waitFor((x) => x.includes(`FPDU at seq ${row![1]},`), 10_000);
      expect(after).toContain('Requests by latency'); // the requests stay beside it
    },
  );

  it('? shows the keys', async () => {
    await started(errorsPcap);
    t.keys('?');
    // Wait for the whole overlay: tmux can be read while blessed is still painting it.
    const s = await t.waitFor((x) => x.includes('Keys (any key closes)') && /write a pcap/.test(x));
    expect(s).toMatch(/next \/ previous PDU with a finding/);
    expect(s).toMatch(/write a pcap/);
  });
});

describe('mpa-dissect tui without a terminal', () => {
  beforeAll(() => requireBuilt());
  it('refuses with one line and exit 2 when stdout is not a terminal', () => {
    const r = spawnSync(process.execPath, [CLI, 'tui', errorsPcap], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^mpa-dissect tui: not a terminal/);
  });
  it('rejects options of the batch outputs instead of ignoring them (one line, exit 2)', () => {
    const r = spawnSync(process.execPath, [CLI, 'tui', '-V', '-w', 'x.pcap', errorsPcap], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      'mpa-dissect: tui: -w, -V are options of the batch outputs, not of the terminal UI (in the UI, w writes a pcap); run mpa-dissect without tui for them',
    ]);
    const live = spawnSync(process.execPath, [CLI, 'tui', '-i', 'lo', '-c', '5'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    expect(live.status).toBe(2);
    expect(live.stderr).toMatch(/^mpa-dissect: tui: -c is an option of the batch outputs/);
    // tshark's -t and -o set the event lines' time column and sequence numbers; the UI's are its own.
    const t = spawnSync(
      process.execPath,
      [CLI, 'tui', '-t', 'ad', '-o', 'tcp.relative_sequence_numbers:FALSE', errorsPcap],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    expect(t.status).toBe(2);
    expect(t.stderr).toMatch(/^mpa-dissect: tui: -t, -o are options of the batch outputs/);
  });
});
