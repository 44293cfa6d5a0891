/**
 * SMB2 (MS-SMB2) as carried by SMB Direct: the 64-octet header (2.2.1.1 ASYNC, 2.2.1.2 SYNC),
 * compound chains by NextCommand (3.2.4.1.4, 3.3.4.1.3), and the READ and WRITE bodies
 * (2.2.19 - 2.2.22) with their channel information: SMB_DIRECT_BUFFER_DESCRIPTOR_V1 lists
 * (MS-SMBD 2.2.3.1), directly or inside an SMB2_RDMA_TRANSFORM (2.2.43). Other commands are
 * decoded to the header only. Pure, bounded and never throwing: problems are returned as text for
 * the caller to report.
 */
import { decodeChannelInfo, type ChannelInfo } from './channel-info.js';

export { CHANNEL, CHANNEL_NAMES, MAX_DESCRIPTORS, decodeChannelInfo } from './channel-info.js';
export type { BufferDescriptor, ChannelInfo, RdmaTransform } from './channel-info.js';

export const SMB2_HEADER_LEN = 64;
/** 0xFE 'S' 'M' 'B' read little-endian (2.2.1); 0xFD is the transform header (2.2.41), 0xFC compression (2.2.42). */
export const SMB2_MAGIC = 0x424d53fe;
export const SMB2_TRANSFORM_MAGIC = 0x424d53fd;
export const SMB2_COMPRESSION_MAGIC = 0x424d53fc;

/** 2.2.1.2 Flags. */
export const SMB2_FLAG = {
  SERVER_TO_REDIR: 0x1,
  ASYNC_COMMAND: 0x2,
  RELATED_OPERATIONS: 0x4,
  SIGNED: 0x8,
  DFS_OPERATIONS: 0x10000000,
  REPLAY_OPERATION: 0x20000000,
} as const;

/** 2.2.1.2 Command: the 19 commands. */
export const SMB2_COMMAND_NAMES: readonly string[] = [
  'NEGOTIATE',
  'SESSION_SETUP',
  'LOGOFF',
  'TREE_CONNECT',
  'TREE_DISCONNECT',
  'CREATE',
  'CLOSE',
  'FLUSH',
  'READ',
  'WRITE',
  'LOCK',
  'IOCTL',
  'CANCEL',
  'ECHO',
  'QUERY_DIRECTORY',
  'CHANGE_NOTIFY',
  'QUERY_INFO',
  'SET_INFO',
  'OPLOCK_BREAK',
];

export const CMD = { NEGOTIATE: 0, READ: 8, WRITE: 9, CANCEL: 12, OPLOCK_BREAK: 18 } as const;

export function commandName(c: number): string {
  return SMB2_COMMAND_NAMES[c] ?? `0x${c.toString(16).padStart(4, '0')}`;
}

/** NTSTATUS values named in Info texts (names as tshark's smb2.nt_status table). */
export const STATUS = { SUCCESS: 0, PENDING: 0x103, BUFFER_OVERFLOW: 0x80000005 } as const;
export const NT_STATUS_NAMES: Readonly<Record<number, string>> = {
  0x00000000: 'STATUS_SUCCESS',
  0x00000103: 'STATUS_PENDING',
  0x0000010c: 'STATUS_NOTIFY_ENUM_DIR',
  0x80000005: 'STATUS_BUFFER_OVERFLOW',
  0x80000006: 'STATUS_NO_MORE_FILES',
  0xc0000008: 'STATUS_INVALID_HANDLE',
  0xc000000d: 'STATUS_INVALID_PARAMETER',
  0xc0000011: 'STATUS_END_OF_FILE',
  0xc0000016: 'STATUS_MORE_PROCESSING_REQUIRED',
  0xc0000022: 'STATUS_ACCESS_DENIED',
  0xc0000034: 'STATUS_OBJECT_NAME_NOT_FOUND',
  0xc0000043: 'STATUS_SHARING_VIOLATION',
  0xc000009a: 'STATUS_INSUFFICIENT_RESOURCES',
  0xc00000bb: 'STATUS_NOT_SUPPORTED',
  0xc00000c9: 'STATUS_NETWORK_NAME_DELETED',
  0xc0000120: 'STATUS_CANCELLED',
  0xc0000128: 'STATUS_FILE_CLOSED',
  0xc0000203: 'STATUS_USER_SESSION_DELETED',
};

