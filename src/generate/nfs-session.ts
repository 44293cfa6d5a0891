/**
 * An NFS-over-RDMA connection as the generator builds it (RPC-over-RDMA version 1, RFC 8166; the
 * NFS binding, RFC 8267; private data, RFC 8797): the client's Calls as RDMA_MSG (or RDMA_NOMSG)
 * Sends with their chunk lists, the server's RDMA Writes into write and reply chunks and RDMA Read
 * Requests of read chunks, the client's Read Responses, then the Replies echoing the chunks with
 * the lengths written, as Send with Invalidate of the Call's handle when the client offered Remote
 * Invalidation. It produces the RDMAP messages of ulp-connection.ts and the findings a scenario
 * expects.
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
  Enc,
  FH,
  RDMA_MSG,
  RDMA_NOMSG,
  cat,
  cmPrivateData,
  compound,
  nfs3ReadArgs,
  nfs3ReadResults,
  nfs3WriteArgs,
  op,
  rdmaHeader,
  rpcCall,
  rpcReply,
  type HeaderSpec,
  type ReadSeg,
  type Seg,
} from './rpcrdma-encoder.js';
import { patternBytes } from './mpa-encoder.js';

export { CLIENT, SERVER };

/** TCP port of NFS over RDMA (RFC 5666 §10 / RFC 8267: 20049). */
export const NFS_RDMA_PORT = 20049;
export const NFS_PROGRAM = 100003;
export const NFS3 = { NULL: 0, GETATTR: 1, LOOKUP: 3, READ: 6, WRITE: 7, READDIRPLUS: 17, COMMIT: 21 } as const;

/** Client think time before a Call, the server's time to act, gaps within a transfer (µs). */
export const T = { call: 150, serve: 40, answer: 20, next: 4 } as const;

export interface NfsOptions {
  /** RFC 8797 private data of the client (MPA Request) and the server (MPA Reply); null: none sent. */
  requestPd?: Uint8Array | null;
  replyPd?: Uint8Array | null;
  /** rdma_credit of the server's Replies (its grant), default 128. */
  grant?: number;
}

/** What the server's Reply to a chunked Call does, each part overridable by a scenario. */
export interface ServeOpts {
  /** RDMA Writes into the write chunk: [segment index, offset in it, octets]; default each segment whole. */
  writes?: Array<[number, number, number]>;
  /** Lengths the Reply reports per segment of the chunk (default: what was written). */
  reported?: number[];
  /** Invalidate STag of the Reply ('own': the Call's handle; default: that when the client offered Remote Invalidation); null: plain Send. */
  invalidate?: number | null | 'own';
  /** Override the Reply's header fields (credit, read list, ...). */
  header?: Partial<HeaderSpec>;
  /** The Reply as RDMA_NOMSG (no RPC message inline). */
  nomsg?: boolean;
  /** The Reply returns the chunk's first segment under this handle instead of the Call's. */
  returnedHandle?: number;
}

export class NfsSession {
  readonly events: UlpEvent[] = [];
  readonly expect: UlpExpect[] = [];
  /** The Calls the session's own methods made, with their data and Reply events. */
  readonly requests: ScheduledRequest[] = [];
  /** A Send whose frame the capture cuts to SNAPLEN octets (ulp-connection.ts says what the lower layers report). */
  cut?: number;
  /** Which FPDU of the `cut` Send the snaplen cuts (ulp-connection.ts: a later one cuts the Send inside). */
  cutFpdu?: number;
  xid = 0x5a3c0e01;
  private handle = 0x00a10c00;
  private sink = 0x00b2c000;
  private bufferTo = 0xffff9a4d80000000n;
  readonly remoteInvalidate: boolean;

  constructor(readonly o: NfsOptions = {}) {
    const pd = o.requestPd === undefined ? CLIENT_PD : o.requestPd;
    this.remoteInvalidate = pd !== null && pd.length >= 6 && (pd[5]! & 1) === 1;
  }

  spec(): UlpConnectionSpec {
    const o = this.o;
    return {
      serverPort: NFS_RDMA_PORT,
      ...(this.cut !== undefined ? { cut: this.cut } : {}),
      ...(this.cutFpdu !== undefined ? { cutFpdu: this.cutFpdu } : {}),
      rev: 2,
      requestPd: o.requestPd === undefined ? CLIENT_PD : (o.requestPd ?? new Uint8Array(0)),
      replyPd: o.replyPd === undefined ? SERVER_PD : (o.replyPd ?? new Uint8Array(0)),
      events: this.events,
      expect: this.expect,
    };
  }

