/**
 * One direction of an MPA connection: its state in the startup / framing / resync state machine,
 * the bytes it holds, its framer and its counters (the per-direction summary). The transitions
 * themselves live with the flow, which sees both directions (negotiation spans them).
 */
import type { DirectionConsumer, DirectionInfo, EndReason, FlowHandle, StreamChunk } from '../../src/tcp/stream.js';
import { ByteLog } from './byte-log.js';
import { FpduFramer, type FpduSink, type FramedFpdu, type FramerParams } from './framer.js';
import type { LockSearch } from './lock-on.js';
import { KEY_PREFIX, type StartupRecord } from './startup.js';
import { LEADING_KEEP, type FpduRecord, type LeadingOctets, type MpaDirectionSummary } from './mpa-types.js';
import { defineRareFields, type RareFields } from '../../src/vocabulary/rare-fields.js';

export type State = 'scan' | 'startup' | 'await' | 'frame' | 'diagnose' | 'hunt' | 'streaming' | 'ended';

/**
 * What a direction hands on to the connection it belongs to (implemented by MpaFlow). Declared here,
 * not imported from the flow, so that the flow's files import this one and never the other way.
 */
export interface DirectionHost {
  readonly handle: FlowHandle;
  /** Re-evaluates `d` after bytes were held (final = no more bytes will come). */
  progress(d: MpaDirection, final: boolean): void;
  /** Octets of each untagged ULPDU of `d` the layer above wants whole (FpduFramer.bodyBound). */
  bodyBytes(d: MpaDirection): number;
  /** One FPDU from `d`'s framer; false stops that framer. */
  onFpdu(d: MpaDirection, f: FramedFpdu): boolean;
  /** `d`'s framer stopped itself. */
  afterFramerStop(d: MpaDirection): void;
  onGap(d: MpaDirection, offset: number, length: number, cut: boolean): void;
  onEnd(d: MpaDirection, reason: EndReason, frame: number | null): void;
}

/** An FPDU that broke the ULPDU_Length chain, held until diagnosed (sender-mistakes.ts). */
export interface FramingBreak {
  prevStart: number | null;
  prevSeq: number | null;
  badStart: number;
  badSeq: number;
  badFrames: number[];
  /** The broken FPDU still has a plausible DDP header (only its CRC or markers failed). */
  headerOk: boolean;
  what: string;
  /** The FPDU the chain broke after (in the finding's words), when there is one. */
  afterSeq: number | null;
  /**
   * Set while the verdict on this FPDU waits for the octets after it (fpdu-checks.ts): its CRC or
   * PAD failed, and whether a sender mistake explains that shows only where the next FPDU starts.
   */
  pending?: FramedFpdu | undefined;
}

/**
 * While framing, bytes before the last plausible FPDU are never read again (a break is diagnosed
 * from that FPDU on, a resync hunts from the framer's position): they are dropped once they are at
 * least this many and at least half of what is held, so each octet is moved at most once more and a
 * direction holds about two FPDUs (with 10,000 flows, 256 KiB each was gigabytes).
 */
const DROP_MIN = 4096;

const HUNT_TRY_STEP = 2048;

/** What a direction keeps about MPA enabled without startup frames. */
class PrestandardState {
  enabledAt: number | null = null;
  enabledFrame = 0;
  unframed: Array<[number, number]> | null = null;
  enableFrom = 0;
  enableSpent = 0;
  enablementReported = false;
}

// MpaDirection.bits
const F_SEQSTART_EXACT = 1;
const F_AFTER_ERROR = 2;
const F_EMSS_REPORTED = 4;
const F_AFTER_REJECT_REPORTED = 8;
const F_EARLY_REPORTED = 16;
const F_FRAMING_LOST_OPEN = 32;

/**
 * The part of a direction most directions never need (errors, hunting, breaks, sender mistakes):
 * read as these defaults until the first write of another value (src/vocabulary/rare-fields.ts).
 */
