/**
 * iSER and iSCSI PDUs as the specifications lay them out, for the generator: the iSCSI Basic
 * Header Segment (RFC 7143 §11.2) of SCSI Command (§11.3), SCSI Response (§11.4), SCSI Data-Out
 * (§11.7), Login Request/Response (§11.12, §11.13), Text, NOP-Out/NOP-In and Logout; the SCSI
 * CDBs of READ/WRITE(10/16) and INQUIRY (SBC-3, SPC-4); the iSER header (RFC 7145 §9.2), Hello and
 * HelloReply (§9.3, §9.4); the iSER CM REQ private data (RFC 7145 §9.1, Linux struct iser_cm_hdr).
 * Built from the documents, never from what the analyzer reads.
 */

export const ISCSI_PORT = 3260;

const OPC = {
  nopOut: 0x00,
  scsiCommand: 0x01,
  loginRequest: 0x03,
  textRequest: 0x04,
  dataOut: 0x05,
  logoutRequest: 0x06,
  nopIn: 0x20,
  scsiResponse: 0x21,
  loginResponse: 0x23,
  textResponse: 0x24,
  dataIn: 0x25,
  logoutResponse: 0x26,
  r2t: 0x31,
} as const;
export { OPC as ISCSI_OPCODE };

function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = (v >>> 24) & 0xff;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
}
function put64(b: Uint8Array, o: number, v: bigint): void {
  put32(b, o, Number((v >> 32n) & 0xffffffffn));
  put32(b, o + 4, Number(v & 0xffffffffn));
}

export function cat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** An iSCSI PDU: BHS, optional AHS, data segment padded to a multiple of 4 (no digests). */
export interface PduFields {
  readonly opcode: number;
  readonly immediate?: boolean;
  /** Octet 1. */
  readonly flags: number;
  /** Octets 2-3. */
  readonly b2?: number;
  readonly b3?: number;
  readonly ahs?: Uint8Array;
  readonly data?: Uint8Array;
  /** Overrides DataSegmentLength (hostile input). */
  readonly dataLength?: number;
  /** Overrides TotalAHSLength in words (hostile input). */
  readonly ahsWords?: number;
  /** Octets 8-15 (LUN, or ISID + TSIH). */
  readonly lun?: bigint;
  readonly itt: number;
  readonly w20?: number;
  readonly w24?: number;
  readonly w28?: number;
  readonly w32?: number;
  readonly w36?: number;
  readonly w40?: number;
  readonly w44?: number;
  /** Octets 32-47 (CDB) replacing w32..w44. */
  readonly cdb?: Uint8Array;
}

export function pdu(f: PduFields): Uint8Array {
  const data = f.data ?? new Uint8Array(0);
  const ahs = f.ahs ?? new Uint8Array(0);
  const bhs = new Uint8Array(48);
  bhs[0] = (f.immediate ? 0x40 : 0) | f.opcode;
  bhs[1] = f.flags;
  bhs[2] = f.b2 ?? 0;
  bhs[3] = f.b3 ?? 0;
  bhs[4] = f.ahsWords ?? ahs.length / 4;
  const dl = f.dataLength ?? data.length;
  bhs[5] = (dl >>> 16) & 0xff;
  bhs[6] = (dl >>> 8) & 0xff;
  bhs[7] = dl & 0xff;
  put64(bhs, 8, f.lun ?? 0n);
  put32(bhs, 16, f.itt);
  put32(bhs, 20, f.w20 ?? 0);
  put32(bhs, 24, f.w24 ?? 0);
  put32(bhs, 28, f.w28 ?? 0);
  if (f.cdb) bhs.set(f.cdb.subarray(0, 16), 32);
  else {
    put32(bhs, 32, f.w32 ?? 0);
    put32(bhs, 36, f.w36 ?? 0);
    put32(bhs, 40, f.w40 ?? 0);
    put32(bhs, 44, f.w44 ?? 0);
  }
  const pad = (4 - (data.length % 4)) % 4;
  return cat(bhs, ahs, data, new Uint8Array(pad));
}

