/**
 * RPC-over-RDMA version 1, ONC RPC and NFS field declarations.
 *
 * Filter names and types are Wireshark's (packet-rpcrdma.c, packet-rpc.c, packet-nfs.c; checked
 * with `tshark -G fields` of Wireshark 4.0) wherever Wireshark has the field, so users' filters
 * carry over: `rpcordma.xid`, `rpcordma.flow_control`, `rpc.program`, `nfs.opcode`. What Wireshark
 * lacks (RFC 8797 private data, nodes of the chunk lists, credits outstanding, latency, the
 * ledger's byte totals) is declared under `rpcordma.` too. Wireshark's FT_FRAMENUM fields
 * (rpc.reqframe, rpc.repframe) are plain unsigned integers here.
 */
import { field, type FieldDef } from '../../src/vocabulary/fields.js';
import {
  ACCEPT_STAT_NAMES,
  AUTH_FLAVOR_NAMES,
  ERRCODE_NAMES,
  NFS3_PROC_NAMES,
  NFS4_OP_NAMES,
  NFS4_PROC_NAMES,
  PROC_NAMES,
  PROGRAM_NAMES,
  REJECT_STAT_NAMES,
  REPLY_STAT_NAMES,
  RPC_MSG_NAMES,
} from './names.js';

const u = (abbrev: string, name: string, blurb: string, extra: Partial<FieldDef> = {}): FieldDef =>
  field(abbrev, name, 'uint', blurb, { base: 'dec', ...extra });
const hex = (abbrev: string, name: string, blurb: string): FieldDef =>
  field(abbrev, name, 'uint', blurb, { base: 'hex' });