const DIRECTION_RARE = {
  /** Stream offset of the startup frame being collected. */
  startupAt: 0,
  /** Octets sent before the startup frame (RFC 5046 streaming mode), for the layer above; bounded. */
  leading: null as LeadingOctets | null,
  scanFrom: 0,
  lastTry: 0,
  huntScanned: 0,
  huntReason: 'midstream' as 'gap' | 'error' | 'midstream' | 'negotiation',
  crcErrors: 0,
  crcNotCaptured: 0,
  /**
   * Markers inside the FPDUs handed on (a snaplen-cut one included): counted per FPDU, so that
   * markers a framer consumed in an FPDU it never finished (a break diagnosed, a resync) are not.
   */
  markersFramed: 0,
  markerErrors: 0,
  afterError: 0,
  bytesSkipped: 0,
  emssCount: 0,
  /** `--mpa seqstart=`: absolute SeqStart given by the user. */
  forcedSeqStart: null as number | null,
  /** Boundary search state (budget, ruled-out candidates), from the first search on. */
  lockSearch: null as LockSearch | null,
  /** The last FPDU record handed to an output (marked later if a diagnosed mistake turns out to cover it). */
  lastRecord: null as FpduRecord | null,
  brk: null as FramingBreak | null,
  /** Why the framer was stopped: resync (hunt after it) or a break (diagnose from before it). */
  stopKind: 'resync' as 'resync' | 'break',
  /** The FPDU at this offset was diagnosed as a bad one on its own: frame it without checking again. */
  exemptStart: null as number | null,
  /** The FPDU at this offset was already reported under RFC framing: re-framed only to mark it. */
  suppressStart: null as number | null,
  /** Rule ids of sender mistakes reported in this direction (once each). */
  mistakesReported: null as Set<string> | null,
  senderMistake: null as string | null,
  senderMistakeFpdus: 0,
  /** A pad-not-zero finding held while the FPDU after it is in doubt (it may be a PAD mistake). */
  pendingPad: null as { seq: number; frames: number[]; message: string } | null,
};

const NO_RETIRED = { segments: 0, fpduAligned: 0, headerAligned: 0, spanning: 0 } as const;

/** One direction of an MPA connection. */
export interface MpaDirection extends RareFields<typeof DIRECTION_RARE> {}
export class MpaDirection implements DirectionConsumer, FpduSink {
  state: State = 'scan';
  /** Held bytes, created on first use: a direction that never carries a byte allocates none. */
  private heldLog: ByteLog | null = null;
  get log(): ByteLog {
    return (this.heldLog ??= new ByteLog());
  }
  /** The frame of the first octet held and not yet framed (HeldQuery), null when none is held. */
  heldFrame(): number | null {
    // Framing (state 'frame'), the log keeps the last FPDU's octets for a break's diagnosis: those
    // were handed on. Only a direction hunting, diagnosing or awaiting holds octets back.
    const st = this.state;
    if (st === 'frame' || st === 'streaming' || st === 'ended') return null;
    const log = this.heldLog;
    if (log === null || log.length === 0) return null;
    const f = log.frameAt(log.base);
    return f < 0 ? null : f;
  }
  /** The direction ended: its held bytes go with it. */
  releaseLog(): void {
    this.heldLog?.release();
    this.heldLog = null;
  }
  /** The framer in use; while framerAt is set, one is due but not made yet. */
  private fr: FpduFramer | null = null;
  /**
   * Stream offset a framer was started at (startFramer) before its first octet arrived: the framer
   * is made on first use, so a direction that never sends an FPDU octet (the quiet side of 100,000
   * open flows) keeps none.
   */
  private framerAt: number | null = null;
  /** The framer, made on first use once started (params were given to startFramer). */
  get framer(): FpduFramer | null {
    if (this.fr === null && this.framerAt !== null) {
      // baseSeq is settled: a direction frames only after it delivered octets (its startup frame, a lock).
      this.fr = new FpduFramer(this.params!, this.framerAt, this.info.baseSeq, this);
      this.fr.bodyBound = this.flow.bodyBytes(this);
      this.framerAt = null;
    }
    return this.fr;
  }
  /** The framer if one was made (never makes one). */
  get madeFramer(): FpduFramer | null {
    return this.fr;
  }
  params: FramerParams | null = null;
  /** RFC 5044 framing parameters of this direction (negotiated or inferred), without any mistake. */
  rfcParams: FramerParams | null = null;
  /** Stream offset of SeqStart (first octet after this sender's startup frame), when known. */
  seqStartOffset: number | null = null;
  startupRec: StartupRecord | null = null;
  /** Boolean flags (F_*), one word for six of them. */
  private bits = F_SEQSTART_EXACT;
  // counters
  fpdus = 0;
  ulpduBytes = 0;
  // alignment counters of framers that have been retired
  retired: { segments: number; fpduAligned: number; headerAligned: number; spanning: number } | null = null;
  /** Bad FPDUs in a row (read for every FPDU: a field of its own, not a rare one). */
  consecutiveBad = 0;
  firstFpduFirstFrame: number | null = null;
  firstFpduLastFrame: number | null = null;
  firstFpduSeq: number | null = null;
  /** Stream offset and seq of the last FPDU that framed plausibly (the break is diagnosed from it). */
  lastStart: number | null = null;
  lastSeq: number | null = null;
  /** The rare fields (DIRECTION_RARE) once one of them changed; null before (read through their accessors). */
  more: RareFields<typeof DIRECTION_RARE> | null = null;

