/**
 * RPC-over-RDMA message builders for the exchanges the dissector tests run (clean unless told
 * otherwise), on the encoder written from the specifications (rpcrdma-encoder.ts).
 */
import {
  Enc,
  RDMA_MSG,
  RDMA_NOMSG,
  type ReadSeg,
  type Seg,
  cat,
  compound,
  nfs3ReadArgs,
  nfs3ReadResults,
  nfs3WriteArgs,
  op,
  rdmaHeader,
  rpcCall,
  rpcReply,
} from './rpcrdma-encoder.js';

export const XID = 0x1a2b3c4d;
export const seg = (handle: number, length: number, offset: bigint): Seg => ({ handle, length, offset });

/** NFSv3 READ Call offering one write chunk. */
export function readCall(xid: number, chunk: Seg[], o: { credit?: number } = {}): Uint8Array {
  return cat(
    rdmaHeader({ xid, proc: RDMA_MSG, writes: [chunk], credit: o.credit ?? 32 }),
    rpcCall({
      xid,
      prog: 100003,
      vers: 3,
      proc: 6,
      args: nfs3ReadArgs(
        0n,
        chunk.reduce((n, s) => n + s.length, 0),
      ),
    }),
  );
}

/** RDMA_MSG Reply returning the write list with the lengths written, results inline. */
export function readReply(
  xid: number,
  returned: Seg[][],
  o: { credit?: number; reads?: ReadSeg[]; reply?: Seg[] } = {},
): Uint8Array {
  const n = returned[0]?.reduce((k, s) => k + s.length, 0) ?? 0;
  return cat(
    rdmaHeader({
      xid,
      proc: RDMA_MSG,
      writes: returned,
      credit: o.credit ?? 32,
      reads: o.reads ?? [],
      reply: o.reply ?? null,
    }),
    rpcReply({ xid, results: nfs3ReadResults(n) }),
  );
}

/** NFSv3 WRITE Call whose data is in a read chunk at the position of the data. */
export function writeCall(xid: number, segs: Seg[]): { payload: Uint8Array; position: number } {
  const count = segs.reduce((n, s) => n + s.length, 0);
  const rpc = rpcCall({ xid, prog: 100003, vers: 3, proc: 7, args: nfs3WriteArgs(0n, count, false) });
  const position = rpc.length;
  const reads = segs.map((s) => ({ position, ...s }));
  return { payload: cat(rdmaHeader({ xid, proc: RDMA_MSG, reads }), rpc), position };
}

/** A plain RDMA_MSG Reply with an NFS status word as results. */
export function plainReply(xid: number, o: { credit?: number } = {}): Uint8Array {
  return cat(
    rdmaHeader({ xid, proc: RDMA_MSG, credit: o.credit ?? 32 }),
    rpcReply({ xid, results: new Enc().u32(0).bytes() }),
  );
}

/** NFSv3 READDIR Call offering a reply chunk (the Reply will not fit inline). */
export function readdirCall(xid: number, reply: Seg[]): Uint8Array {
  return cat(
    rdmaHeader({ xid, proc: RDMA_MSG, reply }),
    rpcCall({
      xid,
      prog: 100003,
      vers: 3,
      proc: 16,
      args: new Enc().opaque(new Uint8Array(32)).u64(0n).u64(0n).u32(8192).bytes(),
    }),
  );
}

export const nomsgReply = (xid: number, reply: Seg[] | null, credit = 32): Uint8Array =>
  rdmaHeader({ xid, proc: RDMA_NOMSG, reply, credit });

/** A long Call: RDMA_NOMSG whose whole RPC Call is in a position-zero read chunk. */
export const pzrcCall = (xid: number, s: Seg): Uint8Array =>
  rdmaHeader({ xid, proc: RDMA_NOMSG, reads: [{ position: 0, ...s }] });

/** NFSv4.1 COMPOUND (SEQUENCE, PUTFH, READ) offering a write chunk. */
export function v4ReadCall(xid: number, chunk: Seg[]): Uint8Array {
  return cat(
    rdmaHeader({ xid, proc: RDMA_MSG, writes: [chunk] }),
    rpcCall({
      xid,
      prog: 100003,
      vers: 4,
      proc: 1,
      args: compound('', 1, [op.sequence(), op.putfh(), op.read(0n, 4096)]),
    }),
  );
}

/** NFSv3 WRITE with its data inline (no chunks). */
export const inlineWrite = (xid: number, n: number): Uint8Array =>
  cat(
    rdmaHeader({ xid, proc: RDMA_MSG }),
    rpcCall({ xid, prog: 100003, vers: 3, proc: 7, args: nfs3WriteArgs(0n, n, true) }),
  );
