/**
 * NVMe over Fabrics on RDMA, wire structures (all little-endian): the RDMA CM private data of the
 * transport binding (REQ, REP, REJ: 32 octets each as Linux nvme-rdma.h and Wireshark's
 * packet-nvme-rdma.c lay them out), the 64-octet command (SQE) with its SGL descriptor, the
 * 16-octet completion (CQE), the Connect command's fields and its 1024-octet data, and the LBA
 * format of an Identify Namespace data structure. Decoders never read past what was captured:
 * a field whose octets are missing is null.
 */
import { FCTYPE, OPC_FABRICS } from './names.js';

export const SQE_LEN = 64;
export const CQE_LEN = 16;
export const CM_PD_LEN = 32;
export const CONNECT_DATA_LEN = 1024;

const u16 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8);
const u24 = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16);
const u32 = (b: Uint8Array, o: number): number =>
  (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24)) >>> 0;
/** BigInt arithmetic is slow: a zero high word (most SGL addresses and SLBAs) costs one conversion. */
const u64 = (b: Uint8Array, o: number): bigint => {
  const hi = u32(b, o + 4);
  const lo = u32(b, o);
  return hi === 0 ? (lo === 0 ? 0n : BigInt(lo)) : BigInt(lo) | (BigInt(hi) << 32n);
};

// --- RDMA CM private data (NVMe/RDMA transport binding) ---

export interface CmRequest {
  readonly recfmt: number;
  /** 0: the admin queue; else an I/O queue. */
  readonly qid: number;
  /** Host receive queue size. */
  readonly hrqsize: number;
  /** Host send queue size, zero-based (the SQ size less one, like Connect's SQSIZE). */
  readonly hsqsize: number;
  readonly cntlid: number;
  readonly length: number;
}
export interface CmReply {
  readonly recfmt: number;
  /** Controller receive queue size. */
  readonly crqsize: number;
  readonly length: number;
}
export interface CmReject {
  readonly recfmt: number;
  readonly status: number;
  readonly length: number;
}

/** REQ from the MPA Request private data (after the RFC 6581 block); null under 10 octets. */
export function decodeCmRequest(b: Uint8Array | null): CmRequest | null {
  if (!b || b.length < 10) return null;
  return {
    recfmt: u16(b, 0),
    qid: u16(b, 2),
    hrqsize: u16(b, 4),
    hsqsize: u16(b, 6),
    cntlid: u16(b, 8),
    length: b.length,
  };
}
export function decodeCmReply(b: Uint8Array | null): CmReply | null {
  if (!b || b.length < 4) return null;
  return { recfmt: u16(b, 0), crqsize: u16(b, 2), length: b.length };
}
export function decodeCmReject(b: Uint8Array | null): CmReject | null {
  if (!b || b.length < 4) return null;
  return { recfmt: u16(b, 0), status: u16(b, 2), length: b.length };
}

// --- SGL descriptor (NVMe Base "SGL Descriptor"; NVMe/RDMA uses Keyed Data Block and in-capsule offsets) ---

export const SGL_KEYED = 0x4;
export const SGL_DATA_BLOCK = 0x0;
/** Keyed Data Block subtypes: Address, and Address with Invalidate Key (the controller invalidates on completion). */
export const SGL_SUB_ADDRESS = 0x0;
export const SGL_SUB_INVALIDATE = 0xf;
/** Data Block subtype Offset: the address is an offset into the in-capsule data. */
export const SGL_SUB_OFFSET = 0x1;

export interface Sgl {
  /** Descriptor identifier octet (octet 15): type in bits 7:4, subtype in bits 3:0. */
  readonly id: number;
  readonly type: number;
  readonly subtype: number;
  readonly addr: bigint;
  /** Keyed: 3-octet length; Data Block: 4-octet length. */
  readonly length: number;
  /** Keyed only. */
  readonly key: number | null;
  readonly kind: 'keyed' | 'keyed-invalidate' | 'in-capsule' | 'null' | 'other';
}