/** LUN 0..255 in single-level peripheral addressing (SAM-5 §4.7.3): the number in octet 1. */
export const lun = (n: number): bigint => BigInt(n & 0xff) << 48n;

// --- SCSI CDBs (16 octets as the BHS holds them) ---

export function read10(lba: number, blocks: number): Uint8Array {
  const c = new Uint8Array(16);
  c[0] = 0x28;
  put32(c, 2, lba);
  c[7] = (blocks >> 8) & 0xff;
  c[8] = blocks & 0xff;
  return c;
}
export function write10(lba: number, blocks: number): Uint8Array {
  const c = read10(lba, blocks);
  c[0] = 0x2a;
  return c;
}
export function read16(lba: bigint, blocks: number): Uint8Array {
  const c = new Uint8Array(16);
  c[0] = 0x88;
  put64(c, 2, lba);
  put32(c, 10, blocks);
  return c;
}
export function write16(lba: bigint, blocks: number): Uint8Array {
  const c = read16(lba, blocks);
  c[0] = 0x8a;
  return c;
}
/** INQUIRY (SPC-4 §6.6): allocation length in octets 3-4. */
export function inquiry(alloc: number): Uint8Array {
  const c = new Uint8Array(16);
  c[0] = 0x12;
  c[3] = (alloc >> 8) & 0xff;
  c[4] = alloc & 0xff;
  return c;
}
export function testUnitReady(): Uint8Array {
  return new Uint8Array(16);
}

// --- iSCSI PDUs ---

export interface CommandOpts {
  readonly itt: number;
  readonly cdb: Uint8Array;
  readonly edtl: number;
  readonly read?: boolean;
  readonly write?: boolean;
  readonly cmdSn: number;
  readonly expStatSn: number;
  readonly lun?: number;
  /** Immediate data carried in the command's data segment. */
  readonly immediateData?: Uint8Array;
  /** F bit: no unsolicited Data-Out follows (default true). */
  readonly final?: boolean;
}

/** SCSI Command (RFC 7143 §11.3): F, R, W, ATTR=Simple(0); EDTL, CmdSN, ExpStatSN, CDB. */
export function scsiCommand(o: CommandOpts): Uint8Array {
  const flags = (o.final === false ? 0 : 0x80) | (o.read ? 0x40 : 0) | (o.write ? 0x20 : 0);
  return pdu({
    opcode: OPC.scsiCommand,
    flags,
    lun: lun(o.lun ?? 0),
    itt: o.itt,
    w20: o.edtl,
    w24: o.cmdSn,
    w28: o.expStatSn,
    cdb: o.cdb,
    ...(o.immediateData ? { data: o.immediateData } : {}),
  });
}

export interface ResponseOpts {
  readonly itt: number;
  readonly status?: number;
  readonly statSn: number;
  readonly expCmdSn: number;
  readonly maxCmdSn: number;
  /** Residual underflow (U) or overflow (O) and its count. */
  readonly underflow?: number;
  readonly overflow?: number;
}

/** SCSI Response (RFC 7143 §11.4): F=1, Response 0 (completed at target), Status, residuals. */
export function scsiResponse(o: ResponseOpts): Uint8Array {
  const flags = 0x80 | (o.overflow !== undefined ? 0x04 : 0) | (o.underflow !== undefined ? 0x02 : 0);
  return pdu({
    opcode: OPC.scsiResponse,
    flags,
    b2: 0,
    b3: o.status ?? 0,
    itt: o.itt,
    w20: 0,
    w24: o.statSn,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
    w36: 0,
    w40: 0,
    w44: o.underflow ?? o.overflow ?? 0,
  });
}