export function statusName(s: number): string {
  return NT_STATUS_NAMES[s] ?? `0x${(s >>> 0).toString(16).padStart(8, '0')}`;
}

/** MessageId of the server's unsolicited oplock and lease break notifications (ksmbd sets it to -1). */
export const MESSAGE_ID_UNSOLICITED = 0xffffffffffffffffn;

/** Bound: commands decoded per compound chain. */
export const MAX_COMPOUND = 64;

export interface Smb2Header {
  /** Offset of the header within the SMB2 message. */
  readonly at: number;
  readonly protocolId: number;
  readonly structureSize: number;
  readonly creditCharge: number;
  /** Status in a response; ChannelSequence (low 16 bits) and Reserved in an SMB 3.x request. */
  readonly status: number;
  readonly command: number;
  /** CreditRequest (request) or CreditResponse (response). */
  readonly credits: number;
  readonly flags: number;
  readonly nextCommand: number;
  readonly messageId: bigint;
  /** ASYNC form: AsyncId; SYNC form: Reserved (ProcessId) and TreeId. */
  readonly asyncId: bigint | null;
  readonly processId: number | null;
  readonly treeId: number | null;
  readonly sessionId: bigint;
  readonly signature: Uint8Array;
}

export interface ReadRequest {
  readonly kind: 'read-request';
  readonly structureSize: number;
  readonly padding: number;
  readonly flags: number;
  readonly length: number;
  readonly fileOffset: bigint;
  readonly fileId: Uint8Array;
  readonly minimumCount: number;
  readonly channel: number;
  readonly remainingBytes: number;
  readonly channelInfoOffset: number;
  readonly channelInfoLength: number;
  readonly channelInfo: ChannelInfo | null;
}

export interface ReadResponse {
  readonly kind: 'read-response';
  readonly structureSize: number;
  readonly dataOffset: number;
  readonly dataLength: number;
  readonly dataRemaining: number;
  readonly flags: number;
}

export interface WriteRequest {
  readonly kind: 'write-request';
  readonly structureSize: number;
  readonly dataOffset: number;
  readonly length: number;
  readonly fileOffset: bigint;
  readonly fileId: Uint8Array;
  readonly channel: number;
  readonly remainingBytes: number;
  readonly channelInfoOffset: number;
  readonly channelInfoLength: number;
  readonly flags: number;
  readonly channelInfo: ChannelInfo | null;
}

export interface WriteResponse {
  readonly kind: 'write-response';
  readonly structureSize: number;
  readonly count: number;
  readonly remaining: number;
  readonly channelInfoOffset: number;
  readonly channelInfoLength: number;
}

/** 2.2.2 SMB2 ERROR Response (StructureSize 9): the body of a failed response. */
export interface ErrorResponse {
  readonly kind: 'error-response';
  readonly structureSize: number;
  readonly byteCount: number;
}

export type Smb2Body = ReadRequest | ReadResponse | WriteRequest | WriteResponse | ErrorResponse;

export interface Smb2Command {
  readonly header: Smb2Header;
  /** Decoded body (READ, WRITE, error response), null for other commands or when not captured. */
  readonly body: Smb2Body | null;
  readonly bodyProblem: string | null;
  /** Offset just past this command within the message (next header, or the message end). */
  readonly end: number;
}

export interface Smb2Decoded {
  readonly kind: 'smb2' | 'transform' | 'compressed' | 'other' | 'uncaptured';
  readonly commands: readonly Smb2Command[];
  /** Header or compound-chain problems (the header-invalid and compound-invalid rules). */
  readonly headerProblems: readonly string[];
  readonly compoundProblems: readonly string[];
  /** Octets of the message were missing where decoding needed them. */
  readonly truncated: boolean;
}

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

