/**
 * NFS arguments and results, first words only: the NFSv3 procedure (RFC 1813), the NFSv4 COMPOUND
 * header and its operation list (RFC 7530 §16.2, RFC 8881 §16.2), the reply status.
 *
 * The opcodes of a COMPOUND follow each other with nothing but the operations' arguments between
 * them, so listing them means skipping each argument. Arguments of fixed or simply counted layout
 * are skipped here (the layouts of RFC 8881 §18 and RFC 7862 §15); the walk stops at the first
 * operation whose arguments it does not know (OPEN, CREATE, LOCK, EXCHANGE_ID, ...), so the list
 * may end early, marked incomplete. The first operation is always named.
 */
import { PROG } from './names.js';
import { pad4, Xdr } from './xdr.js';

/** Operations listed per COMPOUND; a COMPOUND claiming more is hostile or cut short. */
export const MAX_OPS_LISTED = 64;

export interface NfsCall {
  readonly version: number;
  readonly proc: number;
  /** NFSv4 COMPOUND only. */
  readonly tag: string | null;
  readonly minor: number | null;
  readonly opsCount: number | null;
  /** Opcodes walked, in order. */
  readonly ops: readonly number[];
  /** True when every operation of the COMPOUND was listed. */
  readonly opsComplete: boolean;
}

type Skip = (x: Xdr, data: (x: Xdr) => boolean) => boolean;

const fixed =
  (n: number): Skip =>
  (x) =>
    x.skip(n);
const STATEID = 16;
const SESSIONID = 16;
const bitmap: Skip = (x) => {
  const n = x.u32();
  return n !== null && x.skip(n * 4);
};
const opaque: Skip = (x) => x.opaque() !== null;
const fattr: Skip = (x, d) => bitmap(x, d) && opaque(x, d);
const seq =
  (...parts: Skip[]): Skip =>
  (x, d) =>
    parts.every((p) => p(x, d));

/** Argument layouts by opcode (RFC 8881 §18, RFC 7862 §15, RFC 8276 §8). */
const ARGS: Readonly<Record<number, Skip>> = {
  3: fixed(4), // ACCESS
  4: fixed(4 + STATEID), // CLOSE
  5: fixed(12), // COMMIT
  7: fixed(8), // DELEGPURGE
  8: fixed(STATEID), // DELEGRETURN
  9: bitmap, // GETATTR
  10: fixed(0), // GETFH
  11: opaque, // LINK
  13: seq(fixed(4 + 8 + 8 + 8), opaque), // LOCKT: type, offset, length, owner(clientid, opaque)
  14: fixed(4 + 4 + STATEID + 8 + 8), // LOCKU
  15: opaque, // LOOKUP
  16: fixed(0), // LOOKUPP
  17: fattr, // NVERIFY
  19: fixed(4), // OPENATTR
  20: fixed(STATEID + 4), // OPEN_CONFIRM
  21: fixed(STATEID + 12), // OPEN_DOWNGRADE
  22: opaque, // PUTFH
  23: fixed(0), // PUTPUBFH
  24: fixed(0), // PUTROOTFH
  25: fixed(STATEID + 8 + 4), // READ
  26: seq(fixed(8 + 8 + 4 + 4), bitmap), // READDIR
  27: fixed(0), // READLINK
  28: opaque, // REMOVE
  29: seq(opaque, opaque), // RENAME
  30: fixed(8), // RENEW
  31: fixed(0), // RESTOREFH
  32: fixed(0), // SAVEFH
  33: opaque, // SECINFO
  34: seq(fixed(STATEID), fattr), // SETATTR
  36: fixed(16), // SETCLIENTID_CONFIRM
  37: fattr, // VERIFY
  38: (x, d) => x.skip(STATEID + 8 + 4) && d(x), // WRITE: data may be in a read chunk
  39: seq(fixed(8), opaque), // RELEASE_LOCKOWNER
  41: fixed(SESSIONID + 8), // BIND_CONN_TO_SESSION
  44: fixed(SESSIONID), // DESTROY_SESSION
  45: fixed(STATEID), // FREE_STATEID
  47: seq(fixed(16 + 4 + 4), bitmap), // GETDEVINFO
  50: fixed(4 + 4 + 4 + 8 + 8 + 8 + STATEID + 4), // LAYOUTGET
  51: (x) => {
    // LAYOUTRETURN: reclaim, type, iomode, layoutreturn4 (type 1 = FILE carries a range)
    if (!x.skip(12)) return false;
    const t = x.u32();
    return t !== null && (t !== 1 || (x.skip(8 + 8 + STATEID) && x.opaque() !== null));
  },
  52: fixed(4), // SECINFO_NO_NAME
  53: fixed(SESSIONID + 16), // SEQUENCE: sessionid, sequenceid, slotid, highest_slotid, cachethis
  55: (x) => {
    const n = x.u32(); // TEST_STATEID
    return n !== null && x.skip(n * STATEID);
  },
  57: fixed(8), // DESTROY_CLIENTID
  58: fixed(4), // RECLAIM_COMPLETE
  59: fixed(STATEID + 16), // ALLOCATE
  62: fixed(STATEID + 16), // DEALLOCATE
  68: fixed(STATEID + 8 + 4), // READ_PLUS
  69: fixed(STATEID + 8 + 4), // SEEK
  71: fixed(2 * STATEID + 24), // CLONE
  72: opaque, // GETXATTR
  74: fixed(12), // LISTXATTRS
  75: opaque, // REMOVEXATTR
};

