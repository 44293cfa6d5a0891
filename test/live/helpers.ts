/**
 * Live tests capture on the loopback interface with the real CLI (dist/cli/main.js) while the MPA
 * peer (src/peer) talks over real sockets in this process. Each capture filters on the test's own
 * port (a random free high port) so tests on lo in parallel do not see each other, and each is
 * bounded (-a duration) so nothing can hang.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { loadCap } from '../../src/capture/live/cap-binding.js';
import { onPath } from '../../src/capture/live/open-live.js';
import { runPeer, PEER_DEFAULTS, type PeerOptions, type PeerReport } from '../../src/peer/endpoint.js';
import { parseFaults, parseScript } from '../../src/peer/script.js';
import { CLI, requireBuilt } from '../cli/helpers.js';
import { settle } from '../helpers/settle.js';

const root = process.platform === 'linux' && process.getuid?.() === 0;

/** Why a backend cannot capture here, or null when it can. */
export function cannotCapture(backend: 'cap' | 'tcpdump' | 'dumpcap'): string | null {
  if (process.platform !== 'linux') return 'live capture tests run on Linux only';
  if (!root) return 'not root: capturing on lo needs root or CAP_NET_RAW';
  if (backend === 'cap' && !loadCap())
    return 'the cap binding does not load (apt-get install libpcap-dev && npm rebuild cap)';
  if (backend === 'tcpdump' && !onPath('tcpdump')) return 'tcpdump is not installed (.ci/run installs it)';
  if (backend === 'dumpcap' && !onPath('dumpcap')) return 'dumpcap is not installed (apt-get install wireshark-common)';
  return null;
}

/** A free TCP port on loopback (bound and released: the peer listens on it a moment later). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface Capture {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit status once the CLI ended. */
  exited: Promise<number | null>;
}

/** Starts `mpa-dissect -i lo -f "tcp port P" ...args` and waits until it says it is capturing. */
export async function startCapture(port: number, args: readonly string[], iface = 'lo'): Promise<Capture> {
  requireBuilt();
  const child = spawn(process.execPath, [CLI, '-i', iface, '-f', `tcp port ${port}`, ...args], {
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  await new Promise<void>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`capture did not start: ${err}`)), 20_000);
    const check = () => {
      if (err.includes('Capturing on')) {
        clearTimeout(t);
        res();
      }
    };
    child.stderr.on('data', check);
    void exited.then(() => {
      clearTimeout(t);
      rej(new Error(`capture ended before starting: ${err}`));
    });
  });
  await settle(300); // the capture socket is open; let it settle
  return { child, stdout: () => out, stderr: () => err, exited };
}

export interface Side {
  script: string;
  faults?: string[];
  markers?: boolean;
  crc?: boolean;
  rev?: 1 | 2;
  rtr?: 'send' | 'write' | 'read' | null;
  /** Largest ULPDU (default 4096): large ones make frames beyond cap's 65535-octet snaplen on lo. */
  maxUlpdu?: number;
  /** Milliseconds after each FPDU (default 1). */
  pace?: number;
}

function opts(role: PeerOptions['role'], port: number, s: Side): PeerOptions {
  return {
    ...PEER_DEFAULTS,
    role,
    host: '127.0.0.1',
    port,
    rev: s.rev ?? 1,
    markers: s.markers ?? true,
    crc: s.crc ?? true,
    rtr: s.rtr ?? null,
    script: parseScript(s.script),
    faults: parseFaults(s.faults ?? []),
    maxUlpdu: s.maxUlpdu ?? 4096,
    pace: s.pace ?? 1,
    timeoutMs: 20_000,
  };
}

/** One MPA connection between two peers on port `port`, to its end. */
export async function exchange(port: number, initiator: Side, responder: Side): Promise<[PeerReport, PeerReport]> {
  let listening!: () => void;
  const ready = new Promise<void>((r) => (listening = r));
  const resp = runPeer({ ...opts('responder', port, responder), onListening: () => listening() });
  await ready;
  const init = runPeer(opts('initiator', port, initiator));
  // Both settle before either failure is thrown: a Responder that rejects leaves no unhandled rejection behind.
  const [i, r] = await Promise.allSettled([init, resp]);
  if (i.status === 'fulfilled' && r.status === 'fulfilled') return [i.value, r.value];
  const why = (s: PromiseSettledResult<PeerReport>) => (s.status === 'rejected' ? [String(s.reason)] : []);
  throw new Error([...why(i), ...why(r)].join('; '));
}

/** Ends the capture with SIGINT (as Ctrl-C) and waits for its exit status. */
export async function interrupt(c: Capture, settleMs = 500): Promise<number | null> {
  await settle(settleMs); // the last segments reach the capture
  c.child.kill('SIGINT');
  return c.exited;
}

/** The CLI on a file, as a user would read a -w file back. */
export function analyzeFile(
  path: string,
  args: readonly string[] = ['--json', '--fail-on', 'never'],
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, path], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
    maxBuffer: 64 << 20,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A report without its capture block (which names the interface or the file). */
export function comparable(json: string): unknown {
  const d = JSON.parse(json) as Record<string, unknown>;
  delete d['capture'];
  return d;
}

export interface MpaJson {
  detection: string;
  crc: boolean;
  request: { rev: number; m: boolean; c: boolean; ird: number | null; ord: number | null; p2p: boolean | null };
  reply: { rev: number; m: boolean; c: boolean };
  directions: Array<{
    fpdus: number;
    markers: boolean;
    crcErrors: number;
    markerErrors: number;
    ddp: { rtr?: string | null } | null;
  }>;
}

export interface ReportLike {
  capture: Record<string, unknown>;
  flows: Array<{ id: number; client: string; server: string; mpa: MpaJson | null }>;
  findings: Array<{ rule: string; severity: string; flow: number | null }>;
  summary: Record<string, number>;
}
