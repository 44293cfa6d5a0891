/**
 * iSER and iSCSI wire formats, decoded from the octets captured: the 28-octet iSER header
 * (RFC 7145 §9.2), iSER Hello and HelloReply (§9.3, §9.4), the iSCSI Basic Header Segment
 * (RFC 7143 §11.2) with the fields of the opcodes iSER carries, the SCSI CDB's operation, LBA and
 * transfer length (SBC-3 READ/WRITE(6/10/12/16)), and Login/Text key=value data (RFC 7143 §6.1).
 * Everything is big-endian. Nothing here allocates per octet; hostile lengths are only reported.
 */
import { ISER_OP, OP } from './names.js';

export const ISER_HDR_LEN = 28;
export const BHS_LEN = 48;
/** iSER flags (RFC 7145 §9.2; Wireshark ISER_WSV, ISER_RSV, ISER_REJ). */
export const FLAG_WSV = 0x08;
export const FLAG_RSV = 0x04;
export const FLAG_REJ = 0x01;
/** iSER version carried in Hello / HelloReply (both nibbles; Wireshark accepts only 10). */
export const ISER_VERSION = 10;

const be32 = (b: Uint8Array, o: number): number =>
  ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
const be16 = (b: Uint8Array, o: number): number => (b[o]! << 8) | b[o + 1]!;
const be64 = (b: Uint8Array, o: number): bigint => (BigInt(be32(b, o)) << 32n) | BigInt(be32(b, o + 4));

export interface IserHeader {
  readonly flags: number;
  /** High nibble of the flags octet. */
  readonly opcode: number;
  /** Octets 1-3 (reserved for control-type PDUs). */
  readonly reserved: number;
  readonly wsv: boolean;
  readonly rsv: boolean;
  readonly writeStag: number;
  readonly writeBase: bigint;
  readonly readStag: number;
  readonly readBase: bigint;
}

/** The iSER header of a control-type PDU, or null when fewer than 28 octets were captured. */
export function decodeIserHeader(b: Uint8Array): IserHeader | null {
  if (b.length < ISER_HDR_LEN) return null;
  const flags = b[0]!;
  return {
    flags,
    opcode: flags >> 4,
    reserved: (b[1]! << 16) | (b[2]! << 8) | b[3]!,
    wsv: (flags & FLAG_WSV) !== 0,
    rsv: (flags & FLAG_RSV) !== 0,
    writeStag: be32(b, 4),
    writeBase: be64(b, 8),
    readStag: be32(b, 16),
    readBase: be64(b, 20),
  };
}

/** iSER Hello (MaxVer, MinVer, iSER-IRD) or HelloReply (MaxVer, CurVer, iSER-ORD, REJ). */
export interface IserHello {
  readonly reply: boolean;
  readonly flags: number;
  readonly maxVer: number;
  /** MinVer in a Hello, CurVer in a HelloReply. */
  readonly minVer: number;
  /** iSER-IRD (Hello) or iSER-ORD (HelloReply). */
  readonly irdOrd: number;
  readonly rej: boolean;
}

export function decodeHello(b: Uint8Array): IserHello | null {
  if (b.length < 4) return null;
  const op = b[0]! >> 4;
  if (op !== ISER_OP.hello && op !== ISER_OP.helloReply) return null;
  return {
    reply: op === ISER_OP.helloReply,
    flags: b[0]!,
    maxVer: b[1]! >> 4,
    minVer: b[1]! & 0x0f,
    irdOrd: be16(b, 2),
    rej: op === ISER_OP.helloReply && (b[0]! & FLAG_REJ) !== 0,
  };
}

/** The iSCSI Basic Header Segment, with the opcode-specific fields iSER connections carry. */
export interface Bhs {
  readonly opcode: number;
  /** I bit: immediate delivery (initiator PDUs). */
  readonly immediate: boolean;
  /** Octet 1 (F bit and the opcode-specific flags). */
  readonly flags: number;
  readonly final: boolean;
  /** TotalAHSLength in octets (the field counts 4-octet words). */
  readonly ahsLength: number;
  readonly dataLength: number;
  /** Octets 8-15: LUN, or ISID+TSIH in Login PDUs. */
  readonly lun: bigint;
  readonly itt: number;
  /** Octets 20-23: EDTL (SCSI Command), TTT (Data-Out, NOP), CID (Login, octets 20-21). */
  readonly word20: number;
  /** CmdSN (initiator PDUs) or StatSN (target PDUs). */
  readonly sn24: number;
  /** ExpStatSN (initiator) or ExpCmdSN (target). */
  readonly sn28: number;
  /** MaxCmdSN (target PDUs). */
  readonly word32: number;
  /** ExpDataSN / DataSN (octets 36-39). */
  readonly word36: number;
  /** Bidirectional read residual (SCSI Response), Buffer Offset (Data-In/Out): octets 40-43. */
  readonly word40: number;
  /** ResidualCount (SCSI Response, Data-In): octets 44-47. */
  readonly word44: number;
  /** Offset of the BHS within the octets decoded. */
  readonly at: number;
}

export function decodeBhs(b: Uint8Array, at = 0): Bhs | null {
  if (b.length - at < BHS_LEN) return null;
  const f = b[at + 1]!;
  return {
    opcode: b[at]! & 0x3f,
    immediate: (b[at]! & 0x40) !== 0,
    flags: f,
    final: (f & 0x80) !== 0,
    ahsLength: b[at + 4]! * 4,
    dataLength: (b[at + 5]! << 16) | (b[at + 6]! << 8) | b[at + 7]!,
    lun: be64(b, at + 8),
    itt: be32(b, at + 16),
    word20: be32(b, at + 20),
    sn24: be32(b, at + 24),
    sn28: be32(b, at + 28),
    word32: be32(b, at + 32),
    word36: be32(b, at + 36),
    word40: be32(b, at + 40),
    word44: be32(b, at + 44),
    at,
  };
}

