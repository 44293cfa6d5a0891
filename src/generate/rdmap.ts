/**
 * RDMAP messages (RFC 5040) as DDP segments (RFC 5041) for the generator and the MPA peer: a
 * message larger than one ULPDU is cut into segments (MO or TO advancing, L on the last), as an
 * RNIC does. Layouts: SPEC-NOTES Part 2. Complements sendUlpdu/writeUlpdu in mpa-encoder.ts.
 */
import { patternBytes } from './mpa-encoder.js';

export const OP_WRITE = 0x0;
export const OP_READ_REQUEST = 0x1;
export const OP_READ_RESPONSE = 0x2;
export const OP_SEND = 0x3;
export const OP_SEND_SE = 0x5;
export const OP_TERMINATE = 0x7;

/** Untagged queues (RFC 5040 §5.1): Sends, Read Requests, Terminates. */
export const QN_SEND = 0;
export const QN_READ = 1;
export const QN_TERMINATE = 2;

const DV = 1;
const RV = 1;

function untaggedHeader(out: Uint8Array, opcode: number, last: boolean, qn: number, msn: number, mo: number): void {
  const v = new DataView(out.buffer, out.byteOffset, out.length);
  out[0] = (last ? 0x40 : 0) | DV;
  out[1] = (RV << 6) | opcode;
  v.setUint32(2, 0);
  v.setUint32(6, qn);
  v.setUint32(10, msn);
  v.setUint32(14, mo);
}

function taggedHeader(out: Uint8Array, opcode: number, last: boolean, stag: number, to: bigint): void {
  const v = new DataView(out.buffer, out.byteOffset, out.length);
  out[0] = 0x80 | (last ? 0x40 : 0) | DV;
  out[1] = (RV << 6) | opcode;
  v.setUint32(2, stag >>> 0);
  v.setBigUint64(6, BigInt.asUintN(64, to));
}

/** A Send (QN 0) of `payload`, cut into ULPDUs of at most `maxUlpdu` octets. */
export function sendSegments(msn: number, payload: Uint8Array, maxUlpdu: number, opcode = OP_SEND): Uint8Array[] {
  const room = Math.max(1, maxUlpdu - 18);
  const out: Uint8Array[] = [];
  let off = 0;
  do {
    const n = Math.min(room, payload.length - off);
    const u = new Uint8Array(18 + n);
    untaggedHeader(u, opcode, off + n >= payload.length, QN_SEND, msn, off);
    u.set(payload.subarray(off, off + n), 18);
    out.push(u);
    off += n;
  } while (off < payload.length);
  return out;
}

/** An RDMA Write (or Read Response) of `payload` to stag/to, cut into ULPDUs of at most `maxUlpdu`. */
export function taggedSegments(
  opcode: number,
  stag: number,
  to: bigint,
  payload: Uint8Array,
  maxUlpdu: number,
): Uint8Array[] {
  const room = Math.max(1, maxUlpdu - 14);
  const out: Uint8Array[] = [];
  let off = 0;
  do {
    const n = Math.min(room, payload.length - off);
    const u = new Uint8Array(14 + n);
    taggedHeader(u, opcode, off + n >= payload.length, stag, to + BigInt(off));
    u.set(payload.subarray(off, off + n), 14);
    out.push(u);
    off += n;
  } while (off < payload.length);
  return out;
}

export interface ReadRequestFields {
  sinkStag: number;
  sinkTo: bigint;
  size: number;
  srcStag: number;
  srcTo: bigint;
}

/** RDMA Read Request (QN 1): the 18-octet untagged header and the 28-octet RDMAP header. */
export function readRequestUlpdu(msn: number, r: ReadRequestFields): Uint8Array {
  const u = new Uint8Array(18 + 28);
  untaggedHeader(u, OP_READ_REQUEST, true, QN_READ, msn, 0);
  const v = new DataView(u.buffer);
  v.setUint32(18, r.sinkStag >>> 0);
  v.setBigUint64(22, BigInt.asUintN(64, r.sinkTo));
  v.setUint32(30, r.size >>> 0);
  v.setUint32(34, r.srcStag >>> 0);
  v.setBigUint64(38, BigInt.asUintN(64, r.srcTo));
  return u;
}

/** Reads a Read Request's RDMAP header back (the peer answering it); null when the ULPDU is none. */
export function parseReadRequest(u: Uint8Array): ReadRequestFields | null {
  if (u.length < 46 || (u[0]! & 0x80) !== 0 || (u[1]! & 0x0f) !== OP_READ_REQUEST) return null;
  const v = new DataView(u.buffer, u.byteOffset, u.length);
  return {
    sinkStag: v.getUint32(18),
    sinkTo: v.getBigUint64(22),
    size: v.getUint32(30),
    srcStag: v.getUint32(34),
    srcTo: v.getBigUint64(38),
  };
}

/**
 * Terminate (QN 2, RFC 5040 §4.8): layer/etype/code, no copied headers (Hdrct M=D=R=0).
 * Default: RDMAP layer (0), Remote Operation Error (2), code 0xff Unspecified Error.
 */
export function terminateUlpdu(msn: number, o: { layer?: number; etype?: number; code?: number } = {}): Uint8Array {
  const u = new Uint8Array(18 + 4);
  untaggedHeader(u, OP_TERMINATE, true, QN_TERMINATE, msn, 0);
  u[18] = (((o.layer ?? 0) & 0xf) << 4) | ((o.etype ?? 2) & 0xf);
  u[19] = (o.code ?? 0xff) & 0xff;
  return u;
}

/** Deterministic payload octets (the same seed gives the same octets in every run). */
export function payload(n: number, seed: number): Uint8Array {
  return patternBytes(n, seed);
}