export function decodeSgl(b: Uint8Array, o: number): Sgl {
  const id = b[o + 15]!;
  const type = id >> 4;
  const subtype = id & 0xf;
  const addr = u64(b, o);
  if (type === SGL_KEYED) {
    const length = u24(b, o + 8);
    const key = u32(b, o + 11);
    const kind =
      length === 0 && key === 0 && subtype === SGL_SUB_ADDRESS
        ? 'null'
        : subtype === SGL_SUB_INVALIDATE
          ? 'keyed-invalidate'
          : subtype === SGL_SUB_ADDRESS
            ? 'keyed'
            : 'other';
    return { id, type, subtype, addr, length, key, kind };
  }
  const length = u32(b, o + 8);
  const kind = type === SGL_DATA_BLOCK && subtype === SGL_SUB_OFFSET ? 'in-capsule' : 'other';
  return { id, type, subtype, addr, length, key: null, kind };
}

// --- Submission Queue Entry (command capsule) ---

export interface Connect {
  readonly recfmt: number;
  readonly qid: number;
  /** Zero-based. */
  readonly sqsize: number;
  readonly cattr: number;
  readonly kato: number;
}
export interface PropertyGetSet {
  readonly attrib: number;
  readonly offset: number;
  /** Property Set: the value (CDW14-15 as Linux nvmf_property_set_command.value @48). */
  readonly value: bigint | null;
}

export interface Sqe {
  readonly opc: number;
  readonly flags: number;
  readonly fuse: number;
  /** PRP or SGL for Data Transfer (FLAGS bits 7:6). */
  readonly psdt: number;
  readonly cid: number;
  /** Fabrics commands have no NSID: octets 4.. are FCTYPE and reserved. */
  readonly nsid: number;
  readonly fctype: number | null;
  readonly sgl: Sgl;
  readonly cdw10: number;
  readonly cdw11: number;
  readonly cdw12: number;
  readonly cdw13: number;
  /** NVM Read/Write: NLB (CDW12 bits 15:0, zero-based); SLBA is slbaOf(). */
  readonly nlb: number;
  readonly connect: Connect | null;
  readonly property: PropertyGetSet | null;
}

/** The 64-octet SQE at the start of a command capsule; null when fewer octets were captured. */
export function decodeSqe(b: Uint8Array): Sqe | null {
  if (b.length < SQE_LEN) return null;
  const opc = b[0]!;
  const flags = b[1]!;
  const fabrics = opc === OPC_FABRICS;
  const fctype = fabrics ? b[4]! : null;
  const cdw10 = u32(b, 40);
  const cdw11 = u32(b, 44);
  const cdw12 = u32(b, 48);
  return {
    opc,
    flags,
    fuse: flags & 3,
    psdt: flags >> 6,
    cid: u16(b, 2),
    nsid: fabrics ? 0 : u32(b, 4),
    fctype,
    sgl: decodeSgl(b, 24),
    cdw10,
    cdw11,
    cdw12,
    cdw13: u32(b, 52),
    nlb: cdw12 & 0xffff,
    connect:
      fctype === FCTYPE.CONNECT
        ? { recfmt: u16(b, 40), qid: u16(b, 42), sqsize: u16(b, 44), cattr: b[46]!, kato: u32(b, 48) }
        : null,
    property:
      fctype === FCTYPE.PROPERTY_GET || fctype === FCTYPE.PROPERTY_SET
        ? { attrib: b[40]!, offset: u32(b, 44), value: fctype === FCTYPE.PROPERTY_SET ? u64(b, 48) : null }
        : null,
  };
}

/** NVM Read/Write Starting LBA (CDW10-11). */
export function slbaOf(q: Sqe): bigint {
  return q.cdw11 === 0 ? BigInt(q.cdw10) : BigInt(q.cdw10) | (BigInt(q.cdw11) << 32n);
}

