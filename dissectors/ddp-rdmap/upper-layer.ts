/**
 * Labels what an iWARP connection carries, from the Responder's TCP port and the upper layer's
 * private data in the MPA startup frames. Labels only: payloads are not decoded.
 *
 * Private-data layouts: SPEC-NOTES "Private-data formats of upper layers" (MS-SMBD §6.1 with
 * ksmbd; RFC 8797 with Linux sunrpc). With RFC 6581 the 4-octet IRD/ORD block comes first.
 */

export type UpperLayerProtocol = 'SMB Direct' | 'NFS over RDMA' | 'iSER' | 'NVMe/iWARP';

/** RFC 8797 RPC-over-RDMA Version 1 CM private data (SPEC-NOTES; Linux sunrpc rpc_rdma.h). */
export interface RpcRdmaPrivateData {
  readonly version: number;
  /** Flags bit 0: the peer accepts Send with Invalidate. */
  readonly remoteInvalidate: boolean;
  /** (value + 1) * 1024. */
  readonly sendSize: number;
  readonly receiveSize: number;
}

/** MS-SMBD §6.1 legacy IRD/ORD Negotiate Header. */
export interface SmbdLegacyIrdOrd {
  readonly ird: number;
  readonly ord: number;
  /** Linux ksmbd accepts little-endian from "broken clients (old cifs.ko)". */
  readonly byteOrder: 'big-endian' | 'little-endian';
}

export interface UpperLayerLabel {
  readonly protocol: UpperLayerProtocol;
  /** How it was recognised: "private data" evidence outranks a port. */
  readonly basis: 'private-data' | 'port';
  /** Human-readable evidence, e.g. "RFC 8797 magic 0xF6AB0E18 in the Request private data". */
  readonly evidence: string;
  readonly detail?: {
    readonly rpcRdma?: RpcRdmaPrivateData;
    readonly smbdIrdOrd?: SmbdLegacyIrdOrd;
    readonly from?: 'request' | 'reply';
  };
}

export interface UpperLayerInput {
  /** TCP port of the Responder (the listening side), null when unknown. */
  readonly serverPort: number | null;
  /** Private Data of the MPA Request / Reply as sent (including the RFC 6581 block), null if not seen. */
  readonly requestPd: Uint8Array | null;
  readonly replyPd: Uint8Array | null;
  /** The frames carry the RFC 6581 enhanced bit: the first 4 PD octets are the IRD/ORD block. */
  readonly enhanced: boolean;
  /** Per-frame override of `enhanced` when the Request and Reply differ. */
  readonly requestEnhanced?: boolean;
  readonly replyEnhanced?: boolean;
}

export const PORT_SMB_DIRECT = 5445;
export const PORT_NFS_RDMA = 20049;
export const PORT_ISER = 3260;
export const PORT_NVME = 4420;

/** RFC 8797 format identifier. */
export const RPCRDMA_CM_MAGIC = 0xf6ab0e18;

/** The upper layer's own private data: after the RFC 6581 block when that is present. */
function ulpData(pd: Uint8Array | null, enhanced: boolean): Uint8Array | null {
  if (!pd) return null;
  if (!enhanced) return pd;
  return pd.length >= 4 ? pd.subarray(4) : null;
}

export function parseRpcRdmaPrivateData(b: Uint8Array): RpcRdmaPrivateData | null {
  if (b.length < 8) return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (v.getUint32(0) !== RPCRDMA_CM_MAGIC) return null;
  return {
    version: b[4]!,
    remoteInvalidate: (b[5]! & 0x01) !== 0,
    sendSize: (b[6]! + 1) * 1024,
    receiveSize: (b[7]! + 1) * 1024,
  };
}

/**
 * MS-SMBD legacy IRD/ORD: two 32-bit words, each > 0. The byte order is not stated in MS-SMBD;
 * ksmbd reads big-endian and tolerates little-endian (SPEC-NOTES "Still provisional" 6), so a
 * word pair that is plausible one way and not the other picks the order. Plausible = 1..65535.
 */
