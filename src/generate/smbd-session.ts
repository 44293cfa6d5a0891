/**
 * An SMB Direct connection as the generator builds it: the MS-SMBD negotiation, Data Transfers
 * carrying SMB2 messages (fragmented by RemainingDataLength when larger than the sender's
 * MaxSendSize, MS-SMBD 3.1.5.4), Send Credits granted and spent as MS-SMBD 3.1.5.1 says, and the
 * RDMA transfers of SMB2 READ and WRITE over an RDMA channel (MS-SMBD 3.1.4.5, 3.1.4.6; MS-SMB2
 * 3.2.4.6, 3.2.4.7, 3.3.5.12, 3.3.5.13). It produces the RDMAP messages of ulp-connection.ts and
 * the findings a scenario expects; a credit rule broken by the sequence a scenario asks for is
 * expected by the credit model itself, as the specification counts credits.
 */
import {
  CLIENT,
  SERVER,
  type Dir,
  type ScheduledRequest,
  type UlpConnectionSpec,
  type UlpEvent,
  type UlpExpect,
} from './ulp-connection.js';
import {
  FILE_ID,
  closeRequest,
  closeResponse,
  createRequest,
  createResponse,
  dataTransfer,
  irdOrd,
  negotiateRequest,
  negotiateResponse,
  negotiateSmb2Request,
  negotiateSmb2Response,
  readRequest,
  readResponse,
  sessionSetupRequest,
  sessionSetupResponse,
  treeConnectRequest,
  treeConnectResponse,
  writeRequest,
  writeResponse,
  type Desc,
  type Dt,
  type Hdr,
  type NegReq,
  type NegRsp,
} from './smbd-encoder.js';
import { patternBytes } from './mpa-encoder.js';

export { CLIENT, SERVER };

/** TCP port of SMB Direct (MS-SMBD 2.1). */
export const SMBD_PORT = 5445;
/** MS-SMBD 2.2.3 Flags: SMB_DIRECT_RESPONSE_REQUESTED. */
export const RESPONSE_REQUESTED = 0x0001;
/** MS-SMB2 2.2.19 Channel values. */
export const CHANNEL_RDMA_V1 = 1;
export const CHANNEL_RDMA_V1_INVALIDATE = 2;
const DATA_OFFSET = 24;

/** Think time of the client before a request, the server's time to answer, gaps within a transfer (µs). */
export const T = { request: 180, serve: 45, answer: 25, next: 4, idle: 2_000_000 } as const;
/** The server's time to answer the session commands (µs): Kerberos validation, share and file lookups. */
export const SERVICE = { sessionSetup: 640, treeConnect: 85, create: 140, close: 55 } as const;

export interface SmbdOptions {
  /** MPA revision: 2 (RFC 6581 IRD/ORD block first) unless told. */
  rev?: 1 | 2;
  /** The MS-SMBD Appendix A block of the MPA Request and Reply (default: IRD/ORD 16/16, big-endian). */
  requestPd?: Uint8Array;
  replyPd?: Uint8Array;
  /** RFC 6581 IRD/ORD of the Request and Reply (default 16/16 both). */
  irdOrd?: UlpConnectionSpec['irdOrd'];
  /** Receive credits each side keeps posted for its peer (its grant target); default 255 each. */
  targets?: [number, number];
}

export interface ReadOp {
  length: number;
  /** Buffer Descriptor lengths (default: one of `length`). */
  descriptors?: number[];
  channel?: number;
  /** RDMA Writes of the server: [descriptor index, offset in it, octets]; default: each descriptor filled whole. */
  writes?: Array<[number, number, number]>;
  dataRemaining?: number;
  /** Send with Invalidate of this STag for the response ('own': the first token; default: that when Channel asks for it). */
  invalidate?: number | null | 'own';
  /** Only the request (the rest is up to the scenario). */
  requestOnly?: boolean;
  /** Instead of the RDMA Writes: what the server does with the descriptors (returns the octets it claims to have written). */
  serve?: (descs: Desc[]) => number;
}

export interface WriteOp {
  length: number;
  descriptors?: number[];
  channel?: number;
  /** RDMA Read Requests of the server: [descriptor index, offset in it, octets]; default two halves per descriptor. */
  reads?: Array<[number, number, number]>;
  /** Invalidate STag of the response (default: the first token when Channel asks for it). */
  invalidate?: number | null;
  /** Instead of the RDMA Read Requests: what the server does with the descriptors (returns the Count it reports). */
  serve?: (descs: Desc[]) => number;
}

