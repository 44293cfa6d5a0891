/**
 * Soak test of live capture: `mpa-dissect -i lo --ndjson --flow-timeout T` runs for SOAK_SECONDS
 * (default 600) while MPA peers on loopback keep a steady load: one long-lived connection sending
 * a message every SOAK_INTERVAL_MS (default 10), plus a new short connection (Sends, a Write, a
 * Read) every 2 s that the flow timeout must finish and release. Every 15 s it samples the
 * capture process's RSS (/proc/PID/status VmRSS) and prints it with what the NDJSON stream
 * counted, then a summary: RSS after warm-up (60 s), at the end, the peak, and the growth per hour
 * extrapolated from the samples after warm-up. Needs root (capture on lo).
 *
 *   node dist/scripts/soak-live.js            # SOAK_SECONDS, SOAK_BACKEND (cap|tcpdump), SOAK_FLOW_TIMEOUT (5)
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runPeer, PEER_DEFAULTS, type PeerOptions } from '../src/peer/endpoint.js';
import { parseFaults, parseScript, type Step } from '../src/peer/script.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'cli', 'main.js');
const seconds = Number(process.env['SOAK_SECONDS'] ?? 600);
const backend = process.env['SOAK_BACKEND'] ?? 'cap';
const interval = Number(process.env['SOAK_INTERVAL_MS'] ?? 10);
const flowTimeout = Number(process.env['SOAK_FLOW_TIMEOUT'] ?? 5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const p = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return p;
}

function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function peer(role: PeerOptions['role'], port: number, script: Step[], onListening?: () => void): Promise<unknown> {
  return runPeer({
    ...PEER_DEFAULTS,
    role,
    host: '127.0.0.1',
    port,
    markers: true,
    crc: true,
    script,
    faults: parseFaults([]),
    maxUlpdu: 4096,
    timeoutMs: (seconds + 120) * 1000,
    ...(onListening ? { onListening } : {}),
  });
}

async function connection(port: number, a: Step[], b: Step[]): Promise<void> {
  let ready!: () => void;
  const listening = new Promise<void>((r) => (ready = r));
  const resp = peer('responder', port, b, ready);
  await listening;
  await Promise.all([peer('initiator', port, a), resp]);
}

async function main(): Promise<void> {
  const ports = { long: await freePort(), short: 0 };
  // Short connections reuse a band of ports: the filter covers the long one and the band.
  const band = 41000 + Math.floor(Math.random() * 20000);
  const filter = `tcp port ${ports.long} or tcp portrange ${band}-${band + 999}`;
  const child = spawn(
    process.execPath,
    [
      CLI,
      '-i',
      'lo',
      '--capture-backend',
      backend,
      '-f',
      filter,
      '--ndjson',
      '--flow-timeout',
      String(flowTimeout),
      '-a',
      `duration:${seconds + 30}`,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const counts: Record<string, number> = {};
  let tail = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (s: string) => {
    const lines = (tail + s).split('\n');
    tail = lines.pop()!;
    for (const l of lines) {
      const m = /^\{"type":"(\w+)"/.exec(l);
      if (m) counts[m[1]!] = (counts[m[1]!] ?? 0) + 1;
    }
  });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  while (!err.includes('Capturing on')) {
    if (child.exitCode !== null) throw new Error(`capture did not start: ${err}`);
    await sleep(100);
  }
  await sleep(500);
  const started = Date.now();
  const end = started + seconds * 1000;
  console.log(
    `soak: ${seconds} s, backend ${backend}, flow timeout ${flowTimeout} s, one message every ${interval} ms on a long connection, a short connection every 2 s`,
  );

  // The long connection: a Send (or every 10th a Write) every `interval` ms, for the whole run.
  const steps: Step[] = [];
  for (let i = 0, n = Math.floor((seconds * 1000) / Math.max(1, interval)); i < n; i++) {
    steps.push(i % 10 === 9 ? { op: 'write', size: 6000 } : { op: 'send', size: 200 + (i % 7) * 300 }, {
      op: 'pause',
      ms: interval,
    });
  }
  const long = connection(ports.long, steps, parseScript('send:100')).catch((e: unknown) =>
    console.error(`long connection: ${String(e)}`),
  );

  const samples: Array<[number, number]> = [];
  let shorts = 0;
  let nextSample = started;
  let k = 0;
  while (Date.now() < end) {
    const port = band + (k++ % 1000);
    shorts++;
    void connection(port, parseScript('send:100,write:5000,read:3000,send:50'), parseScript('send:64')).catch(() => {});
    if (Date.now() >= nextSample) {
      const t = (Date.now() - started) / 1000;
      const rss = rssMB(child.pid!);
      samples.push([t, rss]);
      console.log(
        `${t.toFixed(0).padStart(5)} s  RSS ${rss.toFixed(1)} MB  events ${JSON.stringify(counts)}  short connections ${shorts}`,
      );
      nextSample += 15_000;
    }
    await sleep(2000);
  }
  // The long connection may still have steps to go: the measurement ends now, and so does it (exit below).
  void long;
  const last = rssMB(child.pid!);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((r) => child.once('close', r));
  const warm = samples.filter(([t]) => t >= 60);
  const peak = Math.max(...samples.map(([, r]) => r), last);
  let slope = NaN;
  if (warm.length >= 2) {
    const n = warm.length;
    const mt = warm.reduce((s, [t]) => s + t, 0) / n;
    const mr = warm.reduce((s, [, r]) => s + r, 0) / n;
    slope = warm.reduce((s, [t, r]) => s + (t - mt) * (r - mr), 0) / warm.reduce((s, [t]) => s + (t - mt) ** 2, 0);
  }
  console.log(
    `soak done: exit ${code}; RSS at 60 s ${warm[0]?.[1].toFixed(1) ?? '-'} MB, at the end ${last.toFixed(1)} MB, peak ${peak.toFixed(1)} MB; ` +
      `trend after warm-up ${Number.isNaN(slope) ? '-' : `${(slope * 3600).toFixed(1)} MB/hour`}; events ${JSON.stringify(counts)}; short connections ${shorts}`,
  );
  console.log(err.trim().split('\n').slice(-2).join('\n'));
  process.exit(code === null ? 1 : 0); // the peers of the long connection are cut off with us
}

main().catch((e: unknown) => {
  console.error(`soak: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
});
