/**
 * An MPA endpoint over a real TCP socket, our stand-in for an RNIC in live tests: the kernel cuts
 * and coalesces the segments, so a capture sees real packets. Initiator or Responder, Rev 1 or 2
 * (RFC 6581 IRD/ORD, peer-to-peer with a chosen RTR), markers and CRC as negotiated, then a script
 * of Sends, Writes, Reads (the other side answers with Read Responses) and a Terminate, with
 * faults injected on request. It shares the encoder of src/generate: FPDUs are encoded with the
 * sender's stream offset from SeqStart (the first octet after its startup frame), so markers land
 * every 512 octets of the TCP sequence space as RFC 5044 §4.3 places them.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { encodeFpdus, enhancedPd, startupFrame, type FpduFault } from '../generate/mpa-encoder.js';
import {
  OP_READ_RESPONSE,
  OP_TERMINATE,
  OP_WRITE,
  parseReadRequest,
  payload,
  readRequestUlpdu,
  sendSegments,
  taggedSegments,
  terminateUlpdu,
} from '../generate/rdmap.js';
import { Deframer, MAX_PD_LENGTH, type ReceivedStartup } from './deframer.js';
import { MAX_MESSAGE, type Faults, type Step } from './script.js';

export type Rtr = 'send' | 'write' | 'read';

export interface PeerOptions {
  role: 'initiator' | 'responder';
  /** Initiator: the address to connect to; Responder: the address to listen on. */
  host: string;
  /** Responder: 0 picks a free port (onListening tells which). */
  port: number;
  rev: 1 | 2;
  /** This side's M bit: markers in what it receives. */
  markers: boolean;
  /** This side's C bit; CRC is used when either side sets it. */
  crc: boolean;
  ird: number;
  ord: number;
  /** Rev 2 peer-to-peer: the RTR this side offers (Initiator) or picks (Responder); null: not p2p. */
  rtr: Rtr | null;
  script: Step[];
  faults: Faults;
  /** Largest ULPDU this side sends (messages are cut into DDP segments). */
  maxUlpdu: number;
  /** Milliseconds to wait after each FPDU (keeps segments small; 0: as fast as the socket takes them). */
  pace: number;
  /** Responder: how long the connection must be quiet before it closes its side. */
  lingerMs: number;
  timeoutMs: number;
  onListening?: (port: number) => void;
}

export interface PeerReport {
  role: 'initiator' | 'responder';
  local: string;
  remote: string;
  /** What was negotiated. */
  crc: boolean;
  markersSent: boolean;
  markersReceived: boolean;
  rtr: Rtr | null;
  fpdusSent: number;
  fpdusReceived: number;
  messagesSent: number;
  readResponsesSent: number;
  /** Faults asked for that could not take effect (FPDU K has no marker, no PAD, or was never sent). */
  warnings: string[];
}

export const PEER_DEFAULTS: Omit<PeerOptions, 'role' | 'host' | 'port' | 'script' | 'faults'> = {
  rev: 1,
  markers: false,
  crc: true,
  ird: 8,
  ord: 8,
  rtr: null,
  maxUlpdu: 8192,
  pace: 0,
  lingerMs: 500,
  timeoutMs: 30_000,
};

/** Unref'd: a pause or a poll never keeps the process alive once the socket is gone (--timeout). */
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
const REQ_KEY = 'MPA ID Req Frame';
const REP_KEY = 'MPA ID Rep Frame';

function rtrOffered(pd: Uint8Array): Rtr[] {
  if (pd.length < 4) return [];
  const ordW = (pd[2]! << 8) | pd[3]!;
  const irdW = (pd[0]! << 8) | pd[1]!;
  const out: Rtr[] = [];
  if (irdW & 0x4000) out.push('send');
  if (ordW & 0x8000) out.push('write');
  if (ordW & 0x4000) out.push('read');
  return out;
}