  private flag(f: number, v: boolean): void {
    this.bits = v ? this.bits | f : this.bits & ~f;
  }
  /** SeqStart is exact (from a startup frame or the user), not inferred mod 512. */
  get seqStartExact(): boolean {
    return (this.bits & F_SEQSTART_EXACT) !== 0;
  }
  set seqStartExact(v: boolean) {
    this.flag(F_SEQSTART_EXACT, v);
  }
  /** An MPA error was seen: later FPDUs count as after-error. */
  get afterErrorFlag(): boolean {
    return (this.bits & F_AFTER_ERROR) !== 0;
  }
  set afterErrorFlag(v: boolean) {
    this.flag(F_AFTER_ERROR, v);
  }
  get emssReported(): boolean {
    return (this.bits & F_EMSS_REPORTED) !== 0;
  }
  set emssReported(v: boolean) {
    this.flag(F_EMSS_REPORTED, v);
  }
  get fpduAfterRejectReported(): boolean {
    return (this.bits & F_AFTER_REJECT_REPORTED) !== 0;
  }
  set fpduAfterRejectReported(v: boolean) {
    this.flag(F_AFTER_REJECT_REPORTED, v);
  }
  get earlyReported(): boolean {
    return (this.bits & F_EARLY_REPORTED) !== 0;
  }
  set earlyReported(v: boolean) {
    this.flag(F_EARLY_REPORTED, v);
  }
  /** A framing-lost finding is open (not to be repeated when the hunt gives up at the end). */
  get framingLostOpen(): boolean {
    return (this.bits & F_FRAMING_LOST_OPEN) !== 0;
  }
  set framingLostOpen(v: boolean) {
    this.flag(F_FRAMING_LOST_OPEN, v);
  }
  // --- MPA enabled without startup frames (enablement.ts): created on first use, so that the
  // 100,000 plain flows of a capture carry one slot for it, not six. ---
  private pre: PrestandardState | null = null;
  private get prestd(): PrestandardState {
    return (this.pre ??= new PrestandardState());
  }
  /** Stream offset where this sender enabled MPA without startup frames (its zero marker when markers are on). */
  get enabledAt(): number | null {
    return this.pre?.enabledAt ?? null;
  }
  set enabledAt(v: number | null) {
    this.prestd.enabledAt = v;
  }
  /** Frame that carried the enablement point. */
  get enabledFrame(): number {
    return this.pre?.enabledFrame ?? 0;
  }
  set enabledFrame(v: number) {
    this.prestd.enabledFrame = v;
  }
  /** At its end, the octets this direction sent that never framed: [seq, frame] of each held piece (at most 64). */
  get unframed(): Array<[number, number]> | null {
    return this.pre?.unframed ?? null;
  }
  /** Enablement candidates before this stream offset were ruled out (enablement.ts). */
  get enableFrom(): number {
    return this.pre?.enableFrom ?? 0;
  }
  set enableFrom(v: number) {
    this.prestd.enableFrom = v;
  }
  /** Octets the enablement search framed so far (bounded by ENABLEMENT_BUDGET). */
  get enableSpent(): number {
    return this.pre?.enableSpent ?? 0;
  }
  set enableSpent(v: number) {
    this.prestd.enableSpent = v;
  }
  /** mpa.enablement-error was reported on this direction. */
  get enablementReported(): boolean {
    return this.pre?.enablementReported ?? false;
  }
  set enablementReported(v: boolean) {
    this.prestd.enablementReported = v;
  }