/** SCSI Data-Out (RFC 7143 §11.7): unsolicited data (TTT 0xffffffff), F on the last. */
export function dataOut(o: {
  itt: number;
  data: Uint8Array;
  offset: number;
  dataSn: number;
  expStatSn: number;
  final: boolean;
  lun?: number;
}): Uint8Array {
  return pdu({
    opcode: OPC.dataOut,
    flags: o.final ? 0x80 : 0,
    lun: lun(o.lun ?? 0),
    itt: o.itt,
    w20: 0xffffffff,
    w28: o.expStatSn,
    w36: o.dataSn,
    w40: o.offset,
    data: o.data,
  });
}

/** SCSI Data-In (RFC 7143 §11.8): only for the twin over TCP (iSER moves Data-In by RDMA Write). */
export function dataIn(o: {
  itt: number;
  data: Uint8Array;
  offset: number;
  dataSn: number;
  statSn: number;
  expCmdSn: number;
  maxCmdSn: number;
  final: boolean;
}): Uint8Array {
  return pdu({
    opcode: OPC.dataIn,
    flags: o.final ? 0x80 : 0,
    itt: o.itt,
    w20: 0xffffffff,
    w24: o.final ? o.statSn : 0,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
    w36: o.dataSn,
    w40: o.offset,
    data: o.data,
  });
}

/** R2T (RFC 7143 §11.9): only for the twin over TCP (iSER moves Data-Out by RDMA Read). */
export function r2t(o: {
  itt: number;
  ttt: number;
  statSn: number;
  expCmdSn: number;
  maxCmdSn: number;
  r2tSn: number;
  offset: number;
  length: number;
}): Uint8Array {
  return pdu({
    opcode: OPC.r2t,
    flags: 0x80,
    itt: o.itt,
    w20: o.ttt,
    w24: o.statSn,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
    w36: o.r2tSn,
    w40: o.offset,
    w44: o.length,
  });
}

/** key=value\0 ... (RFC 7143 §6.1). */
export function keys(pairs: ReadonlyArray<readonly [string, string]>): Uint8Array {
  return new TextEncoder().encode(pairs.map(([k, v]) => `${k}=${v}\0`).join(''));
}

/** ISID of type 0x80 (random, RFC 7143 §11.12.5) and TSIH, as octets 8-15. */
export const ISID_TSIH = (tsih: number): bigint => (0x80_00_00_00_00_01n << 16n) | BigInt(tsih & 0xffff);

export interface LoginOpts {
  readonly itt: number;
  /** Transit to the next stage. */
  readonly transit: boolean;
  readonly csg: number;
  readonly nsg: number;
  readonly tsih: number;
  readonly cmdSn: number;
  readonly expStatSn: number;
  readonly keys: Uint8Array;
  readonly cid?: number;
}

/** Login Request (RFC 7143 §11.12): I=1, T, C=0, CSG, NSG, VersionMax = VersionMin = 0. */
export function loginRequest(o: LoginOpts): Uint8Array {
  return pdu({
    opcode: OPC.loginRequest,
    immediate: true,
    flags: (o.transit ? 0x80 : 0) | (o.csg << 2) | (o.transit ? o.nsg : 0),
    b2: 0,
    b3: 0,
    lun: ISID_TSIH(o.tsih),
    itt: o.itt,
    w20: (o.cid ?? 0) << 16,
    w24: o.cmdSn,
    w28: o.expStatSn,
    data: o.keys,
  });
}

/** Login Response (RFC 7143 §11.13): VersionMax = VersionActive = 0, Status-Class/Detail. */
export function loginResponse(
  o: LoginOpts & { statSn: number; expCmdSn: number; maxCmdSn: number; status?: number },
): Uint8Array {
  return pdu({
    opcode: OPC.loginResponse,
    flags: (o.transit ? 0x80 : 0) | (o.csg << 2) | (o.transit ? o.nsg : 0),
    lun: ISID_TSIH(o.tsih),
    itt: o.itt,
    w24: o.statSn,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
    w36: (o.status ?? 0) << 16,
    data: o.keys,
  });
}