class Connection {
  sentRel = 0;
  fpduIndex = 0;
  sendMarkers = false;
  crcOn = false;
  sendMsn = 1;
  readMsn = 1;
  readsOut = 0;
  readResponsesSent = 0;
  messagesSent = 0;
  terminated = false;
  peerEnded = false;
  lastData = Date.now();
  /** What the connection is doing, for the line a --timeout prints. */
  phase = 'starting';
  readonly warnings: string[] = [];
  readonly deframer: Deframer;
  readonly local: string;
  readonly remote: string;
  private startupWait: ((s: ReceivedStartup) => void) | null = null;
  private startup: ReceivedStartup | null = null;
  private firstFpduWait: (() => void) | null = null;
  private readsWait: (() => void) | null = null;
  private endWait: (() => void) | null = null;
  /** STags of Write targets; Read sinks take 0x80000000 + n, so the two never name the same buffer. */
  private nextStag = 0x100;
  private nextSink = 0x80000000;
  private busy = false;
  private readonly waiting: Array<() => void> = [];
  private failure: Error | null = null;

  constructor(
    readonly sock: Socket,
    readonly o: PeerOptions,
  ) {
    this.deframer = new Deframer(
      (s) => {
        this.startup = s;
        this.startupWait?.(s);
      },
      (u) => this.received(u),
    );
    this.deframer.markers = o.markers;
    this.local = `${sock.localAddress}:${sock.localPort}`;
    this.remote = `${sock.remoteAddress}:${sock.remotePort}`;
    sock.setNoDelay(true);
    sock.on('data', (b: Buffer) => {
      this.lastData = Date.now();
      try {
        this.deframer.push(b);
      } catch (e) {
        this.failure = e instanceof Error ? e : new Error(String(e));
      }
    });
    sock.on('end', () => {
      this.peerEnded = true;
      this.endWait?.();
    });
  }

  get startupReceived(): boolean {
    return this.startup !== null;
  }

  waitStartup(): Promise<ReceivedStartup> {
    if (this.startup) return Promise.resolve(this.startup);
    return new Promise((r) => (this.startupWait = r));
  }

  waitFirstFpdu(): Promise<void> {
    if (this.deframer.fpdus > 0) return Promise.resolve();
    return new Promise((r) => (this.firstFpduWait = r));
  }

  waitReads(): Promise<void> {
    if (this.readsOut <= 0) return Promise.resolve();
    return new Promise((r) => (this.readsWait = r));
  }

  waitPeerEnd(): Promise<void> {
    if (this.peerEnded) return Promise.resolve();
    return new Promise((r) => (this.endWait = r));
  }

  async waitQuiet(ms: number): Promise<void> {
    while (!this.peerEnded && Date.now() - this.lastData < ms) await sleep(Math.min(50, ms));
  }

