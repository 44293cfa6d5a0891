/**
 * SMB Direct and SMB2 encoder for the scenario generator and the tests, written from the
 * specification layouts (MS-SMBD 2.2.1 - 2.2.3.1, Appendix A; MS-SMB2 2.2.1, 2.2.3 - 2.2.6,
 * 2.2.9, 2.2.10, 2.2.13 - 2.2.16, 2.2.19 - 2.2.22), never from the decoder under test.
 * Little-endian throughout (Appendix A's IRD/ORD block aside).
 */

class Writer {
  private readonly buf: Uint8Array;
  private readonly v: DataView;
  constructor(size: number) {
    this.buf = new Uint8Array(size);
    this.v = new DataView(this.buf.buffer);
  }
  u8(at: number, n: number): this {
    this.v.setUint8(at, n);
    return this;
  }
  u16(at: number, n: number): this {
    this.v.setUint16(at, n, true);
    return this;
  }
  u32(at: number, n: number): this {
    this.v.setUint32(at, n >>> 0, true);
    return this;
  }
  u64(at: number, n: bigint | number): this {
    this.v.setBigUint64(at, BigInt(n), true);
    return this;
  }
  bytes(at: number, b: Uint8Array): this {
    this.buf.set(b, at);
    return this;
  }
  get(): Uint8Array {
    return this.buf;
  }
}

export const cat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

// ------------------------------------------------------------------------------------------
// MS-SMBD
// ------------------------------------------------------------------------------------------

export interface NegReq {
  minVersion: number;
  maxVersion: number;
  reserved: number;
  creditsRequested: number;
  preferredSendSize: number;
  maxReceiveSize: number;
  maxFragmentedSize: number;
}

/** MS-SMBD 2.2.1 (defaults: Windows' values of MS-SMBD Appendix B <3>). */
export function negotiateRequest(p: Partial<NegReq> = {}): Uint8Array {
  return new Writer(20)
    .u16(0, p.minVersion ?? 0x0100)
    .u16(2, p.maxVersion ?? 0x0100)
    .u16(4, p.reserved ?? 0)
    .u16(6, p.creditsRequested ?? 255)
    .u32(8, p.preferredSendSize ?? 1364)
    .u32(12, p.maxReceiveSize ?? 8192)
    .u32(16, p.maxFragmentedSize ?? 1048576)
    .get();
}

export interface NegRsp {
  minVersion: number;
  maxVersion: number;
  negotiatedVersion: number;
  creditsRequested: number;
  creditsGranted: number;
  status: number;
  maxReadWriteSize: number;
  preferredSendSize: number;
  maxReceiveSize: number;
  maxFragmentedSize: number;
}

/** MS-SMBD 2.2.2. */
export function negotiateResponse(p: Partial<NegRsp> = {}): Uint8Array {
  return new Writer(32)
    .u16(0, p.minVersion ?? 0x0100)
    .u16(2, p.maxVersion ?? 0x0100)
    .u16(4, p.negotiatedVersion ?? 0x0100)
    .u16(6, 0)
    .u16(8, p.creditsRequested ?? 255)
    .u16(10, p.creditsGranted ?? 255)
    .u32(12, p.status ?? 0)
    .u32(16, p.maxReadWriteSize ?? 8 * 1024 * 1024)
    .u32(20, p.preferredSendSize ?? 1364)
    .u32(24, p.maxReceiveSize ?? 8192)
    .u32(28, p.maxFragmentedSize ?? 1048576)
    .get();
}

export interface Dt {
  creditsRequested: number;
  creditsGranted: number;
  flags: number;
  remaining: number;
  data: Uint8Array;
  dataOffset: number;
  dataLength: number;
}

/** MS-SMBD 2.2.3: 20-octet header; with data, 4 octets of padding and the data at DataOffset 24. */
export function dataTransfer(p: Partial<Dt> = {}): Uint8Array {
  const data = p.data;
  const offset = p.dataOffset ?? (data ? 24 : 0);
  const size = data ? Math.max(24, offset + data.length) : 20;
  const w = new Writer(size)
    .u16(0, p.creditsRequested ?? 255)
    .u16(2, p.creditsGranted ?? 1)
    .u16(4, p.flags ?? 0)
    .u16(6, 0)
    .u32(8, p.remaining ?? 0)
    .u32(12, offset)
    .u32(16, p.dataLength ?? data?.length ?? 0);
  if (data) w.bytes(offset, data);
  return w.get();
}