/** What an SMB2 request of the session became: its MessageId and Buffer Descriptors. */
export interface Issued {
  mid: bigint;
  request: number;
  descriptors: Desc[];
}

export class SmbdSession {
  readonly events: UlpEvent[] = [];
  readonly expect: UlpExpect[] = [];
  /** The SMB2 requests the session's own methods made, with their data and response events. */
  readonly requests: ScheduledRequest[] = [];
  /** A Send whose frame the capture cuts to SNAPLEN octets (ulp-connection.ts says what the lower layers report). */
  cut?: number;
  /** Which FPDU of the `cut` Send the snaplen cuts (ulp-connection.ts: a later one cuts the Send inside). */
  cutFpdu?: number;
  /** Send Credits each side holds (MS-SMBD Connection.SendCredits). */
  readonly holds: [number, number] = [0, 0];
  /** Receives each side has posted for its peer: the credits the peer holds from its grants. */
  private readonly posted: [number, number] = [0, 0];
  private readonly targets: [number, number];
  /** Connection.MaxSendSize of each side (MS-SMBD 3.1.5.6, 3.1.5.7). */
  readonly maxSend: [number, number] = [1364, 1364];
  private nextMid = 0n;
  sessionId = 0n;
  treeId = 0;
  fileId: Uint8Array = FILE_ID;
  private token = 0x00a1b200;
  private sink = 0x0005c100;
  private bufferTo = 0xffffc80a12340000n;

  constructor(readonly o: SmbdOptions = {}) {
    this.targets = o.targets ?? [255, 255];
  }

  /** The connection for ulp-connection.ts. */
  spec(): UlpConnectionSpec {
    const o = this.o;
    return {
      serverPort: SMBD_PORT,
      ...(this.cut !== undefined ? { cut: this.cut } : {}),
      ...(this.cutFpdu !== undefined ? { cutFpdu: this.cutFpdu } : {}),
      rev: o.rev ?? 2,
      ...(o.irdOrd ? { irdOrd: o.irdOrd } : {}),
      requestPd: o.requestPd ?? irdOrd(16, 16),
      replyPd: o.replyPd ?? irdOrd(16, 16),
      events: this.events,
      expect: this.expect,
    };
  }

  push(e: UlpEvent): number {
    this.events.push(e);
    return this.events.length - 1;
  }

  /** A finding expected at event `at` (null: a finding without seq, e.g. about the private data). */
  x(rule: string, dir: Dir | null, at: number | null): void {
    this.expect.push({ rule, dir, at });
  }

  /** Notes an SMB2 request (MS-SMB2 2.2.1 command name) made of events `req` and answered by `rsp`. */
  private scheduled(command: string, req: number[], data: number[], rsp: number[] | null): void {
    this.requests.push({ program: 'SMB2', command, request: req.at(-1)!, data, response: rsp ? rsp.at(-1)! : null });
  }

  /** A raw Send (a negotiation message, or a message the session does not build). */
  send(dir: Dir, payload: Uint8Array, delayUs?: number, invalidate?: number): number {
    return this.push({
      op: 'send',
      dir,
      payload,
      ...(delayUs !== undefined ? { delayUs } : {}),
      ...(invalidate !== undefined ? { invalidate } : {}),
    });
  }

  /** MS-SMBD negotiation: Negotiate Request and Response; the Initiator's credits are the grant. */
  negotiate(req: Partial<NegReq> = {}, rsp: Partial<NegRsp> = {}): [number, number] {
    const a = this.send(CLIENT, negotiateRequest(req), 90);
    const grant = rsp.creditsGranted ?? Math.min(req.creditsRequested ?? 255, this.targets[SERVER]);
    const b = this.send(SERVER, negotiateResponse({ ...rsp, creditsGranted: grant }), T.serve);
    // MS-SMBD 3.1.5.7: SendCredits of the Initiator; the Responder holds none until granted (3.1.7.2).
    this.holds[CLIENT] = grant;
    this.posted[SERVER] = grant;
    this.holds[SERVER] = 0;
    this.posted[CLIENT] = 0;
    const reqPreferred = req.preferredSendSize ?? 1364;
    const reqReceive = req.maxReceiveSize ?? 8192;
    this.maxSend[CLIENT] = Math.max(128, Math.min(reqPreferred, rsp.maxReceiveSize ?? 8192));
    this.maxSend[SERVER] = Math.max(128, Math.min(rsp.preferredSendSize ?? 1364, reqReceive));
    return [a, b];
  }