function decodeHeader(v: DataView, at: number): Smb2Header {
  const flags = v.getUint32(at + 16, true);
  const async = (flags & SMB2_FLAG.ASYNC_COMMAND) !== 0;
  return {
    at,
    protocolId: v.getUint32(at, true),
    structureSize: v.getUint16(at + 4, true),
    creditCharge: v.getUint16(at + 6, true),
    status: v.getUint32(at + 8, true),
    command: v.getUint16(at + 12, true),
    credits: v.getUint16(at + 14, true),
    flags,
    nextCommand: v.getUint32(at + 20, true),
    messageId: v.getBigUint64(at + 24, true),
    asyncId: async ? v.getBigUint64(at + 32, true) : null,
    processId: async ? null : v.getUint32(at + 32, true),
    treeId: async ? null : v.getUint32(at + 36, true),
    sessionId: v.getBigUint64(at + 40, true),
    // Copies (16 octets each): the detail tree is built only when asked for, after the Send's octets are gone.
    signature: new Uint8Array(v.buffer, v.byteOffset + at + 48, 16).slice(),
  };
}

/** Fixed part of the READ and WRITE requests after the header (StructureSize 49 counts one Buffer octet). */
const REQUEST_FIXED = 48;
const RESPONSE_FIXED = 16;

function decodeBody(msg: Uint8Array, h: Smb2Header, end: number): { body: Smb2Body | null; problem: string | null } {
  const at = h.at + SMB2_HEADER_LEN;
  const response = (h.flags & SMB2_FLAG.SERVER_TO_REDIR) !== 0;
  if (h.command !== CMD.READ && h.command !== CMD.WRITE && !response) return { body: null, problem: null };
  if (at + 2 > msg.length) return { body: null, problem: null };
  const v = view(msg);
  const size = v.getUint16(at, true);
  if (response && size === 9) {
    const byteCount = at + 8 <= msg.length ? v.getUint32(at + 4, true) : 0;
    return { body: { kind: 'error-response', structureSize: size, byteCount }, problem: null };
  }
  if (h.command !== CMD.READ && h.command !== CMD.WRITE) return { body: null, problem: null };
  const name = `${commandName(h.command)} ${response ? 'Response' : 'Request'}`;
  const fixed = response ? RESPONSE_FIXED : REQUEST_FIXED;
  const want = response ? 17 : 49;
  if (end - at < fixed)
    return { body: null, problem: `${name} body is ${end - at} octets, shorter than its ${fixed}-octet fixed part` };
  if (at + fixed > msg.length) return { body: null, problem: null };
  const problem = size !== want ? `${name} StructureSize is ${size}, not ${want}` : null;
  if (h.command === CMD.READ && !response) {
    const channel = v.getUint32(at + 36, true);
    const ciOff = v.getUint16(at + 44, true);
    const ciLen = v.getUint16(at + 46, true);
    const body: ReadRequest = {
      kind: 'read-request',
      structureSize: size,
      padding: msg[at + 2]!,
      flags: msg[at + 3]!,
      length: v.getUint32(at + 4, true),
      fileOffset: v.getBigUint64(at + 8, true),
      fileId: msg.slice(at + 16, at + 32),
      minimumCount: v.getUint32(at + 32, true),
      channel,
      remainingBytes: v.getUint32(at + 40, true),
      channelInfoOffset: ciOff,
      channelInfoLength: ciLen,
      channelInfo: decodeChannelInfo(msg, h.at, end, channel, ciOff, ciLen),
    };
    return { body, problem };
  }
  if (h.command === CMD.READ) {
    const body: ReadResponse = {
      kind: 'read-response',
      structureSize: size,
      dataOffset: msg[at + 2]!,
      dataLength: v.getUint32(at + 4, true),
      dataRemaining: v.getUint32(at + 8, true),
      flags: v.getUint32(at + 12, true),
    };
    return { body, problem };
  }
  if (!response) {
    const channel = v.getUint32(at + 32, true);
    const ciOff = v.getUint16(at + 40, true);
    const ciLen = v.getUint16(at + 42, true);
    const body: WriteRequest = {
      kind: 'write-request',
      structureSize: size,
      dataOffset: v.getUint16(at + 2, true),
      length: v.getUint32(at + 4, true),
      fileOffset: v.getBigUint64(at + 8, true),
      fileId: msg.slice(at + 16, at + 32),
      channel,
      remainingBytes: v.getUint32(at + 36, true),
      channelInfoOffset: ciOff,
      channelInfoLength: ciLen,
      flags: v.getUint32(at + 44, true),
      channelInfo: decodeChannelInfo(msg, h.at, end, channel, ciOff, ciLen),
    };
    return { body, problem };
  }
  const body: WriteResponse = {
    kind: 'write-response',
    structureSize: size,
    count: v.getUint32(at + 4, true),
    remaining: v.getUint32(at + 8, true),
    channelInfoOffset: v.getUint16(at + 12, true),
    channelInfoLength: v.getUint16(at + 14, true),
  };
  return { body, problem };
}