  async write(b: Uint8Array): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.sock.destroyed || this.sock.writableEnded) throw this.closedError();
    if (!this.sock.write(b)) await this.drained();
  }

  /**
   * 'drain', or the socket's end: a socket that closes (or is ended) with a write pending never
   * emits 'drain', and waiting for it alone stalled a sender until --timeout.
   */
  private drained(): Promise<void> {
    return new Promise<void>((res, rej) => {
      const off = () => {
        this.sock.off('drain', ok);
        this.sock.off('close', gone);
      };
      const ok = () => {
        off();
        res();
      };
      const gone = () => {
        off();
        rej(this.closedError());
      };
      this.sock.on('drain', ok);
      this.sock.on('close', gone);
    });
  }

  private closedError(): Error {
    return new Error(`the connection closed with ${this.fpduIndex} FPDUs sent (${this.phase})`);
  }

  /** Where the connection stands, in words. */
  where(): string {
    const d = this.deframer;
    if (this.startup === null) {
      const want = this.o.role === 'responder' ? 'Request' : 'Reply';
      return `waiting for the MPA ${want} (${d.startupOctets} of ${d.startupLength} octets received)`;
    }
    return `${this.phase}: ${this.fpduIndex} FPDUs sent, ${d.fpdus} received`;
  }

  /** Encodes and writes one FPDU at the current stream offset (synchronously: FPDUs never interleave). */
  fpdu(ulpdu: Uint8Array): Promise<void> {
    const k = ++this.fpduIndex;
    const f = this.o.faults;
    const fault: FpduFault = {};
    if (f.crc.has(k)) fault.badCrc = true;
    if (f.fpduptr.has(k)) fault.fpduptrDelta = 4;
    if (f.pad.has(k)) fault.padByte = 0xa5;
    const enc = encodeFpdus([{ ulpdu, fault }], { markers: this.sendMarkers, crc: this.crcOn, startRel: this.sentRel });
    const info = enc.fpdus[0]!;
    if (fault.fpduptrDelta && info.markers === 0) this.warnings.push(`fault fpduptr@${k}: FPDU ${k} carries no marker`);
    if (fault.padByte !== undefined && (4 - ((2 + ulpdu.length) % 4)) % 4 === 0)
      this.warnings.push(`fault pad@${k}: FPDU ${k} has no PAD`);
    if (fault.badCrc && !this.crcOn) this.warnings.push(`fault crc@${k}: CRC is not in use on this connection`);
    this.sentRel += enc.bytes.length;
    const done = this.write(enc.bytes);
    return this.o.pace > 0 ? done.then(() => sleep(this.o.pace)) : done;
  }

  /**
   * Sends one message's segments back to back: a Read Response asked for while a Write is half
   * sent waits for it (messages are not interleaved, as an RNIC's send queue does not). When the
   * queue is idle the first FPDU is written synchronously (the responder-first fault relies on it).
   */
  async message(segments: Uint8Array[]): Promise<void> {
    if (this.busy) await new Promise<void>((r) => this.waiting.push(r));
    this.busy = true;
    try {
      this.messagesSent++;
      for (const s of segments) await this.fpdu(s);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.busy = false;
    }
  }

  private received(u: Uint8Array): void {
    if (this.deframer.fpdus === 1) {
      const w = this.firstFpduWait;
      this.firstFpduWait = null;
      w?.();
    }
    if (u.length < 2) return;
    const op = u[1]! & 0x0f;
    const tagged = (u[0]! & 0x80) !== 0;
    const last = (u[0]! & 0x40) !== 0;
    const rr = parseReadRequest(u);
    if (rr && rr.size > MAX_MESSAGE) {
      // A hostile or broken other side can ask for up to 4 GiB: the peer serves no buffer that large.
      if (this.warnings.length < 16)
        this.warnings.push(
          `Read Request for ${rr.size} octets not answered: over the ${MAX_MESSAGE} a peer message may carry`,
        );
      return;
    }
    if (rr) {
      // Answer at once with the Read Response: the requested octets to the Data Sink's STag and TO.
      const segs = taggedSegments(
        OP_READ_RESPONSE,
        rr.sinkStag,
        rr.sinkTo,
        payload(rr.size, rr.srcStag),
        this.o.maxUlpdu,
      );
      this.readResponsesSent++;
      this.message(segs).catch((e: unknown) => (this.failure = e instanceof Error ? e : new Error(String(e))));
      return;
    }
    if (tagged && op === OP_READ_RESPONSE && last) {
      this.readsOut--;
      if (this.readsOut <= 0) {
        const w = this.readsWait;
        this.readsWait = null;
        w?.();
      }
    }
    if (!tagged && op === OP_TERMINATE) this.terminated = true;
  }

  async rtr(kind: Rtr): Promise<void> {
    if (kind === 'send') await this.message(sendSegments(this.sendMsn++, new Uint8Array(0), this.o.maxUlpdu));
    else if (kind === 'write') await this.message(taggedSegments(OP_WRITE, 1, 0n, new Uint8Array(0), this.o.maxUlpdu));
    else {
      this.readsOut++;
      await this.message([
        readRequestUlpdu(this.readMsn++, { sinkStag: 1, sinkTo: 0n, size: 0, srcStag: 1, srcTo: 0n }),
      ]);
    }
  }

  async run(steps: readonly Step[]): Promise<void> {
    for (const s of steps) {
      if (this.terminated) break;
      switch (s.op) {
        case 'pause':
          await sleep(s.ms);
          break;
        case 'send':
          await this.message(sendSegments(this.sendMsn, payload(s.size, this.sendMsn), this.o.maxUlpdu));
          this.sendMsn++;
          break;
        case 'write': {
          const stag = this.nextStag++;
          await this.message(taggedSegments(OP_WRITE, stag, 0x10000n, payload(s.size, stag), this.o.maxUlpdu));
          break;
        }
        case 'read': {
          const sink = this.nextSink++;
          this.readsOut++;
          await this.message([
            readRequestUlpdu(this.readMsn++, {
              sinkStag: sink,
              sinkTo: 0n,
              size: s.size,
              srcStag: (sink & 0xffff) + 0x10000,
              srcTo: 0n,
            }),
          ]);
          break;
        }
        case 'terminate':
          await this.message([terminateUlpdu(1)]);
          this.terminated = true;
          break;
      }
    }
  }

  report(role: PeerOptions['role'], rtr: Rtr | null): PeerReport {
    return {
      role,
      local: this.local,
      remote: this.remote,
      crc: this.crcOn,
      markersSent: this.sendMarkers,
      markersReceived: this.o.markers,
      rtr,
      fpdusSent: this.fpduIndex,
      fpdusReceived: this.deframer.fpdus,
      messagesSent: this.messagesSent,
      readResponsesSent: this.readResponsesSent,
      warnings: [
        ...this.warnings,
        ...[...this.o.faults.crc, ...this.o.faults.fpduptr, ...this.o.faults.pad]
          .filter((k) => k > this.fpduIndex)
          .map((k) => `fault @${k}: only ${this.fpduIndex} FPDUs were sent`),
      ],
    };
  }
}