  push(e: UlpEvent): number {
    this.events.push(e);
    return this.events.length - 1;
  }

  x(rule: string, dir: Dir | null, at: number | null): void {
    this.expect.push({ rule, dir, at });
  }

  nextXid(): number {
    return this.xid++;
  }

  /** A memory region the client registers for a chunk segment. */
  segment(length: number): Seg {
    const s = { handle: this.handle, length, offset: this.bufferTo };
    this.handle += 0x100;
    this.bufferTo += BigInt((length + 0xffff) & ~0xffff);
    return s;
  }

  call(payload: Uint8Array, delayUs: number = T.call): number {
    return this.push({ op: 'send', dir: CLIENT, payload, delayUs });
  }

  reply(payload: Uint8Array, invalidate: number | null = null, delayUs: number = T.answer): number {
    return this.push({
      op: 'send',
      dir: SERVER,
      payload,
      delayUs,
      ...(invalidate !== null ? { invalidate } : {}),
    });
  }

  write(s: Seg, off: number, length: number, delayUs: number = T.next, data?: Uint8Array): number {
    return this.push({
      op: 'write',
      dir: SERVER,
      stag: s.handle,
      to: s.offset + BigInt(off),
      length,
      delayUs,
      ...(data ? { data: data.subarray(0, length) } : {}),
    });
  }

  readRequest(s: Seg, off: number, size: number, delayUs: number = T.next): number {
    const sinkStag = this.sink++;
    return this.push({
      op: 'read-request',
      dir: SERVER,
      sinkStag,
      sinkTo: 0xffff8f2200000000n + BigInt(sinkStag & 0xff) * 0x100000n,
      size,
      srcStag: s.handle,
      srcTo: s.offset + BigInt(off),
      delayUs,
    });
  }

  readResponse(request: number, delayUs: number = T.next): number {
    return this.push({ op: 'read-response', dir: CLIENT, request, delayUs });
  }

  /** An RDMA_MSG Call of NFSv3 `proc` with `args`, offering the chunks given. */
  nfs3Call(
    xid: number,
    proc: number,
    args: Uint8Array,
    chunks: { reads?: ReadSeg[]; writes?: Seg[][]; reply?: Seg[] | null } = {},
    header: Partial<HeaderSpec> = {},
  ): Uint8Array {
    return cat(
      rdmaHeader({ xid, proc: RDMA_MSG, credit: 128, ...chunks, ...header }),
      rpcCall({ xid, prog: NFS_PROGRAM, vers: 3, proc, args }),
    );
  }

  /** An RDMA_MSG Reply carrying `results` inline, returning the chunks given. */
  replyMsg(
    xid: number,
    results: Uint8Array,
    chunks: { writes?: Seg[][]; reply?: Seg[] | null } = {},
    header: Partial<HeaderSpec> = {},
  ): Uint8Array {
    return cat(
      rdmaHeader({ xid, proc: RDMA_MSG, credit: this.o.grant ?? 128, ...chunks, ...header }),
      rpcReply({ xid, results }),
    );
  }

  /** Notes a Call of NFSv3 procedure `proc` (RFC 1813 name) or, with `v4`, an NFSv4 COMPOUND by its main operation. */
  private scheduled(proc: number | string, call: number, data: number[], reply: number | null): void {
    const v4 = typeof proc === 'string';
    const command = v4 ? proc : (Object.keys(NFS3).find((k) => NFS3[k as keyof typeof NFS3] === proc) ?? `${proc}`);
    this.requests.push({ program: v4 ? 'NFSv4' : 'NFSv3', command, request: call, data, response: reply });
  }

  /** A Call answered inline on both sides (no chunks). */
  simple(
    proc: number,
    args: Uint8Array,
    results: Uint8Array,
    serviceUs: number = T.serve,
  ): { call: number; reply: number; xid: number } {
    const xid = this.nextXid();
    const call = this.call(this.nfs3Call(xid, proc, args));
    const reply = this.reply(this.replyMsg(xid, results), null, serviceUs);
    this.scheduled(proc, call, [], reply);
    return { call, reply, xid };
  }

  /** The invalidation a Reply carries by default: the Call's one handle when the client offered it (RFC 8797). */
  private inv(handle: number, o: ServeOpts): number | null {
    if (o.invalidate === 'own') return handle;
    return o.invalidate !== undefined ? o.invalidate : this.remoteInvalidate ? handle : null;
  }

