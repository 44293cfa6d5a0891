/**
 * The MPA peer against hostile or silent other sides (issue 26): a real `mpa-dissect peer`
 * process and raw TCP sockets on 127.0.0.1. --timeout holds in every state (no connection,
 * silence, half a startup frame, garbage after startup, half an FPDU), each run ending within the
 * timeout and a small margin with one line saying where it stood and exit 2; an improperly
 * formatted Request (wrong key, PD_Length over 512: RFC 5044 §7.1.1, §7.1.2 rule 2) is rejected
 * at once: the connection closed, one line naming what was wrong. And two in-process peers with
 * 64 KB FPDUs where the Responder half-closes while the Initiator still sends (the stall that ran
 * to --timeout: a write pending when the FIN came never saw 'drain').
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { encodeFpdus, startupFrame } from '../../src/generate/mpa-encoder.js';
import { payload, readRequestUlpdu, sendSegments } from '../../src/generate/rdmap.js';
import { Deframer } from '../../src/peer/deframer.js';
import { startupProblem } from '../../src/peer/endpoint.js';
import { CLI, requireBuilt } from '../cli/helpers.js';
import { exchange, freePort } from './helpers.js';

const TIMEOUT_S = 2;
/** Process start-up on a loaded machine plus the close: the run must end within the timeout and this. */
const MARGIN_MS = 2500;

interface PeerRun {
  port: Promise<number>;
  done: Promise<{ code: number | null; stderr: string; stdout: string; endedAt: number }>;
}

function startPeer(args: string[]): PeerRun {
  const p = spawn(process.execPath, [CLI, 'peer', '--timeout', String(TIMEOUT_S), ...args], {
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
  });
  let err = '';
  let out = '';
  let gotPort: (n: number) => void;
  const port = new Promise<number>((r) => (gotPort = r));
  p.stderr.on('data', (b: Buffer) => {
    err += b.toString();
    const m = /listening on .*:(\d+)\n/.exec(err);
    if (m) gotPort(Number(m[1]));
  });
  p.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const done = new Promise<{ code: number | null; stderr: string; stdout: string; endedAt: number }>((r) =>
    p.once('close', (code) =>
      r({ code, stderr: err.replace(/^mpa-dissect peer: listening on .*\n/, ''), stdout: out, endedAt: Date.now() }),
    ),
  );
  return { port, done };
}

/** A raw client; half-open: the peer's FIN does not end our side (a hostile client keeps it open). */
async function open(port: number): Promise<Socket> {
  const s = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await new Promise<void>((res, rej) => {
    s.once('connect', () => res());
    s.once('error', rej);
  });
  s.on('error', () => {}); // the peer may reset it
  s.resume();
  return s;
}

const request = (pdLength?: number, key?: string) =>
  Buffer.from(startupFrame({ kind: 'request', c: true, rev: 1, pdLength, key }));

/** A Responder on a free port; `send` writes what the hostile Initiator sends, then stays silent. */
async function responderGets(send: (s: Socket) => void) {
  const run = startPeer(['--listen', '127.0.0.1:0', '--script', 'send:64']);
  const s = await open(await run.port);
  const at = Date.now();
  send(s);
  const r = await run.done;
  s.destroy();
  return { ...r, took: r.endedAt - at };
}

