import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { DirectionConsumer, FlowConsumer, FlowHandle, EndReason, StreamChunk } from '../../src/tcp/stream.js';
import { byteSwap32 } from './crc32c.js';
import { crcHex } from './fields.js';
import { MARKER_INTERVAL, type FramedFpdu, type FramerParams, type MarkerInfo } from './framer.js';
import {
  ENABLEMENT_BUDGET,
  ENABLEMENT_WINDOW,
  checkEnablementError,
  enable,
  enablementOpen,
  findEnablement,
  forcedEnablement,
  type EnablementQuery,
} from './enablement.js';
import { findLock, LockSearch, MAX_ULPDU_LENGTH, type LockResult } from './lock-on.js';
import { STARTUP_HEADER_LEN, classifyKey, type StartupRecord } from './startup.js';
import { StartupNegotiation, type NegotiationHost, type RdmacInterop } from './startup-negotiation.js';
import { MpaDirection, type State } from './mpa-direction.js';
import { diagnoseBreak, type Hypothesis } from './sender-mistakes.js';
import type { MpaContext } from './ulpdu.js';
import type {
  EnablementPoint,
  FpduRecord,
  ForcedMpa,
  MpaFlowOptions,
  MpaFlowSummary,
  MpaOutputs,
  UpperLayer,
} from './mpa-types.js';

export type {
  ForcedMpa,
  FpduRecord,
  MpaDirectionSummary,
  MpaFlowOptions,
  MpaFlowSummary,
  MpaOutputs,
  UpperLayer,
} from './mpa-types.js';

/**
 * MPA on one TCP connection: finds the startup frames wherever MPA starts (RFC 5044 §7.1, delayed
 * startup included; no port is special), negotiates markers per direction and CRC, frames FPDUs,
 * resynchronises after loss, and locks on mid-stream when the startup was not captured.
 */
export class MpaFlow implements FlowConsumer, NegotiationHost {
  /**
   * What the reassembler feeds when this flow is its consumer (forced MPA); each hands on to its
   * MpaDirection, created on the direction's first event. Made on first use: a FramingFlow feeds
   * direction() itself, so most flows never need the two slots.
   */
  get directions(): readonly [DirectionConsumer, DirectionConsumer] {
    return (this.slots ??= [new DirectionSlot(this, 0), new DirectionSlot(this, 1)]);
  }
  private slots: readonly [DirectionConsumer, DirectionConsumer] | null = null;
  private dir0: MpaDirection | null = null;
  private dir1: MpaDirection | null = null;
  /** Startup frames and what they negotiate (startup-negotiation.ts); created with the first key. */
  private neg: StartupNegotiation | null = null;
  crc: boolean | null = null;
  detection: MpaFlowSummary['detection'] | null = null;
  private upper: UpperLayer | null = null;
  // Read from the options every flow shares (no copy per flow).
  private get holdBytes(): number {
    return this.opts.holdBytes ?? 256 * 1024;
  }
  private get huntBudget(): number {
    return this.opts.huntBudget ?? 4 * 1024 * 1024;
  }
  /** The RST that aborted the connection was reported (once per connection). */
  private abortReported = false;

  constructor(
    readonly handle: FlowHandle,
    private readonly sink: FindingSink,
    private readonly out: MpaOutputs,
    private readonly opts: MpaFlowOptions = {},
  ) {
    if (opts.forced) this.applyForced(opts.forced);
  }

  private get negotiation(): StartupNegotiation {
    return (this.neg ??= new StartupNegotiation(this));
  }

  get request(): StartupRecord | null {
    return this.neg?.request ?? null;
  }

  get reply(): StartupRecord | null {
    return this.neg?.reply ?? null;
  }

  get rejected(): boolean {
    return this.neg?.rejected ?? false;
  }

  /** RFC 5044 Appendix C outcome when an RDMAC RNIC took part (report-schema addition `rdmac`). */
  get rdmac(): RdmacInterop | null {
    return this.neg?.rdmac ?? null;
  }

  /** A startup frame for the outputs (NegotiationHost). */
  emitStartup(rec: StartupRecord): void {
    this.out.startup?.(rec);
  }

  get isMpa(): boolean {
    return this.detection !== null;
  }

  /**
   * One direction's state, created when first needed (its first byte, gap or end, or its peer's
   * negotiation): 100,000 flows whose servers never send keep no state for those directions.
   */
  direction(dir: 0 | 1): MpaDirection {
    const have = dir === 0 ? this.dir0 : this.dir1;
    if (have) return have;
    const d = new MpaDirection(this, dir);
    if (dir === 0) this.dir0 = d;
    else this.dir1 = d;
    if (this.opts.forced) this.forceDirection(d, this.opts.forced);
    return d;
  }

  private applyForced(f: ForcedMpa): void {
    this.detection = 'forced';
    this.crc = f.crc;
  }

  private forceDirection(d: MpaDirection, f: ForcedMpa): void {
    d.forcedSeqStart = f.seqStart[d.dir];
    // Frame from SeqStart once bytes arrive (its stream offset is known only then), else hunt.
    d.state = d.forcedSeqStart !== null || (f.startAny ?? null) !== null ? 'await' : 'hunt';
    d.huntReason = 'midstream';
    d.params = { markers: f.markers[d.dir], markerBase: 0, crc: f.crc };
    if (f.prestandard) d.params.fpduptrFrom = 'fpdu';
  }

  find(d: MpaDirection, rule: string, seq: number | null, frames: readonly number[], message: string): void {
    this.sink.report(rule, {
      flow: this.handle.id,
      from: d.info.from,
      frames: [...new Set(frames)].sort((a, b) => a - b),
      seq,
      message,
    });
  }

  private peer(d: MpaDirection): MpaDirection {
    return this.direction(d.dir === 0 ? 1 : 0);
  }

  // ---------------------------------------------------------------- state machine

  /** Re-evaluates a direction after bytes were held (final = no more bytes will come). */
  progress(d: MpaDirection, final: boolean): void {
    for (let guard = 0; guard < 64; guard++) {
      const before = d.state;
      switch (d.state) {
        case 'scan':
          this.stepScan(d, final);
          break;
        case 'startup':
          this.negotiation.step(d, final);
          break;
        case 'await':
          this.stepAwait(d, final);
          break;
        case 'diagnose':
          this.stepDiagnose(d, final);
          break;
        case 'hunt':
          this.stepHunt(d, final);
          break;
        case 'streaming':
          this.stepStreaming(d, final);
          break;
        default:
          return;
      }
      if (d.state === before) return;
    }
  }

