/**
 * Detail trees of RPC-over-RDMA messages: an `rpcordma` node with its chunk lists (laid out as
 * Wireshark's: Read list > Read chunk > segment; Write list > Write chunk > segment; Reply list >
 * Reply chunk > segment), an `rpc` node and an `nfs` node. Offsets are within the Send payload.
 */
import { treeNode, type TreeNode } from '../../src/vocabulary/fields.js';
import type { RpcRdmaPrivateData } from '../ddp-rdmap/upper-layer.js';
import { readChunks, type RdmaSegment, type RpcRdmaHeader, type WriteChunk } from './decode.js';
import { F } from './fields.js';
import { mainOp, type NfsCall } from './nfs.js';
import { hex32, nameOf, NFS4_OP_NAMES, PROC, PROC_NAMES } from './names.js';
import type { RpcCall, RpcReply } from './rpc.js';

function segmentNode(s: RdmaSegment, pre: readonly TreeNode[] = []): TreeNode {
  return treeNode(F.segment, `${hex32(s.handle)}:${s.length}@0x${s.offset.toString(16)}`, {
    offset: s.at - pre.length * 4,
    length: 16 + pre.length * 4,
    display: `handle ${hex32(s.handle)}, length ${s.length}, offset 0x${s.offset.toString(16)}`,
    children: [
      ...pre,
      treeNode(F.handle, s.handle, { offset: s.at, length: 4 }),
      treeNode(F.length, s.length, { offset: s.at + 4, length: 4 }),
      treeNode(F.offset, s.offset, { offset: s.at + 8, length: 8 }),
    ],
  });
}

function chunkNode(f: typeof F.writeChunk, c: WriteChunk, label: string): TreeNode {
  return treeNode(f, c.count, {
    offset: c.at,
    length: 4 + c.segments.length * 16,
    display: `${label}: ${c.count} segment${c.count === 1 ? '' : 's'}`,
    children: [
      treeNode(F.segmentCount, c.count, { offset: c.at, length: 4 }),
      ...c.segments.map((s) => segmentNode(s)),
    ],
  });
}

/** Analysis values shown under the rpcordma node. */
export interface HeaderExtras {
  readonly outstanding?: number;
  readonly inlineLimit?: number;
  readonly latencyUs?: number;
  readonly readBytes?: number;
  readonly writtenBytes?: number;
  readonly invalidated?: number;
}

export function headerNode(h: RpcRdmaHeader, length: number, x: HeaderExtras = {}): TreeNode {
  const kids: TreeNode[] = [
    treeNode(F.xid, h.xid, { offset: 0, length: 4, display: hex32(h.xid) }),
    treeNode(F.version, h.vers, { offset: 4, length: 4 }),
    treeNode(F.credits, h.credit, { offset: 8, length: 4 }),
    treeNode(F.msgType, h.proc, { offset: 12, length: 4, display: nameOf(PROC_NAMES, h.proc) }),
  ];
  if (h.align !== null) kids.push(treeNode(F.align, h.align, { offset: 16, length: 4 }));
  if (h.thresh !== null) kids.push(treeNode(F.thresh, h.thresh, { offset: 20, length: 4 }));
  if (h.hasLists) {
    const chunks = readChunks(h.reads).map((c) =>
      treeNode(F.readChunk, c.position, {
        display: `position ${c.position}, ${c.segments.length} segment${c.segments.length === 1 ? '' : 's'}, ${c.length} octets`,
        children: c.segments.map((s) =>
          segmentNode(s, [treeNode(F.position, s.position, { offset: s.at - 4, length: 4 })]),
        ),
      }),
    );
    kids.push(treeNode(F.readsCount, h.reads.length, { children: chunks }));
    kids.push(
      treeNode(F.writesCount, h.writes.length, {
        children: h.writes.map((c, i) => chunkNode(F.writeChunk, c, `Write chunk ${i + 1}`)),
      }),
    );
    kids.push(
      treeNode(F.replyCount, h.reply ? 1 : 0, {
        children: h.reply ? [chunkNode(F.replyChunk, h.reply, 'Reply chunk')] : [],
      }),
    );
    if (h.listsEnd !== null && h.proc !== PROC.NOMSG) kids.push(treeNode(F.rpcOffset, h.listsEnd));
  }
  if (h.errcode !== null) kids.push(treeNode(F.errcode, h.errcode, { offset: 16, length: 4 }));
  if (h.versLow !== null) kids.push(treeNode(F.versLow, h.versLow, { offset: 20, length: 4 }));
  if (h.versHigh !== null) kids.push(treeNode(F.versHigh, h.versHigh, { offset: 24, length: 4 }));
  if (x.outstanding !== undefined) kids.push(treeNode(F.outstanding, x.outstanding));
  if (x.inlineLimit !== undefined) kids.push(treeNode(F.inlineLimit, x.inlineLimit));
  if (x.readBytes !== undefined) kids.push(treeNode(F.readBytes, x.readBytes));
  if (x.writtenBytes !== undefined) kids.push(treeNode(F.writtenBytes, x.writtenBytes));
  if (x.invalidated !== undefined) kids.push(treeNode(F.invalidated, x.invalidated, { display: hex32(x.invalidated) }));
  if (x.latencyUs !== undefined) kids.push(treeNode(F.latency, x.latencyUs));
  return treeNode(F.proto, 'rpcordma', { offset: 0, length: h.listsEnd ?? Math.min(length, 16), children: kids });
}