/** Connect Attributes bit 2: SQ flow control disabled (the controller does not report SQHD). */
export const CATTR_DISABLE_SQ_FLOW_CONTROL = 0x04;

// --- Connect data (1024 octets, host to controller) ---

export interface ConnectData {
  readonly hostid: Uint8Array;
  readonly cntlid: number;
  readonly subnqn: string;
  readonly hostnqn: string;
}

const nqn = (b: Uint8Array, o: number): string => {
  let end = o;
  while (end < o + 256 && end < b.length && b[end] !== 0) end++;
  return new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(o, end));
};

/** The Connect data at `b` (in-capsule), null under the 768 octets that reach the Host NQN. */
export function decodeConnectData(b: Uint8Array): ConnectData | null {
  if (b.length < 768) return null;
  return { hostid: b.slice(0, 16), cntlid: u16(b, 16), subnqn: nqn(b, 256), hostnqn: nqn(b, 512) };
}

// --- Completion Queue Entry (response capsule) ---

export interface Cqe {
  readonly dw0: number;
  readonly dw1: number;
  readonly sqhd: number;
  readonly sqid: number;
  readonly cid: number;
  readonly status: number;
  /** Status Field split: Phase Tag bit 0, SC bits 8:1, SCT 11:9, CRD 13:12, M 14, DNR 15 (Wireshark's masks). */
  readonly sc: number;
  readonly sct: number;
  readonly crd: number;
  readonly more: boolean;
  readonly dnr: boolean;
}

export function decodeCqe(b: Uint8Array): Cqe | null {
  if (b.length < CQE_LEN) return null;
  const status = u16(b, 14);
  return {
    dw0: u32(b, 0),
    dw1: u32(b, 4),
    sqhd: u16(b, 8),
    sqid: u16(b, 10),
    cid: u16(b, 12),
    status,
    sc: (status >> 1) & 0xff,
    sct: (status >> 9) & 7,
    crd: (status >> 12) & 3,
    more: (status & 0x4000) !== 0,
    dnr: (status & 0x8000) !== 0,
  };
}

// --- Identify Namespace (CNS 00h) data: the formatted LBA size ---

/**
 * LBA data size in octets of the namespace's current format, for the (NLB + 1) × LBA size check.
 * FLBAS (octet 26) bits 3:0 pick an LBA Format, bits 6:5 add the index's two high bits when NLBAF
 * (octet 25, zero-based) counts more than 16 formats (NVMe Base 2.0 "Formatted LBA Size"); the LBA
 * Format at octets 128 + 4n holds MS (bits 15:0, metadata octets per block) and LBADS (bits 23:16,
 * log2 of the data size). Null when the octets were not seen, LBADS is below 9 (the minimum, 512
 * octets), or the format carries metadata: on fabrics metadata travels inside the data (extended
 * LBAs) and protection information may be inserted or stripped by the controller (PRACT), so the
 * octets a command moves are not a multiple of the data size alone, and the check stays silent.
 */
export function lbaSizeOfIdentifyNs(b: Uint8Array): number | null {
  if (b.length < 27) return null;
  const flbas = b[26]!;
  const f = (flbas & 0xf) | (b[25]! >= 16 ? ((flbas >> 5) & 3) << 4 : 0);
  const o = 128 + 4 * f;
  if (b.length < o + 4) return null;
  const ms = u16(b, o);
  const lbads = b[o + 2]!;
  return ms === 0 && lbads >= 9 && lbads < 32 ? 2 ** lbads : null;
}

/** True when `b` starts with a command a host sends first on a queue: a Fabrics Connect (NVMe-oF). */
export function isConnectCommand(b: Uint8Array, length: number): boolean {
  if (length < SQE_LEN || b.length < SQE_LEN) return false;
  if (b[0] !== OPC_FABRICS || b[4] !== FCTYPE.CONNECT) return false;
  const recfmt = u16(b, 40);
  return recfmt === 0;
}