export function parseSmbdLegacyIrdOrd(b: Uint8Array): SmbdLegacyIrdOrd | null {
  if (b.length < 8) return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ok = (n: number): boolean => n > 0 && n <= 0xffff;
  const be = { ird: v.getUint32(0), ord: v.getUint32(4) };
  if (ok(be.ird) && ok(be.ord)) return { ...be, byteOrder: 'big-endian' };
  const le = { ird: v.getUint32(0, true), ord: v.getUint32(4, true) };
  if (ok(le.ird) && ok(le.ord)) return { ...le, byteOrder: 'little-endian' };
  return null;
}

const PORT_LABELS: ReadonlyMap<number, { protocol: UpperLayerProtocol; what: string }> = new Map([
  [PORT_SMB_DIRECT, { protocol: 'SMB Direct', what: 'TCP port 5445 (SMB Direct, MS-SMBD)' }],
  [PORT_NFS_RDMA, { protocol: 'NFS over RDMA', what: 'TCP port 20049 (NFS over RDMA)' }],
  [PORT_ISER, { protocol: 'iSER', what: 'TCP port 3260 (iSCSI, so iSER over iWARP)' }],
  [PORT_NVME, { protocol: 'NVMe/iWARP', what: 'TCP port 4420 (NVMe over Fabrics)' }],
]);

/**
 * Labels the upper layer, or returns null when the evidence is not clear. RFC 8797 private data is
 * recognised on any port (its 32-bit magic is specific); the MS-SMBD IRD/ORD block is only taken
 * as evidence on port 5445 (eight octets of small numbers prove little elsewhere); iSER and NVMe
 * are labelled by port alone.
 */
export function labelUpperLayer(i: UpperLayerInput): UpperLayerLabel | null {
  const req = ulpData(i.requestPd, i.requestEnhanced ?? i.enhanced);
  const rep = ulpData(i.replyPd, i.replyEnhanced ?? i.enhanced);
  const after = (e: boolean): string => (e ? ', after the 4-octet RFC 6581 block' : '');

  for (const [pd, from, e] of [
    [req, 'request', i.requestEnhanced ?? i.enhanced],
    [rep, 'reply', i.replyEnhanced ?? i.enhanced],
  ] as const) {
    const rpc = pd ? parseRpcRdmaPrivateData(pd) : null;
    if (rpc) {
      return {
        protocol: 'NFS over RDMA',
        basis: 'private-data',
        evidence: `RFC 8797 RPC-over-RDMA private data (magic 0xF6AB0E18, version ${rpc.version}) in the MPA ${from === 'request' ? 'Request' : 'Reply'}${after(e)}`,
        detail: { rpcRdma: rpc, from },
      };
    }
  }

  const port = i.serverPort;
  if (port === PORT_SMB_DIRECT) {
    for (const [pd, from, e] of [
      [req, 'request', i.requestEnhanced ?? i.enhanced],
      [rep, 'reply', i.replyEnhanced ?? i.enhanced],
    ] as const) {
      const irdOrd = pd ? parseSmbdLegacyIrdOrd(pd) : null;
      if (irdOrd) {
        const exact =
          pd!.length === 8 ? '' : ` (${pd!.length} octets of ULP private data; ksmbd checks only exactly 8)`;
        return {
          protocol: 'SMB Direct',
          basis: 'private-data',
          evidence: `TCP port 5445 and an MS-SMBD legacy IRD/ORD header (IRD ${irdOrd.ird}, ORD ${irdOrd.ord}, ${irdOrd.byteOrder}) in the MPA ${from === 'request' ? 'Request' : 'Reply'}${after(e)}${exact}`,
          detail: { smbdIrdOrd: irdOrd, from },
        };
      }
    }
  }
  const byPort = port !== null ? PORT_LABELS.get(port) : undefined;
  if (byPort) return { protocol: byPort.protocol, basis: 'port', evidence: byPort.what };
  return null;
}