function startupOf(o: PeerOptions, kind: 'request' | 'reply', rtr: Rtr[] | null): Uint8Array {
  const enhanced = o.rev === 2;
  const pd = enhanced
    ? enhancedPd({
        ird: o.ird,
        ord: o.ord,
        p2p: rtr !== null,
        send: rtr?.includes('send') ?? false,
        write: rtr?.includes('write') ?? false,
        read: rtr?.includes('read') ?? false,
      })
    : new Uint8Array(0);
  let key = kind === 'request' ? REQ_KEY : REP_KEY;
  if (o.faults.key) key = key.slice(0, 15) + '?';
  return startupFrame({ kind, m: o.markers, c: o.crc, rev: o.rev, enhanced, pd, key });
}

/** A key as text, control and non-ASCII octets escaped: it came off the wire. */
function shownKey(k: string): string {
  let out = '';
  for (const ch of k) {
    const c = ch.charCodeAt(0);
    out += c >= 0x20 && c < 0x7f && ch !== '"' && ch !== '\\' ? ch : `\\x${c.toString(16).padStart(2, '0')}`;
  }
  return `"${out}"`;
}

/**
 * What makes a received startup frame improperly formatted, or null. RFC 5044 §7.1.1: a receiver
 * closes the connection on a wrong key, a PD_Length over 512 or a Rev it cannot interoperate
 * with; §7.1.2 rule 8: the other side's key tells Initiator/Initiator (and Responder/Responder)
 * startups; RFC 6581 §2: the enhanced frame's Private Data starts with the 4-octet IRD/ORD block.
 */