/** NOP-Out (RFC 7143 §11.18) pinging the target: TTT 0xffffffff, I=1. */
export function nopOut(o: { itt: number; cmdSn: number; expStatSn: number }): Uint8Array {
  return pdu({
    opcode: OPC.nopOut,
    immediate: true,
    flags: 0x80,
    itt: o.itt,
    w20: 0xffffffff,
    w24: o.cmdSn,
    w28: o.expStatSn,
  });
}

/** NOP-In answering a NOP-Out (RFC 7143 §11.19). */
export function nopIn(o: { itt: number; statSn: number; expCmdSn: number; maxCmdSn: number }): Uint8Array {
  return pdu({
    opcode: OPC.nopIn,
    flags: 0x80,
    itt: o.itt,
    w20: 0xffffffff,
    w24: o.statSn,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
  });
}

/** Logout Request (RFC 7143 §11.14), reason 0 (close the session). */
export function logoutRequest(o: { itt: number; cmdSn: number; expStatSn: number }): Uint8Array {
  return pdu({ opcode: OPC.logoutRequest, immediate: true, flags: 0x80, itt: o.itt, w24: o.cmdSn, w28: o.expStatSn });
}
export function logoutResponse(o: { itt: number; statSn: number; expCmdSn: number; maxCmdSn: number }): Uint8Array {
  return pdu({
    opcode: OPC.logoutResponse,
    flags: 0x80,
    itt: o.itt,
    w24: o.statSn,
    w28: o.expCmdSn,
    w32: o.maxCmdSn,
  });
}

// --- iSER ---

export interface IserHdr {
  readonly write?: { stag: number; base: bigint };
  readonly read?: { stag: number; base: bigint };
  /** Reserved bits set in the flags' low nibble (a mistake). */
  readonly badFlags?: number;
}

/** The iSER header of an iSCSI control-type PDU (RFC 7145 §9.2): opcode 0x1, WSV, RSV, STags, bases. */
export function iserHeader(h: IserHdr = {}): Uint8Array {
  const b = new Uint8Array(28);
  b[0] = 0x10 | (h.write ? 0x08 : 0) | (h.read ? 0x04 : 0) | (h.badFlags ?? 0);
  if (h.write) {
    put32(b, 4, h.write.stag);
    put64(b, 8, h.write.base);
  }
  if (h.read) {
    put32(b, 16, h.read.stag);
    put64(b, 20, h.read.base);
  }
  return b;
}

/** iSER Hello (RFC 7145 §9.3): opcode 0x2, MaxVer and MinVer 10 (0xA), iSER-IRD; 28 octets. */
export function iserHello(ird: number, version = 0xaa): Uint8Array {
  const b = new Uint8Array(28);
  b[0] = 0x20;
  b[1] = version;
  b[2] = (ird >> 8) & 0xff;
  b[3] = ird & 0xff;
  return b;
}

/** iSER HelloReply (RFC 7145 §9.4): opcode 0x3, REJ, MaxVer and CurVer 10, iSER-ORD; 28 octets. */
export function iserHelloReply(ord: number, rej = false): Uint8Array {
  const b = new Uint8Array(28);
  b[0] = 0x30 | (rej ? 0x01 : 0);
  b[1] = 0xaa;
  b[2] = (ord >> 8) & 0xff;
  b[3] = ord & 0xff;
  return b;
}

/**
 * iSER CM REQ private data (RFC 7145 §9.1; Linux struct iser_cm_hdr): octet 0 flags, 0x80 ZBVA
 * not supported, 0x40 Send with Invalidate not supported; octets 1-3 reserved.
 */
export function iserCmPrivateData(
  o: { zbvaNotSupported?: boolean; sendInvalidateNotSupported?: boolean } = {},
): Uint8Array {
  return new Uint8Array([(o.zbvaNotSupported ? 0x80 : 0) | (o.sendInvalidateNotSupported ? 0x40 : 0), 0, 0, 0]);
}