/**
 * Decodes an SMB2 message (the reassembled SMB Direct payload). `msg` holds the captured octets;
 * `knownLength` is the message's real length (larger when octets were not captured or not kept).
 */
export function decodeSmb2(msg: Uint8Array, knownLength: number, maxCommands = MAX_COMPOUND): Smb2Decoded {
  const none = { commands: [], headerProblems: [], compoundProblems: [] };
  if (msg.length < 4) return { ...none, kind: knownLength >= 4 ? 'uncaptured' : 'other', truncated: knownLength >= 4 };
  const v = view(msg);
  const magic = v.getUint32(0, true);
  if (magic === SMB2_TRANSFORM_MAGIC) return { ...none, kind: 'transform', truncated: false };
  if (magic === SMB2_COMPRESSION_MAGIC) return { ...none, kind: 'compressed', truncated: false };
  if (magic !== SMB2_MAGIC) return { ...none, kind: 'other', truncated: false };
  const commands: Smb2Command[] = [];
  const headerProblems: string[] = [];
  const compoundProblems: string[] = [];
  let truncated = false;
  let at = 0;
  for (let i = 0; ; i++) {
    if (i >= maxCommands) {
      compoundProblems.push(`compound chain longer than ${maxCommands} commands; the rest is not decoded`);
      break;
    }
    if (knownLength - at < SMB2_HEADER_LEN) {
      headerProblems.push(`SMB2 header at offset ${at} needs 64 octets; the message has ${knownLength - at}`);
      break;
    }
    if (msg.length - at < SMB2_HEADER_LEN) {
      truncated = true;
      break;
    }
    const h = decodeHeader(v, at);
    if (h.protocolId !== SMB2_MAGIC) {
      compoundProblems.push(
        `NextCommand leads to offset ${at}, which holds no SMB2 header (ProtocolId 0x${h.protocolId.toString(16)})`,
      );
      break;
    }
    if (h.structureSize !== SMB2_HEADER_LEN)
      headerProblems.push(`SMB2 header StructureSize is ${h.structureSize}, not 64 (MessageId ${h.messageId})`);
    let end = knownLength;
    let stop = h.nextCommand === 0;
    if (!stop) {
      const n = h.nextCommand;
      const bad =
        n < SMB2_HEADER_LEN
          ? `NextCommand ${n} is smaller than the 64-octet header`
          : n % 8 !== 0
            ? `NextCommand ${n} is not a multiple of 8 (compounded messages are 8-octet aligned)`
            : at + n >= knownLength
              ? `NextCommand ${n} at offset ${at} points past the end of the ${knownLength}-octet message`
              : null;
      if (bad) {
        compoundProblems.push(bad);
        stop = true;
      } else end = at + n;
    }
    const { body, problem } = decodeBody(msg, h, end);
    if (
      body === null &&
      (h.command === CMD.READ || h.command === CMD.WRITE) &&
      h.at + SMB2_HEADER_LEN + 16 > msg.length
    )
      truncated = true;
    commands.push({ header: h, body, bodyProblem: problem, end });
    if (stop) break;
    at = end;
  }
  return { kind: 'smb2', commands, headerProblems, compoundProblems, truncated };
}

/** FileId as Wireshark prints an FT_GUID (first three groups little-endian). */
export function guidText(b: Uint8Array): string {
  if (b.length < 16) return '';
  const h = (i: number): string => b[i]!.toString(16).padStart(2, '0');
  const r = (idx: number[]): string => idx.map(h).join('');
  return `${r([3, 2, 1, 0])}-${r([5, 4])}-${r([7, 6])}-${r([8, 9])}-${r([10, 11, 12, 13, 14, 15])}`;
}