export function startupProblem(s: ReceivedStartup, expected: 'request' | 'reply'): string | null {
  const want = expected === 'request' ? REQ_KEY : REP_KEY;
  if (s.key !== want) {
    if (s.key === (expected === 'request' ? REP_KEY : REQ_KEY))
      return expected === 'request'
        ? 'a Reply came where the Request was due (Responder/Responder startup, RFC 5044 §7.1.2 rule 8)'
        : 'a Request came where the Reply was due (Initiator/Initiator startup, RFC 5044 §7.1.2 rule 8)';
    return `key ${shownKey(s.key)} is not "${want}" (RFC 5044 §7.1.1)`;
  }
  if (s.pdLength > MAX_PD_LENGTH) return `PD_Length ${s.pdLength} is over ${MAX_PD_LENGTH} (RFC 5044 §7.1.1)`;
  if (s.rev !== 1 && s.rev !== 2) return `Rev ${s.rev}: this peer speaks Rev 1 and 2 (RFC 5044 §7.1.1, RFC 6581)`;
  if (s.enhanced && s.pdLength < 4)
    return `the enhanced bit with PD_Length ${s.pdLength}, short of the 4-octet IRD/ORD block (RFC 6581 §2)`;
  return null;
}

class Rejected extends Error {}

function closed(sock: Socket): Promise<void> {
  return new Promise((r) => {
    if (sock.destroyed) r();
    else sock.once('close', () => r());
  });
}

/** One run's sockets and state: one deadline covers connecting, accepting, startup, the script and closing. */
class Attempt {
  sock: Socket | null = null;
  server: Server | null = null;
  conn: Connection | null = null;
  phase: string;
  constructor(readonly o: PeerOptions) {
    this.phase =
      o.role === 'initiator' ? `connecting to ${o.host}:${o.port}` : `waiting for a connection on ${o.host}:${o.port}`;
  }

  where(): string {
    return this.conn ? this.conn.where() : this.phase;
  }

  /** Runs `work` to its end or to the deadline, whichever is first; at the deadline every socket is closed. */
  async bounded<T>(work: Promise<T>): Promise<T> {
    let t: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, rej) => {
      t = setTimeout(() => {
        this.server?.close();
        this.sock?.destroy();
        rej(new Error(`peer (${this.o.role}): no end after ${this.o.timeoutMs} ms (--timeout), ${this.where()}`));
      }, this.o.timeoutMs);
    });
    try {
      return await Promise.race([work, timeout]);
    } catch (e) {
      this.server?.close();
      this.sock?.destroy();
      if (e instanceof Rejected || (e instanceof Error && e.message.startsWith('peer ('))) throw e;
      // A socket error says only "read ECONNRESET": say where the connection was.
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(`peer (${this.o.role}): ${msg}, ${this.where()}`);
    } finally {
      clearTimeout(t);
    }
  }

  /** The socket's error, or its end before `what` (a peer that closed instead of answering). */
  failures(sock: Socket, c: Connection): Promise<never> {
    return new Promise<never>((_, rej) => {
      sock.once('error', rej);
      // A FIN before the startup frame is complete: nothing more will come (RFC 5044 §7.1.2 rule 10's timeout need not run out).
      sock.once('end', () => {
        if (!c.startupReceived) rej(new Error('the other side ended the connection (FIN)'));
      });
      sock.once('close', () => {
        if (c.phase !== 'closing') rej(new Error('the other side closed the connection'));
      });
    });
  }
}

/** Closes the connection on an improperly formatted startup frame and says why (RFC 5044 §7.1.2 rules 2, 3 and 5). */
function checkStartup(o: PeerOptions, c: Connection, s: ReceivedStartup): void {
  const expected = o.role === 'responder' ? 'request' : 'reply';
  const problem = startupProblem(s, expected);
  if (problem !== null) {
    c.deframer.stopped = true;
    c.sock.destroy();
    throw new Rejected(
      `peer (${o.role}): rejected the MPA ${expected === 'request' ? 'Request' : 'Reply'}: ${problem}; closed the connection`,
    );
  }
  if (expected === 'reply' && s.r) {
    c.sock.destroy();
    throw new Rejected(`peer (initiator): the Responder rejected the connection (Reply with the Rejected bit set)`);
  }
}

