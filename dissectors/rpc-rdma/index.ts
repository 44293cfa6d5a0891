/**
 * RPC-over-RDMA version 1 (RFC 8166, RFC 8797) with ONC RPC and NFS above it, as an upper layer
 * of DDP/RDMAP (ulp-contract.ts).
 */
import type { SendMessage, UlpConnection, UpperLayerSpec } from '../ddp-rdmap/ulp-contract.js';
import { PORT_NFS_RDMA } from '../ddp-rdmap/upper-layer.js';
import { decodeHeader, rpcXidAfterLists } from './decode.js';
import { RpcRdmaDissector } from './dissector.js';
import { privateDataOf } from './params.js';
import { RPC_RDMA_FIELDS } from './fields.js';
import { PROC } from './names.js';
import { RPC_RDMA_RULES } from './rules.js';

/**
 * Wireshark's heuristic (packet-rpcrdma.c, packet_is_rpcordma and the version test before it):
 * version 1, a known procedure, chunk lists that parse within the Send, and for RDMA_MSG /
 * RDMA_MSGP the RPC XID right after them equal to rdma_xid. A Send cut by the capture before
 * those checks could run is accepted when what is present fits (RDMA_MSG or RDMA_NOMSG).
 */
export function isRpcRdmaFirstMessage(m: SendMessage): boolean {
  const h = decodeHeader(m.payload, m.length);
  if (h?.vers !== 1 || h.proc > PROC.ERROR) return false;
  if (h.problem) return h.problem.kind === 'cut' && (h.proc === PROC.MSG || h.proc === PROC.NOMSG);
  if (h.proc === PROC.MSG || h.proc === PROC.MSGP) {
    const xid = rpcXidAfterLists(m.payload, h);
    return xid === null ? !m.payloadComplete : xid === h.xid;
  }
  return true;
}

/** RFC 8797 private data (magic 0xF6AB0E18, version 1) from either side. */
export function hasRpcRdmaPrivateData(c: UlpConnection): boolean {
  return privateDataOf(c.requestPrivateData) !== null || privateDataOf(c.replyPrivateData) !== null;
}

export const RPC_RDMA: UpperLayerSpec = {
  id: 'rpc-rdma',
  name: 'RPC-over-RDMA',
  ports: [PORT_NFS_RDMA],
  privateData: hasRpcRdmaPrivateData,
  firstMessage: (m) => isRpcRdmaFirstMessage(m),
  fields: RPC_RDMA_FIELDS,
  rules: RPC_RDMA_RULES,
  create: (env) => new RpcRdmaDissector(env),
};

export { RpcRdmaDissector } from './dissector.js';
export { DEFAULT_INLINE_SIZE, privateDataOf } from './params.js';
export { decodeHeader, readChunks, type RpcRdmaHeader } from './decode.js';
export { decodeRpc } from './rpc.js';
export { F as RPC_RDMA_FIELD, RPC_RDMA_FIELDS } from './fields.js';
export { RPC_RULE, RPC_RDMA_RULES } from './rules.js';