// Concurrent: each waits out the same timeout, and timers cost nothing.
describe.concurrent('mpa-dissect peer: --timeout holds in every state', () => {
  const timedOut = (where: string) =>
    new RegExp(`^mpa-dissect: peer \\(responder\\): no end after ${TIMEOUT_S * 1000} ms \\(--timeout\\), ${where}\\n$`);

  it('silence after the TCP handshake: ends at the timeout, waiting for the Request', async () => {
    requireBuilt();
    const r = await responderGets(() => {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(timedOut('waiting for the MPA Request \\(0 of 20 octets received\\)'));
    expect(r.took).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
    expect(r.stdout).toBe('');
  }, 20_000);

  it('half a startup frame, then silence', async () => {
    requireBuilt();
    const r = await responderGets((s) => s.write(request().subarray(0, 11)));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(timedOut('waiting for the MPA Request \\(11 of 20 octets received\\)'));
    expect(r.took).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
  }, 20_000);

  it('a header promising Private Data that never comes', async () => {
    requireBuilt();
    const r = await responderGets((s) => s.write(request(300)));
    expect(r.stderr).toMatch(timedOut('waiting for the MPA Request \\(20 of 320 octets received\\)'));
    expect(r.took).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
  }, 20_000);

  it('a valid Request, then half an FPDU and silence (mid-FPDU)', async () => {
    requireBuilt();
    const fpdu = encodeFpdus([{ ulpdu: sendSegments(1, payload(600, 1), 8192)[0]! }], { markers: false, crc: true });
    const r = await responderGets((s) => s.write(Buffer.concat([request(), fpdu.bytes.subarray(0, 300)])));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(timedOut("waiting for the Initiator's first FPDU: 0 FPDUs sent, 0 received"));
    expect(r.took).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
  }, 20_000);

  it('a valid Request, then 64 KiB of garbage and silence', async () => {
    requireBuilt();
    const junk = Buffer.alloc(65536);
    let x = 7;
    for (let i = 0; i < junk.length; i++) junk[i] = x = (x * 1103515245 + 12345) >>> 16;
    const r = await responderGets((s) => s.write(Buffer.concat([request(), junk])));
    expect(r.code).toBe(2);
    // Garbage frames as FPDUs of any length; the Responder runs its script and closes its side, then waits for our FIN.
    expect(r.stderr).toMatch(timedOut('closing: 1 FPDUs sent, \\d+ received'));
    expect(r.took).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
  }, 20_000);

  it('a Read Request for 4 GiB: not answered (over the 16 MiB a peer message carries), the run ends at its timeout', async () => {
    requireBuilt();
    const rr = readRequestUlpdu(1, { sinkStag: 1, sinkTo: 0n, size: 0xffffffff, srcStag: 2, srcTo: 0n });
    const fpdu = encodeFpdus([{ ulpdu: rr }], { markers: false, crc: true });
    const run = startPeer(['--listen', '127.0.0.1:0', '--script', 'send:64']);
    const s = await open(await run.port);
    // Counts what the peer sends back: its startup frame and one small Send, never gigabytes.
    let back = 0;
    s.on('data', (b: Buffer) => (back += b.length));
    const at = Date.now();
    s.write(Buffer.concat([request(), fpdu.bytes]));
    const r = await run.done;
    s.destroy();
    expect(r.code).toBe(2);
    expect(r.endedAt - at).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
    expect(back).toBeLessThan(4096);
  }, 20_000);

  it('no connection at all, and an Initiator whose Responder says nothing', async () => {
    requireBuilt();
    const alone = startPeer(['--listen', '127.0.0.1:0']);
    await alone.port;
    const t0 = Date.now(); // from listening: process start-up on a loaded machine is not the peer's
    const lonely = await alone.done;
    expect(lonely.code).toBe(2);
    expect(lonely.stderr).toMatch(
      /^mpa-dissect: peer \(responder\): no end after 2000 ms \(--timeout\), waiting for a connection on 127\.0\.0\.1:0\n$/,
    );
    expect(Date.now() - t0).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);

    let t1 = 0;
    const mute = createServer((s) => {
      t1 = Date.now();
      s.on('error', () => {});
      s.resume();
    });
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', () => r()));
    const port = (mute.address() as { port: number }).port;
    const ini = await startPeer(['--connect', `127.0.0.1:${port}`]).done;
    mute.close();
    expect(ini.code).toBe(2);
    expect(ini.stderr).toMatch(
      /^mpa-dissect: peer \(initiator\): no end after 2000 ms \(--timeout\), waiting for the MPA Reply \(0 of 20 octets received\)\n$/,
    );
    expect(Date.now() - t1).toBeLessThan(TIMEOUT_S * 1000 + MARGIN_MS);
  }, 30_000);
});

describe('mpa-dissect peer as Responder: an improperly formatted Request is rejected at once', () => {
  /** The connection closed by the Responder (FIN or RST), with no Reply sent. */
  async function rejectedWith(frame: Buffer) {
    const run = startPeer(['--listen', '127.0.0.1:0']);
    const s = await open(await run.port);
    let got = 0;
    s.on('data', (b: Buffer) => (got += b.length));
    const closed = new Promise<void>((r) => {
      s.once('end', () => r());
      s.once('close', () => r());
    });
    const at = Date.now();
    s.write(frame);
    await closed;
    const r = await run.done;
    return { ...r, took: r.endedAt - at, replyOctets: got };
  }

  it('a wrong key: the connection closed, one line naming the key', async () => {
    requireBuilt();
    const r = await rejectedWith(request(0, 'GET / HTTP/1.1\r\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mpa-dissect: peer (responder): rejected the MPA Request: key "GET / HTTP/1.1\\x0d\\x0a" is not "MPA ID Req Frame" (RFC 5044 §7.1.1); closed the connection\n',
    );
    expect(r.replyOctets).toBe(0);
    expect(r.took).toBeLessThan(MARGIN_MS);
  }, 20_000);

  it('PD_Length 65535: rejected at the header, not waited for', async () => {
    requireBuilt();
    const r = await rejectedWith(request(65535));
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'mpa-dissect: peer (responder): rejected the MPA Request: PD_Length 65535 is over 512 (RFC 5044 §7.1.1); closed the connection\n',
    );
    expect(r.replyOctets).toBe(0);
    expect(r.took).toBeLessThan(MARGIN_MS);
  }, 20_000);
});

describe('startup frame checks (RFC 5044 §7.1.1, §7.1.2; RFC 6581)', () => {
  const parse = (frame: Uint8Array) => {
    let got = null as Parameters<typeof startupProblem>[0] | null;
    const d = new Deframer(
      (s) => (got = s),
      () => {},
    );
    d.push(frame);
    return got!;
  };

  it('each improperly formatted frame is named; good Request and Reply frames pass', () => {
    expect(startupProblem(parse(startupFrame({ kind: 'request' })), 'request')).toBeNull();
    expect(startupProblem(parse(startupFrame({ kind: 'reply', pd: new Uint8Array(512) })), 'reply')).toBeNull();
    expect(startupProblem(parse(startupFrame({ kind: 'reply' })), 'request')).toMatch(/Responder\/Responder/);
    expect(startupProblem(parse(startupFrame({ kind: 'request' })), 'reply')).toMatch(/Initiator\/Initiator/);
    expect(startupProblem(parse(startupFrame({ kind: 'request', pdLength: 513 })), 'request')).toMatch(
      /PD_Length 513 is over 512/,
    );
    expect(startupProblem(parse(startupFrame({ kind: 'request', rev: 0 })), 'request')).toMatch(/^Rev 0/);
    expect(
      startupProblem(
        parse(startupFrame({ kind: 'request', rev: 2, enhanced: true, pd: new Uint8Array(2) })),
        'request',
      ),
    ).toMatch(/IRD\/ORD/);
  });

  it('a PD_Length over 512 is seen from the 20-octet header alone', () => {
    let seen = 0;
    const d = new Deframer(
      () => seen++,
      () => {},
    );
    d.push(startupFrame({ kind: 'request', pdLength: 65535 }));
    expect([seen, d.stopped]).toEqual([1, true]);
  });
});

describe('in-process peers with 64 KB FPDUs', () => {
  it('the Responder half-closes during a pause of the Initiator, which still sends a large message to the end', async () => {
    const port = await freePort();
    const t0 = Date.now();
    // The Responder lingers 500 ms of quiet then sends its FIN; the Initiator's pause outlasts it.
    const [ini, res] = await exchange(
      port,
      { script: 'send:100,pause:700,send:1000000', maxUlpdu: 65535, pace: 1, markers: false },
      { script: 'send:64', maxUlpdu: 65535, pace: 1, markers: false },
    );
    expect(ini.fpdusSent).toBe(1 + sendSegments(2, payload(1_000_000, 2), 65535).length);
    expect([res.fpdusReceived, ini.fpdusReceived]).toEqual([ini.fpdusSent, res.fpdusSent]);
    expect(Date.now() - t0).toBeLessThan(15_000);
  }, 30_000);
});