  private stepScan(d: MpaDirection, final: boolean): void {
    const at = d.findKey();
    if (at !== null) {
      d.beginStartup(at);
      return;
    }
    if (d.huntScanned < this.huntBudget && d.log.length >= 64 && d.shouldTryHunt(final)) {
      const open = enablementOpen(this, d);
      if (open) {
        const q: EnablementQuery = {
          bytes: d.log.bytes,
          base: d.log.base,
          baseSeq: d.info.baseSeq,
          final,
          plausible: this.plausible,
          from: d.enableFrom,
          budget: Math.min(8 * 1024 * 1024, ENABLEMENT_BUDGET - d.enableSpent),
        };
        const en = findEnablement(q);
        if (en) {
          enable(this, d, en);
          return;
        }
        // Remembered only when worth it (a rescan of a few KiB costs less than the state per flow).
        if ((q.decidedTo ?? 0) - d.enableFrom >= 4096) d.enableFrom = q.decidedTo!;
        if (q.spent) d.enableSpent += q.spent;
        // A pre-standard stream is held whole until its enablement point can be judged: the
        // mid-stream search would lock on a later FPDU and miss where MPA began.
        if (!final && d.log.end < 2 * ENABLEMENT_WINDOW) return;
      }
      const lock = this.tryLock(d, final, null);
      if (lock && open && lock.params.crc && !lock.params.markers) {
        // The stream's start was captured and no startup frame came: MPA without markers enabled at
        // the first octet of a verified FPDU chain (draft-00 §8.1 rule 7: no marker when they are off).
        enable(this, d, {
          offset: lock.offset,
          params: { ...lock.params, fpduptrFrom: 'fpdu' },
          fpdus: lock.fpdus,
          draftMarkers: 0,
          rfcMarkers: 0,
          evidence: lock.evidence,
        });
        return;
      }
      if (lock) {
        this.detection ??= 'heuristic';
        d.seqStartExact = false;
        d.seqStartOffset = lock.params.markers ? firstMarkerOffset(lock) : null;
        this.find(
          d,
          'mpa.mid-stream',
          d.seqOf(lock.offset),
          d.log.framesIn(lock.offset, lock.offset + 1),
          `MPA framing found mid-stream at seq ${d.seqOf(lock.offset)} (${lock.evidence}); markers ${lock.params.markers ? 'on' : 'off'}, CRC ${lock.params.crc ? 'on' : 'off'} inferred`,
        );
        if (this.crc === null) this.crc = lock.params.crc;
        this.lock(d, lock);
        return;
      }
    }
    // Once the mid-stream search gave up, only a startup key can still turn this into MPA: hold little.
    const cap = d.huntScanned >= this.huntBudget ? 8192 : this.holdBytes;
    if (d.log.length > cap) {
      // Streaming data that is not MPA (yet): keep only the tail where a key could start.
      const keep = d.log.end - 4096; // a key split across chunks still fits
      d.huntScanned += keep - d.log.base;
      d.log.dropBefore(keep);
      d.resetHuntTries();
    }
  }

  private stepAwait(d: MpaDirection, final: boolean): void {
    const forced = this.opts.forced;
    if (this.detection === 'forced' && d.params && d.forcedSeqStart === null && (forced?.startAny ?? null) !== null) {
      // `start=SEQ`: this direction's, if its octets hold SEQ; else its start is searched for.
      if (d.log.length === 0) return;
      const dist = (forced!.startAny! - d.seqOf(d.log.base)) | 0;
      if (dist >= 0 && dist < d.log.length) d.forcedSeqStart = forced!.startAny!;
      else if (dist < 0 || final) {
        d.state = 'hunt';
        return;
      } else return;
    }
    if (this.detection === 'forced' && d.params && d.forcedSeqStart !== null) {
      if (d.log.length === 0) return;
      // Signed distance: SeqStart may lie before the first captured octet (then only its phase helps).
      const off = d.log.base + ((d.forcedSeqStart - d.seqOf(d.log.base)) | 0);
      d.seqStartOffset = off;
      d.params = { ...d.params, markerBase: off };
      if (forced?.prestandard && off >= d.log.base && off < d.log.end) {
        forcedEnablement(this, d, off, final, this.holdBytes);
        return;
      }
      if (off >= d.log.base && off < d.log.end) {
        d.startFramer(d.params, off);
        d.replayInto(off);
      } else if (off < d.log.base) {
        d.seqStartExact = true;
        d.state = 'hunt';
      }
      return;
    }
    if (this.rejected) {
      d.state = 'streaming';
      return;
    }
    if (this.neg?.negotiated(d) ?? null) {
      this.resolveAwait(d, final);
      return;
    }
    if (final || d.log.length > this.holdBytes) this.resolveAwait(d, final);
  }

  /** Leaves 'await': frame with the negotiated parameters, or infer them from the bytes. */
  resolveAwait(d: MpaDirection, final: boolean): void {
    if (d.state !== 'await') return;
    if (this.rejected) {
      d.state = 'streaming';
      this.progress(d, final);
      return;
    }
    if (this.skipRepeatedStartup(d)) return;
    const ss = d.seqStartOffset!;
    const params = this.neg?.negotiated(d) ?? null;
    if (d.startupRec?.kind === 'request' && d.log.length > 0 && !d.earlyReported) {
      // RFC 5044 §7.1.2: the Initiator sends no FPDU before it has the Reply (judged in capture order).
      const first = d.log.frameAt(d.log.base);
      if (!this.reply || this.reply.dir === d.dir || first < this.reply.frame) {
        d.earlyReported = true;
        this.find(
          d,
          'mpa.initiator-before-reply',
          d.seqOf(d.log.base),
          [first],
          `Initiator sent octets after its Request (frame ${first}) before ${this.reply && this.reply.dir !== d.dir ? `the Reply (frame ${this.reply.frame})` : 'any Reply'}`,
        );
      }
    }
    if (params) {
      d.startFramer(params, ss);
      if (d.log.length > 0) d.replayInto(Math.max(ss, d.log.base));
      return;
    }
    if (d.log.length === 0 && !final) return;
    // The peer's startup frame was not seen: infer markers and CRC from the bytes at SeqStart.
    const lock = this.tryLock(d, final, { markerBase: ss, alignBase: ss, preferStart: true });
    if (lock) {
      this.crc ??= lock.params.crc;
      this.lock(d, lock);
    } else if (final) {
      d.state = 'ended';
    } else {
      d.state = 'hunt';
      d.huntReason = 'negotiation';
    }
  }

