/**
 * Connection parameters of RPC-over-RDMA version 1: the RFC 8797 private data each side sent in
 * its MPA frame, the inline size that applies without it, and the tally of Sends a capture cut.
 */
import { parseRpcRdmaPrivateData, type RpcRdmaPrivateData } from '../ddp-rdmap/upper-layer.js';

/**
 * Inline threshold of version 1 when the receiver sent no RFC 8797 private data: 1024 octets
 * (Linux include/linux/sunrpc/rpc_rdma.h RPCRDMA_V1_DEF_INLINE_SIZE, used by
 * rpcrdma_update_cm_private unless the peer's private data says otherwise).
 */
export const DEFAULT_INLINE_SIZE = 1024;

/** RFC 8797 private data of version 1 (Linux ignores other versions: rpcrdma_update_cm_private). */
export function privateDataOf(b: Uint8Array | null): RpcRdmaPrivateData | null {
  const pd = b ? parseRpcRdmaPrivateData(b) : null;
  return pd && pd.version === 1 ? pd : null;
}

/** Sends cut by the capture, by what the cut cost. */
export interface CutCounts {
  header: number;
  lists: number;
  xid: number;
  rpc: number;
}

/** What the cuts prevented, as one sentence; empty when nothing was cut. */
export function cutSummary(k: CutCounts): string {
  return [
    k.header ? `${k.header} Sends without their 16-octet fixed header` : '',
    k.lists
      ? `${k.lists} with chunk lists past the cut (byte totals of their chunks not checked; accesses to STags not seen advertised, and Replies to XIDs not seen, no longer reported)`
      : '',
    k.xid ? `${k.xid} whose RPC XID after the chunk lists was not captured (XID check skipped)` : '',
    k.rpc ? `${k.rpc} whose RPC or NFS header was cut` : '',
  ]
    .filter((s) => s)
    .join('; ');
}
