/**
 * Per-connection DDP/RDMAP analysis: header checks, per-queue MSN and MO bookkeeping, tagged TO
 * continuity, message assembly, Read Request/Response pairing, RFC 6581 RTR, and Terminate linking.
 *
 * Memory is bounded: only open messages, outstanding requests and a short history of recent
 * segment headers (for Terminate matching) are kept; completed messages reduce to counters and
 * are handed to an optional callback.
 */

import type { FindingSink } from '../../src/vocabulary/findings.js';
import { defineRareFields, newRare, type RareFields } from '../../src/vocabulary/rare-fields.js';
import type { MpaContext, Ulpdu } from '../mpa/ulpdu.js';
import { decodeDdp, type DdpPdu, type TaggedPdu, type TerminateMessage, type UntaggedPdu } from './decode.js';
import {
  DDP_TAGGED_HEADER_LEN,
  DDP_UNTAGGED_HEADER_LEN,
  OP,
  OPCODE_SPECS,
  opcodeKey,
  opcodeName,
  TERM_LAYER,
  type OpcodeKey,
} from './fields.js';
import { ddpSummary, hex32, hex64 } from './tree.js';
import { HeaderHistory, type HistoryHit } from './header-history.js';

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
/** tshark-style Info text of a segment: built only when an output shows it (formatting per segment is costly). */
export function segmentInfo(rec: DdpSegmentRecord): string {
  return ddpSummary(rec.pdu);
}

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

// ---------------------------------------------------------------------------------------------