/** The fields, by role: the tree builder and the filters read them by these keys. */
export const F = {
  // --- RPC-over-RDMA fixed header (RFC 8166 §4.2) [Wireshark names] ---
  proto: field('rpcordma', 'RPC over RDMA', 'protocol', 'RPC-over-RDMA version 1 transport header (RFC 8166)'),
  xid: hex('rpcordma.xid', 'XID', 'rdma_xid: the XID of the RPC message the header carries (RFC 8166 §4.2.1)'),
  version: u('rpcordma.version', 'Version', 'rdma_vers: 1 for RPC-over-RDMA version 1'),
  credits: u('rpcordma.flow_control', 'Flow Control', 'rdma_credit: credits requested (Call) or granted (Reply)'),
  msgType: u('rpcordma.msg_type', 'Message Type', 'rdma_proc (RFC 8166 §4.2.4)', { strings: PROC_NAMES }),
  // --- chunk lists (RFC 8166 §4.3) ---
  readsCount: u('rpcordma.reads_count', 'Read list', 'Number of read segments in the Read list'),
  writesCount: u('rpcordma.writes_count', 'Write list', 'Number of write chunks in the Write list'),
  replyCount: u('rpcordma.reply_count', 'Reply list', 'Number of reply chunks (0 or 1)'),
  position: u('rpcordma.position', 'Position in XDR', 'Read segment position: XDR offset of the chunk data'),
  segmentCount: u('rpcordma.segment_count', 'Write chunk segment count', 'Segments in a write or reply chunk'),
  handle: hex('rpcordma.rdma_handle', 'RDMA handle', 'Segment handle: the STag the peer accesses'),
  length: u('rpcordma.rdma_length', 'RDMA length', 'Segment length in octets'),
  offset: field(
    'rpcordma.rdma_offset',
    'RDMA offset',
    'uint64',
    'Segment offset: the tagged offset of its first octet',
    {
      base: 'hex',
    },
  ),
  align: u('rpcordma.rdma_align', 'RDMA align', 'RDMA_MSGP padding alignment (not to be used)'),
  thresh: u('rpcordma.rdma_thresh', 'RDMA threshold', 'RDMA_MSGP padding threshold (not to be used)'),
  errcode: u('rpcordma.errcode', 'Error code', 'RDMA_ERROR error code (RFC 8166 §4.5)', { strings: ERRCODE_NAMES }),
  versLow: u('rpcordma.vers_low', 'Version low', 'ERR_VERS: lowest version the responder supports'),
  versHigh: u('rpcordma.vers_high', 'Version high', 'ERR_VERS: highest version the responder supports'),
  // --- ours: nodes Wireshark shows as text subtrees, and analysis results ---
  readChunk: u('rpcordma.read_chunk', 'Read chunk', 'Read segments sharing one position (RFC 8166 §3.4.5)'),
  writeChunk: u('rpcordma.write_chunk', 'Write chunk', 'One write chunk of the Write list: its segment count'),
  replyChunk: u('rpcordma.reply_chunk', 'Reply chunk', 'The reply chunk: its segment count'),
  segment: field('rpcordma.segment', 'RDMA segment', 'string', 'One segment: handle, length, offset'),
  rpcOffset: u(
    'rpcordma.rpc_offset',
    'RPC message offset',
    'Offset in the Send payload where the RPC message starts (after the chunk lists)',
  ),
  outstanding: u(
    'rpcordma.credits_outstanding',
    'Calls outstanding',
    'Calls of the requester not yet answered, this one included',
  ),
  inlineLimit: u(
    'rpcordma.inline_limit',
    'Receiver inline size',
    'Largest Send the receiver accepts: RFC 8797 receive size, or the 1024-octet default',
  ),
  latency: u('rpcordma.latency_us', 'Time from call (µs)', 'Microseconds between the Call and this Reply'),
  readBytes: u('rpcordma.read_bytes', 'Octets read', 'Octets the responder read from the call’s read chunks'),
  writtenBytes: u('rpcordma.written_bytes', 'Octets written', 'Octets the responder wrote into the call’s chunks'),
  invalidated: hex('rpcordma.invalidated_stag', 'Invalidated STag', 'STag invalidated by this Send with Invalidate'),
  // --- RFC 8797 private data, after the RFC 6581 block ---
  cm: field('rpcordma.cm', 'RPC-over-RDMA CM Private Data', 'protocol', 'RFC 8797 private data of one side'),
  cmMagic: hex('rpcordma.cm.magic', 'Format identifier', 'RFC 8797 magic 0xF6AB0E18'),
  cmVersion: u('rpcordma.cm.version', 'Version', 'RFC 8797 private data version (1)'),
  cmRemoteInvalidate: field(
    'rpcordma.cm.remote_invalidate',
    'Remote Invalidation',
    'bool',
    'Flags bit 0: the sender accepts Send with Invalidate',
  ),
  cmSendSize: u('rpcordma.cm.send_size', 'Send size', 'Largest Send the sender will send, in octets'),
  cmRecvSize: u('rpcordma.cm.recv_size', 'Receive size', 'Largest Send the sender can receive, in octets'),
  // --- ONC RPC (RFC 5531) [Wireshark names] ---
  rpc: field('rpc', 'Remote Procedure Call', 'protocol', 'ONC RPC message header (RFC 5531)'),
  rpcXid: field('rpc.xid', 'XID', 'uint', 'Transaction identifier', { base: 'hex' }),
  rpcMsgType: u('rpc.msgtyp', 'Message Type', 'Call (0) or Reply (1)', { strings: RPC_MSG_NAMES }),
  rpcVersion: u('rpc.version', 'RPC Version', 'rpcvers: 2'),
  rpcProgram: u('rpc.program', 'Program', 'RPC program number', { strings: PROGRAM_NAMES }),
  rpcProgVers: u('rpc.programversion', 'Program Version', 'Version of the program'),
  rpcProcedure: u('rpc.procedure', 'Procedure', 'Procedure number within the program'),
  rpcFlavor: u('rpc.auth.flavor', 'Flavor', 'Credential or verifier flavor', { strings: AUTH_FLAVOR_NAMES }),
  rpcAuthLength: u('rpc.auth.length', 'Length', 'Length of the credential or verifier body'),
  rpcReplyStat: u('rpc.replystat', 'Reply State', 'accepted or denied', { strings: REPLY_STAT_NAMES }),
  rpcAcceptStat: u('rpc.state_accept', 'Accept State', 'accept_stat', { strings: ACCEPT_STAT_NAMES }),
  rpcRejectStat: u('rpc.state_reject', 'Reject State', 'reject_stat', { strings: REJECT_STAT_NAMES }),
  rpcVersMin: u('rpc.programversion.min', 'Program Version (Minimum)', 'PROG_MISMATCH / RPC_MISMATCH: lowest'),
  rpcVersMax: u('rpc.programversion.max', 'Program Version (Maximum)', 'PROG_MISMATCH / RPC_MISMATCH: highest'),
  rpcReqFrame: u('rpc.reqframe', 'Request Frame', 'Frame of the Call this Reply answers'),
  rpcRepFrame: u('rpc.repframe', 'Reply Frame', 'Frame of the Reply to this Call'),
  // --- NFS [Wireshark names] ---
  nfs: field('nfs', 'Network File System', 'protocol', 'NFS arguments or results (first words only)'),
  nfsProc3: u('nfs.procedure_v3', 'V3 Procedure', 'NFSv3 procedure (RFC 1813)', { strings: NFS3_PROC_NAMES }),
  nfsProc4: u('nfs.procedure_v4', 'V4 Procedure', 'NFSv4 procedure: NULL or COMPOUND', { strings: NFS4_PROC_NAMES }),
  nfsTag: field('nfs.tag', 'Tag', 'string', 'COMPOUND tag'),
  nfsMinor: u('nfs.minorversion', 'minorversion', 'COMPOUND minor version'),
  nfsOpsCount: u('nfs.ops.count', 'Operations', 'Number of operations in the COMPOUND'),
  nfsOpcode: u('nfs.opcode', 'Opcode', 'NFSv4 operation', { strings: NFS4_OP_NAMES }),
  nfsMainOpcode: u('nfs.main_opcode', 'Main Opcode', 'Main operation of the COMPOUND', { strings: NFS4_OP_NAMES }),
  nfsStatus3: u('nfs.status3', 'Status', 'NFSv3 reply status (nfsstat3)'),
  nfsStatus4: u('nfs.nfsstat4', 'Status', 'NFSv4 COMPOUND reply status (nfsstat4)'),
} as const;

/** Every field of this upper layer, declared once (for the catalog and the display filter). */
export const RPC_RDMA_FIELDS: readonly FieldDef[] = Object.values(F);