  /** A second startup frame where FPDUs should begin: report it and start after it. */
  private skipRepeatedStartup(d: MpaDirection): boolean {
    const b = d.log.bytes;
    if (d.seqStartOffset === null || d.log.base !== d.seqStartOffset || b.length < STARTUP_HEADER_LEN) return false;
    const k = classifyKey(b, 0);
    if (k === null) return false;
    const total = STARTUP_HEADER_LEN + ((b[18]! << 8) | b[19]!);
    if (b.length < total) return false;
    this.find(
      d,
      'mpa.startup-after-mpa',
      d.seqOf(d.log.base),
      d.log.framesIn(d.log.base, d.log.base + total),
      `another MPA ${k === 'request' ? 'Request' : 'Reply'} at seq ${d.seqOf(d.log.base)} where FPDUs should start; ignored for negotiation`,
    );
    d.seqStartOffset += total;
    d.log.dropBefore(d.seqStartOffset);
    return false;
  }

  /** Searches held bytes for FPDU boundaries; what is known (markers, CRC, SeqStart) narrows it. */
  private tryLock(
    d: MpaDirection,
    final: boolean,
    known: { markerBase: number; alignBase: number; preferStart: boolean } | null,
  ): LockResult | null {
    const search = (d.lockSearch ??= new LockSearch(this.opts.lockBudget));
    const lock = findLock({
      bytes: d.log.bytes,
      base: d.log.base,
      baseSeq: d.info.baseSeq,
      final,
      markers: d.params?.markers ?? null,
      markerBase: known?.markerBase ?? null,
      crc: d.params?.crc ?? this.crc,
      alignBase: known?.alignBase ?? null,
      preferStart: known?.preferStart ?? false,
      // Forced by the user: MPA is a given, only markers and CRCs vouch for boundaries.
      plausible: this.detection === 'forced' ? () => true : this.plausible,
      search,
    });
    // Said once per direction, and only of MPA: on other TCP payload the search just stops quietly.
    if (search.exhaustions > 0 && !search.reported && this.isMpa) {
      search.reported = true;
      const at = Math.max(search.stoppedAt, d.log.base);
      this.find(
        d,
        'mpa.lock-on-budget',
        d.seqOf(at),
        d.log.framesIn(at, at + 1),
        `FPDU boundary search gave up at seq ${d.seqOf(at)} after ${search.spentUnits} units of work (budget ${search.budget.initial} + ${search.budget.perOctet} per octet); octets it could not examine are skipped`,
      );
    }
    return lock;
  }

  /**
   * Injected by the pipeline: could this ULPDU start a DDP segment at all (looser than `plausible`:
   * it accepts a DDP version that disagrees with the RDMAP version). Checked on every FPDU as it is
   * framed; the default accepts everything (no break detection without a layer above).
   */
  framingPlausible: (head: Uint8Array, length: number) => boolean = ACCEPT_ALL;

  /** Injected by the pipeline: DDP header plausibility (MPA itself knows nothing of DDP). */
  plausible: (head: Uint8Array, length: number) => boolean = ACCEPT_ALL;

  private lock(d: MpaDirection, lock: LockResult): void {
    d.framingLostOpen = false;
    if (this.opts.forced?.prestandard) lock.params.fpduptrFrom = 'fpdu';
    const skipped = lock.offset - d.log.base;
    if (skipped > 0) d.bytesSkipped += skipped;
    d.startFramer(lock.params, lock.offset);
    d.replayInto(lock.offset);
  }

  private stepHunt(d: MpaDirection, final: boolean): void {
    if (!d.shouldTryHunt(final)) {
      if (d.log.length > this.holdBytes) this.slideHunt(d);
      return;
    }
    const forced = this.opts.forced;
    if (forced?.prestandard && d.enabledAt === null && !d.enablementReported && d.params) {
      // `start=` named the other direction: this one's enablement point is found by its zero marker.
      const en = findEnablement({
        bytes: d.log.bytes,
        base: d.log.base,
        baseSeq: d.info.baseSeq,
        final,
        plausible: ACCEPT_ALL,
        markers: d.params.markers,
        crc: d.params.crc,
      });
      if (en) {
        enable(this, d, en);
        return;
      }
    }
    // SeqStart (exact, or mod 512 after a mid-stream lock) fixes the marker phase and 4-alignment.
    const ss = d.seqStartOffset;
    const lock = this.tryLock(
      d,
      final,
      ss !== null ? { markerBase: ss, alignBase: ss, preferStart: d.huntReason === 'error' } : null,
    );
    if (lock) {
      const skipped = lock.offset - d.log.base;
      const frames = d.log.framesIn(lock.offset, lock.offset + 1);
      if (d.huntReason === 'midstream' && this.detection === 'forced') {
        // forced flow without SeqStart: say where framing began
        this.find(
          d,
          'mpa.resync',
          d.seqOf(lock.offset),
          frames,
          `forced MPA: framing starts at seq ${d.seqOf(lock.offset)} (${lock.evidence})`,
        );
      } else if (skipped > 0 || d.huntReason !== 'error') {
        this.find(
          d,
          'mpa.resync',
          d.seqOf(lock.offset),
          frames,
          `framing resumed at seq ${d.seqOf(lock.offset)} after ${d.huntReason === 'gap' ? 'capture loss' : d.huntReason === 'error' ? 'a framing error' : 'waiting for negotiation'}; ${skipped} octets skipped (${lock.evidence})`,
        );
      }
      if (d.seqStartOffset === null && lock.params.markers) {
        d.seqStartOffset = firstMarkerOffset(lock);
        d.seqStartExact = false;
      }
      this.lock(d, lock);
      return;
    }
    if (final) {
      if (d.log.length > 0) {
        d.bytesSkipped += d.log.length;
        if (!d.framingLostOpen)
          this.find(
            d,
            'mpa.framing-lost',
            d.seqOf(d.log.base),
            d.log.framesIn(d.log.base, d.log.end),
            `no FPDU boundary found again in the last ${d.log.length} octets of the stream`,
          );
      }
      d.log.reset(d.log.end);
      return;
    }
    if (d.log.length > this.holdBytes) this.slideHunt(d);
  }

