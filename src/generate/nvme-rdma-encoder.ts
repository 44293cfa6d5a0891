/**
 * NVMe over Fabrics on RDMA, encoded from the specifications (all little-endian): the RDMA CM
 * private data of the NVMe/RDMA transport binding (RDMA_CM_REQUEST 32 octets: RECFMT, QID,
 * HRQSIZE, HSQSIZE, CNTLID; RDMA_CM_ACCEPT 32 octets: RECFMT, CRQSIZE; RDMA_CM_REJECT: RECFMT,
 * STS), the 64-octet submission queue entry with its SGL descriptor (NVMe Base "Common Command
 * Format", "SGL Descriptor"), the Fabrics Connect, Property Get/Set and Disconnect commands and
 * the 1024-octet Connect data (NVMe-oF), the 16-octet completion queue entry, and an Identify
 * Namespace data structure with one LBA format. Nothing here reads the analyzer.
 */

const put16 = (b: Uint8Array, o: number, v: number): void => {
  b[o] = v & 0xff;
  b[o + 1] = (v >>> 8) & 0xff;
};
const put24 = (b: Uint8Array, o: number, v: number): void => {
  put16(b, o, v & 0xffff);
  b[o + 2] = (v >>> 16) & 0xff;
};
const put32 = (b: Uint8Array, o: number, v: number): void => {
  put16(b, o, v & 0xffff);
  put16(b, o + 2, (v >>> 16) & 0xffff);
};
const put64 = (b: Uint8Array, o: number, v: bigint): void => {
  put32(b, o, Number(v & 0xffffffffn));
  put32(b, o + 4, Number((v >> 32n) & 0xffffffffn));
};

export function cmRequest(o: {
  recfmt?: number;
  qid: number;
  hrqsize: number;
  hsqsize: number;
  cntlid?: number;
}): Uint8Array {
  const b = new Uint8Array(32);
  put16(b, 0, o.recfmt ?? 0);
  put16(b, 2, o.qid);
  put16(b, 4, o.hrqsize);
  put16(b, 6, o.hsqsize);
  put16(b, 8, o.cntlid ?? 0xffff);
  return b;
}
export function cmAccept(crqsize: number): Uint8Array {
  const b = new Uint8Array(32);
  put16(b, 2, crqsize);
  return b;
}
export function cmReject(status: number): Uint8Array {
  const b = new Uint8Array(4);
  put16(b, 2, status);
  return b;
}

/** SGL1 forms (NVMe Base "SGL Descriptor"; the RDMA binding's Keyed SGL Data Block and in-capsule Offset). */
export type SglSpec =
  | {
      readonly kind: 'keyed';
      readonly addr: bigint;
      readonly length: number;
      readonly key: number;
      readonly invalidate?: boolean;
    }
  | { readonly kind: 'in-capsule'; readonly offset: number; readonly length: number }
  | { readonly kind: 'null' }
  | { readonly kind: 'raw'; readonly id: number };

function putSgl(b: Uint8Array, s: SglSpec): void {
  const o = 24;
  switch (s.kind) {
    case 'keyed':
      put64(b, o, s.addr);
      put24(b, o + 8, s.length);
      put32(b, o + 11, s.key);
      b[o + 15] = 0x40 | (s.invalidate ? 0x0f : 0);
      break;
    case 'in-capsule':
      put64(b, o, BigInt(s.offset));
      put32(b, o + 8, s.length);
      b[o + 15] = 0x01;
      break;
    case 'null':
      b[o + 15] = 0x40;
      break;
    case 'raw':
      b[o + 15] = s.id;
      break;
  }
}

export interface SqeSpec {
  readonly opc: number;
  readonly cid: number;
  readonly nsid?: number;
  /** FLAGS: PSDT 01b (SGL) unless told. */
  readonly flags?: number;
  readonly sgl: SglSpec;
  /** CDW10.. (octet 40 on), 24 octets at most. */
  readonly cdw?: readonly number[];
  /** Fabrics: FCTYPE at octet 4. */
  readonly fctype?: number;
}