/** MS-SMBD 2.2.3.1. */
export interface Desc {
  offset: bigint | number;
  token: number;
  length: number;
}

export function descriptors(list: readonly Desc[]): Uint8Array {
  const w = new Writer(16 * list.length);
  for (const [i, d] of list.entries())
    w.u64(i * 16, d.offset)
      .u32(i * 16 + 8, d.token)
      .u32(i * 16 + 12, d.length);
  return w.get();
}

/** MS-SMBD Appendix A (6.1) IRD/ORD Negotiate Header. */
export function irdOrd(ird: number, ord: number, littleEndian = false): Uint8Array {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  v.setUint32(0, ird, littleEndian);
  v.setUint32(4, ord, littleEndian);
  return b;
}

// ------------------------------------------------------------------------------------------
// MS-SMB2
// ------------------------------------------------------------------------------------------

export const SMB2 = {
  NEGOTIATE: 0,
  SESSION_SETUP: 1,
  TREE_CONNECT: 3,
  CREATE: 5,
  CLOSE: 6,
  READ: 8,
  WRITE: 9,
  CANCEL: 12,
  ECHO: 13,
  QUERY_DIRECTORY: 14,
  OPLOCK_BREAK: 18,
};

export interface Hdr {
  command: number;
  messageId: bigint | number;
  response: boolean;
  async: boolean;
  asyncId: bigint | number;
  status: number;
  credits: number;
  creditCharge: number;
  nextCommand: number;
  treeId: number;
  sessionId: bigint | number;
  structureSize: number;
}

/** MS-SMB2 2.2.1.1 (ASYNC) / 2.2.1.2 (SYNC). */
export function smb2Header(h: Partial<Hdr> & { command: number }): Uint8Array {
  const flags = (h.response ? 0x1 : 0) | (h.async ? 0x2 : 0);
  const w = new Writer(64)
    .bytes(0, Uint8Array.of(0xfe, 0x53, 0x4d, 0x42))
    .u16(4, h.structureSize ?? 64)
    .u16(6, h.creditCharge ?? 1)
    .u32(8, h.status ?? 0)
    .u16(12, h.command)
    .u16(14, h.credits ?? 1)
    .u32(16, flags)
    .u32(20, h.nextCommand ?? 0)
    .u64(24, h.messageId ?? 0)
    .u64(40, h.sessionId ?? 0x1122334455n);
  if (h.async) w.u64(32, h.asyncId ?? 7);
  else w.u32(32, 0xfeff).u32(36, h.treeId ?? 5);
  return w.get();
}

export const FILE_ID = Uint8Array.from({ length: 16 }, (_, i) => i + 1);

export interface ReadReq {
  fileId: Uint8Array;
  length: number;
  offset: bigint | number;
  channel: number;
  descriptors: readonly Desc[];
  /** Override the channel information fields (defaults: 112 and 16 per descriptor). */
  infoOffset: number;
  infoLength: number;
  /** Octets of the body after the header (default 48 + buffer). */
  truncateBodyTo: number;
}

/** MS-SMB2 2.2.19: 48 fixed octets (StructureSize 49), channel information at offset 112. */
export function readRequest(h: Partial<Hdr>, r: Partial<ReadReq> = {}): Uint8Array {
  const descs = r.descriptors ?? [];
  const d = descriptors(descs);
  const w = new Writer(48)
    .u16(0, 49)
    .u8(2, 0x50)
    .u8(3, 0)
    .u32(4, r.length ?? 65536)
    .u64(8, r.offset ?? 0)
    .bytes(16, r.fileId ?? FILE_ID)
    .u32(32, 1)
    .u32(36, r.channel ?? (descs.length ? 1 : 0))
    .u32(40, 0)
    .u16(44, r.infoOffset ?? (descs.length ? 112 : 0))
    .u16(46, r.infoLength ?? d.length);
  const body = cat(w.get(), d.length ? d : new Uint8Array(1));
  const out = cat(smb2Header({ ...h, command: SMB2.READ }), body);
  return r.truncateBodyTo !== undefined ? out.subarray(0, 64 + r.truncateBodyTo) : out;
}