  /**
   * NFSv3 READ of `count` octets into a write chunk of the segments given (default one): the
   * server's RDMA Writes fill it, then the Reply returns the write list with the lengths written
   * (RFC 8166 §4.3.2) and the READ3resok head inline.
   */
  read(
    count: number,
    o: ServeOpts & { segments?: number[] } = {},
  ): { call: number; writes: number[]; reply: number; xid: number; chunk: Seg[] } {
    const xid = this.nextXid();
    const chunk = (o.segments ?? [count]).map((n) => this.segment(n));
    const call = this.call(this.nfs3Call(xid, NFS3.READ, nfs3ReadArgs(1n << 20n, count), { writes: [chunk] }));
    const plan = o.writes ?? chunk.map((s, i): [number, number, number] => [i, 0, s.length]);
    const written = chunk.map(() => 0);
    const writes = plan.map(([si, off, n], i) => {
      written[si]! += n;
      return this.write(chunk[si]!, off, n, i === 0 ? T.serve : T.next);
    });
    const lens = o.reported ?? written;
    const returned = chunk.map((s, i) => ({
      ...s,
      length: lens[i] ?? 0,
      ...(i === 0 && o.returnedHandle !== undefined ? { handle: o.returnedHandle } : {}),
    }));
    const total = lens.reduce((a, b) => a + b, 0);
    const reply = this.reply(
      this.replyMsg(xid, nfs3ReadResults(total), { writes: [returned] }, o.header),
      chunk.length === 1 || o.invalidate !== undefined ? this.inv(chunk[0]!.handle, o) : null,
    );
    this.scheduled(NFS3.READ, call, writes, reply);
    return { call, writes, reply, xid, chunk };
  }

  /**
   * NFSv3 WRITE of `count` octets whose data is in a read chunk at its XDR position (RFC 8166
   * §3.4.5, RFC 8267 §4.1): the server's RDMA Read Requests pull it, the client answers each,
   * then the Reply carries WRITE3resok inline.
   */
  writeOp(
    count: number,
    o: ServeOpts & { reads?: Array<[number, number]> } = {},
  ): { call: number; reads: number[]; reply: number; xid: number; chunk: Seg } {
    const xid = this.nextXid();
    const s = this.segment(count);
    const rpc = rpcCall({
      xid,
      prog: NFS_PROGRAM,
      vers: 3,
      proc: NFS3.WRITE,
      args: nfs3WriteArgs(1n << 20n, count, false),
    });
    const position = rpc.length;
    const call = this.call(cat(rdmaHeader({ xid, proc: RDMA_MSG, credit: 128, reads: [{ position, ...s }] }), rpc));
    const half = count >> 1;
    const plan = o.reads ?? [
      [0, half],
      [half, count - half],
    ];
    const reads = plan.map(([off, n], i) => this.readRequest(s, off, n, i === 0 ? T.serve : T.next));
    const responses = reads.map((rr, i) => this.readResponse(rr, i === 0 ? 8 : T.next));
    const res = new Enc().u32(0).u32(0).u32(0).u32(count).u32(2).raw(patternBytes(8, 21)).bytes();
    const reply = this.reply(this.replyMsg(xid, res, {}, o.header), this.inv(s.handle, o));
    this.scheduled(NFS3.WRITE, call, [...reads, ...responses], reply);
    return { call, reads, reply, xid, chunk: s };
  }

