/**
 * The upper-layer contract: what DDP/RDMAP hands a protocol above it (SMB Direct, RPC-over-RDMA,
 * NVMe over Fabrics, iSER), once per RDMAP message, in capture order, and what that protocol hands
 * back. Wireshark's iWARP dissector passes `rdmap_info_t` to its heuristic sub-dissectors
 * (`iwarp_ddp_rdmap` table); this is the same information as typed data.
 *
 * An upper layer sees only these records and the connection facts below: it knows nothing of
 * MPA framing, markers, CRC or TCP. It reduces the buffers it advertises to ledger entries
 * (buffer-ledger.ts), which the RDMAP side checks every RDMA Write, Read Request and Send with
 * Invalidate against.
 */
import type { FieldDef, TreeNode } from '../../src/vocabulary/fields.js';
import type { FindingSink, RuleDef } from '../../src/vocabulary/findings.js';
import type { BufferLedger } from './buffer-ledger.js';

export type Dir = 0 | 1;

/** Untagged payload kept per message for the upper layer; octets past it are counted, not kept. */
export const ULP_PAYLOAD_BOUND = 64 * 1024;

interface MessageBase {
  readonly flow: number;
  /** 0 = client to server (the TCP connection's first direction), 1 = server to client. */
  readonly dir: Dir;
  /** "ADDR:PORT" of the sender. */
  readonly from: string;
  /** RDMAP opcode (RFC 5040 §4.2, RFC 7306). */
  readonly opcode: number;
  /** Absolute TCP sequence number of the ULPDU_Length field of the message's first and last FPDU. */
  readonly seq: number;
  readonly lastSeq: number;
  /** Frames that carried the message, ascending (the first 64 distinct ones). */
  readonly frames: readonly number[];
  /** Capture time (seconds since the epoch) of the packet that completed the message; NaN when unknown. */
  readonly time: number;
  /** DDP payload octets of the whole message (sum of its segments' payloads). */
  readonly length: number;
  /**
   * Every segment of the message was seen, with a good or unchecked CRC: checks that need the
   * whole message may run. False after capture loss, a bad CRC or a snaplen cut.
   */
  readonly intact: boolean;
}

/** Send, Send with Invalidate, Send with Solicited Event (and Invalidate): untagged, queue 0. */
export interface SendMessage extends MessageBase {
  readonly kind: 'send';
  readonly qn: number;
  readonly msn: number;
  readonly solicited: boolean;
  /** The Invalidate STag of Send with Invalidate (RFC 5040 §6.1), null for the other Sends. */
  readonly invalidateStag: number | null;
  /**
   * The message's payload reassembled across its DDP segments by MO: the first
   * min(length, ULP_PAYLOAD_BOUND) octets. Shorter than that when octets were not captured (a
   * snaplen cut, loss): `payloadComplete` is then false and octets past `payload.length` are unknown.
   * A view valid only during the call: an upper layer copies what it keeps.
   */
  readonly payload: Uint8Array;
  /** True when payload holds every octet of the message. */
  readonly payloadComplete: boolean;
}

/** RDMA Write: tagged, placed at (STag, TO). */
export interface WriteMessage extends MessageBase {
  readonly kind: 'write';
  readonly stag: number;
  /** TO of the message's first octet. */
  readonly to: bigint;
}

/** RDMA Read Request (RFC 5040 §4.4): the Data Source is the advertised buffer read. */
export interface ReadRequestMessage extends MessageBase {
  readonly kind: 'read-request';
  readonly sinkStag: number;
  readonly sinkTo: bigint;
  readonly sourceStag: number;
  readonly sourceTo: bigint;
  /** RDMA Read Message Size. */
  readonly readSize: number;
}

/** RDMA Read Response: lands in the requester's own sink buffer. */
export interface ReadResponseMessage extends MessageBase {
  readonly kind: 'read-response';
  readonly stag: number;
  readonly to: bigint;
  /** The Read Request it answers, when paired: its Data Source is what was read. */
  readonly request: {
    readonly sourceStag: number;
    readonly sourceTo: bigint;
    readonly readSize: number;
    readonly seq: number;
    readonly frames: readonly number[];
  } | null;
}