export function sqe(s: SqeSpec): Uint8Array {
  const b = new Uint8Array(64);
  b[0] = s.opc;
  b[1] = s.flags ?? 0x40;
  put16(b, 2, s.cid);
  if (s.fctype !== undefined) b[4] = s.fctype;
  else put32(b, 4, s.nsid ?? 0);
  putSgl(b, s.sgl);
  for (const [i, v] of (s.cdw ?? []).entries()) put32(b, 40 + 4 * i, v >>> 0);
  return b;
}

export const OPC_FABRICS = 0x7f;
export const FCTYPE_CONNECT = 0x01;
export const FCTYPE_PROPERTY_SET = 0x00;
export const FCTYPE_PROPERTY_GET = 0x04;
export const FCTYPE_DISCONNECT = 0x08;

/** Fabrics Connect: RECFMT @40, QID @42, SQSIZE @44 (zero-based), CATTR @46, KATO @48. */
export function connectSqe(o: {
  cid: number;
  qid: number;
  sqsize: number;
  cattr?: number;
  kato?: number;
  sgl: SglSpec;
}): Uint8Array {
  const b = sqe({ opc: OPC_FABRICS, cid: o.cid, fctype: FCTYPE_CONNECT, sgl: o.sgl });
  put16(b, 42, o.qid);
  put16(b, 44, o.sqsize);
  b[46] = o.cattr ?? 0;
  put32(b, 48, o.kato ?? (o.qid === 0 ? 120000 : 0));
  return b;
}

/** Property Get/Set: ATTRIB @40 (0: 4 octets, 1: 8 octets), OFFSET @44, Set value @48. */
export function propertySqe(o: {
  cid: number;
  set: boolean;
  offset: number;
  size8: boolean;
  value?: bigint;
}): Uint8Array {
  const b = sqe({
    opc: OPC_FABRICS,
    cid: o.cid,
    fctype: o.set ? FCTYPE_PROPERTY_SET : FCTYPE_PROPERTY_GET,
    sgl: { kind: 'null' },
  });
  b[40] = o.size8 ? 1 : 0;
  put32(b, 44, o.offset);
  if (o.set) put64(b, 48, o.value ?? 0n);
  return b;
}

/** Connect data: HOSTID @0 (16), CNTLID @16, SUBNQN @256, HOSTNQN @512 (NVMe-oF). */
export function connectData(o: { hostid: Uint8Array; cntlid: number; subnqn: string; hostnqn: string }): Uint8Array {
  const b = new Uint8Array(1024);
  b.set(o.hostid.subarray(0, 16), 0);
  put16(b, 16, o.cntlid);
  b.set(new TextEncoder().encode(o.subnqn).subarray(0, 255), 256);
  b.set(new TextEncoder().encode(o.hostnqn).subarray(0, 255), 512);
  return b;
}

/** CQE: DW0 @0, DW1 @4, SQHD @8, SQID @10, CID @12, Status @14 (SC bits 8:1, SCT 11:9, DNR 15). */
export function cqe(o: {
  cid: number;
  sqhd: number;
  sqid: number;
  dw0?: number;
  sct?: number;
  sc?: number;
  dnr?: boolean;
}): Uint8Array {
  const b = new Uint8Array(16);
  put32(b, 0, o.dw0 ?? 0);
  put16(b, 8, o.sqhd);
  put16(b, 10, o.sqid);
  put16(b, 12, o.cid);
  put16(b, 14, ((o.sc ?? 0) << 1) | ((o.sct ?? 0) << 9) | (o.dnr ? 0x8000 : 0));
  return b;
}

/** Identify Namespace data (4096 octets): NSZE, NCAP, NUSE, NLBAF 0, FLBAS 0, LBAF0 with LBADS = log2(lbaSize). */
export function identifyNamespace(blocks: bigint, lbaSize: number): Uint8Array {
  const b = new Uint8Array(4096);
  put64(b, 0, blocks);
  put64(b, 8, blocks);
  put64(b, 16, blocks);
  b[25] = 0;
  b[26] = 0;
  b[128 + 2] = Math.log2(lbaSize);
  return b;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