/** The RFC 8797 private data of one side, for the first record of a connection. */
export function cmNode(pd: RpcRdmaPrivateData, who: string): TreeNode {
  return treeNode(F.cm, 'rpcordma.cm', {
    display: `${who}: version ${pd.version}, send ${pd.sendSize}, receive ${pd.receiveSize}${pd.remoteInvalidate ? ', Remote Invalidation' : ''}`,
    children: [
      treeNode(F.cmMagic, 0xf6ab0e18, { display: '0xf6ab0e18' }),
      treeNode(F.cmVersion, pd.version),
      treeNode(F.cmRemoteInvalidate, pd.remoteInvalidate),
      treeNode(F.cmSendSize, pd.sendSize),
      treeNode(F.cmRecvSize, pd.receiveSize),
    ],
  });
}

const authNodes = (a: { flavor: number; length: number; at: number } | null): TreeNode[] =>
  a
    ? [
        treeNode(F.rpcFlavor, a.flavor, { offset: a.at, length: 4 }),
        treeNode(F.rpcAuthLength, a.length, { offset: a.at + 4, length: 4 }),
      ]
    : [];

/**
 * The `rpc` node. A Reply shows its Call's program, version and procedure as Wireshark does
 * (generated fields, from the Call paired by XID), and the Call's frame.
 */
export function rpcNode(
  at: number,
  msg: RpcCall | RpcReply,
  call?: { frame: number | undefined; prog: number | null; vers: number | null; proc: number | null },
): TreeNode {
  const kids: TreeNode[] = [
    treeNode(F.rpcXid, msg.xid, { offset: at, length: 4, display: hex32(msg.xid) }),
    treeNode(F.rpcMsgType, msg.kind === 'call' ? 0 : 1, { offset: at + 4, length: 4 }),
  ];
  const opt = (f: (typeof F)[keyof typeof F], v: number | null, off?: number): void => {
    if (v !== null) kids.push(treeNode(f, v, off === undefined ? {} : { offset: off, length: 4 }));
  };
  if (msg.kind === 'call') {
    opt(F.rpcVersion, msg.rpcvers, at + 8);
    opt(F.rpcProgram, msg.prog, at + 12);
    opt(F.rpcProgVers, msg.vers, at + 16);
    opt(F.rpcProcedure, msg.proc, at + 20);
    kids.push(...authNodes(msg.cred), ...authNodes(msg.verf));
  } else {
    opt(F.rpcReplyStat, msg.replyStat, at + 8);
    kids.push(...authNodes(msg.verf));
    opt(F.rpcAcceptStat, msg.acceptStat);
    opt(F.rpcRejectStat, msg.rejectStat);
    opt(F.rpcVersMin, msg.low);
    opt(F.rpcVersMax, msg.high);
    if (call) {
      opt(F.rpcProgram, call.prog);
      opt(F.rpcProgVers, call.vers);
      opt(F.rpcProcedure, call.proc);
      if (call.frame !== undefined) kids.push(treeNode(F.rpcReqFrame, call.frame));
    }
  }
  return treeNode(F.rpc, 'rpc', { offset: at, children: kids });
}

export function nfsCallNode(n: NfsCall): TreeNode {
  if (n.version === 3) return treeNode(F.nfs, 'nfs', { children: [treeNode(F.nfsProc3, n.proc)] });
  const kids: TreeNode[] = [treeNode(F.nfsProc4, n.proc)];
  if (n.tag !== null) kids.push(treeNode(F.nfsTag, n.tag));
  if (n.minor !== null) kids.push(treeNode(F.nfsMinor, n.minor));
  if (n.opsCount !== null) kids.push(treeNode(F.nfsOpsCount, n.opsCount));
  for (const op of n.ops) kids.push(treeNode(F.nfsOpcode, op, { display: nameOf(NFS4_OP_NAMES, op) }));
  const main = mainOp(n.ops);
  if (main !== null) kids.push(treeNode(F.nfsMainOpcode, main, { display: nameOf(NFS4_OP_NAMES, main) }));
  return treeNode(F.nfs, 'nfs', { children: kids });
}

/** An NFS reply with only its procedure (the Call's), as Wireshark shows a NULL reply. */
export function nfsProcNode(version: number, proc: number): TreeNode {
  return treeNode(F.nfs, 'nfs', {
    children: [version === 3 ? treeNode(F.nfsProc3, proc) : treeNode(F.nfsProc4, proc)],
  });
}

export function nfsReplyNode(version: number, proc: number, status: number): TreeNode {
  return treeNode(F.nfs, 'nfs', {
    children: [
      version === 3 ? treeNode(F.nfsProc3, proc) : treeNode(F.nfsProc4, proc),
      treeNode(version === 3 ? F.nfsStatus3 : F.nfsStatus4, status),
    ],
  });
}

/** The node of an RDMA Write or Read Request that hits a Call's chunk. */
export function dataNode(xid: number, stag: number): TreeNode {
  return treeNode(F.proto, 'rpcordma', {
    children: [treeNode(F.xid, xid, { display: hex32(xid) }), treeNode(F.handle, stag, { display: hex32(stag) })],
  });
}