  /**
   * One Data Transfer: spends one of the sender's credits and grants the peer what the sender's
   * posted receives allow (MS-SMBD 3.1.5.1), unless `grant` says otherwise. Sent with no credit,
   * or on the last credit granting none, it is expected to be reported.
   */
  dt(dir: Dir, p: Partial<Dt> = {}, o: { delayUs?: number; invalidate?: number; grant?: number } = {}): number {
    const peer: Dir = dir === 0 ? 1 : 0;
    const grant = o.grant ?? p.creditsGranted ?? Math.max(0, this.targets[dir] - this.posted[dir]);
    const payload = dataTransfer({ ...p, creditsGranted: grant });
    const i = this.send(dir, payload, o.delayUs, o.invalidate);
    const c = this.holds[dir];
    if (c === 0) this.x('smb_direct.no-credits', dir, i);
    else if (c === 1 && grant === 0) this.x('smb_direct.last-credit', dir, i);
    this.holds[dir] = Math.max(0, c - 1);
    this.posted[peer] = Math.max(0, this.posted[peer] - 1);
    this.posted[dir] += grant;
    this.holds[peer] += grant;
    return i;
  }

  /**
   * An SMB2 message in Data Transfers: one when it fits the sender's MaxSendSize, else fragments
   * whose RemainingDataLength counts down to 0 (MS-SMBD 3.1.5.4). Returns every Send's event.
   */
  smb(dir: Dir, msg: Uint8Array, o: { delayUs?: number; invalidate?: number; flags?: number } = {}): number[] {
    const room = this.maxSend[dir] - DATA_OFFSET;
    const out: number[] = [];
    let off = 0;
    do {
      const n = Math.min(room, msg.length - off);
      const last = off + n >= msg.length;
      out.push(
        this.dt(
          dir,
          { data: msg.subarray(off, off + n), remaining: msg.length - off - n, ...(o.flags ? { flags: o.flags } : {}) },
          {
            delayUs: off === 0 ? (o.delayUs ?? (dir === CLIENT ? T.request : T.answer)) : T.next,
            ...(last && o.invalidate !== undefined ? { invalidate: o.invalidate } : {}),
          },
        ),
      );
      off += n;
    } while (off < msg.length);
    return out;
  }

  /** SMB2 header fields of the next request (a fresh MessageId) or of the response to `mid`. */
  hdr(extra: Omit<Partial<Hdr>, 'messageId'> = {}): Partial<Hdr> & { messageId: bigint } {
    return { sessionId: this.sessionId, treeId: this.treeId, credits: 32, ...extra, messageId: this.nextMid++ };
  }
  reply(mid: bigint, extra: Partial<Hdr> = {}): Partial<Hdr> {
    return { messageId: mid, sessionId: this.sessionId, treeId: this.treeId, credits: 32, ...extra };
  }

  /** A new Buffer Descriptor of the client: a registered memory region's token, address and length. */
  descriptor(length: number): Desc {
    const d = { offset: this.bufferTo, token: this.token, length };
    this.token += 0x100;
    this.bufferTo += BigInt((length + 0xffff) & ~0xffff);
    return d;
  }

  write(stag: number, to: bigint, length: number, delayUs: number = T.next): number {
    return this.push({ op: 'write', dir: SERVER, stag, to, length, delayUs });
  }

  /** An RDMA Read Request of the server into a buffer of its own (Data Sink), from the client's Data Source. */
  readRequest(srcStag: number, srcTo: bigint, size: number, delayUs: number = T.next): number {
    const sinkStag = this.sink++;
    return this.push({
      op: 'read-request',
      dir: SERVER,
      sinkStag,
      sinkTo: 0x7f3a00000000n + BigInt(sinkStag & 0xff) * 0x100000n,
      size,
      srcStag,
      srcTo,
      delayUs,
    });
  }

