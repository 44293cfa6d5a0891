/**
 * Fuzz cases for `mpa-dissect peer` and `mpa-dissect generate` (issue 26).
 *
 * peer: a real `peer --listen` or `peer --connect` process against a hostile other side run in the
 * fuzz process on 127.0.0.1: garbage, startup frames cut short or malformed (a wrong key, PD_Length
 * over 512), FPDUs cut short or of garbage, then silence, a FIN or a reset. Each run must end within
 * its --timeout and a margin, exit 0 or 2, and say at most one line.
 *
 * generate: random scenarios with random knob values, valid and invalid (out of range, not
 * numbers, unknown choices, empty, huge): exit 0 with a capture, or exit 2 with one line. Valid
 * count and size are kept to captures of a few MB (the run's RSS limit is the judge).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeFpdus, startupFrame } from '../../src/generate/mpa-encoder.js';
import { KNOBS } from '../../src/generate/knobs.js';
import { payload, sendSegments } from '../../src/generate/rdmap.js';
import type { Rand } from './mutate-capture.js';

/** The peer's --timeout in a fuzz run, and what a run may take beyond it (process start-up, close). */
export const PEER_TIMEOUT_S = 2;
export const PEER_MARGIN_S = 6;

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function junk(r: Rand, n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

const HOSTILE = [
  'garbage',
  'startup-cut',
  'bad-key',
  'pd-length-65535',
  'pd-length-over',
  'other-key',
  'fpdu-cut',
  'fpdu-garbage',
  'nothing',
] as const;
const AFTER = ['silence', 'fin', 'reset'] as const;

export interface PeerCase {
  name: string;
  role: 'initiator' | 'responder';
  /** What the hostile side sends once connected. */
  bytes: Uint8Array;
  after: (typeof AFTER)[number];
  /** Extra options for the peer under test. */
  args: string[];
}

export function peerCase(r: Rand): PeerCase {
  const role = r() < 0.5 ? 'initiator' : 'responder';
  // What the peer under test expects: a Request if it is the Responder, a Reply otherwise.
  const kind = role === 'responder' ? 'request' : 'reply';
  const rev = r() < 0.5 ? 1 : 2;
  const good = startupFrame({ kind, c: true, m: r() < 0.3, rev });
  const h = pick(r, HOSTILE);
  let bytes: Uint8Array;
  switch (h) {
    case 'garbage':
      bytes = junk(r, Math.floor(r() * 70000));
      break;
    case 'startup-cut':
      bytes = good.subarray(0, Math.floor(r() * good.length));
      break;
    case 'bad-key':
      bytes = startupFrame({ kind, key: String.fromCharCode(...junk(r, 16)) });
      break;
    case 'pd-length-65535':
      bytes = startupFrame({ kind, pdLength: 65535 });
      break;
    case 'pd-length-over':
      bytes = startupFrame({ kind, pdLength: 513 + Math.floor(r() * 1000), pd: junk(r, Math.floor(r() * 600)) });
      break;
    case 'other-key':
      bytes = startupFrame({ kind: kind === 'request' ? 'reply' : 'request' });
      break;
    case 'fpdu-cut': {
      const f = encodeFpdus([{ ulpdu: sendSegments(1, payload(Math.floor(r() * 9000), 1), 8192)[0]! }], {
        markers: false,
        crc: true,
      }).bytes;
      const all = new Uint8Array(good.length + f.length);
      all.set(good);
      all.set(f, good.length);
      bytes = all.subarray(0, good.length + Math.floor(r() * f.length));
      break;
    }
    case 'fpdu-garbage': {
      const g = junk(r, Math.floor(r() * 70000));
      bytes = new Uint8Array(good.length + g.length);
      bytes.set(good);
      bytes.set(g, good.length);
      break;
    }
    default:
      bytes = new Uint8Array(0);
  }
  const after = pick(r, AFTER);
  const args = [
    '--rev',
    String(rev),
    '--script',
    pick(r, ['send:100', 'send:64,read:3000', 'write:70000,pause:10,send:1', 'terminate', '']),
    ...(r() < 0.3 ? ['--markers'] : []),
    ...(r() < 0.2 ? ['--pace', '1'] : []),
  ];
  return { name: `peer ${role}: ${h} (${bytes.length} octets) then ${after}`, role, bytes, after, args };
}

/** A free TCP port on 127.0.0.1 (listened on and closed). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

/** Plays the hostile side on one connection, then holds it as the case says until `done`. */
function play(sock: Socket, c: PeerCase, done: Promise<unknown>): void {
  sock.on('error', () => {});
  sock.resume();
  sock.write(c.bytes, () => {
    if (c.after === 'fin') sock.end();
    else if (c.after === 'reset') sock.resetAndDestroy();
  });
  void done.then(() => sock.destroy());
}

/**
 * Runs the hostile side for a case while `run(port)` runs the peer under test: for a Responder
 * under test, connects to its port (retrying while it starts); for an Initiator, listens first.
 */
export async function withHostileSide<T>(c: PeerCase, run: (port: number) => Promise<T>): Promise<T> {
  const port = await freePort();
  if (c.role === 'initiator') {
    const server: Server = createServer({ allowHalfOpen: true });
    let fin!: (v: unknown) => void;
    const done = new Promise((r) => (fin = r));
    server.on('connection', (s) => play(s, c, done));
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    try {
      return await run(port);
    } finally {
      fin(null);
      server.close();
    }
  }
  let fin!: (v: unknown) => void;
  const done = new Promise((r) => (fin = r));
  let stop = false;
  const attacker = (async () => {
    // The peer takes a moment to start and listen: retry until it accepts or the run ends.
    while (!stop) {
      const sock = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      const ok = await new Promise<boolean>((r) => {
        sock.once('connect', () => r(true));
        sock.once('error', () => r(false));
      });
      if (ok) {
        play(sock, c, done);
        return;
      }
      sock.destroy();
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  try {
    return await run(port);
  } finally {
    stop = true;
    fin(null);
    await attacker;
  }
}

/** Values for a knob: mostly valid, else each kind of invalid. */
function knobValue(r: Rand, k: (typeof KNOBS)[number]): string {
  const x = r();
  if (x < 0.15)
    return pick(r, [
      '',
      ' ',
      'NaN',
      '-1',
      '1e400',
      '0x10',
      '1.5',
      '99999999999999999999',
      'a'.repeat(Math.floor(r() * 5000)),
      '\u0000',
      '\u001b[2J',
      ',',
      'both,,none',
    ]);
  if (k.kind === 'int') {
    const lo = k.min ?? 0;
    const hi = k.max ?? 1000;
    if (x < 0.25) return String(pick(r, [lo - 1, hi + 1, -2147483649, 2 ** 53]));
    // Valid count and size are kept small: the capture is held whole (see the report on issue 26).
    const cap = k.name === 'count' ? 40 : k.name === 'size' ? 65536 : hi;
    return String(lo + Math.floor(r() * (Math.min(hi, cap) - lo + 1)));
  }
  const cs = k.choices ?? [];
  if (k.kind === 'list' && x < 0.5) return Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(r, cs)).join(',');
  if (x < 0.2) return `${pick(r, cs)}x`;
  return pick(r, cs);
}

export interface GenerateCase {
  name: string;
  args: string[];
}

/** `generate SCENARIO --knob value ... -o @DIR/out.pcap --truth @DIR/truth.json`, or a hostile variant. */
export function generateCase(r: Rand, scenarios: readonly string[]): GenerateCase {
  const sc = r() < 0.05 ? pick(r, ['', 'no-such-scenario', '-', '../x', '\u001b]0;x\u0007']) : pick(r, scenarios);
  const args = ['generate', sc];
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const k = r() < 0.05 ? { name: 'no-such-knob', kind: 'int' as const } : pick(r, KNOBS);
    args.push(`--${k.name}`, knobValue(r, k as (typeof KNOBS)[number]));
  }
  if (r() < 0.1) args.push('--seed', pick(r, ['-1', '0', 'x', '4294967296', '7']));
  const out = r() < 0.5 ? '@DIR/out.pcapng' : '@DIR/out.pcap';
  args.push('-o', out);
  // Now and then the same path twice, which must be refused.
  args.push('--truth', r() < 0.05 ? out : '@DIR/truth.json');
  return { name: args.slice(1).join(' ').slice(0, 200), args };
}