/** MS-SMB2 2.2.20 (StructureSize 17): DataOffset, DataLength, DataRemaining. */
export function readResponse(h: Partial<Hdr>, r: { dataLength?: number; dataRemaining?: number } = {}): Uint8Array {
  const body = new Writer(16)
    .u16(0, 17)
    .u8(2, 0x50)
    .u32(4, r.dataLength ?? 0)
    .u32(8, r.dataRemaining ?? 0)
    .get();
  return cat(smb2Header({ ...h, command: SMB2.READ, response: true }), body);
}

export interface WriteReq {
  fileId: Uint8Array;
  length: number;
  remainingBytes: number;
  offset: bigint | number;
  channel: number;
  descriptors: readonly Desc[];
}

/** MS-SMB2 2.2.21: over RDMA Length 0 and RemainingBytes the octets to read (as Linux cifs.ko). */
export function writeRequest(h: Partial<Hdr>, r: Partial<WriteReq> = {}): Uint8Array {
  const descs = r.descriptors ?? [];
  const d = descriptors(descs);
  const w = new Writer(48)
    .u16(0, 49)
    .u16(2, descs.length ? 0 : 112)
    .u32(4, r.length ?? 0)
    .u64(8, r.offset ?? 0)
    .bytes(16, r.fileId ?? FILE_ID)
    .u32(32, r.channel ?? (descs.length ? 1 : 0))
    .u32(36, r.remainingBytes ?? 0)
    .u16(40, descs.length ? 112 : 0)
    .u16(42, d.length)
    .u32(44, 0);
  return cat(smb2Header({ ...h, command: SMB2.WRITE }), w.get(), d.length ? d : new Uint8Array(1));
}

/** MS-SMB2 2.2.22 (StructureSize 17). */
export function writeResponse(h: Partial<Hdr>, count: number): Uint8Array {
  const body = new Writer(16).u16(0, 17).u32(4, count).get();
  return cat(smb2Header({ ...h, command: SMB2.WRITE, response: true }), body);
}

/** MS-SMB2 2.2.2 ERROR Response (StructureSize 9). */
export function errorResponse(h: Partial<Hdr> & { command: number; status: number }): Uint8Array {
  const body = new Writer(9).u16(0, 9).get();
  return cat(smb2Header({ ...h, response: true }), body);
}

/** A command with only a header and `bodyLength` zero octets (commands the dissector does not decode). */
export function bare(h: Partial<Hdr> & { command: number }, bodyLength = 8): Uint8Array {
  return cat(smb2Header(h), new Uint8Array(bodyLength));
}

/** MS-SMB2 3.2.4.1.4: each message but the last padded to 8 octets, NextCommand its padded length. */
export function compound(...msgs: Uint8Array[]): Uint8Array {
  const parts = msgs.map((m, i) => {
    if (i === msgs.length - 1) return m;
    const padded = new Uint8Array(Math.ceil(m.length / 8) * 8);
    padded.set(m);
    new DataView(padded.buffer).setUint32(20, padded.length, true);
    return padded;
  });
  return cat(...parts);
}

// ------------------------------------------------------------------------------------------
// MS-SMB2 session commands (what a client sends before its first READ or WRITE)
// ------------------------------------------------------------------------------------------

/** MS-SMB2 2.2.3 NEGOTIATE Request (StructureSize 36) offering `dialects` (no negotiate contexts). */
export function negotiateSmb2Request(h: Partial<Hdr>, dialects: readonly number[], clientGuid: Uint8Array): Uint8Array {
  const w = new Writer(36 + 2 * dialects.length)
    .u16(0, 36)
    .u16(2, dialects.length)
    .u16(4, 0x0001) // SecurityMode: SIGNING_ENABLED
    .u32(8, 0x7f) // Capabilities: DFS .. ENCRYPTION
    .bytes(12, clientGuid.subarray(0, 16));
  dialects.forEach((d, i) => {
    w.u16(36 + 2 * i, d);
  });
  return cat(smb2Header({ sessionId: 0, treeId: 0, ...h, command: SMB2.NEGOTIATE }), w.get());
}