  private slideHunt(d: MpaDirection): void {
    const drop = d.log.length - (this.holdBytes >> 1);
    d.bytesSkipped += drop;
    d.log.dropBefore(d.log.base + drop);
    d.resetHuntTries();
  }

  private stepStreaming(d: MpaDirection, final: boolean): void {
    // After a reject the connection is in streaming mode. FPDUs here are a violation; look once.
    if (!d.fpduAfterRejectReported && d.seqStartOffset !== null && d.log.length > 0 && (final || d.log.length >= 64)) {
      const ss = d.seqStartOffset;
      const lock = this.tryLock(d, final, { markerBase: ss, alignBase: ss, preferStart: true });
      if (lock && lock.offset === d.seqStartOffset) {
        d.fpduAfterRejectReported = true;
        this.find(
          d,
          'mpa.fpdu-after-reject',
          d.seqOf(lock.offset),
          d.log.framesIn(lock.offset, lock.offset + 1),
          `${lock.fpdus} valid FPDU(s) sent after the connection was rejected (${lock.evidence})`,
        );
      } else if (final || d.log.length >= 4096) d.fpduAfterRejectReported = true;
    }
    if (d.log.length > 4096 || d.fpduAfterRejectReported) d.log.reset(d.log.end);
  }

  // ---------------------------------------------------------------- FPDUs

  /** Called by a direction's framer for each FPDU. Returns false to stop that framer (resync). */
  onFpdu(d: MpaDirection, f: FramedFpdu): boolean {
    if (d.suppressStart === f.start) {
      // Reported already under RFC framing; re-framed under the diagnosed mistake only to go on from it.
      d.suppressStart = null;
      if (f.senderMistake) {
        d.senderMistakeFpdus++;
        if (d.lastRecord && d.lastRecord.start === f.start) d.lastRecord.senderMistake = f.senderMistake;
      }
      this.notePlausible(d, f);
      return true;
    }
    const crcOk = f.crcStatus === 'good' || f.crcStatus === 'byte-swapped';
    if (d.exemptStart === f.start) d.exemptStart = null;
    else if (this.detection !== 'forced' && !crcOk && !this.framingPlausible(f.head, f.ulpduLength)) {
      // An FPDU that cannot be one: hold it (a verified CRC proves the framing; a bad CRC alone is
      // reported as such).
      this.holdBreak(d, f, false);
      return false;
    } else if (this.detection !== 'forced' && !crcOk && this.markersImplausible(f)) {
      // A bad CRC with markers that are not markers where the grid puts them: the sender's marker
      // placement may be the mistake (markers missing at grid points, a wrong phase). Held and
      // diagnosed; a lone corrupted FPDU is framed as it is once its successors frame.
      this.holdBreak(d, f, false);
      return false;
    } else if (this.detection !== 'forced' && !crcOk && this.successorImplausible(d, f)) {
      // The octets after this FPDU cannot start one: its own trailer (PAD, length) may be the
      // sender's mistake. Held, not reported yet, so that it is reported once and right.
      this.holdBreak(d, f, true);
      return false;
    }
    this.notePlausible(d, f);
    if (f.senderMistake) d.senderMistakeFpdus++;
    return this.emitFpdu(d, f);
  }

  /** Some marker of `f` is neither a marker for its place nor one in host byte order. */
  private markersImplausible(f: FramedFpdu): boolean {
    for (const m of f.markers) {
      if (isHostOrderMarker(m)) continue;
      if (m.reserved !== 0 || (m.fpduptr & ~3) !== m.expected) return true;
    }
    return false;
  }

  /** The octets after `f` (when already held, and no marker can sit there) cannot start an FPDU. */
  private successorImplausible(d: MpaDirection, f: FramedFpdu): boolean {
    if (d.framer?.params.markers !== false) return false;
    const at = f.start + f.wireSize - d.log.base;
    const b = d.log.bytes;
    if (at < 0 || at + 2 + 18 > b.length) return false;
    return !this.framingPlausible(b.subarray(at + 2, at + 20), (b[at]! << 8) | b[at + 1]!);
  }

  private flushPendingPad(d: MpaDirection, drop = false): void {
    const p = d.pendingPad;
    if (!p) return;
    d.pendingPad = null;
    if (!drop) this.find(d, 'mpa.pad-not-zero', p.seq, p.frames, p.message);
  }

  private notePlausible(d: MpaDirection, f: FramedFpdu): void {
    if (d.pendingPad && d.pendingPad.seq !== f.seq) this.flushPendingPad(d);
    d.lastStart = f.start;
    d.lastSeq = f.seq;
  }

  /**
   * An implausible FPDU (or, `successor`, one whose following octets cannot start an FPDU): hold it
   * and what follows until diagnosed.
   */
  private holdBreak(d: MpaDirection, f: FramedFpdu, successor: boolean): void {
    const headerOk = this.framingPlausible(f.head, f.ulpduLength);
    let lostSeq = f.seq;
    let lostFrames = [...f.frames];
    let what: string;
    if (successor) {
      const at = f.start + f.wireSize;
      const b = d.log.bytes;
      const i = at - d.log.base;
      lostSeq = d.seqOf(at);
      lostFrames = d.log.framesIn(at, Math.min(d.log.end, at + 20));
      what = `ULPDU_Length ${(b[i]! << 8) | b[i + 1]!}, DDP control 0x${b[i + 2]!.toString(16).padStart(2, '0')}, RDMAP control 0x${b[i + 3]!.toString(16).padStart(2, '0')}`;
    } else {
      const h = f.head;
      what = `ULPDU_Length ${f.ulpduLength}${h.length >= 2 ? `, DDP control 0x${h[0]!.toString(16).padStart(2, '0')}, RDMAP control 0x${h[1]!.toString(16).padStart(2, '0')}` : ''}${
        f.crcStatus === 'bad' ? ', CRC does not verify' : ''
      }`;
    }
    d.brk = {
      prevStart: d.lastStart,
      prevSeq: d.lastSeq,
      badStart: f.start,
      badSeq: lostSeq,
      badFrames: lostFrames,
      headerOk,
      what,
      afterSeq: successor ? f.seq : d.lastSeq,
    };
    d.stopKind = 'break';
  }