  constructor(
    readonly flow: DirectionHost,
    readonly dir: 0 | 1,
  ) {}

  private cachedInfo: DirectionInfo | null = null;

  /** The reassembler learns baseSeq from the first SYN or data segment: cached from the first data on. */
  get info(): DirectionInfo {
    return this.cachedInfo ?? this.flow.handle.info(this.dir);
  }

  seqOf(offset: number): number {
    return (this.info.baseSeq + offset) >>> 0;
  }

  data(c: StreamChunk): void {
    if (this.state === 'ended') return;
    if (this.cachedInfo === null)
      this.cachedInfo = this.flow.handle.view?.(this.dir) ?? this.flow.handle.info(this.dir);
    this.feed(c.data, c.offset, c.frame, c.segmentStart, c.segmentEnd);
  }

  /** Bytes in stream order: straight into the framer, else held; a framer that stops hands the rest back. */
  feed(data: Uint8Array, offset: number, frame: number, segStart: boolean, segEnd: boolean): void {
    if (this.state === 'frame' && this.fpdus === 0 && offset === this.seqStartOffset && this.startupKeyAt(data)) {
      // A startup frame where the first FPDU should begin (sent again after the peer's): held and
      // reported as what it is, FPDUs start after it (await-negotiation.ts), never framed as an
      // FPDU whose ULPDU_Length is the octets "MP".
      this.retireFramer();
      this.state = 'await';
    }
    if (this.state === 'frame') {
      const fr = this.framer!;
      // The framer's bytes stay held from the last plausible FPDU on: a break is diagnosed from there.
      if (this.log.end !== offset || this.log.length === 0) this.log.reset(offset);
      this.log.appendLent(data, frame, segStart, segEnd);
      fr.push(data, offset, frame, segStart, segEnd);
      if (!fr.isStopped) {
        const keep = Math.min(this.lastStart ?? fr.pendingStart, fr.pendingStart) - this.log.base;
        // Dropping lent views moves nothing: they go as soon as they are behind (less to copy when
        // the reader recycles); owned octets go in batches (each is moved at most once more).
        if (keep > 0 && (keep >= this.log.ownedLength || (keep >= DROP_MIN && keep * 2 >= this.log.length)))
          this.log.dropBefore(this.log.base + keep);
        return;
      }
      this.flow.afterFramerStop(this);
      if ((this.state as State) !== 'ended') this.flow.progress(this, false);
      return;
    }
    if (this.state === 'ended') return;
    if (this.log.length === 0) this.log.reset(offset);
    this.log.append(data, 0, data.length, frame, segStart, segEnd);
    this.flow.progress(this, false);
  }

  gap(offset: number, _seq: number, length: number, cut = false): void {
    if (this.state === 'ended') return;
    this.flow.onGap(this, offset, length, cut);
  }

  end(reason: EndReason, frame: number | null): void {
    if (this.state === 'ended') return;
    this.flow.onEnd(this, reason, frame);
  }

  /** `data` starts like an MPA Request or Reply key ("MPA ID "), the framer between FPDUs. */
  private startupKeyAt(data: Uint8Array): boolean {
    const n = KEY_PREFIX.length;
    if (data.length < n || this.framer === null || !this.framer.atBoundary) return false;
    for (let i = 0; i < n; i++) if (data[i] !== KEY_PREFIX[i]) return false;
    return true;
  }

  /** Scans held bytes for a startup key from where the last scan stopped. */
  findKey(): number | null {
    const b = this.log.bytes;
    const from = Math.max(0, this.scanFrom - this.log.base);
    if (b.length - from < KEY_PREFIX.length) return null;
    const idx = Buffer.from(b.buffer, b.byteOffset, b.length).indexOf(KEY_PREFIX, from);
    if (idx < 0) {
      this.scanFrom = this.log.base + b.length - (KEY_PREFIX.length - 1);
      return null;
    }
    return this.log.base + idx;
  }

  beginStartup(at: number): void {
    this.state = 'startup';
    this.startupAt = at;
    if (at > this.log.base && this.leading === null) this.keepLeading(at);
    this.log.dropBefore(at);
  }

