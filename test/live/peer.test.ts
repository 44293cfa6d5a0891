/**
 * The MPA peer (mpa-dissect peer, src/peer): its receiving half takes markers out by stream offset
 * wherever TCP cuts the stream; two peers over real sockets agree on what was sent; its script and
 * fault syntax; and what it sends, captured on lo, is what the analyzer reads (RTR, Terminate).
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { encodeFpdus, startupFrame } from '../../src/generate/mpa-encoder.js';
import { payload, sendSegments } from '../../src/generate/rdmap.js';
import { Deframer } from '../../src/peer/deframer.js';
import { parseFaults, parseScript, ScriptError } from '../../src/peer/script.js';
import { CLI, requireBuilt } from '../cli/helpers.js';
import { cannotCapture, exchange, freePort, interrupt, startCapture, type ReportLike } from './helpers.js';

describe('peer: receiving half', () => {
  it('takes markers out by offset from SeqStart, across any cut of the stream', () => {
    const ulpdus = Array.from({ length: 12 }, (_, i) => sendSegments(i + 1, payload(37 + i * 211, i), 65535)[0]!);
    const first = encodeFpdus(
      ulpdus.slice(0, 5).map((u) => ({ ulpdu: u })),
      { markers: true, crc: true },
    );
    const rest = encodeFpdus(
      ulpdus.slice(5).map((u) => ({ ulpdu: u })),
      { markers: true, crc: true, startRel: first.bytes.length },
    );
    const wire = Buffer.concat([startupFrame({ kind: 'reply', m: true, c: true }), first.bytes, rest.bytes]);
    for (const cut of [1, 3, 7, 512, 1000, wire.length]) {
      const got: Uint8Array[] = [];
      let startup = 0;
      const d = new Deframer(
        () => startup++,
        (u) => got.push(u),
      );
      d.markers = true;
      for (let off = 0; off < wire.length; off += cut) d.push(wire.subarray(off, Math.min(wire.length, off + cut)));
      expect(startup).toBe(1);
      expect(got.map((u) => Buffer.from(u).toString('hex'))).toEqual(ulpdus.map((u) => Buffer.from(u).toString('hex')));
    }
  });

  it('script and fault syntax: what is accepted, and a clear error otherwise', () => {
    expect(parseScript('send:1, write:20 ,read:3,pause:5,terminate')).toEqual([
      { op: 'send', size: 1 },
      { op: 'write', size: 20 },
      { op: 'read', size: 3 },
      { op: 'pause', ms: 5 },
      { op: 'terminate' },
    ]);
    expect(() => parseScript('sned:1')).toThrow(ScriptError);
    const f = parseFaults(['crc@2,pad@1', 'key']);
    expect([[...f.crc], [...f.pad], f.key, f.responderFirst]).toEqual([[2], [1], true, false]);
    expect(() => parseFaults(['crc@0'])).toThrow(/crc@K/);
  });
});

describe('mpa-dissect peer (two processes, real sockets)', () => {
  it('Rev 2 with a Read RTR: both sides agree on what was sent and received', async () => {
    requireBuilt();
    const common = ['--rev', '2', '--rtr', 'read', '--markers'];
    const resp = spawn(process.execPath, [
      CLI,
      'peer',
      '--listen',
      '127.0.0.1:0',
      ...common,
      '--script',
      'send:64,read:5000',
    ]);
    let rerr = '';
    let rout = '';
    resp.stderr.on('data', (b: Buffer) => (rerr += b.toString()));
    resp.stdout.on('data', (b: Buffer) => (rout += b.toString()));
    for (let i = 0; i < 100 && !/listening on .*:(\d+)/.test(rerr); i++) await new Promise((r) => setTimeout(r, 50));
    const port = /listening on .*:(\d+)/.exec(rerr)![1]!;
    const ini = spawn(process.execPath, [
      CLI,
      'peer',
      '--connect',
      `127.0.0.1:${port}`,
      ...common,
      '--script',
      'send:100,write:9000,read:3000,terminate',
    ]);
    let iout = '';
    ini.stdout.on('data', (b: Buffer) => (iout += b.toString()));
    const codes = await Promise.all([
      new Promise((r) => ini.once('close', r)),
      new Promise((r) => resp.once('close', r)),
    ]);
    expect(codes).toEqual([0, 0]);
    const i = JSON.parse(iout) as {
      rtr: string;
      fpdusSent: number;
      fpdusReceived: number;
      crc: boolean;
      warnings: string[];
    };
    const r = JSON.parse(rout) as typeof i;
    expect([i.rtr, r.rtr, i.crc]).toEqual(['read', 'read', true]);
    expect([i.fpdusSent, i.fpdusReceived]).toEqual([r.fpdusReceived, r.fpdusSent]);
    expect(i.warnings).toEqual([]);
  }, 30_000);

  it('usage errors are one line, exit 2', async () => {
    requireBuilt();
    const run = (args: string[]) =>
      new Promise<{ code: number | null; err: string }>((res) => {
        const p = spawn(process.execPath, [CLI, 'peer', ...args]);
        let err = '';
        p.stderr.on('data', (b: Buffer) => (err += b.toString()));
        p.once('close', (code) => res({ code, err }));
      });
    const a = await run(['--script', 'send:1']);
    expect(a.code).toBe(2);
    expect(a.err).toBe('mpa-dissect: peer: give --listen [HOST:]PORT (Responder) or --connect HOST:PORT (Initiator)\n');
    const b = await run(['--connect', '127.0.0.1:9', '--fault', 'crc@x']);
    expect(b.err).toMatch(/^mpa-dissect: peer: --fault: "crc@x" is not crc@K/);
  }, 30_000);
});

const why = cannotCapture('cap') ?? cannotCapture('tcpdump');
describe.skipIf(why !== null)('peer traffic as the analyzer reads it', () => {
  it('a Read RTR, the zero-length Read Response, and a Terminate at the end', async () => {
    const port = await freePort();
    const cap = await startCapture(port, ['--json', '--fail-on', 'warning', '-a', 'duration:40']);
    await exchange(
      port,
      { script: 'send:100,read:2000,terminate', rev: 2, rtr: 'read' },
      { script: 'send:64', rev: 2, rtr: 'read' },
    );
    expect(await interrupt(cap)).toBe(0);
    const doc = JSON.parse(cap.stdout()) as ReportLike;
    const m = doc.flows[0]!.mpa!;
    expect(m.directions[0]!.ddp?.rtr).toBe('read');
    expect(doc.findings.map((f) => f.rule).filter((r) => r.startsWith('rdmap.'))).toEqual(['rdmap.terminate']);
    expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  }, 60_000);

  it('markers in one direction only (the Initiator asks, the Responder does not), CRC off on both sides', async () => {
    const port = await freePort();
    const cap = await startCapture(port, ['--json', '-a', 'duration:40']);
    const [ini, res] = await exchange(
      port,
      { script: 'send:100,write:6000,read:2000', markers: true, crc: false },
      { script: 'send:700', markers: false, crc: false },
    );
    expect(await interrupt(cap)).toBe(0);
    const doc = JSON.parse(cap.stdout()) as ReportLike;
    const m = doc.flows[0]!.mpa!;
    expect([m.crc, m.request.m, m.request.c, m.reply.m]).toEqual([false, true, false, false]);
    // dir 0 is what the Initiator sends: markers only when the Responder asked (it did not).
    expect(m.directions.map((d) => d.markers)).toEqual([false, true]);
    expect(m.directions.map((d) => d.fpdus)).toEqual([ini.fpdusSent, res.fpdusSent]);
    expect(doc.findings.filter((f) => f.severity !== 'info')).toEqual([]);
  }, 60_000);

  it('a wrong key in the Request: the Responder closes, the analyzer says the startup frame is bad', async () => {
    const port = await freePort();
    const cap = await startCapture(port, ['--json', '-a', 'duration:40']);
    // The Responder closes on the bad key (RFC 5044 §7.1.2 rule 2) and both sides say so.
    await expect(exchange(port, { script: 'send:100', faults: ['key'] }, { script: 'send:64' })).rejects.toThrow(
      /peer \(initiator\): the other side ended the connection \(FIN\), waiting for the MPA Reply.*; Error: peer \(responder\): rejected the MPA Request: key "MPA ID Req Fram\?"/,
    );
    await interrupt(cap);
    const doc = JSON.parse(cap.stdout()) as ReportLike;
    expect(doc.findings.filter((f) => f.severity !== 'info').map((f) => f.rule)).toContain('mpa.bad-key');
  }, 60_000);
});
if (why !== null) {
  describe('peer traffic as the analyzer reads it', () => {
    it.skip(`skipped: ${why}`, () => {});
  });
}