  /** Waits for enough octets after a break to tell a bad FPDU from a sender mistake (sender-mistakes.ts). */
  private stepDiagnose(d: MpaDirection, final: boolean): void {
    const b = d.brk!;
    if (!final && !d.shouldTryHunt(false) && d.log.length <= DIAGNOSE_HOLD) return;
    const rfc = d.rfcParams ?? d.params!;
    const current = d.params!;
    const dg = diagnoseBreak({
      bytes: d.log.bytes,
      base: d.log.base,
      baseSeq: d.info.baseSeq,
      final: final || d.log.length > DIAGNOSE_HOLD,
      current,
      rfc,
      origins: {
        seqStart: d.seqStartOffset !== null && d.seqStartExact ? d.seqStartOffset : null,
        startupStart: d.startupRec ? d.startupOffset : null,
      },
      prevStart: b.prevStart !== null && b.prevStart >= d.log.base ? b.prevStart : null,
      badStart: b.badStart,
      header: this.framingPlausible,
    });
    if (dg.kind === 'more') return;
    d.brk = null;
    d.resetHuntTries();
    if (dg.kind === 'intact' || (dg.kind === 'none' && b.headerOk)) {
      // One bad FPDU, not a broken chain: frame it as it is (its own findings follow).
      this.flushPendingPad(d);
      d.exemptStart = b.badStart;
      this.restartAt(d, current, b.badStart);
      return;
    }
    this.find(
      d,
      'mpa.framing-lost',
      b.badSeq,
      b.badFrames,
      `FPDU at seq ${b.badSeq} cannot be one (${b.what}): the ULPDU_Length chain broke${b.afterSeq !== null ? ` after the FPDU at seq ${b.afterSeq}` : ''}`,
    );
    // PAD read under RFC framing from the FPDU the mistake is about was not PAD.
    this.flushPendingPad(d, dg.kind === 'mistake' && dg.start === b.prevStart);
    if (dg.kind === 'mistake') {
      const h = dg.hypothesis;
      this.reportMistake(d, h, dg.first, rfc);
      d.senderMistake = h.id;
      if (dg.start === b.prevStart) d.suppressStart = dg.start;
      this.restartAt(d, dg.params, dg.start);
      return;
    }
    // Nothing explains it: look for FPDU boundaries again from the broken FPDU on.
    d.framingLostOpen = true;
    d.log.dropBefore(b.badStart);
    d.state = 'hunt';
    d.huntReason = 'error';
  }

  /**
   * The stream ended inside an FPDU: a ULPDU_Length read wrongly (little-endian, say) can announce
   * more octets than the rest of the stream holds, so no break ever shows. Diagnose it from there.
   */
  private diagnoseCut(d: MpaDirection): void {
    const fr = d.framer!;
    const start = fr.pendingStart;
    if (this.detection === 'forced' || start < d.log.base || d.log.end <= start) return;
    const rfc = d.rfcParams ?? d.params!;
    const dg = diagnoseBreak({
      bytes: d.log.bytes,
      base: d.log.base,
      baseSeq: d.info.baseSeq,
      final: true,
      current: d.params!,
      rfc,
      origins: {
        seqStart: d.seqStartOffset !== null && d.seqStartExact ? d.seqStartOffset : null,
        startupStart: d.startupRec ? d.startupOffset : null,
      },
      prevStart: d.lastStart !== null && d.lastStart >= d.log.base ? d.lastStart : null,
      badStart: start,
      header: this.framingPlausible,
    });
    if (dg.kind !== 'mistake') return;
    const b = d.log.bytes;
    const at = start - d.log.base;
    const announced = at + 2 <= b.length ? (b[at]! << 8) | b[at + 1]! : null;
    this.find(
      d,
      'mpa.framing-lost',
      fr.pendingSeq,
      [...fr.pendingFrames],
      `FPDU at seq ${fr.pendingSeq} cannot be one (ULPDU_Length ${announced ?? '?'} announces more than the stream holds): the ULPDU_Length chain broke${d.lastSeq !== null ? ` after the FPDU at seq ${d.lastSeq}` : ''}`,
    );
    this.flushPendingPad(d, dg.start === d.lastStart);
    if (dg.start === d.lastStart) d.suppressStart = dg.start;
    this.reportMistake(d, dg.hypothesis, dg.first, rfc);
    d.senderMistake = dg.hypothesis.id;
    this.restartAt(d, dg.params, dg.start);
  }

  private reportMistake(d: MpaDirection, h: Hypothesis, first: FramedFpdu, rfc: FramerParams): void {
    if (d.mistakesReported?.has(h.id)) return;
    (d.mistakesReported ??= new Set()).add(h.id);
    this.find(
      d,
      h.id,
      first.seq,
      d.log.framesIn(first.start, first.start + first.wireSize),
      `${h.describe(first, rfc, this.peerStartupName(d))} (FPDU at seq ${first.seq}); framing goes on under that reading, and FPDUs it changes are marked`,
    );
  }

  private restartAt(d: MpaDirection, params: FramerParams, at: number): void {
    const rfc = d.rfcParams;
    d.log.dropBefore(at);
    d.startFramer(params, at);
    if (rfc) d.rfcParams = rfc;
    d.replayInto(at);
  }

  /** Who negotiated this direction's markers, in words: the peer's startup frame. */
  private peerStartupName(d: MpaDirection): string {
    const p = this.peer(d).startupRec;
    return p ? `the peer's MPA ${p.kind === 'request' ? 'Request' : 'Reply'} (frame ${p.frame})` : 'the peer';
  }

