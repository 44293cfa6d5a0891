/**
 * The RDMAP message records DDP/RDMAP hands an upper layer, once per message in capture order
 * (ulp-contract.ts has the rest of the contract). Wireshark's iWARP dissector passes the same
 * facts to its heuristic sub-dissectors as `rdmap_info_t`.
 */

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
  /** Number of the frame that completed the message (the one `time` is of), when known. */
  readonly frame?: number;
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
  /**
   * The first octets of the data placed, when the upper layer asked for them (the ledger entry of
   * the STag has `keep`: NVMe Identify data); absent otherwise. Octets before a hole (a segment
   * not captured) only. A view valid only during the call.
   */
  readonly data?: Uint8Array;
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
  /**
   * The first octets of the data returned, when the upper layer asked for them (the Data Source's
   * ledger entry has `keep`: NVMe Connect data the controller reads); absent otherwise. A view
   * valid only during the call.
   */
  readonly data?: Uint8Array;
}

/** Terminate and the atomics: passed on for completeness (an upper layer may end its work on them). */
export interface OtherMessage extends MessageBase {
  readonly kind: 'terminate' | 'other';
}

export type RdmapMessage = SendMessage | WriteMessage | ReadRequestMessage | ReadResponseMessage | OtherMessage;
