/**
 * Value names of RPC-over-RDMA version 1 (RFC 8166 §4.2.4, §4.5), ONC RPC (RFC 5531 §9) and NFS
 * (RFC 1813 NFSv3 procedures, RFC 7530/8881/7862/8276 NFSv4 operations). Spelled as Wireshark's
 * value strings (`tshark -G values`: rpcordma.msg_type, rpcordma.errcode, rpc.*, nfs.procedure_v3,
 * nfs.opcode) so Info texts and trees read as tshark's.
 */

/** rdma_proc (RFC 8166 §4.2.4). MSGP and DONE are "Not to be used". */
export const PROC = { MSG: 0, NOMSG: 1, MSGP: 2, DONE: 3, ERROR: 4 } as const;

export const PROC_NAMES: Readonly<Record<number, string>> = {
  0: 'RDMA_MSG',
  1: 'RDMA_NOMSG',
  2: 'RDMA_MSGP',
  3: 'RDMA_DONE',
  4: 'RDMA_ERROR',
};

/** rpc_rdma_errcode (RFC 8166 §4.5). */
export const ERR = { VERS: 1, CHUNK: 2 } as const;

export const ERRCODE_NAMES: Readonly<Record<number, string>> = { 1: 'ERR_VERS', 2: 'ERR_CHUNK' };

/** msg_type (RFC 5531 §9). */
export const RPC_MSG_NAMES: Readonly<Record<number, string>> = { 0: 'Call', 1: 'Reply' };

/** reply_stat (RFC 5531 §9). */
export const REPLY_STAT_NAMES: Readonly<Record<number, string>> = { 0: 'accepted', 1: 'denied' };

/** accept_stat with Wireshark's wording (rpc.state_accept). */
export const ACCEPT_STAT_NAMES: Readonly<Record<number, string>> = {
  0: 'RPC executed successfully',
  1: "remote hasn't exported program",
  2: "remote can't support version #",
  3: "program can't support procedure",
  4: "procedure can't decode params",
  5: 'system errors like memory allocation failure',
};

/** accept_stat as the short tags of Info texts (RFC 5531 names; SUCCESS shown as ACCEPT_OK). */
export const ACCEPT_STAT_TAGS: Readonly<Record<number, string>> = {
  0: 'ACCEPT_OK',
  1: 'PROG_UNAVAIL',
  2: 'PROG_MISMATCH',
  3: 'PROC_UNAVAIL',
  4: 'GARBAGE_ARGS',
  5: 'SYSTEM_ERR',
};

/** reject_stat (RFC 5531 §9). */
export const REJECT_STAT_NAMES: Readonly<Record<number, string>> = { 0: 'RPC_MISMATCH', 1: 'AUTH_ERROR' };

/** auth_flavor (RFC 5531 §8.2; RFC 2203 RPCSEC_GSS). */
export const AUTH_FLAVOR_NAMES: Readonly<Record<number, string>> = {
  0: 'AUTH_NULL',
  1: 'AUTH_UNIX',
  2: 'AUTH_SHORT',
  3: 'AUTH_DES',
  6: 'RPCSEC_GSS',
  390003: 'RPCSEC_GSS_KRB5',
  390004: 'RPCSEC_GSS_KRB5I',
  390005: 'RPCSEC_GSS_KRB5P',
};

export const PROG = { NFS: 100003, MOUNT: 100005, NLM: 100021, NFS_ACL: 100227 } as const;

export const PROGRAM_NAMES: Readonly<Record<number, string>> = {
  100003: 'NFS',
  100005: 'MOUNT',
  100021: 'NLM',
  100227: 'NFS_ACL',
};

/** NFSv3 procedures (RFC 1813 §3). */
export const NFS3_PROC_NAMES: Readonly<Record<number, string>> = {
  0: 'NULL',
  1: 'GETATTR',
  2: 'SETATTR',
  3: 'LOOKUP',
  4: 'ACCESS',
  5: 'READLINK',
  6: 'READ',
  7: 'WRITE',
  8: 'CREATE',
  9: 'MKDIR',
  10: 'SYMLINK',
  11: 'MKNOD',
  12: 'REMOVE',
  13: 'RMDIR',
  14: 'RENAME',
  15: 'LINK',
  16: 'READDIR',
  17: 'READDIRPLUS',
  18: 'FSSTAT',
  19: 'FSINFO',
  20: 'PATHCONF',
  21: 'COMMIT',
};

/** NFSv4 procedures (RFC 7530 §16). */
export const NFS4_PROC_NAMES: Readonly<Record<number, string>> = { 0: 'NULL', 1: 'COMPOUND' };

/** NFSv4.x operations (RFC 7530 §16, RFC 8881 §18, RFC 7862 §15, RFC 8276). */
export const NFS4_OP_NAMES: Readonly<Record<number, string>> = {
  3: 'ACCESS',
  4: 'CLOSE',
  5: 'COMMIT',
  6: 'CREATE',
  7: 'DELEGPURGE',
  8: 'DELEGRETURN',
  9: 'GETATTR',
  10: 'GETFH',
  11: 'LINK',
  12: 'LOCK',
  13: 'LOCKT',
  14: 'LOCKU',
  15: 'LOOKUP',
  16: 'LOOKUPP',
  17: 'NVERIFY',
  18: 'OPEN',
  19: 'OPENATTR',
  20: 'OPEN_CONFIRM',
  21: 'OPEN_DOWNGRADE',
  22: 'PUTFH',
  23: 'PUTPUBFH',
  24: 'PUTROOTFH',
  25: 'READ',
  26: 'READDIR',
  27: 'READLINK',
  28: 'REMOVE',
  29: 'RENAME',
  30: 'RENEW',
  31: 'RESTOREFH',
  32: 'SAVEFH',
  33: 'SECINFO',
  34: 'SETATTR',
  35: 'SETCLIENTID',
  36: 'SETCLIENTID_CONFIRM',
  37: 'VERIFY',
  38: 'WRITE',
  39: 'RELEASE_LOCKOWNER',
  40: 'BACKCHANNEL_CTL',
  41: 'BIND_CONN_TO_SESSION',
  42: 'EXCHANGE_ID',
  43: 'CREATE_SESSION',
  44: 'DESTROY_SESSION',
  45: 'FREE_STATEID',
  46: 'GET_DIR_DELEGATION',
  47: 'GETDEVINFO',
  48: 'GETDEVLIST',
  49: 'LAYOUTCOMMIT',
  50: 'LAYOUTGET',
  51: 'LAYOUTRETURN',
  52: 'SECINFO_NO_NAME',
  53: 'SEQUENCE',
  54: 'SET_SSV',
  55: 'TEST_STATEID',
  56: 'WANT_DELEG',
  57: 'DESTROY_CLIENTID',
  58: 'RECLAIM_COMPLETE',
  59: 'ALLOCATE',
  60: 'COPY',
  61: 'COPY_NOTIFY',
  62: 'DEALLOCATE',
  63: 'IO_ADVISE',
  64: 'LAYOUTERROR',
  65: 'LAYOUTSTATS',
  66: 'OFFLOAD_CANCEL',
  67: 'OFFLOAD_STATUS',
  68: 'READ_PLUS',
  69: 'SEEK',
  70: 'WRITE_SAME',
  71: 'CLONE',
  72: 'GETXATTR',
  73: 'SETXATTR',
  74: 'LISTXATTRS',
  75: 'REMOVEXATTR',
  10044: 'ILLEGAL',
};

export function nameOf(table: Readonly<Record<number, string>>, v: number, what = 'Unknown'): string {
  return table[v] ?? `${what} (${v})`;
}

export const hex32 = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
