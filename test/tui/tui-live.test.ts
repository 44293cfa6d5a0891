/**
 * `mpa-dissect tui -i IFACE`: the real TUI in a real terminal (tmux) capturing on lo while the MPA
 * peer (src/peer) talks over real sockets on the test's own port. Skipped, with the reason in the
 * test name, when tmux is missing or capture is impossible here (not root, no tcpdump).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { cannotCapture, exchange, freePort } from '../live/helpers.js';
import { loadCap } from '../../src/capture/live/cap-binding.js';
import { onPath } from '../../src/capture/live/open-live.js';
import { HAVE_TMUX, Tmux } from './tmux.js';
import { capture, paneTitle, paneText } from './helpers.js';
import { analysisOptions, streamSource } from '../../cli/tui.js';
import { CaptureModel } from '../../src/tui/capture-model.js';
import { ViewModel } from '../../src/tui/view-model.js';
import { WindowFrames } from '../../src/report/frame-store.js';
import { KIND_FPDU } from '../../src/tui/pdu-index.js';

const whyNot = !HAVE_TMUX ? 'tmux is not installed' : cannotCapture('tcpdump');
const whyNotCap = !HAVE_TMUX ? 'tmux is not installed' : cannotCapture('cap');

/** Capture programs still running with this test's filter (none may outlive the UI). */
function captureChildren(port: number): string {
  return spawnSync('pgrep', ['-af', `tcp port ${port}`], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((l) => /^\d+ (\S*\/)?(tcpdump|dumpcap) /.test(l))
    .join('\n');
}

for (const [backend, why] of [
  ['tcpdump', whyNot],
  ['cap', whyNotCap],
] as const) {
  describe.skipIf(why !== null)(
    `mpa-dissect tui -i lo --capture-backend ${backend} under tmux${why ? ` (skipped: ${why})` : ''}`,
    () => {
      let t: Tmux;
      beforeAll(() => requireBuilt());
      afterEach(() => t?.kill());
      it('shows a peer exchange as it happens, opens its PDUs, w writes the held frames, q ends the capture and restores the terminal', async () => {
        await liveSession(backend, (x) => (t = x));
      }, 90_000);
    },
  );
}

/** The whole live session; tcpdump is a child process, so "no capture program left running" is checked too. */
async function liveSession(backend: 'tcpdump' | 'cap', keep: (t: Tmux) => void): Promise<void> {
  const port = await freePort();
  const t = new Tmux();
  keep(t);
  t.start(`node ${CLI} tui -i lo -f 'tcp port ${port}' --capture-backend ${backend}`, 120, 40, ROOT);
  // The UI takes the terminal only once the capture program listens.
  const s0 = await t.waitFor((s) => /capturing on lo\s+0 packets/.test(s));
  expect(s0).toMatch(/drops n\/a|\d+ dropped/); // tcpdump tells its drops every 2 s
  expect(s0).toMatch(/capturing on lo: no MPA records yet/);
  if (backend === 'tcpdump') expect(captureChildren(port)).toMatch(/tcpdump/);
  const [ini, res] = await exchange(port, { script: 'send:100,write:5000,send:10' }, { script: 'send:64' });
  // The peer cuts the 5000-octet Write into segments of at most 4096: 4 FPDUs one way, 1 the other.
  expect([ini.fpdusSent, res.fpdusSent]).toEqual([4, 1]);
  // The flow row with its FPDUs each way (c→s/s→c), and the live counts in the status bar.
  const s = await t.waitFor(
    (x) =>
      new RegExp(`127\\.0\\.0\\.1:\\d+ → 127\\.0\\.0\\.1:${port}\\s+startup\\s+0\\s+0\\s+4/1`).test(x) &&
      /capturing on lo\s+\d+ packets\s+1 flow\s+5 FPDUs\s+0 errors\s+0 warnings\s+(\d+ dropped|drops n\/a)/.test(x) &&
      (backend !== 'tcpdump' || /\d+ dropped/.test(x)),
  );
  expect(s).toMatch(/→\s+\d+ Request/);
  expect(s).toMatch(/←\s+\d+ Reply/);
  // The PDU list: Request (its octets, as captured), Reply, then the first FPDU (send:100 is a 118-octet ULPDU).
  t.keys('Tab');
  await t.waitFor((x) => /MPA Request at seq \d+, 20 octets/.test(x) && /4d 50 41 20 49 44 20 52\s+MPA ID R/.test(x));
  t.keys('j', 'j');
  const tree = await t.waitFor((x) => /ULPDU length: 118/.test(x) && /\[CRC status: good\]/.test(x));
  expect(tree).toMatch(/Direct Data Placement Protocol, Untagged, Last, QN 0, MSN 1/);
  expect(tree).toMatch(/FPDU at seq \d+, \d+ octets, SeqStart\+\d+/); // its octets, from the frames still held
  expect(tree).toMatch(/CRC seen (0x[0-9a-f]{8}), expected \1\s+ok/);
  // w writes what the window still holds (every frame of this short exchange): the CLI reads it back.
  const out = join(mkdtempSync(join(tmpdir(), 'mpa-tui-live-')), 'held.pcap');
  t.keys('w');
  await t.waitFor((x) => x.includes('Write pcap to:'));
  t.keys('C-u');
  t.text(out);
  t.keys('Enter');
  await t.waitFor((x) => /wrote \d+ frames to/.test(x));
  const back = spawnSync(process.execPath, [CLI, '--json', out], { encoding: 'utf8' });
  expect(back.status).toBe(0);
  const doc = JSON.parse(back.stdout) as { flows: Array<{ mpa: { directions: Array<{ fpdus: number }> } | null }> };
  expect(doc.flows[0]!.mpa!.directions.map((d) => d.fpdus)).toEqual([4, 1]);
  expect(t.format('#{alternate_on}')).toBe('1');
  t.keys('q');
  const end = await t.waitFor((x) => x.includes('EXIT=0'));
  expect(end).not.toMatch(/capturing on lo/);
  expect(t.format('#{alternate_on}')).toBe('0');
  expect(t.format('#{cursor_flag}')).toBe('1');
  expect(captureChildren(port)).toBe('');
}

describe.skipIf(whyNot !== null)(`mpa-dissect tui -i lo: Ctrl-C${whyNot ? ` (skipped: ${whyNot})` : ''}`, () => {
  let t: Tmux;
  beforeAll(() => requireBuilt());
  afterEach(() => t?.kill());

  it('Ctrl-C also ends the capture child and gives the terminal back', async () => {
    const port = await freePort();
    t = new Tmux();
    t.start(`node ${CLI} tui -i lo -f 'tcp port ${port}' --capture-backend tcpdump`, 120, 40, ROOT);
    await t.waitFor((s) => /capturing on lo/.test(s));
    expect(captureChildren(port)).toMatch(/tcpdump/);
    t.keys('C-c');
    await t.waitFor((x) => x.includes('EXIT=0'));
    expect(t.format('#{alternate_on}')).toBe('0');
    expect(t.format('#{cursor_flag}')).toBe('1');
    expect(captureChildren(port)).toBe('');
  }, 60_000);
});

const noBackend =
  process.platform !== 'linux'
    ? 'live capture runs on Linux only'
    : !loadCap() && !onPath('tcpdump') && !onPath('dumpcap')
      ? 'no capture backend installed'
      : null;
const whyNotIface = !HAVE_TMUX ? 'tmux is not installed' : noBackend;

describe.skipIf(whyNotIface !== null)(
  `mpa-dissect tui -i with an unknown interface${whyNotIface ? ` (skipped: ${whyNotIface})` : ''}`,
  () => {
    let t: Tmux;
    beforeAll(() => requireBuilt());
    afterEach(() => t?.kill());

    it('prints the one-line unknown-interface error before taking the terminal, exit 2', async () => {
      t = new Tmux();
      t.start(`node ${CLI} tui -i nosuchif0`, 200, 40, ROOT);
      const s = await t.waitFor((x) => /EXIT=\d+/.test(x));
      expect(s).toMatch(/EXIT=2/);
      const lines = s.split('\n').filter((l) => l.trim() !== '');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(
        /^mpa-dissect: -i nosuchif0: no such interface; the interfaces are: .*\blo\b.*\(mpa-dissect -D lists them\)$/,
      );
      expect(t.format('#{alternate_on}')).toBe('0');
    }, 30_000);
  },
);

describe('a live source keeps a window of recent frames', () => {
  it('a record older than the window says it is no longer held; a recent one shows its octets', async () => {
    // A stream source as `tui -i` builds it (no random access), fed a real capture's bytes; it keeps
    // only the last 6 frames (of 21) and 1 record, so the first FPDU's frames are gone by the end.
    const bytes = readFileSync(capture('errors.pcap'));
    const { options } = analysisOptions({ capture: '-', displayFilter: null, rules: null, mpa: [], checksums: false });
    const src = streamSource(
      'lo',
      {
        ...options,
        stream: (async function* () {
          yield new Uint8Array(bytes);
        })(),
      },
      undefined,
      new WindowFrames(1 << 20, 6),
    );
    const model = new CaptureModel(src, 1);
    const vm = new ViewModel(model);
    vm.resize(120, 40);
    await model.run();
    vm.settle();
    const fpdus = vm.visibleItems().filter((i) => model.index.kind[i] === KIND_FPDU);
    const select = (item: number): void => {
      vm.focus = 'pdus';
      vm.key('g', 'g');
      for (let k = 0; k < vm.visibleItems().indexOf(item); k++) vm.key('down');
    };
    select(fpdus[0]!);
    expect(paneTitle(vm, 'tree')).toMatch(/no longer held/);
    expect(paneText(vm, 'tree').join('\n')).toMatch(/ULPDU length: \d+/);
    expect(paneText(vm, 'bytes').join('\n')).toContain('octets not available');
    // An FPDU whose frames are still in the window: its octets, no "no longer held".
    const held = fpdus.find((i) => model.wireBytes(i) !== null);
    expect(held).toBeDefined();
    select(held!);
    expect(paneTitle(vm, 'tree')).not.toMatch(/no longer held/);
    expect(paneText(vm, 'bytes').join('\n')).not.toContain('octets not available');
  });
});
