/**
 * One direction's DDP/RDMAP state (DirState) and what it keeps: open messages, untagged queues,
 * outstanding Read Requests, noted MPA errors, the rare fields made on demand. State only: the
 * analyzer's steps (untagged.ts, tagged.ts, request-pairing.ts, ...) change it.
 */

import { defineRareFields, newRare, type RareFields } from '../../src/vocabulary/rare-fields.js';
import { HeaderHistory } from './header-history.js';
import type { Ulpdu } from '../mpa/ulpdu.js';
import type { DdpSegmentRecord, RtrKind, SegmentFinding } from './types.js';

/** A message awaiting its L segment (the last one seen is still open until it closes). */
export interface OpenMsg {
  index: number;
  opcode: number;
  tagged: boolean;
  qn: number | null;
  msn: number | null;
  stag: number | null;
  firstTo: bigint | null;
  nextTo: bigint;
  length: number;
  segments: number;
  frames: number[];
  framesTruncated: boolean;
  firstSeq: number;
  lastSeq: number;
  startSeen: boolean;
  rtr: boolean;
  /** Loss epoch of the direction at this message's last segment. */
  epoch: number;
  read: OutstandingRead | null;
  sizeReported: boolean;
  interleaveReported: boolean;
}

export interface QueueState {
  qn: number;
  expected: number | null;
  /** Messages awaiting their L segment, by MSN; created with the first (single-segment messages never enter). */
  open: Map<number, OpenMsg> | null;
  /** MSNs skipped by a gap, to tell a late arrival (reorder) from a duplicate. Bounded; created with the first. */
  missing: Set<number> | null;
  epoch: number;
}

export interface OutstandingRead {
  seq: number;
  frames: readonly number[];
  sinkStag: number;
  sinkTo: bigint;
  size: number;
  rtr: boolean;
  /** The Request's fields as sent (before any byte-order diagnosis), for the findings' wording. */
  wire: { sinkStag: number; sinkTo: bigint; size: number; srcStag: number; srcTo: bigint };
  /** The Response is paired under the byte-swapped reading (the sender wrote host order). */
  swapped: boolean;
}

export interface NotedError {
  code: number;
  seq: number;
  frames: readonly number[];
}

/** A Response waiting for the peer's held-back octets to say whether its Request preceded it. */
export interface PendingResponse {
  u: Ulpdu;
  rec: DdpSegmentRecord;
  /** A Read Response (its first segment), or an Atomic Response naming `requestId`. */
  kind: 'read' | 'atomic';
  stag: number;
  to: bigint;
  msg: OpenMsg | null;
  requestId: number;
  /** The Response's last frame: a Request captured before it answers to it. */
  frame: number;
}

/**
 * What a direction keeps besides its common counters: read as these defaults until the first loss,
 * error, Read, Atomic, Terminate or finding changes one (src/vocabulary/rare-fields.ts; most
 * directions of a many-flow capture never need it).
 */
const DIR_RARE = {
  skipped: 0,
  malformed: 0,
  msnErrors: 0,
  moErrors: 0,
  toErrors: 0,
  lossExplained: 0,
  readRequests: 0,
  /** Read Requests of this direction whose Response showed them written in host byte order (one finding, then counted). */
  readRequestsByteSwapped: 0,
  readResponses: 0,
  terminates: 0,
  /** Read Requests this direction sent that the peer has not answered yet, oldest first. */
  outstanding: null as OutstandingRead[] | null,
  /** Atomic Requests this direction sent, by Request Identifier. */
  atomics: null as Map<number, { seq: number; frames: readonly number[] }> | null,
  /** Any pairing seen: after it, the capture has the requests. */
  pairedResponse: false,
  /**
   * Read and Atomic Responses of this direction that found no Request while the peer's direction held
   * octets back (request-pairing.ts): judged once the peer's FPDUs have caught up with them.
   */
  pendingResponses: null as PendingResponse[] | null,
  lastLoss: null as string | null,
  /** Why the last loss epoch began: a bad CRC names itself instead of capture loss. */
  lastLossKind: 'capture' as 'capture' | 'crc' | 'other',
  mpaErrors: null as NotedError[] | null,
  rtrMismatch: null as { seq: number; frames: readonly number[] } | null,
  terminated: null as { seq: number; frames: readonly number[] } | null,
  afterTerminateReported: false,
  /** Findings passed to the sink per rule (the per-rule cap). */
  reported: null as Map<string, number> | null,
  /** Fields this direction was found to send byte-swapped (reported once each). */
  byteOrderReported: null as Set<string> | null,
};
type DirRare = RareFields<typeof DIR_RARE>;
/** Rare fields DirState reads through methods of its own (collections made on first use). */
type DirRareCollections = 'outstanding' | 'atomics' | 'mpaErrors' | 'reported' | 'byteOrderReported';