/** SCSI Command flags (RFC 7143 §11.3.1). */
export const CMD_R = 0x40;
export const CMD_W = 0x20;
/** SCSI Response flags (RFC 7143 §11.4.1). */
export const RSP_BIDI_OVER = 0x10;
export const RSP_BIDI_UNDER = 0x08;
export const RSP_OVER = 0x04;
export const RSP_UNDER = 0x02;

/** Octets of the PDU on the wire: BHS, AHS, data segment padded to 4 (digests not counted). */
export function pduLength(h: Bhs): number {
  return BHS_LEN + h.ahsLength + ((h.dataLength + 3) & ~3);
}

/** The LUN's first level, as Wireshark shows it in Info ("LUN: 0x00"): peripheral/flat addressing. */
export function lunNumber(lun: bigint): number {
  const hi = Number(lun >> 48n) & 0xffff;
  return hi >> 14 === 1 ? hi & 0x3fff : hi & 0xff;
}

/** The CDB of a SCSI Command: its operation and, for READ/WRITE, the LBA and transfer length. */
export interface Cdb {
  readonly opcode: number;
  readonly lba: bigint | null;
  /** Transfer length in logical blocks (READ/WRITE family), null for other commands. */
  readonly blocks: number | null;
  /** Length of the CDB form (6, 10, 12, 16). */
  readonly form: number;
  /** Octets 32-47 of the SCSI Command BHS. */
  readonly at: number;
}

export function decodeCdb(b: Uint8Array, bhsAt = 0): Cdb | null {
  const at = bhsAt + 32;
  if (b.length < at + 16) return null;
  const op = b[at]!;
  const group = op >> 5;
  let lba: bigint | null = null;
  let blocks: number | null = null;
  const rw = isReadWrite(op);
  if (group === 0) {
    if (rw) {
      lba = BigInt(((b[at + 1]! & 0x1f) << 16) | (b[at + 2]! << 8) | b[at + 3]!);
      blocks = b[at + 4]! === 0 ? 256 : b[at + 4]!;
    }
    return { opcode: op, lba, blocks, form: 6, at };
  }
  if (group === 1 || group === 2) {
    if (rw) {
      lba = BigInt(be32(b, at + 2));
      blocks = be16(b, at + 7);
    }
    return { opcode: op, lba, blocks, form: 10, at };
  }
  if (group === 5) {
    if (rw) {
      lba = BigInt(be32(b, at + 2));
      blocks = be32(b, at + 6);
    }
    return { opcode: op, lba, blocks, form: 12, at };
  }
  if (group === 4) {
    if (rw) {
      lba = be64(b, at + 2);
      blocks = be32(b, at + 10);
    }
    return { opcode: op, lba, blocks, form: 16, at };
  }
  return { opcode: op, lba, blocks, form: 16, at };
}

/** READ and WRITE of SBC-3 (6, 10, 12, 16): the commands whose CDB carries LBA and length. */
export function isReadWrite(op: number): boolean {
  return (
    op === 0x08 || op === 0x0a || op === 0x28 || op === 0x2a || op === 0xa8 || op === 0xaa || op === 0x88 || op === 0x8a
  );
}

/** Commands that move data from the initiator (WRITE family): their W bit is expected set. */
export function isWriteOp(op: number): boolean {
  return op === 0x0a || op === 0x2a || op === 0xaa || op === 0x8a || op === 0x2e || op === 0x8e;
}

/** Most keys kept from one Login or Text data segment (the rest are counted). */
export const MAX_KEYS = 64;
/** Longest key=value pair decoded (RFC 7143 §6.1: values up to 8192 octets; keys up to 63). */
const MAX_PAIR = 8192 + 64;

export interface KeyValue {
  readonly key: string;
  readonly value: string;
  readonly offset: number;
  readonly length: number;
}

/**
 * Login / Text data: null-terminated key=value pairs (RFC 7143 §6.1). At most MAX_KEYS are kept;
 * `more` counts the rest. A pair without its terminator at the end of the octets is left out.
 */
export function decodeKeys(b: Uint8Array, from: number, to: number): { keys: KeyValue[]; more: number } {
  const keys: KeyValue[] = [];
  let more = 0;
  let i = from;
  const end = Math.min(to, b.length);
  while (i < end) {
    let z = i;
    const limit = Math.min(end, i + MAX_PAIR);
    while (z < limit && b[z] !== 0) z++;
    if (z >= limit) break;
    if (z > i) {
      if (keys.length < MAX_KEYS) {
        const text = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(i, z));
        const eq = text.indexOf('=');
        keys.push({
          key: eq < 0 ? text : text.slice(0, eq),
          value: eq < 0 ? '' : text.slice(eq + 1),
          offset: i,
          length: z - i + 1,
        });
      } else more++;
    }
    i = z + 1;
  }
  return { keys, more };
}

/** Login stages of the flags octet (RFC 7143 §11.12.3). */
export function loginStages(flags: number): { transit: boolean; cont: boolean; csg: number; nsg: number } {
  return { transit: (flags & 0x80) !== 0, cont: (flags & 0x40) !== 0, csg: (flags >> 2) & 3, nsg: flags & 3 };
}

/** True when the opcode is one iSER sends in a Send (every iSCSI PDU but Data-In and R2T, RFC 7145 §7.3). */
export function isIserOpcode(op: number): boolean {
  return op !== OP.dataIn && op !== OP.r2t;
}