  readResponse(request: number, delayUs: number = T.next): number {
    return this.push({ op: 'read-response', dir: CLIENT, request, delayUs });
  }

  /**
   * MS-SMBD negotiation, then SMB2 NEGOTIATE (SMB 3.0.2), a Kerberos SESSION_SETUP whose request
   * is larger than one Send (two fragments), TREE_CONNECT and CREATE: what a client does before
   * its first READ or WRITE. The client's first Data Transfer grants the server its credits.
   */
  establish(req: Partial<NegReq> = {}, rsp: Partial<NegRsp> = {}): void {
    this.negotiate(req, rsp);
    const clientGuid = patternBytes(16, 11);
    const n = this.hdr({ sessionId: 0n, treeId: 0, credits: 1 });
    const nq = this.smb(CLIENT, negotiateSmb2Request(n, [0x0202, 0x0210, 0x0300, 0x0302], clientGuid), { delayUs: 60 });
    const np = this.smb(
      SERVER,
      negotiateSmb2Response(this.reply(n.messageId, { sessionId: 0n, treeId: 0, credits: 1 }), {
        dialect: 0x0302,
        serverGuid: patternBytes(16, 12),
        securityBuffer: gssToken(120, 13),
        time: 0x01da1b2c3d4e5f60n,
      }),
    );
    this.scheduled('NEGOTIATE', nq, [], np);
    // A Kerberos AP-REQ with a PAC: 1900 octets of security buffer, fragmented over two Sends.
    const ss = this.hdr({ sessionId: 0n, treeId: 0 });
    const sq = this.smb(CLIENT, sessionSetupRequest(ss, gssToken(1900, 14)));
    this.sessionId = 0x0000400000000011n;
    // Kerberos validation of the ticket takes the server a while.
    const sp = this.smb(SERVER, sessionSetupResponse(this.reply(ss.messageId, { treeId: 0 }), gssToken(156, 15)), {
      delayUs: SERVICE.sessionSetup,
    });
    this.scheduled('SESSION_SETUP', sq, [], sp);
    const tc = this.hdr({ treeId: 0 });
    const tq = this.smb(CLIENT, treeConnectRequest(tc, '\\\\fileserver\\share'));
    this.treeId = 5;
    const tp = this.smb(SERVER, treeConnectResponse(this.reply(tc.messageId)), { delayUs: SERVICE.treeConnect });
    this.scheduled('TREE_CONNECT', tq, [], tp);
    const cr = this.hdr();
    const cq = this.smb(CLIENT, createRequest(cr, 'projects\\data.bin'));
    this.fileId = patternBytes(16, 16);
    const cp = this.smb(SERVER, createResponse(this.reply(cr.messageId), this.fileId, 1n << 30n, 0x01da1b2c3d4e5f60n), {
      delayUs: SERVICE.create,
    });
    this.scheduled('CREATE', cq, [], cp);
  }

  /**
   * SMB2 READ over an RDMA channel: the request with its Buffer Descriptors, the server's RDMA
   * Writes into them, then the READ Response (DataLength 0, DataRemaining the octets written,
   * MS-SMB2 3.3.5.12), as Send with Invalidate of the first token for RDMA_V1_INVALIDATE.
   */
  read(r: ReadOp): Issued & { writes: number[]; response: number } {
    const lens = r.descriptors ?? [r.length];
    const descs = lens.map((n) => this.descriptor(n));
    const channel = r.channel ?? CHANNEL_RDMA_V1;
    const h = this.hdr({ creditCharge: Math.max(1, Math.ceil(r.length / 65536)) });
    const [request] = this.smb(
      CLIENT,
      readRequest(h, { fileId: this.fileId, length: r.length, channel, descriptors: descs }),
    ).slice(-1);
    const out = { mid: h.messageId, request: request!, descriptors: descs, writes: [] as number[], response: -1 };
    if (r.requestOnly) {
      this.scheduled('READ', [request!], [], null);
      return out;
    }
    const writes = r.writes ?? descs.map((d, i): [number, number, number] => [i, 0, d.length]);
    let moved = 0;
    if (r.serve) moved = r.serve(descs);
    else
      writes.forEach(([di, off, n], i) => {
        const d = descs[di]!;
        out.writes.push(this.write(d.token, BigInt(d.offset) + BigInt(off), n, i === 0 ? T.serve : T.next));
        moved += n;
      });
    const inv =
      r.invalidate === 'own'
        ? descs[0]!.token
        : r.invalidate !== undefined
          ? r.invalidate
          : channel === CHANNEL_RDMA_V1_INVALIDATE
            ? (descs[0]?.token ?? null)
            : null;
    const resp = this.smb(
      SERVER,
      readResponse(this.reply(h.messageId, { creditCharge: h.creditCharge! }), {
        dataRemaining: r.dataRemaining ?? moved,
      }),
      inv !== null ? { invalidate: inv } : {},
    );
    out.response = resp[0]!;
    this.scheduled('READ', [request!], out.writes, resp);
    return out;
  }