  /**
   * NFSv3 READDIRPLUS offering a reply chunk: the server writes its whole RPC Reply there and
   * answers RDMA_NOMSG returning the reply chunk with the length written (RFC 8166 §3.5.3, §4.2.4).
   */
  readdirplus(
    replyLen: number,
    o: ServeOpts & { chunk?: number } = {},
  ): { call: number; writes: number[]; reply: number; xid: number; chunk: Seg } {
    const xid = this.nextXid();
    const s = this.segment(o.chunk ?? 8192);
    const args = new Enc().opaque(FH).u64(0n).raw(new Uint8Array(8)).u32(4096).u32(8192).bytes();
    const call = this.call(this.nfs3Call(xid, NFS3.READDIRPLUS, args, { reply: [s] }));
    const plan = o.writes ?? [[0, 0, replyLen]];
    // The whole RPC Reply (READDIRPLUS3resok, entries elided as octets) goes into the reply chunk.
    const whole = new Uint8Array(Math.max(replyLen, ...plan.map((p) => p[1] + p[2])));
    whole.set(patternBytes(whole.length, xid));
    whole.set(
      rpcReply({ xid, results: new Enc().u32(0).u32(0).raw(new Uint8Array(8)).u32(1).bytes() }).subarray(
        0,
        whole.length,
      ),
    );
    const writes = plan.map(([, off, n], i) =>
      this.write(s, off, n, i === 0 ? T.serve : T.next, whole.subarray(off, off + n)),
    );
    const written = plan.reduce((a, p) => a + p[2], 0);
    const returned = [{ ...s, length: o.reported?.[0] ?? written }];
    const payload =
      o.nomsg === false
        ? this.replyMsg(xid, new Enc().u32(0).bytes(), { reply: returned }, o.header)
        : rdmaHeader({ xid, proc: RDMA_NOMSG, credit: this.o.grant ?? 128, reply: returned, ...o.header });
    const reply = this.reply(payload, this.inv(s.handle, o));
    this.scheduled(NFS3.READDIRPLUS, call, writes, reply);
    return { call, writes, reply, xid, chunk: s };
  }

  /** NFSv4.1 COMPOUND { SEQUENCE, PUTFH, READ } with a write chunk, served like the NFSv3 READ. */
  v4read(count: number, o: ServeOpts = {}): { call: number; reply: number; xid: number } {
    const xid = this.nextXid();
    const s = this.segment(count);
    const call = this.call(
      cat(
        rdmaHeader({ xid, proc: RDMA_MSG, credit: 128, writes: [[s]] }),
        rpcCall({
          xid,
          prog: NFS_PROGRAM,
          vers: 4,
          proc: 1,
          args: compound('', 1, [op.sequence(), op.putfh(), op.read(0n, count)]),
        }),
      ),
    );
    const write = this.write(s, 0, count, T.serve);
    const sessionId = new Uint8Array(16);
    const res = cat(
      new Enc().u32(0).string('').u32(3).bytes(),
      new Enc().u32(53).u32(0).raw(sessionId).u32(1).u32(0).u32(63).u32(63).u32(0).bytes(),
      new Enc().u32(22).u32(0).bytes(),
      new Enc().u32(25).u32(0).u32(1).u32(count).bytes(),
    );
    const reply = this.reply(this.replyMsg(xid, res, { writes: [[s]] }, o.header), this.inv(s.handle, o));
    this.scheduled('READ', call, [write], reply);
    return { call, reply, xid };
  }
}

/** RFC 8797 private data as the Linux client sends it: Remote Invalidation offered, 4 KiB inline both ways. */
export const CLIENT_PD = cmPrivateData({ remoteInvalidate: true, send: 4096, recv: 4096 });
/** The server's: 4 KiB inline both ways. */
export const SERVER_PD = cmPrivateData({ remoteInvalidate: false, send: 4096, recv: 4096 });

/** fattr3 (RFC 1813 §2.6): a regular file of `size` octets. */
export function fattr3(size: bigint, fileid: bigint): Uint8Array {
  return new Enc()
    .u32(1) // NF3REG
    .u32(0o644)
    .u32(1)
    .u32(1000)
    .u32(1000)
    .u64(size)
    .u64((size + 4095n) & ~4095n)
    .u32(0)
    .u32(0)
    .u64(0x2a2an)
    .u64(fileid)
    .u32(1_700_000_000)
    .u32(0)
    .u32(1_700_000_000)
    .u32(0)
    .u32(1_700_000_000)
    .u32(0)
    .bytes();
}

/** NFSv3 arguments and results the clean exchange uses. */
export const nfs3 = {
  getattrArgs: (): Uint8Array => new Enc().opaque(FH).bytes(),
  getattrRes: (): Uint8Array => cat(new Enc().u32(0).bytes(), fattr3(1n << 30n, 2n)),
  lookupArgs: (name: string): Uint8Array => new Enc().opaque(FH).string(name).bytes(),
  lookupRes: (): Uint8Array =>
    cat(new Enc().u32(0).opaque(patternBytes(28, 31)).u32(1).bytes(), fattr3(1n << 30n, 77n), new Enc().u32(0).bytes()),
  commitArgs: (count: number): Uint8Array =>
    new Enc()
      .opaque(FH)
      .u64(1n << 20n)
      .u32(count)
      .bytes(),
  commitRes: (): Uint8Array => new Enc().u32(0).u32(0).u32(0).raw(patternBytes(8, 21)).bytes(),
};

export type { Seg };
