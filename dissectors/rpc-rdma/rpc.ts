/**
 * ONC RPC message headers (RFC 5531 §9) inside an RPC-over-RDMA RDMA_MSG: the Call header up to
 * its arguments (credential and verifier skipped by their lengths), the Reply header up to its
 * results. Pure and bounded; a cut capture yields what was present.
 */
import { nfsCall, type NfsCall } from './nfs.js';
import { PROG } from './names.js';
import { Xdr } from './xdr.js';

/** RFC 5531 §8.2: opaque_auth bodies are at most 400 octets. */
const MAX_AUTH_BODY = 400;

export interface OpaqueAuth {
  readonly flavor: number;
  readonly length: number;
  readonly at: number;
}

export interface RpcCall {
  readonly kind: 'call';
  readonly xid: number;
  readonly rpcvers: number | null;
  readonly prog: number | null;
  readonly vers: number | null;
  readonly proc: number | null;
  readonly cred: OpaqueAuth | null;
  readonly verf: OpaqueAuth | null;
  /** Offset of the procedure arguments, null when not reached. */
  readonly argsAt: number | null;
  readonly nfs: NfsCall | null;
}

export interface RpcReply {
  readonly kind: 'reply';
  readonly xid: number;
  readonly replyStat: number | null;
  readonly acceptStat: number | null;
  readonly rejectStat: number | null;
  /** PROG_MISMATCH or RPC_MISMATCH version range. */
  readonly low: number | null;
  readonly high: number | null;
  readonly verf: OpaqueAuth | null;
  /** Offset of the procedure results (accepted, SUCCESS), null otherwise. */
  readonly resultsAt: number | null;
}

export interface RpcDecode {
  readonly msg: RpcCall | RpcReply | null;
  /** What is wrong with the header as sent, or null. */
  readonly malformed: string | null;
  /** The capture ended inside the header. */
  readonly cut: boolean;
}

function auth(x: Xdr): { a: OpaqueAuth | null; bad: string | null } {
  const at = x.pos;
  const flavor = x.u32();
  const length = x.u32();
  if (flavor === null || length === null) return { a: null, bad: null };
  if (length > MAX_AUTH_BODY) {
    return { a: { flavor, length, at }, bad: `opaque_auth body of ${length} octets (at most ${MAX_AUTH_BODY})` };
  }
  x.skip(length + ((4 - (length % 4)) % 4));
  return { a: x.failed ? null : { flavor, length, at }, bad: null };
}

/**
 * Decodes the RPC message at `at` of `b` (captured octets; `total` = the Send's length). `chunks`
 * maps read chunk positions to their lengths, for walking reduced NFSv4 arguments: read chunk
 * data is not inline, so an opaque whose data starts at a chunk's position has only its length
 * word inline (RFC 8166 §3.4.5, the "reduced" message; positions count the unreduced stream).
 */
export function decodeRpc(
  b: Uint8Array,
  at: number,
  total: number = b.length,
  chunks: ReadonlyMap<number, number> = new Map(),
): RpcDecode {
  const x = new Xdr(b, at, total);
  const xid = x.u32();
  const mtype = x.u32();
  if (xid === null || mtype === null)
    return { msg: null, malformed: x.overrun ? 'RPC header truncated' : null, cut: x.cut };
  if (mtype === 0) {
    const rpcvers = x.u32();
    const prog = x.u32();
    const vers = x.u32();
    const proc = x.u32();
    let bad: string | null = rpcvers !== null && rpcvers !== 2 ? `RPC version ${rpcvers} (RFC 5531: 2)` : null;
    const c = bad ? { a: null, bad: null } : auth(x);
    const v = bad || c.bad ? { a: null, bad: null } : auth(x);
    bad ??= c.bad ?? v.bad;
    const argsAt = !bad && v.a ? x.pos : null;
    const call: RpcCall = {
      kind: 'call',
      xid,
      rpcvers,
      prog,
      vers,
      proc,
      cred: c.a,
      verf: v.a,
      argsAt,
      nfs:
        argsAt !== null && prog === PROG.NFS && vers !== null && proc !== null
          ? nfsCall(b, argsAt, total, at, vers, proc, chunks)
          : null,
    };
    if (x.overrun && !bad) bad = 'RPC Call header runs past the end of the message';
    return { msg: call, malformed: bad, cut: x.cut };
  }
  if (mtype === 1) {
    const replyStat = x.u32();
    let acceptStat: number | null = null;
    let rejectStat: number | null = null;
    let low: number | null = null;
    let high: number | null = null;
    let verf: OpaqueAuth | null = null;
    let resultsAt: number | null = null;
    let bad: string | null = null;
    if (replyStat === 0) {
      const v = auth(x);
      verf = v.a;
      bad = v.bad;
      if (!bad) acceptStat = x.u32();
      if (acceptStat === 2) {
        low = x.u32();
        high = x.u32();
      } else if (acceptStat === 0) resultsAt = x.pos;
    } else if (replyStat === 1) {
      rejectStat = x.u32();
      if (rejectStat === 0) {
        low = x.u32();
        high = x.u32();
      }
    } else if (replyStat !== null) bad = `reply_stat ${replyStat} (RFC 5531: 0 or 1)`;
    if (x.overrun && !bad) bad = 'RPC Reply header runs past the end of the message';
    return {
      msg: { kind: 'reply', xid, replyStat, acceptStat, rejectStat, low, high, verf, resultsAt },
      malformed: bad,
      cut: x.cut,
    };
  }
  return { msg: null, malformed: `msg_type ${mtype} (RFC 5531: 0 = CALL, 1 = REPLY)`, cut: false };
}

/** How an RPC program is named in statistics and Info: "NFSv3", "MOUNTv3", "RPC 100099v1". */
export function programLabel(prog: number | null, vers: number | null): string {
  const v = vers === null ? '' : `v${vers}`;
  switch (prog) {
    case PROG.NFS:
      return `NFS${v}`;
    case PROG.MOUNT:
      return `MOUNT${v}`;
    case PROG.NLM:
      return `NLM${v}`;
    case PROG.NFS_ACL:
      return `NFS_ACL${v}`;
    case null:
      return 'RPC';
    default:
      return `RPC ${prog}${v}`;
  }
}