/** Terminate and the atomics: passed on for completeness (an upper layer may end its work on them). */
export interface OtherMessage extends MessageBase {
  readonly kind: 'terminate' | 'other';
}

export type RdmapMessage = SendMessage | WriteMessage | ReadRequestMessage | ReadResponseMessage | OtherMessage;

/** Connection facts an upper layer may read: roles, ports, MPA private data, IRD/ORD. */
export interface UlpConnection {
  readonly flow: number;
  /** Direction (0/1) of the MPA Initiator, null when the startup was not captured. */
  readonly initiatorDir: Dir | null;
  /** TCP port of each direction's sender. */
  readonly ports: readonly [number, number];
  /** Port of the Responder (the listening side), null when unknown. */
  readonly serverPort: number | null;
  /** MPA Request / Reply Private Data after the RFC 6581 IRD/ORD block, null when not seen. */
  readonly requestPrivateData: Uint8Array | null;
  readonly replyPrivateData: Uint8Array | null;
  /** The Reply rejected the connection. */
  readonly rejected: boolean;
  /** RFC 6581 IRD/ORD of the Request (the Initiator's) and the Reply (the Responder's), null when not carried. */
  readonly requestIrd: number | null;
  readonly requestOrd: number | null;
  readonly replyIrd: number | null;
  readonly replyOrd: number | null;
}

/** Direction of the MPA Initiator, or the TCP client when the startup was not captured. */
export function initiatorOf(c: UlpConnection): Dir {
  return c.initiatorDir ?? 0;
}

/** What an upper layer says about one message: shown where tshark's Info column and -V tree would. */
export interface UlpRecord {
  /** Protocol filter name of the top node ("smb_direct", "rpcordma"). */
  readonly protocol: string;
  /** tshark-style Info text: "SMB2 READ Request MessageId 12 ... 65536 via RDMA_V1". */
  readonly info: string;
  /** Detail tree, nested under the RDMAP message in -V; filters read their values off it. */
  readonly tree: readonly TreeNode[];
}

/** Times of one request, for service response time statistics (seconds since the epoch; NaN when unknown). */
export interface RequestTiming {
  /** "SMB2", "NFSv3", ...: the group -z ...,srt reports by. */
  readonly program: string;
  /** Command or procedure name within the program. */
  readonly command: string;
  /** Its number (SMB2 command code, RPC procedure, NVMe opcode, SCSI operation code): tshark's SRT Index. */
  readonly code?: number;
  /** Queue or connection the request ran on. */
  readonly queue: string;
  readonly request: number;
  readonly firstData: number;
  readonly lastData: number;
  readonly response: number;
}

/** One connection's upper-layer dissector. */
export interface UpperLayerDissector {
  /** Each RDMAP message of the connection, in capture order; a record when it has something to show. */
  message(m: RdmapMessage): UlpRecord | null;
  /** The connection ended (or the capture did): report what was never answered. */
  end(lastTime: number): void;
}

/** What an upper layer's dissector is made with. */
export interface UlpEnvironment {
  readonly connection: UlpConnection;
  readonly sink: FindingSink;
  readonly ledger: BufferLedger;
  /** Receives the timing of every request that got its response (and of those that did not, at end). */
  readonly timing: (t: RequestTiming) => void;
}

export type UlpId = 'smb-direct' | 'rpc-rdma' | 'nvme' | 'iser';

/**
 * An upper layer's registration, like a Wireshark heuristic dissector in `iwarp_ddp_rdmap`: how it
 * is recognised on a connection (private data, then port, then a valid first message), its field
 * and rule tables, and its dissector.
 */
export interface UpperLayerSpec {
  readonly id: UlpId;
  /** Shown in the flow table: "SMB Direct". */
  readonly name: string;
  /** Well-known Responder ports. */
  readonly ports: readonly number[];
  /** True when the connection's private data is this protocol's own (strong evidence). */
  readonly privateData: (c: UlpConnection) => boolean;
  /** True when the first Send of the connection is a valid first message of this protocol. */
  readonly firstMessage: (m: SendMessage, c: UlpConnection) => boolean;
  readonly fields: readonly FieldDef[];
  readonly rules: readonly RuleDef[];
  readonly create: (env: UlpEnvironment) => UpperLayerDissector;
}
