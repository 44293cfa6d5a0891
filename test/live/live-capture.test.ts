/**
 * `mpa-dissect -i lo` while the MPA peer runs over real sockets, through each backend: the cap
 * binding (libpcap in-process, arrival timestamps) and the tcpdump fallback (a child writing pcap,
 * kernel timestamps). A clean exchange gives the FPDUs the peers sent and no errors or warnings; a
 * faulty one gives exactly the injected findings; the -w file, written while analysing, reads back
 * to the same analysis; SIGINT ends the run with the summary.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  analyzeFile,
  cannotCapture,
  comparable,
  exchange,
  freePort,
  interrupt,
  startCapture,
  type ReportLike,
} from './helpers.js';

const BOUND = ['-a', 'duration:40']; // a safety bound: every test ends its capture itself long before

for (const backend of ['cap', 'tcpdump'] as const) {
  const why = cannotCapture(backend);
  describe.skipIf(why !== null)(`live capture on lo through ${backend}`, { concurrent: true }, () => {
    it('a clean Rev 2 exchange (RTR, markers, CRC, Sends, Writes, Reads): the FPDUs sent, no errors, -w reads back the same', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpa-live-'));
      try {
        const port = await freePort();
        const file = join(dir, 'live.pcap');
        const cap = await startCapture(port, ['--capture-backend', backend, '--json', '-w', file, ...BOUND]);
        const [ini, res] = await exchange(
          port,
          { script: 'send:100,write:20000,read:3000,send:1500,write:700', rev: 2, rtr: 'write' },
          { script: 'send:64,read:9000,send:2048', rev: 2, rtr: 'write' },
        );
        const code = await interrupt(cap);
        expect(cap.stderr()).not.toMatch(/\n\s+at /);
        expect(code).toBe(0);
        const doc = JSON.parse(cap.stdout()) as ReportLike;
        expect(doc.capture).toMatchObject({
          path: 'lo',
          format: 'live',
          backend,
          timestamps: backend === 'cap' ? 'arrival' : 'capture',
        });
        expect(doc.flows).toHaveLength(1);
        const m = doc.flows[0]!.mpa!;
        expect(doc.flows[0]!.server).toBe(`127.0.0.1:${port}`);
        expect([m.detection, m.request.rev, m.request.p2p, m.crc]).toEqual(['startup', 2, true, true]);
        expect(m.directions.map((d) => d.markers)).toEqual([true, true]);
        expect(m.directions.map((d) => d.fpdus)).toEqual([ini.fpdusSent, res.fpdusSent]);
        expect(ini.fpdusReceived).toBe(res.fpdusSent);
        expect(m.directions[0]!.ddp?.rtr).toBe('write');
        expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
        // What -w wrote during the run is a capture Wireshark and we read, with the same analysis.
        const back = analyzeFile(file);
        expect(back.code).toBe(0);
        expect(comparable(back.stdout)).toEqual(comparable(cap.stdout()));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);

    it('maximal segments (lo MTU 65536, FPDUs of 64000 octets): every FPDU framed, no malformed frame, no capture loss', async () => {
      const port = await freePort();
      const cap = await startCapture(port, ['--capture-backend', backend, '--json', ...BOUND]);
      // Frames of up to 65,549 octets: more than cap's fixed 65535-octet snaplen keeps. A frame it
      // cuts is a cut frame (its length read from the IP header): TCP sees the missing octets as a
      // snaplen cut and MPA frames across them; tcpdump keeps whole frames (snaplen 262144).
      const [ini, res] = await exchange(
        port,
        // Unpaced, so that writes coalesce into full segments (paced 64 KB FPDUs no longer stall: issue 26).
        { script: 'send:2000000,write:2000000', maxUlpdu: 64000, pace: 0 },
        { script: 'send:64,send:200000', maxUlpdu: 64000, pace: 0 },
      );
      const code = await interrupt(cap);
      expect(cap.stderr()).not.toMatch(/\n\s+at /);
      const doc = JSON.parse(cap.stdout()) as ReportLike;
      expect(doc.findings.filter((f) => f.rule === 'net.ipv4-malformed' || f.rule === 'tcp.capture-loss')).toEqual([]);
      expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
      const m = doc.flows[0]!.mpa!;
      expect(m.directions.map((d) => d.fpdus)).toEqual([ini.fpdusSent, res.fpdusSent]);
      expect(code).toBe(0);
      const cut = doc.findings.filter((f) => f.rule === 'tcp.snaplen-cut');
      // 4 MB back to back fill lo's 65,483-octet segments: cap cuts those frames, tcpdump does not.
      if (backend === 'cap') expect(cut.length).toBeGreaterThan(0);
      else expect(cut).toEqual([]);
    }, 90_000);

    it('a faulty exchange (non-zero PAD, wrong FPDUPTR, bad CRC; the Responder sending first): exactly those findings', async () => {
      const port = await freePort();
      const cap = await startCapture(port, ['--capture-backend', backend, '--json', ...BOUND]);
      // Initiator FPDUs: 1 send:101 (ULPDU 119, 3 octets of PAD), 2 write:3000 (one FPDU across
      // markers), 3 send:57 (ULPDU 75), 4 send:200.
      const [ini, res] = await exchange(
        port,
        { script: 'send:101,write:3000,send:57,send:200', faults: ['pad@1', 'fpduptr@2', 'crc@3'] },
        { script: 'send:40,send:41', faults: ['responder-first'] },
      );
      expect([ini.warnings, res.warnings]).toEqual([[], []]); // every fault took effect
      const code = await interrupt(cap);
      expect(code).toBe(1);
      const doc = JSON.parse(cap.stdout()) as ReportLike;
      const seen = doc.findings
        .filter((f) => f.severity !== 'info')
        .map((f) => f.rule)
        .sort();
      expect(seen).toEqual(['mpa.crc-mismatch', 'mpa.fpduptr-mismatch', 'mpa.pad-not-zero', 'mpa.responder-first']);
      expect(doc.flows[0]!.mpa!.directions.map((d) => d.fpdus)).toEqual([4, 2]);
    }, 90_000);

    it('SIGINT with text output: the summary and findings by rule are printed, -w is complete, the capture ended', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpa-live-'));
      try {
        const port = await freePort();
        const file = join(dir, 'int.pcap');
        const junit = join(dir, 'int.xml');
        const cap = await startCapture(port, ['--capture-backend', backend, '-w', file, '--junit', junit, ...BOUND]);
        await exchange(port, { script: 'send:10,write:5000' }, { script: 'send:20' });
        const code = await interrupt(cap);
        expect(code).toBe(0);
        const out = cap.stdout();
        expect(out).toMatch(/Findings by rule/);
        expect(out).toMatch(/\d+ packets, 1 TCP flow, 1 MPA; 0 errors, 0 warnings/);
        expect(out).toMatch(/FPDU seq=\d+ len=\d+/); // the event lines streamed before it
        const xml = readFileSync(junit, 'utf8');
        expect(xml).toMatch(/<testsuite name="stream 0 127\.0\.0\.1:\d+ -&gt; 127\.0\.0\.1:\d+"/);
        expect(xml).not.toContain('<failure');
        const back = analyzeFile(file, ['-q']);
        expect(back.code).toBe(0);
        expect(back.stdout.trim().split('\n').at(-1)).toBe(out.trim().split('\n').at(-1));
        // The tcpdump child is gone with us (its command line names our port).
        const left = spawnSync('pgrep', ['-f', `tcp port ${port}`], { encoding: 'utf8' });
        expect(left.stdout.trim()).toBe('');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);

    it(`-i any: Linux cooked capture (${backend === 'cap' ? 'v1: cap cannot choose the link type' : 'v2'}), the same analysis`, async () => {
      // On a busy machine the kernel may drop packets on "any" (tcpdump says how many, and the
      // report carries it as capture.dropped): such a run is not the clean exchange; try again.
      for (let attempt = 1; ; attempt++) {
        const port = await freePort();
        const cap = await startCapture(port, ['--capture-backend', backend, '--json', ...BOUND], 'any');
        const [ini, res] = await exchange(port, { script: 'send:100,write:9000,read:3000' }, { script: 'send:64' });
        const code = await interrupt(cap);
        const doc = JSON.parse(cap.stdout()) as ReportLike;
        const dropped = doc.capture['dropped'] as number | null;
        if (dropped !== null && dropped > 0 && attempt < 3) continue;
        expect(dropped === null || dropped === 0, `the kernel dropped ${dropped} packets in ${attempt} runs`).toBe(
          true,
        );
        expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
        expect(code).toBe(0);
        expect(doc.capture['linkTypes']).toEqual([backend === 'cap' ? 113 : 276]);
        expect(doc.flows).toHaveLength(1);
        expect(doc.flows[0]!.mpa!.directions.map((d) => d.fpdus)).toEqual([ini.fpdusSent, res.fpdusSent]);
        break;
      }
    }, 120_000);

    it('--flow-timeout: an idle flow streams out as an NDJSON flow event while the capture goes on, and only once', async () => {
      const port = await freePort();
      const cap = await startCapture(port, ['--capture-backend', backend, '--ndjson', '--flow-timeout', '3', ...BOUND]);
      await exchange(port, { script: 'send:10,write:3000' }, { script: 'send:20' });
      const deadline = Date.now() + 15_000;
      while (!cap.stdout().includes('"type":"flow"') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(cap.stdout()).toContain('"type":"flow"'); // before we stop it
      expect(cap.stdout()).not.toContain('"type":"summary"');
      expect(await interrupt(cap, 0)).toBe(0);
      const events = cap
        .stdout()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; id?: number; mpa?: { directions: Array<{ fpdus: number }> } });
      const flows = events.filter((e) => e.type === 'flow');
      expect(flows.map((f) => f.id)).toEqual([1]);
      expect(flows[0]!.mpa!.directions.map((d) => d.fpdus)).toEqual([2, 1]);
      expect(events.at(-1)!.type).toBe('summary');
      expect(events.filter((e) => e.type === 'fpdu')).toHaveLength(3);
    }, 90_000);

    it('-c N ends the capture by itself after N packets: exit 0, the summary, N packets in -w', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpa-live-'));
      try {
        const port = await freePort();
        const file = join(dir, 'c.pcap');
        const cap = await startCapture(port, ['--capture-backend', backend, '-q', '-c', '7', '-w', file, ...BOUND]);
        await exchange(port, { script: 'send:10,write:5000,send:30' }, { script: 'send:20' });
        expect(await cap.exited).toBe(0);
        expect(cap.stdout()).toMatch(/^7 packets, 1 TCP flow,/m);
        expect(analyzeFile(file, ['-q']).stdout).toMatch(/^7 packets, 1 TCP flow,/m);
        expect(spawnSync('pgrep', ['-f', `tcp port ${port}`], { encoding: 'utf8' }).stdout.trim()).toBe('');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);

    it('-b filesize:MB,files:N: a ring of complete pcap files that read back, in order, to the live analysis', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpa-ring-'));
      try {
        const port = await freePort();
        const cap = await startCapture(port, [
          '--capture-backend',
          backend,
          '--json',
          '-w',
          join(dir, 'ring.pcap'),
          '-b',
          'filesize:0.02,files:1000',
          ...BOUND,
        ]);
        await exchange(
          port,
          { script: 'send:100,write:30000,send:4000,write:9000' },
          { script: 'send:100,send:20000' },
        );
        const code = await interrupt(cap);
        expect(code).toBe(0);
        const files = readdirSync(dir)
          .filter((f) => /^ring_\d{5}_\d{14}\.pcap$/.test(f))
          .sort();
        expect(files.length).toBeGreaterThan(2);
        for (const f of files) expect(analyzeFile(join(dir, f), ['-q']).code).toBe(0); // each file stands alone
        const merged = join(dir, 'merged.pcap');
        const mc = spawnSync('mergecap', ['-a', '-F', 'pcap', '-w', merged, ...files.map((f) => join(dir, f))]);
        if (mc.error) {
          // No mergecap (Wireshark's tools): put the files together with our own reader and writer.
          const { concatPcaps } = await import('./concat.js');
          await concatPcaps(
            files.map((f) => join(dir, f)),
            merged,
          );
        }
        const back = analyzeFile(merged);
        expect(comparable(back.stdout)).toEqual(comparable(cap.stdout()));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);
  });
  if (why !== null) {
    describe(`live capture on lo through ${backend}`, () => {
      it.skip(`skipped: ${why}`, () => {});
    });
  }
}

const noDumpcap = cannotCapture('dumpcap');
describe.skipIf(noDumpcap !== null)('live capture on lo through dumpcap', () => {
  it('a clean exchange: the FPDUs sent, no errors, kernel timestamps, -w reads back the same', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-live-'));
    try {
      const port = await freePort();
      const file = join(dir, 'd.pcap');
      const cap = await startCapture(port, ['--capture-backend', 'dumpcap', '--json', '-w', file, ...BOUND]);
      const [ini, res] = await exchange(
        port,
        { script: 'send:100,write:20000,read:3000' },
        { script: 'send:64,read:900' },
      );
      expect(await interrupt(cap)).toBe(0);
      const doc = JSON.parse(cap.stdout()) as ReportLike;
      expect(doc.capture).toMatchObject({ backend: 'dumpcap', timestamps: 'capture', linkTypes: [1] });
      expect(doc.flows[0]!.mpa!.directions.map((d) => d.fpdus)).toEqual([ini.fpdusSent, res.fpdusSent]);
      expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
      expect(comparable(analyzeFile(file).stdout)).toEqual(comparable(cap.stdout()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
if (noDumpcap !== null) {
  describe('live capture on lo through dumpcap', () => {
    it.skip(`skipped: ${noDumpcap}`, () => {});
  });
}