const NO_READS: readonly OutstandingRead[] = Object.freeze([]);
const NO_NOTED: readonly NotedError[] = Object.freeze([]);
// Shared empty stand-ins, so that reading a direction that never had any allocates nothing.
export const NO_QUEUES: readonly QueueState[] = Object.freeze([]);
export const NO_MSGS: readonly OpenMsg[] = Object.freeze([]);
export const NO_OPEN: ReadonlyMap<number, OpenMsg> = new Map();
export const NO_FINDINGS: SegmentFinding[] = Object.freeze([]) as unknown as SegmentFinding[];

// The rare scalar fields, declared by DIR_RARE and read through `more` (defineRareFields below).
export interface DirState extends Omit<DirRare, DirRareCollections> {}
/**
 * One direction's DDP/RDMAP state. Kept small (100,000 open flows hold 200,000 of them): common
 * counters as fields, per-opcode tables as flat number arrays in first-seen order (the report lists
 * opcodes in that order), queues in a short array, and everything rare in a DirRare made on demand.
 */
export class DirState {
  from = '';
  seenAny = false;
  ended = false;
  segments = 0;
  messageIndex = 0;
  messagesComplete = 0;
  messagesIncomplete = 0;
  openCount = 0;
  /** Incremented for every capture gap and every segment left out; compared with per-queue epochs. */
  lossEpoch = 0;
  rtr: RtrKind | null = null;
  /** Segments per opcode: (key index, count) pairs in first-seen order; created with the first segment. */
  opCounts: number[] | null = null;
  /** Complete messages per opcode: SIZE_STRIDE numbers each, in first-seen order; created with the first (direction-summary.ts). */
  sizeStats: number[] | null = null;
  /** Untagged queues seen (at most MAX_QUEUES), in first-seen order. */
  queues: QueueState[] | null = null;
  /** Tagged messages awaiting their L segment; null while none ever was. */
  openTagged: OpenMsg[] | null = null;
  /** Seq and size on the wire of the last FPDU seen (lastFpduSize 0: none yet). */
  lastFpduSeq = 0;
  lastFpduSize = 0;
  readonly history: HeaderHistory<SegmentFinding[]>;
  /** The rare fields (DIR_RARE) once one of them changed; null before. */
  more: DirRare | null = null;

  constructor(historySize: number) {
    this.history = new HeaderHistory<SegmentFinding[]>(historySize, NO_FINDINGS);
  }

  /** The rare state, created on first use. */
  get rare(): DirRare {
    return (this.more ??= newRare(DIR_RARE));
  }

  /** Read Requests outstanding (read-only view; outstandingList() to change them). */
  get outstanding(): readonly OutstandingRead[] {
    return this.more?.outstanding ?? NO_READS;
  }
  outstandingList(): OutstandingRead[] {
    const r = this.rare;
    return (r.outstanding ??= []);
  }
  get atomics(): Map<number, { seq: number; frames: readonly number[] }> {
    const r = this.rare;
    return (r.atomics ??= new Map());
  }
  get mpaErrors(): readonly NotedError[] {
    return this.more?.mpaErrors ?? NO_NOTED;
  }
  mpaErrorList(): NotedError[] {
    const r = this.rare;
    return (r.mpaErrors ??= []);
  }
  get reported(): Map<string, number> {
    const r = this.rare;
    return (r.reported ??= new Map());
  }
  /** Findings per rule so far, null while none. */
  get reportedSoFar(): Map<string, number> | null {
    return this.more?.reported ?? null;
  }
  get byteOrderReported(): Set<string> {
    const r = this.rare;
    return (r.byteOrderReported ??= new Set());
  }

  /** The queue of `qn`, or null (created by the caller). */
  queue(qn: number): QueueState | null {
    const qs = this.queues;
    if (qs === null) return null;
    for (let i = 0; i < qs.length; i++) if (qs[i]!.qn === qn) return qs[i]!;
    return null;
  }

  /** Open tagged messages, for changing them (created on first use). */
  tagged(): OpenMsg[] {
    return (this.openTagged ??= []);
  }
}

defineRareFields(DirState, DIR_RARE);

/** Drops the oldest entry (insertion order) of a bounded set or map. */
export function dropOldest(c: Set<number> | Map<number, unknown>): void {
  for (const k of c.keys()) {
    c.delete(k);
    return;
  }
}