/** MS-SMB2 2.2.4 NEGOTIATE Response (StructureSize 65): the security buffer at offset 0x80. */
export function negotiateSmb2Response(
  h: Partial<Hdr>,
  o: { dialect: number; serverGuid: Uint8Array; securityBuffer: Uint8Array; maxSize?: number; time?: bigint },
): Uint8Array {
  const max = o.maxSize ?? 8 * 1024 * 1024;
  const body = new Writer(64)
    .u16(0, 65)
    .u16(2, 0x0001)
    .u16(4, o.dialect)
    .bytes(8, o.serverGuid.subarray(0, 16))
    .u32(24, 0x2f) // DFS, LEASING, LARGE_MTU, MULTI_CHANNEL, DIRECTORY_LEASING
    .u32(28, max)
    .u32(32, max)
    .u32(36, max)
    .u64(40, o.time ?? 0n)
    .u16(56, 64 + 64)
    .u16(58, o.securityBuffer.length)
    .get();
  return cat(
    smb2Header({ sessionId: 0, treeId: 0, ...h, command: SMB2.NEGOTIATE, response: true }),
    body,
    o.securityBuffer,
  );
}

/** MS-SMB2 2.2.5 SESSION_SETUP Request (StructureSize 25): the security buffer at offset 0x58. */
export function sessionSetupRequest(h: Partial<Hdr>, securityBuffer: Uint8Array): Uint8Array {
  const body = new Writer(24)
    .u16(0, 25)
    .u8(3, 0x01) // SecurityMode: SIGNING_ENABLED
    .u32(4, 0x01) // Capabilities: DFS
    .u16(12, 64 + 24)
    .u16(14, securityBuffer.length)
    .get();
  return cat(smb2Header({ treeId: 0, ...h, command: SMB2.SESSION_SETUP }), body, securityBuffer);
}

/** MS-SMB2 2.2.6 SESSION_SETUP Response (StructureSize 9): the security buffer at offset 0x48. */
export function sessionSetupResponse(h: Partial<Hdr>, securityBuffer: Uint8Array): Uint8Array {
  const body = new Writer(8)
    .u16(0, 9)
    .u16(4, 64 + 8)
    .u16(6, securityBuffer.length)
    .get();
  return cat(smb2Header({ treeId: 0, ...h, command: SMB2.SESSION_SETUP, response: true }), body, securityBuffer);
}

const utf16le = (s: string): Uint8Array => {
  const b = new Uint8Array(2 * s.length);
  for (let i = 0; i < s.length; i++) {
    b[2 * i] = s.charCodeAt(i) & 0xff;
    b[2 * i + 1] = s.charCodeAt(i) >> 8;
  }
  return b;
};

/** MS-SMB2 2.2.9 TREE_CONNECT Request (StructureSize 9): the UTF-16 path at offset 0x48. */
export function treeConnectRequest(h: Partial<Hdr>, path: string): Uint8Array {
  const p = utf16le(path);
  const body = new Writer(8)
    .u16(0, 9)
    .u16(4, 64 + 8)
    .u16(6, p.length)
    .get();
  return cat(smb2Header({ treeId: 0, ...h, command: SMB2.TREE_CONNECT }), body, p);
}

/** MS-SMB2 2.2.10 TREE_CONNECT Response (StructureSize 16): a disk share, full access. */
export function treeConnectResponse(h: Partial<Hdr>): Uint8Array {
  const body = new Writer(16)
    .u16(0, 16)
    .u8(2, 0x01) // SMB2_SHARE_TYPE_DISK
    .u32(8, 0) // Capabilities
    .u32(12, 0x001f01ff) // MaximalAccess
    .get();
  return cat(smb2Header({ ...h, command: SMB2.TREE_CONNECT, response: true }), body);
}