  /** Counts, checks and hands on one FPDU that framed plausibly. Returns false to stop its framer (resync). */
  private emitFpdu(d: MpaDirection, f: FramedFpdu): boolean {
    const flowId = this.handle.id;
    let mpaError: number | null = null;
    const crcBad = f.crcStatus === 'bad' || f.crcStatus === 'byte-swapped';
    d.fpdus++;
    d.ulpduBytes += f.ulpduLength;
    if (d.afterErrorFlag) d.afterError++;
    const afterError = d.afterErrorFlag;
    if (f.crcStatus === 'bad') {
      d.crcErrors++;
      this.find(
        d,
        'mpa.crc-mismatch',
        f.seq,
        f.frames,
        `CRC ${crcHex(f.crcWire)} on the wire, computed ${crcHex(f.crcComputed)} (ULPDU_Length ${f.ulpduLength})`,
      );
      mpaError = 2;
    } else if (f.crcStatus === 'byte-swapped') {
      d.crcErrors++;
      this.find(
        d,
        'mpa.crc-byte-order',
        f.seq,
        f.frames,
        `CRC ${crcHex(f.crcWire)} on the wire is the computed ${crcHex(f.crcComputed)} byte-swapped (the CRC32c value sent most significant octet first)`,
      );
      mpaError = 2;
    }
    let markerMismatch = false;
    let markerOdd = false;
    let hostOrder: MarkerInfo[] | null = null;
    for (const m of f.markers) {
      const mismatch = (m.fpduptr & ~3) !== m.expected;
      if (!mismatch && m.reserved === 0 && (m.fpduptr & 3) === 0) continue; // the common case
      if (isHostOrderMarker(m)) {
        // The whole 32-bit marker written least significant octet first: one diagnosis, not a
        // Reserved finding plus an FPDUPTR one.
        (hostOrder ??= []).push(m);
        continue;
      }
      if (mismatch) markerMismatch = true;
      if (m.reserved !== 0 || (m.fpduptr & 3) !== 0) markerOdd = true;
    }
    if (hostOrder && !crcBad) {
      d.markerErrors++;
      this.find(
        d,
        'mpa.marker-byte-order',
        f.seq,
        f.frames,
        `${hostOrder.length} marker(s) in host (little-endian) byte order: ${hostOrder
          .slice(0, 4)
          .map(
            (m) =>
              `seq ${m.seq} reads Reserved 0x${m.reserved.toString(16).padStart(4, '0')} FPDUPTR ${m.fpduptr}, meant FPDUPTR ${m.expected}`,
          )
          .join('; ')}${hostOrder.length > 4 ? '; ...' : ''}`,
      );
      mpaError = 3;
    }
    // One finding per FPDU, naming its markers: a 64 KiB FPDU holds up to 128 of them.
    const resBad = markerOdd ? f.markers.filter((m) => m.reserved !== 0) : NONE;
    const lowBad = markerOdd ? f.markers.filter((m) => (m.fpduptr & 3) !== 0) : NONE;
    if (resBad.length > 0) {
      this.find(
        d,
        'mpa.marker-reserved',
        f.seq,
        f.frames,
        `${resBad.length} marker(s) with Reserved not zero: ${resBad
          .slice(0, 4)
          .map((m) => `seq ${m.seq} 0x${m.reserved.toString(16).padStart(4, '0')}`)
          .join(', ')}${resBad.length > 4 ? ', ...' : ''}`,
      );
    }
    if (lowBad.length > 0) {
      this.find(
        d,
        'mpa.fpduptr-low-bits',
        f.seq,
        f.frames,
        `${lowBad.length} marker(s) with FPDUPTR low bits set: ${lowBad
          .slice(0, 4)
          .map((m) => `seq ${m.seq} 0x${m.fpduptr.toString(16).padStart(4, '0')}`)
          .join(', ')}${lowBad.length > 4 ? ', ...' : ''}`,
      );
    }
    if (markerMismatch && !crcBad) {
      if (!hostOrder) d.markerErrors++;
      const bad = f.markers.filter((m) => (m.fpduptr & ~3) !== m.expected && !isHostOrderMarker(m));
      this.find(
        d,
        'mpa.fpduptr-mismatch',
        f.seq,
        f.frames,
        bad
          .slice(0, 4)
          .map((m) => `marker at seq ${m.seq}: FPDUPTR ${m.fpduptr & ~3}, expected ${m.expected}`)
          .join('; ') + (bad.length > 4 ? `; ${bad.length - 4} more` : ''),
      );
      mpaError ??= 3;
    }
    if (f.padNonZero) {
      const pad = { seq: f.seq, frames: f.frames, message: `PAD of ${f.pad} octets is not zero` };
      // Octets read as PAD that do not lead to a plausible FPDU may be the next FPDU's start under a
      // sender's own PAD rule: held until the break is diagnosed.
      if (this.successorImplausible(d, f)) d.pendingPad = pad;
      else this.find(d, 'mpa.pad-not-zero', pad.seq, pad.frames, pad.message);
    }
    if (f.ulpduLength > MAX_ULPDU_LENGTH)
      this.find(d, 'mpa.ulpdu-too-long', f.seq, f.frames, `ULPDU_Length ${f.ulpduLength} exceeds 64768`);
    // A sender's segments are bounded by the MSS its peer (the receiver) advertised in its SYN.
    const mss = this.peer(d).info.mss ?? d.info.mss;
    if (mss !== null && f.wireSize > mss) {
      d.emssCount++;
      if (!d.emssReported) {
        d.emssReported = true;
        const gso = this.reply && this.request && ((this.reply.res | this.request.res) & 0x08) !== 0;
        this.find(
          d,
          'mpa.fpdu-exceeds-emss',
          f.seq,
          f.frames,
          `FPDU of ${f.wireSize} octets exceeds the EMSS ${mss}${gso ? ' (Linux siw GSO_EXP flag 0x08 was negotiated)' : ''}; further ones in this direction are counted, not listed`,
        );
      }
    }
    if (afterError && (mpaError !== null || d.afterError === 1)) {
      // The first FPDU after an error says so once; later ones are counted in afterError.
      if (d.afterError === 1)
        this.find(
          d,
          'mpa.after-error',
          f.seq,
          f.frames,
          `FPDUs after an MPA error on this half connection (a receiver would have stopped delivering)`,
        );
    }
    if (mpaError !== null) {
      d.afterErrorFlag = true;
      this.upperLayer()?.noteMpaError?.(d.dir, mpaError, f.seq, f.frames);
    }
    // Startup rule 4 (RFC 5044 §7.1.2): the Responder sends no FPDU before the Initiator's first FPDU arrived.
    if (d.firstFpduFirstFrame === null) {
      d.firstFpduFirstFrame = f.frames[0] ?? 0;
      d.firstFpduLastFrame = f.frames[f.frames.length - 1] ?? 0;
      d.firstFpduSeq = f.seq;
      this.neg?.checkResponderFirst();
      // Appendix C.2.5: an Initiator that goes on after a Rev 0 Reply is a permissive IETF RNIC.
      if (this.request && d.dir === this.request.dir) this.neg?.checkRdmac(false);
    }
    const upperRec = this.upperLayer()?.ulpdu({
      flow: flowId,
      dir: d.dir,
      from: d.info.from,
      seq: f.seq,
      length: f.ulpduLength,
      head: f.head,
      frames: f.frames,
      crc: f.crcStatus === 'unchecked' ? 'unchecked' : crcBad ? 'bad' : 'good',
      afterError,
    });
    if (this.out.fpdu) {
      // Built only for an output that wants it: the spread costs more than the rest of this method.
      const rec: FpduRecord = {
        ...f,
        kind: 'fpdu',
        flow: flowId,
        dir: d.dir,
        from: d.info.from,
        to: d.info.to,
        afterError,
        upper: upperRec ?? null,
      };
      d.lastRecord = rec; // marked later if a diagnosed mistake turns out to cover it
      this.out.fpdu(rec);
    }
    // Framing sanity: a bad CRC with a disagreeing marker, or two bad CRCs in a row, or an
    // impossible length means the ULPDU_Length chain may be lost: hunt for it again.
    if (crcBad || f.ulpduLength > MAX_ULPDU_LENGTH) d.consecutiveBad++;
    else d.consecutiveBad = 0;
    if ((crcBad && markerMismatch) || d.consecutiveBad >= 2 || (f.ulpduLength > MAX_ULPDU_LENGTH && crcBad)) {
      d.consecutiveBad = 0;
      d.stopKind = 'resync';
      return false;
    }
    return true;
  }