  /**
   * SMB2 WRITE over an RDMA channel (Length 0, RemainingBytes the octets to read, as Linux cifs.ko
   * and Windows send it): the server's RDMA Read Requests of the client's buffers, the client's Read
   * Responses, then the WRITE Response, as Send with Invalidate for RDMA_V1_INVALIDATE.
   */
  writeOp(w: WriteOp): Issued & { reads: number[]; response: number } {
    const lens = w.descriptors ?? [w.length];
    const descs = lens.map((n) => this.descriptor(n));
    const channel = w.channel ?? CHANNEL_RDMA_V1_INVALIDATE;
    const h = this.hdr({ creditCharge: Math.max(1, Math.ceil(w.length / 65536)) });
    const [request] = this.smb(
      CLIENT,
      writeRequest(h, {
        fileId: this.fileId,
        remainingBytes: w.length,
        channel,
        descriptors: descs,
        offset: 1n << 20n,
      }),
    ).slice(-1);
    const plan =
      w.reads ??
      descs.flatMap((d, i): Array<[number, number, number]> => {
        const half = d.length >> 1;
        return half > 0
          ? [
              [i, 0, half],
              [i, half, d.length - half],
            ]
          : [[i, 0, d.length]];
      });
    // The server keeps its Read Requests in flight together, then the client answers each in order.
    const reads = w.serve
      ? []
      : plan.map(([di, off, n], i) =>
          this.readRequest(descs[di]!.token, BigInt(descs[di]!.offset) + BigInt(off), n, i === 0 ? T.serve : T.next),
        );
    const responses = reads.map((rr, i) => this.readResponse(rr, i === 0 ? 9 : T.next));
    const count = w.serve ? w.serve(descs) : plan.reduce((n, p) => n + p[2], 0);
    const inv =
      w.invalidate !== undefined
        ? w.invalidate
        : channel === CHANNEL_RDMA_V1_INVALIDATE
          ? (descs[0]?.token ?? null)
          : null;
    const resp = this.smb(
      SERVER,
      writeResponse(this.reply(h.messageId, { creditCharge: h.creditCharge! }), count),
      inv !== null ? { invalidate: inv } : {},
    );
    this.scheduled('WRITE', [request!], [...reads, ...responses], resp);
    return { mid: h.messageId, request: request!, descriptors: descs, reads, response: resp[0]! };
  }

  /** CLOSE of the file and its response. */
  close(): void {
    const h = this.hdr();
    const q = this.smb(CLIENT, closeRequest(h, this.fileId));
    const p = this.smb(SERVER, closeResponse(this.reply(h.messageId)), { delayUs: SERVICE.close });
    this.scheduled('CLOSE', q, [], p);
  }

  /** A keepalive of `dir` after an idle time (RESPONSE_REQUESTED, no data), answered by the peer unless told. */
  keepalive(dir: Dir, answered = true): [number, number | null] {
    const a = this.dt(dir, { flags: RESPONSE_REQUESTED }, { delayUs: T.idle });
    const b = answered ? this.dt(dir === 0 ? 1 : 0, {}, { delayUs: 30 }) : null;
    return [a, b];
  }
}

/** A GSS-API token (RFC 2743 §3.1: [APPLICATION 0] with the SPNEGO OID) of `n` octets. */
export function gssToken(n: number, seed: number): Uint8Array {
  const b = patternBytes(n, seed);
  const inner = n - 4;
  b.set([0x60, 0x82, (inner >> 8) & 0xff, inner & 0xff, 0x06, 0x06, 0x2b, 0x06, 0x01, 0x05, 0x05, 0x02], 0);
  return b;
}