/** MS-SMB2 2.2.13 CREATE Request (StructureSize 57): open an existing file read/write, name at 0x78. */
export function createRequest(h: Partial<Hdr>, name: string): Uint8Array {
  const n = utf16le(name);
  const body = new Writer(56)
    .u16(0, 57)
    .u8(3, 0x00) // RequestedOplockLevel: none
    .u32(4, 2) // ImpersonationLevel: Impersonation
    .u32(24, 0x0012019f) // DesiredAccess: generic read/write
    .u32(28, 0x80) // FileAttributes: NORMAL
    .u32(32, 0x3) // ShareAccess: READ | WRITE
    .u32(36, 1) // CreateDisposition: FILE_OPEN
    .u32(40, 0x40) // CreateOptions: NON_DIRECTORY_FILE
    .u16(44, 64 + 56)
    .u16(46, n.length)
    .get();
  return cat(smb2Header({ ...h, command: SMB2.CREATE }), body, n);
}

/** MS-SMB2 2.2.14 CREATE Response (StructureSize 89): the file opened, its FileId, no create contexts. */
export function createResponse(h: Partial<Hdr>, fileId: Uint8Array, size: bigint, time: bigint): Uint8Array {
  const w = new Writer(88)
    .u16(0, 89)
    .u32(4, 1) // CreateAction: FILE_OPENED
    .u64(8, time)
    .u64(16, time)
    .u64(24, time)
    .u64(32, time)
    .u64(40, (size + 4095n) & ~4095n)
    .u64(48, size)
    .u32(56, 0x80)
    .bytes(64, fileId.subarray(0, 16));
  return cat(smb2Header({ ...h, command: SMB2.CREATE, response: true }), w.get());
}

/** MS-SMB2 2.2.15 CLOSE Request (StructureSize 24). */
export function closeRequest(h: Partial<Hdr>, fileId: Uint8Array): Uint8Array {
  const body = new Writer(24).u16(0, 24).bytes(8, fileId.subarray(0, 16)).get();
  return cat(smb2Header({ ...h, command: SMB2.CLOSE }), body);
}

/** MS-SMB2 2.2.16 CLOSE Response (StructureSize 60), without the attributes (Flags 0). */
export function closeResponse(h: Partial<Hdr>): Uint8Array {
  const body = new Writer(60).u16(0, 60).get();
  return cat(smb2Header({ ...h, command: SMB2.CLOSE, response: true }), body);
}

/** MS-SMB2 2.2.28 / 2.2.29 ECHO Request and Response (StructureSize 4). */
export function echo(h: Partial<Hdr>, response = false): Uint8Array {
  return cat(smb2Header({ ...h, command: SMB2.ECHO, response }), new Writer(4).u16(0, 4).get());
}

/** MS-SMB2 2.2.21 WRITE Request over Channel NONE: the data inline at DataOffset 0x70. */
export function writeRequestInline(h: Partial<Hdr>, fileId: Uint8Array, offset: bigint, data: Uint8Array): Uint8Array {
  const w = new Writer(48)
    .u16(0, 49)
    .u16(2, 64 + 48)
    .u32(4, data.length)
    .u64(8, offset)
    .bytes(16, fileId.subarray(0, 16));
  return cat(smb2Header({ ...h, command: SMB2.WRITE }), w.get(), data);
}

/** MS-SMB2 2.2.20 READ Response over Channel NONE: the data inline at DataOffset 0x50. */
export function readResponseInline(h: Partial<Hdr>, data: Uint8Array): Uint8Array {
  return cat(readResponse(h, { dataLength: data.length }), data);
}

/** MS-SMB2 2.2.41 TRANSFORM_HEADER (ProtocolId 0xFD 'SMB') before `encrypted` octets of ciphertext. */
export function transform(sessionId: bigint, encrypted: Uint8Array, nonce: Uint8Array): Uint8Array {
  const w = new Writer(52)
    .bytes(0, Uint8Array.of(0xfd, 0x53, 0x4d, 0x42))
    .bytes(20, nonce.subarray(0, 16))
    .u32(36, encrypted.length)
    .u16(42, 0x0001) // Flags: Encrypted
    .u64(44, sessionId);
  return cat(w.get(), encrypted);
}