  /** A framer stopped itself (suspected framing loss): hold bytes and hunt from here. */
  afterFramerStop(d: MpaDirection): void {
    const fr = d.framer!;
    d.retireFramer();
    d.resetHuntTries();
    if (d.stopKind === 'break' && d.brk) {
      d.stopKind = 'resync';
      // Keep from the last plausible FPDU on: the mistake may sit in it.
      d.log.dropBefore(d.brk.prevStart ?? d.brk.badStart);
      d.state = 'diagnose';
      return;
    }
    d.state = 'hunt';
    d.huntReason = 'error';
    d.log.dropBefore(fr.position);
  }

  private upperLayer(): UpperLayer | null {
    if (this.upper || !this.opts.upper) return this.upper;
    const req = this.request;
    const rep = this.reply;
    const qb = req?.enhancedBlock ?? null;
    const pb = rep?.enhancedBlock ?? null;
    const p2p = !!(qb?.p2p && pb?.p2p);
    const rtr = p2p && pb ? (pb.rtr.send ? 'send' : pb.rtr.write ? 'write' : pb.rtr.read ? 'read' : null) : null;
    this.upper = this.opts.upper(
      this,
      sharedContext({
        rev: rep?.rev ?? req?.rev ?? null,
        initiatorDir: req ? req.dir : rep ? ((1 - rep.dir) as 0 | 1) : null,
        p2p,
        rtr,
        requestIrd: qb?.ird ?? null,
        requestOrd: qb?.ord ?? null,
        replyIrd: pb?.ird ?? null,
        replyOrd: pb?.ord ?? null,
      }),
    );
    return this.upper;
  }

  /** The layer above MPA once created (the owner's summary of a closed flow), else null. */
  get upperInstance(): UpperLayer | null {
    return this.upper;
  }

  // ---------------------------------------------------------------- gaps and ends

  onGap(d: MpaDirection, offset: number, length: number): void {
    const end = offset + length;
    if (this.isMpa) this.upper?.noteCaptureGap?.(d.dir, d.seqOf(offset), length);
    switch (d.state) {
      case 'frame': {
        const fr = d.framer!;
        if (!fr.atBoundary) {
          this.find(
            d,
            'mpa.fpdu-truncated-by-gap',
            fr.pendingSeq,
            [...fr.pendingFrames],
            `FPDU at seq ${fr.pendingSeq} cut by ${length} octets missing from the capture at seq ${d.seqOf(offset)}`,
          );
        } else {
          this.find(
            d,
            'mpa.fpdu-truncated-by-gap',
            d.seqOf(offset),
            [],
            `${length} octets missing from the capture at seq ${d.seqOf(offset)}; FPDUs in them are lost`,
          );
        }
        d.retireFramer();
        d.state = 'hunt';
        d.huntReason = 'gap';
        d.log.reset(end);
        d.resetHuntTries();
        return;
      }
      case 'await':
        this.resolveAwait(d, true);
        if ((d.state as State) === 'frame' || (d.state as State) === 'hunt') {
          this.onGap(d, offset, length);
          return;
        }
        d.log.reset(end);
        return;
      case 'diagnose':
        this.stepDiagnose(d, true);
        if ((d.state as State) !== 'diagnose') {
          this.onGap(d, offset, length);
          return;
        }
        d.log.reset(end);
        return;
      case 'hunt':
        this.stepHunt(d, true);
        if ((d.state as State) === 'frame') {
          this.onGap(d, offset, length);
          return;
        }
        d.huntReason = 'gap';
        d.log.reset(end);
        d.resetHuntTries();
        return;
      case 'startup':
        this.find(
          d,
          'mpa.pd-short',
          d.seqOf(d.startupOffset),
          d.log.framesIn(d.startupOffset, d.log.end),
          `startup frame cut by missing capture data`,
        );
        d.state = 'scan';
        d.log.reset(end);
        return;
      default:
        d.log.reset(end);
    }
  }