interface OpenMsg {
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

interface QueueState {
  qn: number;
  expected: number | null;
  /** Messages awaiting their L segment, by MSN; created with the first (single-segment messages never enter). */
  open: Map<number, OpenMsg> | null;
  /** MSNs skipped by a gap, to tell a late arrival (reorder) from a duplicate. Bounded; created with the first. */
  missing: Set<number> | null;
  epoch: number;
}

interface OutstandingRead {
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

const bswap32 = (v: number): number =>
  (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
function bswap64(v: bigint): bigint {
  let r = 0n;
  for (let i = 0; i < 8; i++) r = (r << 8n) | ((v >> BigInt(8 * i)) & 0xffn);
  return r;
}

interface NotedError {
  code: number;
  seq: number;
  frames: readonly number[];
}

/** How a Terminate's explanation names a noted MPA error (worded only when a Terminate needs it). */
function notedText(e: NotedError): string {
  return `MPA error code ${e.code} at seq ${e.seq} (${framesText(e.frames)})`;
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
  readResponses: 0,
  terminates: 0,
  /** Read Requests this direction sent that the peer has not answered yet, oldest first. */
  outstanding: null as OutstandingRead[] | null,
  /** Atomic Requests this direction sent, by Request Identifier. */
  atomics: null as Map<number, { seq: number; frames: readonly number[] }> | null,
  /** Any pairing seen: after it, the capture has the requests. */
  pairedResponse: false,
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
const NO_QUEUES: readonly QueueState[] = Object.freeze([]);
const NO_MSGS: readonly OpenMsg[] = Object.freeze([]);
const NO_OPEN: ReadonlyMap<number, OpenMsg> = new Map();
const NO_FINDINGS: SegmentFinding[] = Object.freeze([]) as unknown as SegmentFinding[];

/** Index of an OpcodeKey in per-direction tables: the opcode, or UNKNOWN_KEY for 'unknown'. */
const UNKNOWN_KEY = 12;
const keyIndex = (opcode: number): number => (opcodeKey(opcode) === 'unknown' ? UNKNOWN_KEY : opcode);
const keyOf = (index: number): OpcodeKey => (index === UNKNOWN_KEY ? 'unknown' : opcodeKey(index));
/** Numbers per opcode in DirState.sizeStats: key index, messages, min, max, total. */
const SIZE_STRIDE = 5;

// The rare scalar fields, declared by DIR_RARE and read through `more` (defineRareFields below).
// biome-ignore lint/correctness/noUnusedVariables: merged with the class DirState below, it types the rare fields
interface DirState extends Omit<DirRare, DirRareCollections> {}
/**
 * One direction's DDP/RDMAP state. Kept small (100,000 open flows hold 200,000 of them): common
 * counters as fields, per-opcode tables as flat number arrays in first-seen order (the report lists
 * opcodes in that order), queues in a short array, and everything rare in a DirRare made on demand.
 */
class DirState {
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
  /** Complete messages per opcode: SIZE_STRIDE numbers each, in first-seen order; created with the first. */
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

const MAX_QUEUES = 16;
const MAX_MISSING = 256;
const MAX_FRAMES = 64;
const MAX_NOTED = 16;
const MAX_ATOMICS = 1024;
/** IRD/ORD value Intel drivers use for "no value" (SPEC-NOTES RFC 6581; provisional 3). */
const NO_IRD_ORD = 0x3fff;

function serialDiff(a: number, b: number): number {
  // (a - b) mod 2^32 as a signed distance: MSN arithmetic is modulo 2^32 (SPEC-NOTES 1.5 [RFC?]).
  const d = (a - b) >>> 0;
  return d >= 0x80000000 ? d - 0x100000000 : d;
}

const other = (d: Dir): Dir => (d === 0 ? 1 : 0);

/** Drops the oldest entry (insertion order) of a bounded set or map. */
function dropOldest(c: Set<number> | Map<number, unknown>): void {
  for (const k of c.keys()) {
    c.delete(k);
    return;
  }
}

function framesText(f: readonly number[]): string {
  return f.length === 0 ? 'no frames' : f.length === 1 ? `frame ${f[0]}` : `frames ${f.join(',')}`;
}

export class DdpFlowAnalyzer {
  /** Each direction's state, created with its first event (a direction that carries no DDP keeps none). */
  private dir0: DirState | null = null;
  private dir1: DirState | null = null;
  /** Connection-wide DDP/RDMAP version once established (RFC 5044 App. C: same in both directions). */
  private connVersion: { v: number; seq: number; frames: readonly number[] } | null = null;
  // Limits are read from the options shared by every flow (four fields less per flow).
  private get maxOpen(): number {
    return Math.max(1, this.opts.maxOpenMessages ?? 64);
  }
  private get historySize(): number {
    return Math.max(1, this.opts.historySize ?? 64);
  }
  private get maxReads(): number {
    return Math.max(1, this.opts.maxOutstandingReads ?? 4096);
  }
  private get maxPerRule(): number {
    return Math.max(1, this.opts.maxFindingsPerRule ?? 100);
  }

  constructor(
    private readonly flowId: number,
    private readonly ctx: MpaContext,
    private readonly sink: FindingSink,
    private readonly opts: DdpAnalyzerOptions = {},
  ) {}

  private dir(d: Dir): DirState {
    if (d === 0) return (this.dir0 ??= new DirState(this.historySize));
    return (this.dir1 ??= new DirState(this.historySize));
  }

  // -------------------------------------------------------------------------------------------
  // Inputs from the layers below
  // -------------------------------------------------------------------------------------------

  /**
   * The MPA layer reports an MPA error (RFC 5044 §8 codes 1-4, or RFC 6581 codes 5-7) it detected
   * in the data of direction `dir` (the half connection whose sender erred). A receiver answers it
   * with a Terminate (layer LLP) in the other direction; this lets that Terminate be explained.
   */
  noteMpaError(dir: Dir, code: number, seq: number, frames: number[]): void {
    const st = this.dir(dir);
    const list = st.mpaErrorList();
    list.push({ code, seq, frames: [...frames] });
    if (list.length > MAX_NOTED) list.shift();
  }

  /** The TCP layer lost bytes of direction `dir` (a capture gap): later sequence jumps may be explained by it. */
  noteCaptureGap(dir: Dir, seq: number, length: number): void {
    const st = this.dir(dir);
    st.lossEpoch++;
    st.lastLoss = `a capture gap of ${length} octets at seq ${seq}`;
    st.lastLossKind = 'capture';
  }

  // -------------------------------------------------------------------------------------------
  // Per-segment analysis
  // -------------------------------------------------------------------------------------------

  ulpdu(u: Ulpdu): DdpSegmentRecord {
    const st = this.dir(u.dir);
    st.from = u.from;
    const pdu = decodeDdp(u.head, u.length);
    const rec: DdpSegmentRecord = {
      flow: this.flowId,
      dir: u.dir,
      from: u.from,
      seq: u.seq,
      frames: u.frames, // the MPA layer hands over a fresh array per FPDU
      length: u.length,
      crc: u.crc,
      afterError: u.afterError,
      pdu,

      skipped: null,
      findings: [],
      message: null,
      rtr: null,
      readRequest: null,
      terminated: null,
    };
    st.segments++;
    this.analyze(u, st, pdu, rec);
    // Remember the header octets for a later Terminate from the peer (it copies them), with the
    // findings this segment drew: added after them, so an entry without findings keeps no array.
    st.history.add(u.seq, rec.frames, u.head, rec.findings.length === 0 ? NO_FINDINGS : rec.findings);
    return rec;
  }

  private analyze(u: Ulpdu, st: DirState, pdu: DdpPdu, rec: DdpSegmentRecord): void {
    const first = !st.seenAny;
    st.seenAny = true;

    // Every decoded segment counts by opcode, CRC-bad ones too (report-schema byOpcode).
    this.count(st, pdu.rdmap ? keyIndex(pdu.rdmap.opcode) : UNKNOWN_KEY);
    this.checkContinuity(u, st);

    const bad = u.crc === 'bad';
    if (first && st.lossEpoch === 0) this.checkRtr(u, st, pdu, rec, bad);
    else if (first && this.rtrExpected(u.dir)) {
      this.emit(
        'ddp.capture-loss',
        u,
        rec,
        `RTR check not possible: data was missing from the capture (${st.lastLoss}) before the Initiator's first FPDU seen`,
      );
    }

    if (pdu.kind === 'truncated') {
      st.malformed++;
      if (!bad) this.emit('ddp.truncated', u, rec, pdu.reason);
      st.lossEpoch++;
      st.lastLoss = `the malformed segment at seq ${u.seq}`;
      st.lastLossKind = 'other';
      rec.skipped = 'malformed';
      return;
    }

    if (bad) {
      // Decoded and shown, but its octets are not trustworthy: no sequence bookkeeping, and what
      // follows may show jumps that this segment explains. (Segments after an MPA error but with a
      // good CRC are analysed normally: the sender's behaviour is still visible in them.)
      rec.skipped = 'CRC does not verify';
      st.skipped++;
      st.lossEpoch++;
      st.lastLoss = `the segment at seq ${u.seq} (${framesText(u.frames)}) left out because its CRC does not verify`;
      st.lastLossKind = 'crc';
      // Every Terminate is reported, even one a receiver would discard (its note says why).
      if (pdu.kind === 'untagged' && pdu.body.type === 'terminate')
        this.handleTerminate(u, st, pdu, pdu.body.term, rec);
      return;
    }

    if (st.terminated && !st.afterTerminateReported && pdu.rdmap.opcode !== OP.TERMINATE) {
      st.afterTerminateReported = true;
      this.emit(
        'rdmap.after-terminate',
        u,
        rec,
        `${opcodeName(pdu.rdmap.opcode)} sent after this side's Terminate at seq ${st.terminated.seq} (${framesText(st.terminated.frames)})`,
      );
    }
    this.checkVersions(u, rec, pdu);
    this.checkHeader(u, rec, pdu);

    if (pdu.kind === 'untagged') this.untagged(u, st, pdu, rec);
    else this.tagged(u, st, pdu, rec);

    if (pdu.kind === 'untagged' && pdu.body.type === 'terminate') this.handleTerminate(u, st, pdu, pdu.body.term, rec);
    return;
  }

  /**
   * FPDUs of one direction follow each other on the wire: the next ULPDU_Length sits
   * 2 + length + PAD + 4 octets further, plus 4 per marker in between (markers every 512 octets of
   * sequence space, SPEC-NOTES "Markers"). A larger jump means FPDUs are missing from what MPA
   * framed (a capture gap, or bytes it could not frame): later sequence jumps may be explained by it.
   */
  private checkContinuity(u: Ulpdu, st: DirState): void {
    const prevSeq = st.lastFpduSeq;
    const prevSize = st.lastFpduSize;
    st.lastFpduSeq = u.seq;
    st.lastFpduSize = 2 + u.length + ((4 - ((2 + u.length) % 4)) % 4) + 4;
    if (prevSize === 0 || this.opts.seqContinuity === false) return;
    const delta = (u.seq - prevSeq) >>> 0;
    if (delta === prevSize || delta === 0 || delta >= 0x80000000) return; // contiguous, repeated, or behind
    const extra = delta - prevSize;
    if (extra > 0 && extra % 4 === 0) {
      const k = extra / 4;
      const lo = Math.floor(delta / 512);
      if (k === lo || k === lo + 1) return; // the markers in between
    }
    st.lossEpoch++;
    st.lastLossKind = 'capture';
    st.lastLoss =
      extra > 0
        ? `${extra} octets missing from the stream between seq ${prevSeq} and seq ${u.seq} (FPDUs lost from the capture or not framed)`
        : `FPDU at seq ${u.seq} overlapping the previous one at seq ${prevSeq}`;
  }

  // --- header checks ---

  private checkVersions(u: Ulpdu, rec: DdpSegmentRecord, p: TaggedPdu | UntaggedPdu): void {
    const dvv = p.ddp.dv;
    const rvv = p.rdmap.rv;
    const rev = this.ctx.rev;
    // RFC 5044 Appendix C: version 1 (IETF) after Rev 1/2, version 0 (RDMA Consortium) after Rev 0.
    const expected = rev === 0 ? 0 : rev === 1 || rev === 2 ? 1 : null;
    if (expected !== null) {
      if (dvv !== expected) {
        const term = p.kind === 'tagged' ? 'DDP/Tagged 0x04' : 'DDP/Untagged 0x06';
        this.emit(
          'ddp.invalid-dv',
          u,
          rec,
          `DV=${dvv}, expected ${expected} after a Rev ${rev} MPA startup (a receiver answers Terminate ${term} Invalid DDP version)`,
        );
      }
      if (rvv !== expected) {
        this.emit(
          'rdmap.invalid-rv',
          u,
          rec,
          `RV=${rvv}, expected ${expected} after a Rev ${rev} MPA startup (a receiver answers Terminate RDMAP/Remote Operation 0x05 Invalid RDMAP version)`,
        );
      }
      return;
    }
    // Startup unknown (or an unknown Rev such as erdma's 0x81): accept 1, or 0, consistently.
    if (dvv > 1) this.emit('ddp.invalid-dv', u, rec, `DV=${dvv} is neither 1 (IETF) nor 0 (RDMA Consortium)`);
    if (rvv > 1) this.emit('rdmap.invalid-rv', u, rec, `RV=${rvv} is neither 1 (IETF) nor 0 (RDMA Consortium)`);
    if (dvv > 1 || rvv > 1) return;
    if (dvv !== rvv) {
      this.emit(
        'ddp.version-mix',
        u,
        rec,
        `DV=${dvv} with RV=${rvv}: DDP and RDMAP versions must match (RFC 5044 Appendix C)`,
      );
      return;
    }
    if (this.connVersion === null) this.connVersion = { v: dvv, seq: u.seq, frames: [...u.frames] };
    else if (this.connVersion.v !== dvv) {
      this.emit(
        'ddp.version-mix',
        u,
        rec,
        `version ${dvv}, but the connection started with version ${this.connVersion.v} (seq ${this.connVersion.seq}, ${framesText(this.connVersion.frames)}); versions must be identical in both directions (RFC 5044 Appendix C)`,
      );
    }
  }

  private checkHeader(u: Ulpdu, rec: DdpSegmentRecord, p: TaggedPdu | UntaggedPdu): void {
    const op = p.rdmap.opcode;
    const spec = OPCODE_SPECS[op];
    if (p.ddp.rsvd !== 0)
      this.emit(
        'ddp.reserved-nonzero',
        u,
        rec,
        `DDP Rsvd bits = 0x${(p.ddp.rsvd << 2).toString(16)} (control octet 0x${p.ddp.raw.toString(16).padStart(2, '0')})`,
      );
    if (p.rdmap.rsv !== 0)
      this.emit(
        'rdmap.reserved-nonzero',
        u,
        rec,
        `RDMAP Rsv bits = 0x${(p.rdmap.rsv << 4).toString(16)} (control octet 0x${p.rdmap.raw.toString(16).padStart(2, '0')})`,
      );
    if (p.kind === 'untagged' && p.reservedWord !== null && p.reservedWord !== 0) {
      this.emit(
        'rdmap.reserved-nonzero',
        u,
        rec,
        `reserved bytes 2..5 of the ${opcodeName(op)} header = ${hex32(p.reservedWord)}`,
      );
    }
    if (!spec) {
      this.emit(
        'rdmap.unexpected-opcode',
        u,
        rec,
        `opcode 0x${op.toString(16)} is ${op === 0xf ? 'reserved for experiments' : 'unassigned'} (a receiver answers Terminate RDMAP/Remote Operation 0x06 Unexpected OpCode)`,
      );
      return;
    }
    if (spec.tagged !== (p.kind === 'tagged')) {
      this.emit(
        'rdmap.opcode-buffer-model',
        u,
        rec,
        `${opcodeName(op)} sent ${p.kind}; it uses the ${spec.tagged ? 'tagged' : 'untagged'} buffer model`,
      );
      return;
    }
    if (p.kind === 'untagged' && spec.qn !== null && p.qn !== spec.qn) {
      if (spec.qnProvisional) {
        this.emit(
          'rdmap.rfc7306-qn',
          u,
          rec,
          `${opcodeName(op)} on QN ${p.qn}; expected QN ${spec.qn} (RFC 7306 queue assignment not verified)`,
        );
      } else {
        const invalid =
          p.qn > 3 ? ' (QN above 3 is unassigned: a receiver answers Terminate DDP/Untagged 0x01 Invalid QN)' : '';
        this.emit('ddp.invalid-qn', u, rec, `${opcodeName(op)} on QN ${p.qn}; it must use QN ${spec.qn}${invalid}`);
      }
    }
    const immediate = op === OP.IMMEDIATE_DATA || op === OP.IMMEDIATE_DATA_SE;
    const single = immediate ? 'rdmap.immediate-length' : 'rdmap.not-single-segment';
    if (spec.single && p.kind === 'untagged' && (!p.ddp.l || p.mo !== 0)) {
      this.emit(
        single,
        u,
        rec,
        `${opcodeName(op)} must be a single DDP segment, but has L=${p.ddp.l ? 1 : 0} MO=${p.mo}`,
      );
    }
    const b = p.body;
    if (b.type === 'truncated') {
      this.emit(
        immediate ? 'rdmap.immediate-length' : 'rdmap.truncated-header',
        u,
        rec,
        `${b.what} needs a ${b.need}-octet ULPDU; this one has ${p.length}`,
      );
      return;
    }
    const fixed =
      op === OP.READ_REQUEST
        ? 46
        : op === OP.ATOMIC_REQUEST
          ? 70
          : op === OP.ATOMIC_RESPONSE
            ? 30
            : immediate
              ? 26
              : null;
    if (fixed !== null && p.length > fixed) {
      this.emit(
        single,
        u,
        rec,
        `${opcodeName(op)} segment is ${p.length} octets; it should be exactly ${fixed} (${p.length - fixed} octets beyond its header)`,
      );
    }
    if (b.type === 'terminate') {
      const t = b.term;
      if (t.rsvd !== 0)
        this.emit('rdmap.reserved-nonzero', u, rec, `Terminate reserved bits = 0x${t.rsvd.toString(16)}`);
      if ((t.m || t.d) && t.ddpSegmentLength === null) {
        this.emit(
          'rdmap.truncated-header',
          u,
          rec,
          `Terminate has ${t.m ? 'M' : 'D'} set but ends before the DDP Segment Length field`,
        );
      } else if (t.d && (t.ddpHeader === null || t.ddpHeader.header === null)) {
        this.emit(
          'rdmap.truncated-header',
          u,
          rec,
          `Terminate has D set but ${t.ddpHeader ? `only ${t.ddpHeader.bytes.length} octets of` : 'no'} terminated DDP header`,
        );
      }
    }
    if (b.type === 'atomic-request' && b.req.reserved !== 0) {
      this.emit(
        'rdmap.reserved-nonzero',
        u,
        rec,
        `Atomic Request reserved bits = 0x${((b.req.reserved << 4) >>> 0).toString(16)}`,
      );
    }
  }

  // --- RFC 6581 RTR ---

  private rtrExpected(dir: Dir): boolean {
    return this.ctx.p2p && this.ctx.rev !== null && this.ctx.initiatorDir === dir;
  }

  private checkRtr(u: Ulpdu, st: DirState, p: DdpPdu, rec: DdpSegmentRecord, bad: boolean): void {
    if (this.ctx.rev === null || this.ctx.initiatorDir !== u.dir) return;
    // An Initiator that rejects the Reply (no matching RTR, too little IRD) sends a Terminate as its
    // first FPDU instead of an RTR [siw]: that Terminate is reported on its own, not as a wrong RTR.
    if (p.kind === 'untagged' && p.rdmap.opcode === OP.TERMINATE) return;
    const kind = rtrShape(p);
    if (!this.ctx.p2p) {
      // cxgb4 sends a Read RTR even after falling back to Rev 1 without peer-to-peer (SPEC-NOTES quirks).
      if (kind === 'write' || kind === 'read') {
        this.emit(
          'rdmap.rtr-without-p2p',
          u,
          rec,
          `the Initiator's first FPDU is a zero-length ${kind === 'write' ? 'RDMA Write' : 'Read Request'}, shaped like a ${kind} RTR, but peer-to-peer mode was not negotiated`,
        );
      }
      return;
    }
    st.rtr = kind;
    rec.rtr = kind;
    const want = this.ctx.rtr;
    const crcNote = bad ? ' (its CRC does not verify)' : '';
    if (want !== null && kind === want) return;
    if (want === null && kind !== null) return; // A set but no choice recorded: any RTR form will do
    const what = kind !== null ? `a zero-length ${kind} RTR` : ddpSummary(p);
    const expected =
      want !== null ? `the negotiated zero-length ${want} RTR (${rtrDescription(want)})` : 'a zero-length RTR';
    this.emit(
      'rdmap.rtr-mismatch',
      u,
      rec,
      `peer-to-peer mode: the Initiator's first FPDU should be ${expected}, but it is ${what}${crcNote}; expect a Terminate LLP/MPA 0x07 No matching RTR option from the Responder`,
    );
    st.rtrMismatch = { seq: u.seq, frames: rec.frames };
  }

  // --- untagged bookkeeping ---

  private untagged(u: Ulpdu, st: DirState, p: UntaggedPdu, rec: DdpSegmentRecord): void {
    let q = st.queue(p.qn);
    if (!q) {
      const qs = st.queues;
      if (qs !== null && qs.length >= MAX_QUEUES) return; // garbage QNs must not grow the table
      q = { qn: p.qn, expected: null, open: null, missing: null, epoch: st.lossEpoch };
      if (qs === null)
        st.queues = [q]; // room for one queue, not the 17 a first push reserves
      else qs.push(q);
    }
    // Single-segment opcodes (Read Request, Terminate, RFC 7306) end with their one segment even
    // without L: that is reported once (rdmap.not-single-segment), not again as a missing L.
    const ends = p.ddp.l || OPCODE_SPECS[p.rdmap.opcode]?.single === true;
    let inTable = true;
    let m = q.open === null || q.open.size === 0 ? undefined : q.open.get(p.msn);
    if (m) {
      if (p.mo !== m.length && p.mo === bswap32(m.length) && m.length !== 0) {
        // MO in host order (SoftUiWarp after the first segment): one finding per direction.
        if (!st.byteOrderReported.has('MO')) {
          st.byteOrderReported.add('MO');
          this.emit(
            'ddp.mo-byte-order',
            u,
            rec,
            `QN ${p.qn} MSN ${p.msn}: MO 0x${p.mo.toString(16).padStart(8, '0')} (${p.mo}) in network byte order is ${m.length} byte-swapped, the offset the message has reached; the sender writes MO in host (little-endian) order, RFC 5041 section 4 puts it in network order`,
          );
        }
      } else if (p.mo !== m.length) {
        const why = p.mo > m.length ? `${p.mo - m.length} octets missing` : `${m.length - p.mo} octets overlap`;
        const text = `QN ${p.qn} MSN ${p.msn}: MO=${p.mo}, expected ${m.length} (${why})`;
        if (st.lossEpoch !== m.epoch) this.lossExplained(u, st, rec, text);
        else {
          st.moErrors++;
          this.emit('ddp.invalid-mo', u, rec, `${text}; a receiver answers Terminate DDP/Untagged 0x04 Invalid MO`);
        }
        m.length = p.mo; // resynchronise on the sender's offsets
      }
    } else {
      const startupKnown = this.ctx.rev !== null;
      const wasFresh = q.expected === null;
      this.checkMsn(u, st, q, p, rec);
      // Earlier messages on this queue still waiting for L: the new MSN supersedes them.
      for (const [msn, old] of q.open ?? NO_OPEN) {
        if (serialDiff(p.msn, msn) <= 0) continue;
        const text = `${opcodeName(old.opcode)} QN ${p.qn} MSN ${msn} (${old.segments} segment${old.segments === 1 ? '' : 's'}, ${old.length} octets from seq ${old.firstSeq}) never got its L segment before MSN ${p.msn} started`;
        if (st.lossEpoch !== old.epoch) this.lossExplained(u, st, rec, text);
        else this.emit('ddp.missing-last', u, rec, text);
        q.open!.delete(msn);
        this.close(u.dir, st, old, false);
      }
      const midCaptureStart = wasFresh && !startupKnown;
      if (p.mo !== 0) {
        const text = `QN ${p.qn} MSN ${p.msn}: first segment seen has MO=${p.mo}; the message's earlier segments are missing`;
        if (midCaptureStart) {
          /* the capture began inside this message */
        } else if (st.lossEpoch !== q.epoch || (wasFresh && st.lossEpoch > 0)) this.lossExplained(u, st, rec, text);
        else {
          st.moErrors++;
          this.emit('ddp.invalid-mo', u, rec, `${text} (a message starts at MO 0)`);
        }
      }
      m = this.open(u, st, p, {
        qn: p.qn,
        msn: p.msn,
        stag: null,
        to: null,
        startSeen: p.mo === 0,
        rtr: rec.rtr !== null,
      });
      m.length = p.mo;
      // A message that ends with this segment is never looked up: it does not enter the table.
      inTable = !ends;
      if (inTable) (q.open ??= new Map()).set(p.msn, m);
      this.pairUntaggedStart(u, st, p, rec, m);
    }
    q.epoch = st.lossEpoch;
    this.append(u, st, m, p, rec);
    if (ends) {
      if (inTable) q.open!.delete(p.msn);
      this.close(u.dir, st, m, p.ddp.l);
    }
  }

  private checkMsn(u: Ulpdu, st: DirState, q: QueueState, p: UntaggedPdu, rec: DdpSegmentRecord): void {
    if (q.expected === null) {
      q.expected = (p.msn + 1) >>> 0;
      // Without the startup the capture may begin anywhere in the stream: any first MSN will do.
      if (this.ctx.rev === null || p.msn === 1) return;
      const text = `first message on QN ${p.qn} has MSN ${p.msn}, expected 1`;
      if (st.lossEpoch > 0) this.lossExplained(u, st, rec, text);
      else {
        st.msnErrors++;
        this.emit(
          'ddp.msn-first',
          u,
          rec,
          `${text} (${p.msn === 0 ? 'a counter starting at 0?' : `${(p.msn - 1) >>> 0} earlier messages missing?`})`,
        );
      }
      return;
    }
    const d = serialDiff(p.msn, q.expected);
    if (d === 0) {
      q.expected = (p.msn + 1) >>> 0;
      return;
    }
    if (d > 0) {
      const text = `QN ${p.qn}: MSN ${p.msn}, expected ${q.expected} (${d} message${d === 1 ? '' : 's'} missing)`;
      if (d <= MAX_MISSING) {
        const missing = (q.missing ??= new Set());
        for (let i = 0; i < d; i++) {
          missing.add((q.expected + i) >>> 0);
          if (missing.size > MAX_MISSING) dropOldest(missing);
        }
      }
      if (st.lossEpoch !== q.epoch) this.lossExplained(u, st, rec, text);
      else {
        st.msnErrors++;
        this.emit(
          'ddp.msn-gap',
          u,
          rec,
          `${text}; a receiver answers Terminate DDP/Untagged 0x03 Invalid MSN - MSN range is not valid`,
        );
      }
      q.expected = (p.msn + 1) >>> 0;
      return;
    }
    st.msnErrors++;
    if (q.missing?.delete(p.msn)) {
      this.emit(
        'ddp.msn-reorder',
        u,
        rec,
        `QN ${p.qn}: MSN ${p.msn} arrived after MSN ${(q.expected - 1) >>> 0} (out of order)`,
      );
    } else {
      this.emit(
        'ddp.msn-duplicate',
        u,
        rec,
        `QN ${p.qn}: MSN ${p.msn} repeats an earlier message (next expected ${q.expected})`,
      );
    }
  }

  /** Read Request / Atomic bookkeeping at the start of an untagged message. */
  private pairUntaggedStart(u: Ulpdu, st: DirState, p: UntaggedPdu, rec: DdpSegmentRecord, m: OpenMsg): void {
    const b = p.body;
    if (b.type === 'read-request') {
      st.readRequests++;
      const rtr = rec.rtr === 'read';
      const rr = b.rr;
      const outstanding = st.outstandingList();
      outstanding.push({
        seq: u.seq,
        frames: rec.frames,
        sinkStag: rr.sinkStag,
        sinkTo: rr.sinkTo,
        size: rr.size,
        rtr,
        swapped: false,
        wire: { sinkStag: rr.sinkStag, sinkTo: rr.sinkTo, size: rr.size, srcStag: rr.srcStag, srcTo: rr.srcTo },
      });
      if (outstanding.length > this.maxReads) outstanding.shift();
      const limit = this.readLimit(u.dir);
      if (limit !== null && !rtr) {
        const n = st.outstanding.filter((r) => !r.rtr).length;
        if (n > limit.value) {
          this.emit(
            'rdmap.ird-exceeded',
            u,
            rec,
            `${n} Read Requests outstanding; the negotiated limit is ${limit.value} (${limit.why})`,
          );
        }
      }
      m.rtr = rtr;
    } else if (b.type === 'atomic-request') {
      st.atomics.set(b.req.requestId, { seq: u.seq, frames: rec.frames });
      if (st.atomics.size > MAX_ATOMICS) dropOldest(st.atomics);
    } else if (b.type === 'atomic-response') {
      const peer = this.dir(other(u.dir));
      if (peer.rare.atomics?.delete(b.resp.originalRequestId)) return;
      const text = `Atomic Response for Request Identifier ${b.resp.originalRequestId}, which no captured Atomic Request from the peer carries`;
      if (this.ctx.rev === null) return; // the Request may precede the capture
      if (peer.lossEpoch > 0)
        this.lossExplained(u, st, rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
      else this.emit('rdmap.atomic-response-unmatched', u, rec, text);
    }
  }

  private readLimit(dir: Dir): { value: number; why: string } | null {
    const c = this.ctx;
    if (c.initiatorDir === null) return null;
    // A requester may have min(its ORD, the peer's IRD) reads outstanding (SPEC-NOTES RFC 6581 rules).
    const mine = dir === c.initiatorDir ? c.requestOrd : c.replyOrd;
    const peers = dir === c.initiatorDir ? c.replyIrd : c.requestIrd;
    const who = dir === c.initiatorDir ? ['Initiator', 'Responder'] : ['Responder', 'Initiator'];
    const parts: { v: number; why: string }[] = [];
    if (mine !== null && mine !== NO_IRD_ORD) parts.push({ v: mine, why: `${who[0]} ORD ${mine}` });
    if (peers !== null && peers !== NO_IRD_ORD) parts.push({ v: peers, why: `${who[1]} IRD ${peers}` });
    if (parts.length === 0) return null;
    const best = parts.reduce((a, b) => (b.v < a.v ? b : a));
    return { value: best.v, why: parts.map((x) => x.why).join(', ') };
  }

  // --- tagged bookkeeping ---

  private tagged(u: Ulpdu, st: DirState, p: TaggedPdu, rec: DdpSegmentRecord): void {
    let m = st.openTagged?.find((x) => x.stag === p.stag && x.opcode === p.rdmap.opcode);
    if (m) {
      if (p.to !== m.nextTo) {
        const why = p.to > m.nextTo ? `${p.to - m.nextTo} octets missing` : `${m.nextTo - p.to} octets overlap`;
        const text = `STag ${hex32(p.stag)}: TO=${hex64(p.to)}, expected ${hex64(m.nextTo)} (${why})`;
        if (st.lossEpoch !== m.epoch) this.lossExplained(u, st, rec, text);
        else {
          st.toErrors++;
          this.emit(
            'ddp.to-discontinuity',
            u,
            rec,
            `${text}; a receiver answers Terminate DDP/Tagged 0x01 Base or bounds violation`,
          );
        }
      }
    } else {
      const open = st.tagged();
      for (const old of [...open]) {
        const text = `new ${opcodeName(p.rdmap.opcode)} to STag ${hex32(p.stag)} while ${opcodeName(old.opcode)} to STag ${hex32(old.stag ?? 0)} (from seq ${old.firstSeq}) still awaits its L segment`;
        if (st.lossEpoch !== old.epoch) {
          // Its tail was probably lost: close it rather than keep waiting.
          this.lossExplained(u, st, rec, text);
          open.splice(open.indexOf(old), 1);
          this.close(u.dir, st, old, false);
        } else if (!old.interleaveReported) {
          old.interleaveReported = true;
          this.emit('ddp.tagged-interleaved', u, rec, text);
        }
      }
      m = this.open(u, st, p, { qn: null, msn: null, stag: p.stag, to: p.to, startSeen: true, rtr: rec.rtr !== null });
      open.push(m);
      if (p.rdmap.opcode === OP.READ_RESPONSE) this.pairReadResponse(u, st, p, rec, m);
    }
    m.nextTo = BigInt.asUintN(64, p.to + BigInt(Math.max(0, p.payloadLength)));
    this.append(u, st, m, p, rec);
    if (m.read && !m.sizeReported && m.length > m.read.size) {
      m.sizeReported = true;
      this.emit(
        'rdmap.read-response-size',
        u,
        rec,
        `Read Response already ${m.length} octets; the Read Request at seq ${m.read.seq} (${framesText(m.read.frames)}) asked for ${m.read.size}`,
      );
    }
    if (p.ddp.l) {
      const open = st.tagged();
      open.splice(open.indexOf(m), 1);
      if (m.read && !m.sizeReported && !this.swappedSizeChecked(u, rec, m) && m.length !== m.read.size) {
        m.sizeReported = true;
        this.emit(
          'rdmap.read-response-size',
          u,
          rec,
          `Read Response of ${m.length} octets; the Read Request at seq ${m.read.seq} (${framesText(m.read.frames)}) asked for ${m.read.size}`,
        );
      }
      this.close(u.dir, st, m, true);
    }
  }

  private pairReadResponse(u: Ulpdu, st: DirState, p: TaggedPdu, rec: DdpSegmentRecord, m: OpenMsg): void {
    st.readResponses++;
    const peer = this.dir(other(u.dir));
    const req = peer.outstanding.length === 0 ? undefined : peer.outstandingList().shift();
    if (!req) {
      // Without the startup the Requests may precede the capture, until one pairing shows otherwise.
      if (this.ctx.rev === null && !st.pairedResponse) return;
      const text = `Read Response to STag ${hex32(p.stag)} TO ${hex64(p.to)} with no outstanding Read Request from the peer`;
      if (peer.lossEpoch > 0)
        this.lossExplained(u, st, rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
      else this.emit('rdmap.read-response-unsolicited', u, rec, text);
      return;
    }
    st.pairedResponse = true;
    m.read = req;
    m.rtr = m.rtr || req.rtr;
    rec.readRequest = { seq: req.seq, frames: req.frames };
    // A Request written in host order: the Response matches it byte-swapped (SoftUiWarp does this).
    if (
      !req.rtr &&
      (p.stag !== req.sinkStag || p.to !== req.sinkTo) &&
      p.stag === bswap32(req.sinkStag) &&
      p.to === bswap64(req.sinkTo)
    ) {
      this.readRequestSwapped(u, rec, req);
    }
    // siw: STag/TO of zero-length RTR operations must not be checked.
    if (!req.rtr && (p.stag !== req.sinkStag || p.to !== req.sinkTo)) {
      const text = `Read Response to STag ${hex32(p.stag)} TO ${hex64(p.to)}; the Read Request at seq ${req.seq} (${framesText(req.frames)}) named Data Sink ${hex32(req.sinkStag)}/${hex64(req.sinkTo)}`;
      if (peer.lossEpoch > 0)
        this.lossExplained(
          u,
          st,
          rec,
          `${text}; paired by order, and the peer's direction lost ${peer.lastLoss}`,
          peer.lastLossKind,
        );
      else this.emit('rdmap.read-response-mismatch', u, rec, text);
    }
  }

  /**
   * The Read Response matches its Request only with the Request's fields byte-swapped: the
   * requester wrote them in host (little-endian) order where RFC 5040 §4 puts every RDMAP field in
   * network order. One finding per field and direction, naming both readings; the pairing (and the
   * size check when the Response ends) goes on under the swapped reading.
   */
  private readRequestSwapped(u: Ulpdu, rec: DdpSegmentRecord, req: OutstandingRead): void {
    const w = req.wire;
    req.swapped = true;
    req.sinkStag = bswap32(w.sinkStag);
    req.sinkTo = bswap64(w.sinkTo);
    req.size = bswap32(w.size);
    const requester = other(u.dir);
    const fields: Array<[string, string, string]> = [
      ['Data Sink STag', hex32(w.sinkStag), hex32(req.sinkStag)],
      ['Data Sink Tagged Offset', hex64(w.sinkTo), hex64(req.sinkTo)],
      ['Data Source STag', hex32(w.srcStag), hex32(bswap32(w.srcStag))],
      ['Data Source Tagged Offset', hex64(w.srcTo), hex64(bswap64(w.srcTo))],
    ];
    for (const [name, wire, swapped] of fields) {
      if (wire === swapped) continue;
      const why = name.startsWith('Data Source')
        ? 'the Data Sink fields of the same Request are byte-swapped'
        : `the Read Response at seq ${u.seq} (${framesText(rec.frames)}) carries ${swapped}`;
      this.reportSwapped(requester, req, name, wire, swapped, why);
    }
  }

  private reportSwapped(
    requester: Dir,
    req: OutstandingRead,
    name: string,
    wire: string,
    swapped: string,
    why: string,
  ): void {
    const st = this.dir(requester);
    if (st.byteOrderReported.has(name)) return;
    st.byteOrderReported.add(name);
    this.report(
      'rdmap.read-request-byte-order',
      requester,
      st.from,
      req.frames,
      req.seq,
      `Read Request at seq ${req.seq}: ${name} ${wire} in network byte order, ${swapped} byte-swapped (${why}); the sender writes it in host (little-endian) order, RFC 5040 section 4 puts it in network order`,
    );
  }

  /** A Read Response under a byte-swapped Request ended: its length tells which reading of the size holds. */
  private swappedSizeChecked(u: Ulpdu, rec: DdpSegmentRecord, m: OpenMsg): boolean {
    const req = m.read;
    if (!req?.swapped || req.wire.size === req.size) return false;
    if (m.length === req.size) {
      this.reportSwapped(
        other(u.dir),
        req,
        'RDMA Read Message Size',
        `${req.wire.size}`,
        `${req.size}`,
        `the Read Response at seq ${u.seq} (${framesText(rec.frames)}) carries ${m.length} octets`,
      );
      return true;
    }
    return m.length === req.wire.size; // the size was in network order after all
  }

  // --- Terminate ---

  private handleTerminate(u: Ulpdu, st: DirState, p: UntaggedPdu, t: TerminateMessage, rec: DdpSegmentRecord): void {
    st.terminates++;
    const peerDir = other(u.dir);
    const peer = this.dir(peerDir);
    const parts: string[] = [ddpSummary(p)];
    parts[0] += ` (layer 0x${t.layer.toString(16)}, etype 0x${t.etype.toString(16)}, code 0x${t.code.toString(16).padStart(2, '0')}; M=${+t.m} D=${+t.d} R=${+t.r})`;
    if (t.ddpSegmentLength !== null) parts.push(`DDP segment length ${t.ddpSegmentLength}`);
    if (t.ddpHeader) {
      const hit = this.matchHistory(peer, t.ddpHeader.bytes);
      if (hit) {
        rec.terminated = { seq: hit.seq, frames: hit.frames };
        let s = `it terminates the peer's segment at seq ${hit.seq} (${framesText(hit.frames)})`;
        const rules = [...new Set(hit.findings.map((f) => f.rule))];
        if (rules.length) s += `, which mpa-dissect flagged: ${rules.join(', ')}`;
        parts.push(s);
      } else {
        parts.push(`its copied DDP header matches none of the peer's last ${peer.history.length} segments`);
      }
    }
    if (t.rdmapHeader?.readRequest) {
      const rr = t.rdmapHeader.readRequest;
      parts.push(`copied Read Request: sink ${hex32(rr.sinkStag)}/${hex64(rr.sinkTo)} size ${rr.size}`);
    }
    for (const pr of t.problems) if (!pr.startsWith('D ') && !pr.startsWith('M ')) parts.push(pr);
    const announced =
      4 + (t.ddpSegmentLength !== null ? 2 : 0) + (t.ddpHeader?.bytes.length ?? 0) + (t.rdmapHeader?.bytes.length ?? 0);
    if (t.bodyLength > announced) parts.push(`${t.bodyLength - announced} trailing octets not announced by M/D/R`);
    if (u.crc === 'bad') parts.push('its own CRC does not verify');

    let unexplained = false;
    if (t.layer === TERM_LAYER.LLP) {
      const cause = this.findCause(peerDir, u.dir, t.code);
      if (cause) parts.push(`explained by ${cause}`);
      else unexplained = true;
    }
    this.emit('rdmap.terminate', u, rec, parts.join('; '));
    if (unexplained) {
      const local = t.code === 5 ? ' (a local catastrophic error is by nature not visible on the wire)' : '';
      this.emit(
        'rdmap.terminate-unexplained',
        u,
        rec,
        `Terminate LLP/MPA code 0x${t.code.toString(16).padStart(2, '0')} (${t.codeName ?? 'unregistered'}): no such MPA error was seen on the peer's half connection${local}`,
      );
    }
    if (t.codeName === null) {
      this.emit(
        'rdmap.terminate-unknown-code',
        u,
        rec,
        `Terminate layer 0x${t.layer.toString(16)} etype 0x${t.etype.toString(16)} code 0x${t.code.toString(16).padStart(2, '0')} is not a registered error`,
      );
    }
    if (!st.terminated) st.terminated = { seq: u.seq, frames: rec.frames };
  }

  private matchHistory(peer: DirState, bytes: Uint8Array): HistoryHit<SegmentFinding[]> | null {
    const want = (bytes[0] ?? 0) & 0x80 ? DDP_TAGGED_HEADER_LEN : DDP_UNTAGGED_HEADER_LEN;
    if (bytes.length < Math.min(want, 2)) return null;
    return peer.history.match(bytes);
  }

  /** The MPA error (or wrong RTR) that explains an LLP Terminate with `code`. */
  private findCause(peerDir: Dir, ownDir: Dir, code: number): string | null {
    // Prefer the peer's half connection (the receiver terminates); accept the own one too, in case
    // the MPA layer attributed the error to the receiving direction.
    for (const d of [peerDir, ownDir]) {
      const list = this.dir(d).mpaErrors;
      for (let i = list.length - 1; i >= 0; i--) {
        const e = list[i]!;
        if (e.code === code)
          return `${notedText(e)}${d === ownDir ? " noted on the terminating side's own direction" : " on the peer's half connection"}`;
      }
    }
    if (code === 7) {
      const mm = this.dir(peerDir).rtrMismatch;
      if (mm)
        return `the Initiator's first FPDU at seq ${mm.seq} (${framesText(mm.frames)}) not being the negotiated RTR (rdmap.rtr-mismatch)`;
    }
    return null;
  }

  // --- message assembly ---

  private open(
    u: Ulpdu,
    st: DirState,
    p: TaggedPdu | UntaggedPdu,
    o: {
      qn: number | null;
      msn: number | null;
      stag: number | null;
      to: bigint | null;
      startSeen: boolean;
      rtr: boolean;
    },
  ): OpenMsg {
    if (st.openCount >= this.maxOpen) this.evictOldest(u.dir, st);
    st.openCount++;
    return {
      index: ++st.messageIndex,
      opcode: p.rdmap.opcode,
      tagged: p.kind === 'tagged',
      qn: o.qn,
      msn: o.msn,
      stag: o.stag,
      firstTo: o.to,
      nextTo: o.to ?? 0n,
      length: 0,
      segments: 0,
      frames: [],
      framesTruncated: false,
      firstSeq: u.seq,
      lastSeq: u.seq,
      startSeen: o.startSeen,
      rtr: o.rtr,
      epoch: st.lossEpoch,
      read: null,
      sizeReported: false,
      interleaveReported: false,
    };
  }

  private append(u: Ulpdu, st: DirState, m: OpenMsg, p: TaggedPdu | UntaggedPdu, rec: DdpSegmentRecord): void {
    m.segments++;
    m.length += Math.max(0, p.payloadLength);
    m.lastSeq = u.seq;
    m.epoch = st.lossEpoch;
    for (const f of u.frames) {
      if (m.frames.length && m.frames[m.frames.length - 1] === f) continue;
      if (m.frames.includes(f)) continue;
      if (m.frames.length < MAX_FRAMES) m.frames.push(f);
      else m.framesTruncated = true;
    }
    rec.message = { index: m.index, length: m.length, complete: p.ddp.l, segment: m.segments };
  }

  private close(dir: Dir, st: DirState, m: OpenMsg, complete: boolean): void {
    st.openCount = Math.max(0, st.openCount - 1);
    if (complete) {
      st.messagesComplete++;
      const k = keyIndex(m.opcode);
      const t = st.sizeStats;
      let i = 0;
      if (t !== null) while (i < t.length && t[i] !== k) i += SIZE_STRIDE;
      if (t !== null && i < t.length) {
        t[i + 1]!++;
        t[i + 2] = Math.min(t[i + 2]!, m.length);
        t[i + 3] = Math.max(t[i + 3]!, m.length);
        t[i + 4] = t[i + 4]! + m.length;
      } else if (t !== null) t.push(k, 1, m.length, m.length, m.length);
      else st.sizeStats = [k, 1, m.length, m.length, m.length];
    } else st.messagesIncomplete++;
    this.opts.onMessage?.(this.snapshot(dir, st, m, complete));
  }

  private evictOldest(dir: Dir, st: DirState): void {
    let oldest: OpenMsg | null = null;
    for (const q of st.queues ?? NO_QUEUES)
      if (q.open) for (const m of q.open.values()) if (!oldest || m.index < oldest.index) oldest = m;
    for (const m of st.openTagged ?? NO_MSGS) if (!oldest || m.index < oldest.index) oldest = m;
    if (!oldest) return;
    if (oldest.tagged) st.tagged().splice(st.tagged().indexOf(oldest), 1);
    else if (oldest.qn !== null && oldest.msn !== null) st.queue(oldest.qn)?.open?.delete(oldest.msn);
    this.close(dir, st, oldest, false);
  }

  private snapshot(dir: Dir, st: DirState, m: OpenMsg, complete: boolean): DdpMessage {
    return {
      flow: this.flowId,
      dir,
      from: st.from,
      index: m.index,
      opcode: m.opcode,
      key: opcodeKey(m.opcode),
      tagged: m.tagged,
      qn: m.qn,
      msn: m.msn,
      stag: m.stag,
      to: m.firstTo,
      length: m.length,
      segments: m.segments,
      frames: [...m.frames],
      framesTruncated: m.framesTruncated,
      firstSeq: m.firstSeq,
      lastSeq: m.lastSeq,
      complete,
      startSeen: m.startSeen,
      rtr: m.rtr,
    };
  }

  private openMessages(st: DirState): OpenMsg[] {
    const all: OpenMsg[] = [];
    for (const q of st.queues ?? NO_QUEUES) if (q.open) all.push(...q.open.values());
    if (st.openTagged) all.push(...st.openTagged);
    return all.sort((a, b) => a.index - b.index);
  }

  // -------------------------------------------------------------------------------------------
  // End of a direction
  // -------------------------------------------------------------------------------------------

  /** Direction `dir` ended: FIN, RST, or the capture ran out ('eof'). */
  end(dir: Dir, reason: 'fin' | 'rst' | 'eof', frame: number | null = null): void {
    const st = this.dir(dir);
    if (st.ended) return;
    st.ended = true;
    const at = (seq: number, frames: readonly number[], message: string, rule: string): void => {
      this.report(rule, dir, st.from, frames, seq, message);
    };
    for (const m of this.openMessages(st)) {
      if (reason !== 'eof') {
        at(
          m.lastSeq,
          m.frames,
          `${opcodeName(m.opcode)} ${m.tagged ? `to STag ${hex32(m.stag ?? 0)}` : `QN ${m.qn} MSN ${m.msn}`} (${m.segments} segment${m.segments === 1 ? '' : 's'}, ${m.length} octets) had no L segment when the direction closed (${reason})`,
          'ddp.incomplete-message',
        );
      }
      this.close(dir, st, m, false);
    }
    for (const q of st.queues ?? NO_QUEUES) q.open?.clear();
    if (st.openTagged) st.openTagged = [];
    st.openCount = 0;
    // Read Requests the peer sent and this direction should have answered.
    const peer = this.dir(other(dir));
    if (reason !== 'eof') {
      for (const r of peer.outstanding) {
        // A RST (RFC 9293 §3.5.3) aborts both directions: name it, and its frame, as the end.
        const how =
          reason === 'rst' && frame !== null
            ? `the connection was reset (RST in frame ${frame})`
            : `the responder's direction closed (${reason})`;
        this.report(
          'rdmap.read-unanswered',
          other(dir),
          peer.from,
          frame !== null && reason === 'rst' ? [...r.frames, frame] : r.frames,
          r.seq,
          `${r.rtr ? 'Read RTR' : 'Read Request'} for ${r.size} octets (sink ${hex32(r.sinkStag)}/${hex64(r.sinkTo)}) not answered before ${how}`,
        );
      }
    }
    if (peer.outstanding.length > 0) peer.rare.outstanding = [];
    // Say how many findings of each rule were held back by the per-rule cap.
    const reported = st.reportedSoFar;
    if (reported)
      for (const [rule, n] of reported) {
        if (n > this.maxPerRule) {
          this.sink.report(rule, {
            flow: this.flowId,
            from: st.from || null,
            frames: [],
            seq: null,
            message: `${n - this.maxPerRule} further ${rule} findings in this direction were not reported individually`,
          });
        }
      }
    reported?.clear();
  }

  // -------------------------------------------------------------------------------------------
  // Outputs
  // -------------------------------------------------------------------------------------------

  directionStats(dir: Dir): DdpDirection {
    const st = this.dir(dir);
    const byOpcode: Partial<Record<OpcodeKey, number>> = {};
    const ops = st.opCounts;
    if (ops) for (let i = 0; i < ops.length; i += 2) byOpcode[keyOf(ops[i]!)] = ops[i + 1]!;
    const sizes: Partial<Record<OpcodeKey, DdpSizeStats>> = {};
    const t = st.sizeStats;
    if (t)
      for (let i = 0; i < t.length; i += SIZE_STRIDE)
        sizes[keyOf(t[i]!)] = { messages: t[i + 1]!, min: t[i + 2]!, max: t[i + 3]!, total: t[i + 4]! };
    const open = st.openCount;
    return {
      segments: st.segments,
      messages: st.messagesComplete + st.messagesIncomplete + open,
      rtr: st.rtr,
      byOpcode,
      msnErrors: st.msnErrors,
      moErrors: st.moErrors,
      messagesComplete: st.messagesComplete,
      messagesIncomplete: st.messagesIncomplete + open,
      toErrors: st.toErrors,
      skipped: st.skipped,
      malformed: st.malformed,
      lossExplained: st.lossExplained,
      readRequests: st.readRequests,
      readResponses: st.readResponses,
      terminates: st.terminates,
      sizes,
    };
  }

  /** The per-direction summary the report takes (MpaDirection.ddp); same as directionStats. */
  summary(dir: Dir): DdpDirection {
    return this.directionStats(dir);
  }

  /** Messages of `dir` still open (no L yet), oldest first. Completed ones went to onMessage. */
  messages(dir: Dir): DdpMessage[] {
    const st = this.dir(dir);
    return this.openMessages(st).map((m) => this.snapshot(dir, st, m, false));
  }

  /** Read Requests `dir` sent that are still unanswered. */
  outstandingReads(dir: Dir): number {
    return this.dir(dir).outstanding.length;
  }

  // -------------------------------------------------------------------------------------------

  private count(st: DirState, key: number): void {
    const ops = st.opCounts;
    if (ops === null) {
      st.opCounts = [key, 1];
      return;
    }
    for (let i = 0; i < ops.length; i += 2) {
      if (ops[i] === key) {
        ops[i + 1]!++;
        return;
      }
    }
    ops.push(key, 1);
  }

  private lossExplained(
    u: Ulpdu,
    st: DirState,
    rec: DdpSegmentRecord,
    text: string,
    kind: DirState['lastLossKind'] = st.lastLossKind,
  ): void {
    st.lossExplained++;
    // A segment the analyzer itself left out (its CRC failed) is no capture loss: say which it is.
    if (kind === 'crc')
      this.emit(
        'ddp.after-crc-discard',
        u,
        rec,
        `${text}; explained by ${st.lastLoss ?? 'a segment left out for its CRC'}`,
      );
    else
      this.emit(
        'ddp.capture-loss',
        u,
        rec,
        `${text}; plausibly explained by ${st.lastLoss ?? 'data missing from the capture'}`,
      );
  }

  private emit(rule: string, u: Ulpdu, rec: DdpSegmentRecord, message: string): void {
    rec.findings.push({ rule, message });
    this.report(rule, u.dir, u.from, u.frames, u.seq, message);
  }

  private report(
    rule: string,
    dir: Dir,
    from: string,
    frames: readonly number[],
    seq: number | null,
    message: string,
  ): void {
    const st = this.dir(dir);
    const n = (st.reported.get(rule) ?? 0) + 1;
    st.reported.set(rule, n);
    if (n > this.maxPerRule) return;
    this.sink.report(rule, {
      flow: this.flowId,
      from: from || null,
      frames: [...frames].sort((a, b) => a - b),
      seq,
      message,
    });
  }
}

/** The RTR kind a decoded segment has the exact shape of (SPEC-NOTES "Startup and RTR"), or null. */
export function rtrShape(p: DdpPdu): RtrKind | null {
  if (p.kind === 'truncated' || !p.ddp.l) return null;
  const op = p.rdmap.opcode;
  if (p.kind === 'tagged') return op === OP.WRITE && p.payloadLength === 0 ? 'write' : null;
  if (op === OP.SEND && p.qn === 0 && p.msn === 1 && p.mo === 0 && p.payloadLength === 0) return 'send';
  if (
    op === OP.READ_REQUEST &&
    p.qn === 1 &&
    p.msn === 1 &&
    p.mo === 0 &&
    p.body.type === 'read-request' &&
    p.body.rr.size === 0
  ) {
    return 'read';
  }
  return null;
}

function rtrDescription(k: RtrKind): string {
  return k === 'send'
    ? 'untagged Send, QN 0, MSN 1, no payload'
    : k === 'write'
      ? 'tagged RDMA Write, no payload'
      : 'Read Request, QN 1, MSN 1, RDMA Read Message Size 0';
}
