/**
 * The DDP/RDMAP analyzer's public shapes: the record it returns per segment, the messages it
 * assembles, its per-direction summary and its options. A file of their own so that the analyzer's
 * parts and tree.ts (which draws a segment record) share them without importing each other.
 */

import type { UlpRecord } from './ulp-contract.js';
import type { Ulpdu } from '../mpa/ulpdu.js';
import type { DdpPdu } from './decode.js';
import type { OpcodeKey } from './fields.js';

export type RtrKind = 'send' | 'write' | 'read';
export type Dir = 0 | 1;

export interface DdpSizeStats {
  messages: number;
  min: number;
  max: number;
  total: number;
}

/**
 * report-schema DdpDirection. The first six fields are the schema's; the rest extend it (the
 * schema only grows).
 */
export interface DdpDirection {
  segments: number;
  messages: number;
  rtr: RtrKind | null;
  byOpcode: Partial<Record<OpcodeKey, number>>;
  msnErrors: number;
  moErrors: number;
  /** Messages whose L segment was seen. */
  messagesComplete: number;
  /** Messages closed (superseded, evicted or at end) or still open without their L segment. */
  messagesIncomplete: number;
  toErrors: number;
  /** Segments decoded but left out of bookkeeping (CRC bad). */
  skipped: number;
  /** ULPDUs too short for their DDP header. */
  malformed: number;
  /** Sequence irregularities attributed to data missing from the capture. */
  lossExplained: number;
  readRequests: number;
  /** Read Requests sent in host byte order (rdmap.read-request-byte-order: reported once, the rest counted); present only when not 0. */
  readRequestsByteSwapped?: number;
  readResponses: number;
  terminates: number;
  /** Size statistics of complete messages (DDP payload octets) per opcode. */
  sizes: Partial<Record<OpcodeKey, DdpSizeStats>>;
}

/** One RDMA message assembled from its DDP segments. */
export interface DdpMessage {
  readonly flow: number;
  readonly dir: Dir;
  readonly from: string;
  /** 1-based, per direction, in order of first segment. */
  readonly index: number;
  readonly opcode: number;
  readonly key: OpcodeKey;
  readonly tagged: boolean;
  readonly qn: number | null;
  readonly msn: number | null;
  readonly stag: number | null;
  /** TO of the first segment seen (tagged). */
  readonly to: bigint | null;
  /** DDP payload octets seen. */
  readonly length: number;
  readonly segments: number;
  /** Frames that carried the message (the first 64 distinct ones). */
  readonly frames: readonly number[];
  readonly framesTruncated: boolean;
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** L was seen. */
  readonly complete: boolean;
  /** The first segment (MO 0, or the start of a tagged message) was seen. */
  readonly startSeen: boolean;
  readonly rtr: boolean;
}

export interface SegmentFinding {
  readonly rule: string;
  readonly message: string;
}

/** What the analyzer says about one segment, for the text and -V outputs. */
export interface DdpSegmentRecord {
  readonly flow: number;
  readonly dir: Dir;
  readonly from: string;
  readonly seq: number;
  readonly frames: readonly number[];
  readonly length: number;
  readonly crc: Ulpdu['crc'];
  readonly afterError: boolean;
  readonly pdu: DdpPdu;
  /** Why the segment was left out of sequence bookkeeping, or null. */
  skipped: string | null;
  readonly findings: SegmentFinding[];
  message: { index: number; length: number; complete: boolean; segment: number } | null;
  rtr: RtrKind | null;
  /** For a Read Response's first segment: the Read Request it answers. */
  readRequest: { seq: number; frames: readonly number[] } | null;
  /** For a Terminate: the segment whose copied DDP header it carries. */
  terminated: { seq: number; frames: readonly number[] } | null;
  /** What the connection's upper layer (SMB Direct, RPC-over-RDMA, ...) said of the message this segment ended. */
  ulp?: UlpRecord | null;
}

export interface DdpAnalyzerOptions {
  /** Called once per message when it completes, is abandoned, or is still open at end(). */
  onMessage?: (m: DdpMessage) => void;
  /** Open messages kept per direction (default 64); the oldest is closed beyond it. */
  maxOpenMessages?: number;
  /** Recent segment headers kept per direction for Terminate matching (default 64). */
  historySize?: number;
  /** Outstanding Read Requests kept per direction (default 4096; IRD/ORD are 14-bit). */
  maxOutstandingReads?: number;
  /** Findings per rule and direction passed to the sink before the rest are only counted (default 100). */
  maxFindingsPerRule?: number;
  /**
   * Infer missing FPDUs from jumps in their sequence numbers (default true). Turn off only when
   * the ULPDUs handed in do not carry real sequence numbers.
   */
  seqContinuity?: boolean;
}
