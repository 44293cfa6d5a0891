/**
 * The XDR encoder of the scenario generator and the tests, written from the layouts of the
 * specifications (never from the decoder): RFC 4506 (XDR), RFC 8166 §4.2-§4.5 (RPC-over-RDMA header, as its XDR code component),
 * RFC 5531 §9 (RPC), RFC 1813 (NFSv3 READ/WRITE arguments), RFC 8881 §16.2, §18 (COMPOUND and a
 * few operations), RFC 8797 §4 (private data).
 */

export class Enc {
  private readonly parts: number[] = [];
  u32(v: number): this {
    this.parts.push((v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff);
    return this;
  }
  u64(v: bigint): this {
    return this.u32(Number((v >> 32n) & 0xffffffffn)).u32(Number(v & 0xffffffffn));
  }
  raw(b: Uint8Array): this {
    for (const x of b) this.parts.push(x);
    return this;
  }
  /** Variable-length opaque: length, data, zero pad to 4. */
  opaque(b: Uint8Array): this {
    this.u32(b.length).raw(b);
    for (let i = b.length; i % 4 !== 0; i++) this.parts.push(0);
    return this;
  }
  string(s: string): this {
    return this.opaque(new TextEncoder().encode(s));
  }
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

export const cat = (...bs: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(bs.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bs) {
    out.set(b, at);
    at += b.length;
  }
  return out;
};

// --- RPC-over-RDMA version 1 (RFC 8166) ---

export interface Seg {
  handle: number;
  length: number;
  offset: bigint;
}

export interface ReadSeg extends Seg {
  position: number;
}

export const RDMA_MSG = 0;
export const RDMA_NOMSG = 1;
export const RDMA_MSGP = 2;
export const RDMA_DONE = 3;
export const RDMA_ERROR = 4;

export interface HeaderSpec {
  xid: number;
  vers?: number;
  credit?: number;
  proc: number;
  reads?: ReadSeg[];
  writes?: Seg[][];
  reply?: Seg[] | null;
  align?: number;
  thresh?: number;
  errcode?: number;
  range?: [number, number];
}

const segment = (e: Enc, s: Seg): Enc => e.u32(s.handle).u32(s.length).u64(s.offset);

/** struct rdma_msg: xid, vers, credit, then the rdma_body union by proc. */
export function rdmaHeader(h: HeaderSpec): Uint8Array {
  const e = new Enc()
    .u32(h.xid)
    .u32(h.vers ?? 1)
    .u32(h.credit ?? 32)
    .u32(h.proc);
  if (h.proc === RDMA_ERROR) {
    e.u32(h.errcode ?? 2);
    if ((h.errcode ?? 2) === 1) e.u32(h.range?.[0] ?? 1).u32(h.range?.[1] ?? 1);
    return e.bytes();
  }
  if (h.proc === RDMA_DONE) return e.bytes();
  if (h.proc === RDMA_MSGP) e.u32(h.align ?? 0).u32(h.thresh ?? 0);
  // xdr_read_list: optional-data linked list (1, entry)* 0
  for (const r of h.reads ?? []) segment(e.u32(1).u32(r.position), r);
  e.u32(0);
  // xdr_write_list: (1, count, segments)* 0
  for (const w of h.writes ?? []) {
    e.u32(1).u32(w.length);
    for (const s of w) segment(e, s);
  }
  e.u32(0);
  // optional xdr_write_chunk
  if (h.reply) {
    e.u32(1).u32(h.reply.length);
    for (const s of h.reply) segment(e, s);
  } else e.u32(0);
  return e.bytes();
}

// --- ONC RPC (RFC 5531 §9) ---

export interface Auth {
  flavor: number;
  body: Uint8Array;
}
const AUTH_NONE: Auth = { flavor: 0, body: new Uint8Array(0) };
/** AUTH_SYS body (RFC 5531 Appendix A): stamp, machinename, uid, gid, gids<16>. */
export function authSys(machine = 'client', uid = 0, gid = 0): Auth {
  return { flavor: 1, body: new Enc().u32(0x1234).string(machine).u32(uid).u32(gid).u32(0).bytes() };
}

export function rpcCall(o: {
  xid: number;
  prog: number;
  vers: number;
  proc: number;
  cred?: Auth;
  verf?: Auth;
  args?: Uint8Array;
  rpcvers?: number;
}): Uint8Array {
  const c = o.cred ?? authSys();
  const v = o.verf ?? AUTH_NONE;
  return new Enc()
    .u32(o.xid)
    .u32(0)
    .u32(o.rpcvers ?? 2)
    .u32(o.prog)
    .u32(o.vers)
    .u32(o.proc)
    .u32(c.flavor)
    .opaque(c.body)
    .u32(v.flavor)
    .opaque(v.body)
    .raw(o.args ?? new Uint8Array(0))
    .bytes();
}

/** MSG_ACCEPTED with accept_stat (default SUCCESS) then results; or MSG_DENIED with reject_stat. */
export function rpcReply(o: { xid: number; accept?: number; denied?: number; results?: Uint8Array }): Uint8Array {
  const e = new Enc().u32(o.xid).u32(1);
  if (o.denied !== undefined) {
    e.u32(1).u32(o.denied);
    if (o.denied === 0) e.u32(2).u32(2);
    else e.u32(1); // AUTH_BADCRED
    return e.bytes();
  }
  e.u32(0)
    .u32(0)
    .opaque(new Uint8Array(0))
    .u32(o.accept ?? 0);
  if ((o.accept ?? 0) === 2) e.u32(3).u32(3);
  return e.raw(o.results ?? new Uint8Array(0)).bytes();
}

// --- NFSv3 (RFC 1813) ---

export const FH = Uint8Array.from({ length: 32 }, (_, i) => i + 1);

/** READ3args: nfs_fh3, offset3, count3. */
export const nfs3ReadArgs = (offset: bigint, count: number): Uint8Array =>
  new Enc().opaque(FH).u64(offset).u32(count).bytes();

/**
 * WRITE3args: file, offset, count, stable, data<>. With `inline` false the data is in a read
 * chunk: only its length word stays inline (the reduced message, RFC 8166 §3.4.5).
 */
export function nfs3WriteArgs(offset: bigint, count: number, inline: boolean): Uint8Array {
  const e = new Enc().opaque(FH).u64(offset).u32(count).u32(2);
  return inline ? e.opaque(new Uint8Array(count)).bytes() : e.u32(count).bytes();
}

/** READ3resok head: status, post_op_attr (absent), count, eof, data length (data in the write chunk). */
export const nfs3ReadResults = (count: number): Uint8Array =>
  new Enc().u32(0).u32(0).u32(count).u32(1).u32(count).bytes();

// --- NFSv4.1 COMPOUND (RFC 8881 §16.2, §18) ---

export const op = {
  sequence: (): Uint8Array => new Enc().u32(53).raw(new Uint8Array(16)).u32(1).u32(0).u32(0).u32(0).bytes(),
  putfh: (): Uint8Array => new Enc().u32(22).opaque(FH).bytes(),
  putrootfh: (): Uint8Array => new Enc().u32(24).bytes(),
  read: (offset: bigint, count: number): Uint8Array =>
    new Enc().u32(25).raw(new Uint8Array(16)).u64(offset).u32(count).bytes(),
  getattr: (): Uint8Array => new Enc().u32(9).u32(2).u32(0x10).u32(0x20).bytes(),
  /** WRITE4args: stateid, offset, stable, data<>; data in a read chunk when not inline. */
  write: (offset: bigint, len: number, inline: boolean): Uint8Array => {
    const e = new Enc().u32(38).raw(new Uint8Array(16)).u64(offset).u32(2);
    return inline ? e.opaque(new Uint8Array(len)).bytes() : e.u32(len).bytes();
  },
  /** OPEN: arguments this decoder does not walk (the list must stop there). */
  open: (): Uint8Array => new Enc().u32(18).u32(0).u32(1).u32(0).bytes(),
};

export function compound(tag: string, minor: number, ops: Uint8Array[]): Uint8Array {
  return cat(new Enc().string(tag).u32(minor).u32(ops.length).bytes(), ...ops);
}

// --- RFC 8797 private data ---

/** Format identifier, version, flags (bit 0 Remote Invalidation), send and receive size as (size >> 10) - 1. */
export function cmPrivateData(o: {
  remoteInvalidate?: boolean;
  send?: number;
  recv?: number;
  version?: number;
}): Uint8Array {
  const enc = (n: number): number => (n >> 10) - 1;
  return Uint8Array.from([
    0xf6,
    0xab,
    0x0e,
    0x18,
    o.version ?? 1,
    o.remoteInvalidate ? 1 : 0,
    enc(o.send ?? 4096),
    enc(o.recv ?? 4096),
  ]);
}
