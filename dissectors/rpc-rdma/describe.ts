/**
 * How a Call is named in Info texts, findings and service response time statistics: program and
 * version ("NFSv3"), procedure ("READ"), and for an NFSv4 COMPOUND its operations
 * ("NFSv4 COMPOUND (SEQUENCE, PUTFH, READ)") with the main operation as the command.
 */
import { ACCEPT_STAT_TAGS, NFS3_PROC_NAMES, NFS4_OP_NAMES, nameOf, PROG, REJECT_STAT_NAMES } from './names.js';
import { mainOp } from './nfs.js';
import { programLabel, type RpcCall, type RpcReply } from './rpc.js';

export interface CallLabel {
  /** Statistics group: "NFSv3", "NFSv4", "MOUNTv3", "RPC". */
  readonly program: string;
  /** Procedure, or the COMPOUND's main operation. */
  readonly command: string;
  /** Info text of the Call: "NFSv3 READ", "NFSv4 COMPOUND (SEQUENCE, PUTFH, READ)". */
  readonly label: string;
  readonly prog: number | null;
  readonly progVers: number | null;
  readonly proc: number | null;
  /** The procedure number, or the COMPOUND's main operation number (tshark's SRT Index). */
  readonly code: number;
}

/** MOUNT v3 procedures (RFC 1813 Appendix I). */
const MOUNT3_PROC_NAMES: Readonly<Record<number, string>> = {
  0: 'NULL',
  1: 'MNT',
  2: 'DUMP',
  3: 'UMNT',
  4: 'UMNTALL',
  5: 'EXPORT',
};

export function describeCall(c: RpcCall | null): CallLabel {
  if (!c) return { program: 'RPC', command: 'unknown', label: 'RPC', prog: null, progVers: null, proc: null, code: 0 };
  const program = programLabel(c.prog, c.vers);
  const proc = c.proc ?? -1;
  let command = `proc ${proc}`;
  let label: string | null = null;
  let code = Math.max(0, proc);
  if (c.prog === PROG.NFS && c.vers === 3) command = nameOf(NFS3_PROC_NAMES, proc);
  else if (c.prog === PROG.MOUNT && c.vers === 3) command = nameOf(MOUNT3_PROC_NAMES, proc);
  else if (c.prog === PROG.NFS && c.vers === 4) {
    command = proc === 0 ? 'NULL' : proc === 1 ? 'COMPOUND' : `proc ${proc}`;
    const n = c.nfs;
    if (proc === 1 && n && n.ops.length) {
      const names = n.ops.map((o) => nameOf(NFS4_OP_NAMES, o));
      label = `${program} COMPOUND (${names.join(', ')}${n.opsComplete ? '' : ', …'})`;
      code = mainOp(n.ops)!;
      command = nameOf(NFS4_OP_NAMES, code);
    }
  }
  // Built field by field: object spread is slow on hot paths (one call per RPC).
  return {
    program,
    command,
    label: label ?? `${program} ${command}`,
    prog: c.prog,
    progVers: c.vers,
    proc: c.proc,
    code,
  };
}

/** The Reply's outcome as Info shows it: ACCEPT_OK, GARBAGE_ARGS, MSG_DENIED AUTH_ERROR. */
export function replyStatus(r: RpcReply): string {
  if (r.replyStat === 1)
    return `MSG_DENIED ${r.rejectStat === null ? '' : nameOf(REJECT_STAT_NAMES, r.rejectStat)}`.trim();
  if (r.acceptStat === null) return 'MSG_ACCEPTED';
  return nameOf(ACCEPT_STAT_TAGS, r.acceptStat, 'accept_stat');
}
