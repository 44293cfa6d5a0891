/**
 * The real thing end to end: a TCP client and server on loopback speak MPA over real sockets (the
 * kernel segments and coalesces as it likes), tcpdump captures them with libpcap, and its pcap
 * stream goes straight into `mpa-dissect --json -` through a pipe, as in the README.
 */
import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { encodeFpdus, patternBytes, sendUlpdu, startupFrame, writeUlpdu } from '../../src/generate/mpa-encoder.js';
import { CLI, requireBuilt } from './helpers.js';
import { settle } from '../helpers/settle.js';

const canCapture =
  process.platform === 'linux' &&
  spawnSync('tcpdump', ['--version'], { stdio: 'ignore' }).status === 0 &&
  process.getuid?.() === 0;

function once(s: Socket, n: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let got = Buffer.alloc(0);
    const on = (b: Buffer) => {
      got = Buffer.concat([got, b]);
      if (got.length >= n) {
        s.off('data', on);
        resolve(got);
      }
    };
    s.on('data', on);
    s.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!canCapture)('live: tcpdump -w - | mpa-dissect -', () => {
  if (!canCapture) {
    it.skip('tcpdump missing or not root: live capture test skipped (.ci/run installs tcpdump)', () => {});
    return;
  }

  it('a real MPA connection over loopback sockets, captured by libpcap', async () => {
    requireBuilt();
    const i2r = Array.from({ length: 40 }, (_, i) => ({
      ulpdu:
        i % 4 === 3
          ? writeUlpdu(0x77, i * 4096, patternBytes(3000 + i * 50, i))
          : sendUlpdu(i - Math.floor(i / 4) + 1, patternBytes(100 + i * 97, i)),
    }));
    const r2i = Array.from({ length: 10 }, (_, i) => ({
      ulpdu: sendUlpdu(i + 1, patternBytes(700 + i * 13, 100 + i)),
    }));
    const req = startupFrame({ kind: 'request', m: true, c: true, rev: 1 });
    const rep = startupFrame({ kind: 'reply', m: true, c: true, rev: 1 });
    const fromClient = encodeFpdus(i2r, { markers: true, crc: true }).bytes;
    const fromServer = encodeFpdus(r2i, { markers: true, crc: true }).bytes;

    const server = createServer();
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const port = (server.address() as AddressInfo).port;

    const dissect = spawn(process.execPath, [CLI, '--json', '--fail-on', 'never', '-'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const dump = spawn('tcpdump', ['-i', 'lo', '--immediate-mode', '-U', '-s', '0', '-w', '-', `tcp port ${port}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    dump.stdout.pipe(dissect.stdin);
    let out = '';
    let err = '';
    dissect.stdout.on('data', (b: Buffer) => (out += b.toString()));
    dissect.stderr.on('data', (b: Buffer) => (err += b.toString()));
    let dumpErr = '';
    dump.stderr.on('data', (b: Buffer) => (dumpErr += b.toString()));
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error('tcpdump did not start listening')), 10_000);
      dump.stderr.on('data', (b: Buffer) => {
        if (b.toString().includes('listening on')) {
          clearTimeout(t);
          res();
        }
      });
    });

    await settle(1000); // "listening on" comes a moment before packets really flow into the capture

    const served = new Promise<void>((res, rej) => {
      server.once('connection', async (s) => {
        try {
          await once(s, req.length);
          s.write(rep);
          // Startup rule 4 (RFC 5044 §7.1.2): the Responder sends FPDUs only after the Initiator's
          // first FPDU arrived. (Sending them right after the Reply is caught as mpa.responder-first.)
          await once(s, fromClient.length);
          s.write(fromServer);
          s.end();
          res();
        } catch (e) {
          rej(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
    const c = connect(port, '127.0.0.1');
    await new Promise<void>((res) => c.once('connect', () => res()));
    c.write(req);
    await once(c, rep.length);
    // The Initiator sends its FPDUs in a few writes of odd sizes; the kernel decides the segments.
    for (let off = 0; off < fromClient.length; off += 7001) {
      c.write(fromClient.subarray(off, Math.min(fromClient.length, off + 7001)));
      await sleep(2);
    }
    await served;
    c.end();
    await new Promise<void>((res) => c.once('close', () => res()));
    server.close();
    await settle(300); // let the last segments reach the capture
    dump.kill('SIGINT');
    const code = await new Promise<number | null>((res) => dissect.once('close', res));
    expect(err, dumpErr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);

    const doc = JSON.parse(out) as {
      flows: Array<{ client: string; server: string; mpa: Record<string, any> | null }>;
      findings: Array<{ rule: string; severity: string }>;
    };
    expect(doc.flows).toHaveLength(1);
    const m = doc.flows[0]!.mpa!;
    expect(doc.flows[0]!.server).toBe(`127.0.0.1:${port}`);
    expect(m.detection).toBe('startup');
    expect(m.crc).toBe(true);
    expect(m.directions[0].markers).toBe(true);
    expect(m.directions[0].fpdus).toBe(i2r.length);
    expect(m.directions[1].fpdus).toBe(r2i.length);
    expect(
      m.directions[0].crcErrors +
        m.directions[1].crcErrors +
        m.directions[0].markerErrors +
        m.directions[1].markerErrors,
    ).toBe(0);
    expect(m.directions[0].ddp.byOpcode).toEqual({ send: 30, write: 10 });
    expect(doc.findings.filter((f) => f.severity === 'error')).toEqual([]);
  }, 60_000);
});