async function initiator(o: PeerOptions, a: Attempt): Promise<PeerReport> {
  const sock = connect({ host: o.host, port: o.port, allowHalfOpen: true });
  a.sock = sock;
  await new Promise<void>((res, rej) => {
    sock.once('connect', () => res());
    sock.once('error', rej);
  });
  const c = new Connection(sock, o);
  a.conn = c;
  const failed = a.failures(sock, c);
  const work = (async () => {
    await c.write(startupOf(o, 'request', o.rtr === null ? null : [o.rtr]));
    const reply = await c.waitStartup();
    checkStartup(o, c, reply);
    c.crcOn = o.crc || reply.c;
    c.sendMarkers = reply.m;
    c.phase = 'in Full Operation';
    let rtr: Rtr | null = null;
    if (o.rev === 2 && o.rtr !== null) {
      rtr = rtrOffered(reply.privateData)[0] ?? o.rtr;
      await c.rtr(rtr);
    }
    await c.run(o.script);
    c.phase = 'waiting for Read Responses';
    await c.waitReads();
    c.phase = 'closing';
    await c.waitPeerEnd();
    sock.end();
    await closed(sock);
    return c.report('initiator', rtr);
  })();
  return Promise.race([work, failed]);
}

async function responder(o: PeerOptions, a: Attempt): Promise<PeerReport> {
  const server = createServer({ allowHalfOpen: true });
  a.server = server;
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(o.port, o.host, () => res());
  });
  const addr = server.address();
  o.onListening?.(typeof addr === 'object' && addr ? addr.port : o.port);
  let s: Socket;
  try {
    s = await new Promise<Socket>((res) => server.once('connection', res));
  } finally {
    server.close();
  }
  a.sock = s;
  const c = new Connection(s, o);
  a.conn = c;
  const failed = a.failures(s, c);
  const work = (async () => {
    const req = await c.waitStartup();
    checkStartup(o, c, req);
    c.crcOn = o.crc || req.c;
    c.sendMarkers = req.m;
    let rtr: Rtr | null = null;
    if (o.rev === 2 && req.rev === 2) {
      const offered = rtrOffered(req.privateData);
      rtr = o.rtr !== null && offered.includes(o.rtr) ? o.rtr : (offered[0] ?? null);
    }
    const reply = startupOf(o, 'reply', rtr === null ? null : [rtr]);
    if (o.faults.responderFirst) {
      // Reply and the first FPDU in one write: the Responder's FPDU is on the wire before the
      // Initiator could send any (RFC 5044 §7.1.2 startup rule violated on purpose).
      c.phase = 'in Full Operation';
      s.cork();
      void c.write(reply);
      const first = c.run(o.script);
      s.uncork();
      await first;
    } else {
      await c.write(reply);
      c.phase = "waiting for the Initiator's first FPDU";
      await c.waitFirstFpdu();
      c.phase = 'in Full Operation';
      await c.run(o.script);
    }
    c.phase = 'waiting for Read Responses';
    await c.waitReads();
    c.phase = 'lingering';
    await c.waitQuiet(o.lingerMs);
    c.phase = 'closing';
    s.end();
    await c.waitPeerEnd();
    await closed(s);
    return c.report('responder', rtr);
  })();
  return Promise.race([work, failed]);
}

/**
 * Runs one MPA connection to its end (both FINs) and says what was sent and received; rejects
 * with one line on a malformed startup frame, a closed or reset connection, or --timeout (which
 * holds in every state: connecting, accepting, startup, Full Operation, closing).
 */
export function runPeer(o: PeerOptions): Promise<PeerReport> {
  const a = new Attempt(o);
  return a.bounded(o.role === 'initiator' ? initiator(o, a) : responder(o, a));
}