  private keepLeading(at: number): void {
    const base = this.log.base;
    const n = Math.min(at - base, LEADING_KEEP);
    this.leading = {
      bytes: this.log.bytes.slice(0, n),
      length: at - base,
      seq: this.seqOf(base),
      fromStart: base === 0,
      frames: this.log.frameMap(base, base + n, 256),
    };
  }

  get startupOffset(): number {
    return this.startupAt;
  }

  shouldTryHunt(final: boolean): boolean {
    if (final) return this.log.length > 0;
    if (this.log.length - this.lastTry < HUNT_TRY_STEP && this.log.length >= this.lastTry) return false;
    this.lastTry = this.log.length;
    return true;
  }

  resetHuntTries(): void {
    this.lastTry = 0;
  }

  startFramer(params: FramerParams, at: number): void {
    this.retireFramer();
    this.params = params;
    if (!params.mistake) this.rfcParams = params;
    this.lastStart = null;
    this.lastSeq = null;
    this.framerAt = at;
    this.state = 'frame';
  }

  /** FpduSink: the framer's FPDUs go to the flow, which sees both directions (no closure per framer). */
  onFpdu(f: FramedFpdu): boolean {
    return this.flow.onFpdu(this, f);
  }

  retireFramer(): void {
    this.framerAt = null; // a framer never made framed nothing
    const f = this.fr;
    if (!f) return;
    const r = (this.retired ??= { segments: 0, fpduAligned: 0, headerAligned: 0, spanning: 0 });
    r.segments += f.segments;
    r.fpduAligned += f.fpduAligned;
    r.headerAligned += f.headerAligned;
    r.spanning += f.spanning;
    this.fr = null;
  }

  /** Feeds held bytes from `from` on into the framer (after a lock or once negotiation is known). */
  replayInto(from: number): void {
    const log = this.log;
    // Detach the held bytes: the framer may stop and hand control back, refilling the log.
    const pieces: Array<[Uint8Array, number, number, boolean, boolean]> = [];
    log.replay(from, (d, off, fr, s, e) => pieces.push([d.slice(), off, fr, s, e]));
    log.reset(log.end);
    for (const [d, off, fr, s, e] of pieces) this.feed(d, off, fr, s, e);
  }

  /** Keeps where the octets that never framed sat (before the held bytes go with the direction's end). */
  noteUnframed(): void {
    if (this.fpdus > 0 || this.heldLog === null || this.log.length === 0) return;
    const out: Array<[number, number]> = [];
    this.log.replay(this.log.base, (_d, off, fr) => {
      if (out.length < 64 && (out.length === 0 || out[out.length - 1]![1] !== fr)) out.push([this.seqOf(off), fr]);
    });
    this.prestd.unframed = out;
  }

  summary(): MpaDirectionSummary {
    const f = this.fr; // a framer not made yet counted nothing
    const r = this.retired ?? NO_RETIRED;
    return {
      from: this.info.from,
      to: this.info.to,
      // FPDUs of this direction carry markers (report schema): those framed with them, or markers
      // seen before a sender stopped inserting them (mpa.markers-missing after some).
      markers: this.params ? this.params.markers || this.markersFramed > 0 : null,
      seqStart: this.seqStartOffset === null ? null : this.seqOf(this.seqStartOffset),
      seqStartExact: this.seqStartExact,
      fpdus: this.fpdus,
      ulpduBytes: this.ulpduBytes,
      crcErrors: this.crcErrors,
      ...(this.crcNotCaptured > 0 ? { crcNotCaptured: this.crcNotCaptured } : {}),
      markerErrors: this.markerErrors,
      markerCount: this.markersFramed,
      afterError: this.afterError,
      bytesSkipped: this.bytesSkipped,
      senderMistake: this.senderMistake,
      senderMistakeFpdus: this.senderMistakeFpdus,
      alignment: {
        segments: r.segments + (f?.segments ?? 0),
        fpduAligned: r.fpduAligned + (f?.fpduAligned ?? 0),
        headerAligned: r.headerAligned + (f?.headerAligned ?? 0),
        spanning: r.spanning + (f?.spanning ?? 0),
      },
    };
  }
}

defineRareFields(MpaDirection, DIRECTION_RARE);