/**
 * The NFS arguments at `at` (RPC message at `rpcStart`). `chunks` maps the read chunk positions
 * of the Call (offsets in the unreduced XDR stream) to the chunk lengths.
 */
export function nfsCall(
  b: Uint8Array,
  at: number,
  total: number,
  rpcStart: number,
  version: number,
  proc: number,
  chunks: ReadonlyMap<number, number>,
): NfsCall {
  if (version !== 4 || proc !== 1)
    return { version, proc, tag: null, minor: null, opsCount: null, ops: [], opsComplete: true };
  const x = new Xdr(b, at, total);
  // Octets of read chunk data passed so far: they are in the unreduced stream, not in `b`.
  let reduced = 0;
  const data = (r: Xdr): boolean => {
    const n = r.u32();
    if (n === null) return false;
    const position = r.pos - rpcStart + reduced;
    if (chunks.has(position)) {
      reduced += pad4(n);
      return true;
    }
    return r.skip(pad4(n));
  };
  const tag = x.text();
  const minor = x.u32();
  const opsCount = x.u32();
  const ops: number[] = [];
  if (tag === null || minor === null || opsCount === null) {
    return { version, proc, tag, minor, opsCount, ops, opsComplete: false };
  }
  let complete = true;
  for (let i = 0; i < opsCount; i++) {
    if (ops.length >= MAX_OPS_LISTED) {
      complete = false;
      break;
    }
    const op = x.u32();
    if (op === null) {
      complete = false;
      break;
    }
    ops.push(op);
    const skip = ARGS[op];
    if (i + 1 < opsCount && !skip?.(x, data)) {
      complete = false;
      break;
    }
  }
  return { version, proc, tag, minor, opsCount, ops, opsComplete: complete };
}

/**
 * Operations that set up the real work of a COMPOUND (session, current filehandle, attributes).
 * Like Wireshark's operation tiers (nfs.main_opcode), the main operation is the first one not in
 * this set: for NFSv4.1 every COMPOUND starts with SEQUENCE, which says nothing.
 */
const SETUP_OPS: ReadonlySet<number> = new Set([53, 22, 23, 24, 31, 32, 9, 10]);

export function mainOp(ops: readonly number[]): number | null {
  return ops.find((o) => !SETUP_OPS.has(o)) ?? ops[0] ?? null;
}

/** The NFS status word of a reply's results (nfsstat3, or the COMPOUND's nfsstat4), or null. */
export function nfsStatus(
  b: Uint8Array,
  at: number,
  prog: number | null,
  version: number | null,
  proc: number | null,
): number | null {
  // NULL (procedure 0) has void results in every version.
  if (prog !== PROG.NFS || (version !== 3 && version !== 4) || !proc) return null;
  return new Xdr(b, at).u32();
}