  onEnd(d: MpaDirection, reason: EndReason, frame: number | null): void {
    // A RST aborts the whole connection (RFC 9293 §3.5.3): a direction still open at the end of the
    // capture after a RST from either side ended with that RST, not with the capture.
    const rst = this.handle.resetFrame ?? null;
    const aborted = reason === 'rst' || (reason === 'eof' && rst !== null);
    if (reason === 'eof' && rst !== null) {
      reason = 'rst';
      frame = rst;
    }
    this.progress(d, true);
    if (d.state === 'await' || d.state === 'hunt' || d.state === 'diagnose') this.progress(d, true);
    this.flushPendingPad(d);
    if (d.state === 'frame' && !d.framer!.atBoundary) this.diagnoseCut(d);
    if (d.state === 'frame') {
      const fr = d.framer!;
      if (!fr.atBoundary) {
        const frames = [...fr.pendingFrames, ...(frame !== null ? [frame] : [])];
        if (reason === 'eof') {
          this.find(
            d,
            'mpa.fpdu-truncated-by-gap',
            fr.pendingSeq,
            frames,
            `capture ended inside the FPDU at seq ${fr.pendingSeq}`,
          );
        } else {
          this.find(
            d,
            'mpa.tcp-closed-mid-fpdu',
            fr.pendingSeq,
            frames,
            `${reason.toUpperCase()} in frame ${frame} while the FPDU at seq ${fr.pendingSeq} was incomplete`,
          );
          this.upperLayer()?.noteMpaError?.(d.dir, 1, fr.pendingSeq, frames);
        }
      } else if (reason !== 'eof') {
        // The abort is one event for the connection: reported once, with the RST's frame.
        if (!aborted || !this.abortReported) {
          this.find(
            d,
            'mpa.tcp-closed-between',
            d.seqOf(fr.position),
            frame !== null ? [frame] : [],
            aborted
              ? `RST in frame ${frame} aborts the connection during full operation (between FPDUs); both directions end (RFC 9293 section 3.5.3)`
              : `${reason.toUpperCase()} in frame ${frame} during full operation (between FPDUs)`,
          );
        }
        this.upperLayer()?.noteMpaError?.(d.dir, 1, d.seqOf(fr.position), frame !== null ? [frame] : []);
      }
    } else if (d.state === 'startup') {
      this.negotiation.step(d, true);
    }
    if (aborted) this.abortReported = true;
    if (this.isMpa) this.upperLayer()?.end(d.dir, reason, frame);
    // Appendix C.2.2: a non-permissive Initiator shows itself by closing (not by the capture ending).
    if (this.neg && this.request?.dir === d.dir && reason !== 'eof') this.neg.initiatorClosed = true;
    d.state = 'ended';
    // Kept only when the peer already enabled MPA (a plain TCP flow keeps nothing): the enablement
    // error is judged once both directions ended.
    const other = d.dir === 0 ? this.dir1 : this.dir0; // not created here: most flows never need it
    if (other !== null && other.enabledAt !== null && this.request === null && this.reply === null) d.noteUnframed();
    if (this.direction(0).state === 'ended' && this.direction(1).state === 'ended') {
      this.neg?.checkResponderFirst(true);
      checkEnablementError(this);
      this.neg?.checkRdmac(true);
      this.opts.onClosed?.(this);
    }
    d.releaseLog();
  }

  // ---------------------------------------------------------------- report

  summary(): MpaFlowSummary | null {
    if (this.detection === null) return null;
    const req = this.request;
    const rep = this.reply;
    const initiatorDir = req ? req.dir : rep ? 1 - rep.dir : null;
    const h = this.handle;
    const name = (dir: number | null) => (dir === null ? null : dir === 0 ? h.client : h.server);
    return {
      detection: this.detection,
      initiator: name(initiatorDir),
      responder: name(initiatorDir === null ? null : 1 - initiatorDir),
      request: req,
      reply: rep,
      crc: this.crc,
      rejected: this.rejected,
      directions: [this.direction(0).summary(), this.direction(1).summary()],
      ...(this.rdmac ? { rdmac: this.rdmac } : {}),
      ...(this.dir0?.enabledAt != null || this.dir1?.enabledAt != null
        ? {
            enablement: [enablementPoint(this.dir0), enablementPoint(this.dir1)] as [
              EnablementPoint | null,
              EnablementPoint | null,
            ],
          }
        : {}),
    };
  }
}

/** The reassembler's consumer for one direction: a few octets until the direction has an event. */
class DirectionSlot implements DirectionConsumer {
  constructor(
    private readonly flow: MpaFlow,
    private readonly dir: 0 | 1,
  ) {}

  data(c: StreamChunk): void {
    this.flow.direction(this.dir).data(c);
  }

  gap(offset: number, seq: number, length: number): void {
    this.flow.direction(this.dir).gap(offset, seq, length);
  }

  end(reason: EndReason, frame: number | null): void {
    this.flow.direction(this.dir).end(reason, frame);
  }
}

function enablementPoint(d: MpaDirection | null): EnablementPoint | null {
  if (!d || d.enabledAt === null) return null;
  const markers = d.rfcParams?.markers ?? d.params?.markers ?? false;
  const rule = (d.rfcParams ?? d.params)?.fpduptrFrom === 'length' ? 'rfc5044' : 'draft-00';
  return { seq: d.seqOf(d.enabledAt), frame: d.enabledFrame, zeroMarker: markers, fpduptrRule: markers ? rule : null };
}

const NONE: readonly MarkerInfo[] = [];

/** A marker whose 32 bits, read least significant octet first, are exactly the FPDUPTR expected (Reserved 0). */
function isHostOrderMarker(m: MarkerInfo): boolean {
  if (m.expected === 0) return false; // a zero marker reads the same in either order
  return byteSwap32(((m.reserved << 16) | m.fpduptr) >>> 0) === m.expected;
}
/**
 * Contexts handed to the layer above, one frozen object per distinct value: the connections of a
 * capture mostly negotiate alike, and the layer above keeps its context as long as the flow is open
 * (100,000 open flows held 100,000 equal objects). Bounded: beyond CONTEXTS_KEPT distinct values a
 * flow keeps its own.
 */
const contexts = new Map<string, Readonly<MpaContext>>();
const CONTEXTS_KEPT = 256;
function sharedContext(c: MpaContext): MpaContext {
  const key = `${c.rev}|${c.initiatorDir}|${c.p2p}|${c.rtr}|${c.requestIrd}|${c.requestOrd}|${c.replyIrd}|${c.replyOrd}`;
  const have = contexts.get(key);
  if (have) return have;
  if (contexts.size >= CONTEXTS_KEPT) return c;
  const frozen = Object.freeze(c);
  contexts.set(key, frozen);
  return frozen;
}

/** Shared default for the injected checks (no function object per flow). */
function ACCEPT_ALL(): boolean {
  return true;
}
/** Octets held after a break before diagnosing with what there is: four of the largest FPDUs. */
const DIAGNOSE_HOLD = 4 * 66 * 1024;

/** Stream offset of the first marker position at or after a lock: congruent to SeqStart mod 512. */
function firstMarkerOffset(lock: LockResult): number {
  const base = lock.params.markerBase;
  return lock.offset + ((((base - lock.offset) % MARKER_INTERVAL) + MARKER_INTERVAL) % MARKER_INTERVAL);
}
