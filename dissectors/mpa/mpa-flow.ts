/**
 * MPA on one TCP connection: owns its two directions, routes their events to the step of the state
 * each is in, and reports the connection's summary. The steps live in files of their own, reached
 * through the FlowHost interface this class implements (flow-host.ts): scan and hunt
 * (framing-search.ts), startup frames (startup-negotiation.ts), await (await-negotiation.ts), each
 * FPDU (fpdu-checks.ts), breaks (framing-breaks.ts), gaps and ends (gaps-and-ends.ts).
 */
import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { DirectionConsumer, FlowConsumer, FlowHandle, EndReason, StreamChunk } from '../../src/tcp/stream.js';
import type { FramedFpdu } from './framer.js';
import { checkEnablementError } from './enablement.js';
import { ACCEPT_ALL, type FlowHost } from './flow-host.js';
import { stepHunt, stepScan, stepStreaming } from './framing-search.js';
import { leaveAwait, stepAwait } from './await-negotiation.js';
import { checkFpdu } from './fpdu-checks.js';
import { framerStopped, stepDiagnose } from './framing-breaks.js';
import { endDirection, handleGap } from './gaps-and-ends.js';
import { upperContext } from './upper-context.js';
import type { StartupRecord } from './startup.js';
import { StartupNegotiation } from './startup-negotiation.js';
import { MpaDirection } from './mpa-direction.js';
import type { MpaContext } from './ulpdu.js';
import type {
  EnablementPoint,
  ForcedMpa,
  HeldQuery,
  LeadingOctets,
  MpaFlowSummary,
  MpaFramingOptions,
  MpaOutputs,
  RdmacInterop,
  UpperLayer,
} from './mpa-types.js';

export type {
  ForcedMpa,
  FpduRecord,
  MpaDirectionSummary,
  MpaFlowSummary,
  MpaOutputs,
  UpperLayer,
} from './mpa-types.js';

/** MpaFlow's options: the framing ones (mpa-types.ts) and the owner's callbacks, which name MpaFlow. */
export interface MpaFlowOptions extends MpaFramingOptions {
  /** Creates the layer above MPA for `flow` (one function shared by every flow: no closure per flow). */
  upper?: (flow: MpaFlow, ctx: MpaContext) => UpperLayer;
  /** Both directions ended: the owner can keep the summary and let the dissector go. */
  onClosed?: (flow: MpaFlow) => void;
}

/**
 * MPA on one TCP connection: finds the startup frames wherever MPA starts (RFC 5044 §7.1, delayed
 * startup included; no port is special), negotiates markers per direction and CRC, frames FPDUs,
 * resynchronises after loss, and locks on mid-stream when the startup was not captured.
 */
export class MpaFlow implements FlowConsumer, FlowHost, HeldQuery {
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
  get holdBytes(): number {
    return this.opts.holdBytes ?? 256 * 1024;
  }
  get huntBudget(): number {
    return this.opts.huntBudget ?? 4 * 1024 * 1024;
  }
  /** The RST that aborted the connection was reported (once per connection). */
  abortReported = false;

  /**
   * Injected by the pipeline: could this ULPDU start a DDP segment at all (looser than `plausible`:
   * it accepts a DDP version that disagrees with the RDMAP version). Checked on every FPDU as it is
   * framed; the default accepts everything (no break detection without a layer above).
   */
  framingPlausible: (head: Uint8Array, length: number) => boolean = ACCEPT_ALL;

  /** Injected by the pipeline: DDP header plausibility (MPA itself knows nothing of DDP). */
  plausible: (head: Uint8Array, length: number) => boolean = ACCEPT_ALL;

  constructor(
    readonly handle: FlowHandle,
    private readonly sink: FindingSink,
    readonly out: MpaOutputs,
    readonly opts: MpaFlowOptions = {},
  ) {
    if (opts.forced) this.applyForced(opts.forced);
  }

  /** Each direction's framer keeps the tagged octets the layer above now wants (UpperLayer.taggedBytes). */
  setTaggedBounds(upper: UpperLayer): void {
    const f0 = this.dir0?.madeFramer;
    if (f0) f0.taggedBound = upper.taggedBytes!(0);
    const f1 = this.dir1?.madeFramer;
    if (f1) f1.taggedBound = upper.taggedBytes!(1);
  }

  /** The startup negotiation once a startup key was seen, else null (reading it creates none). */
  get negotiation(): StartupNegotiation | null {
    return this.neg;
  }

  get request(): StartupRecord | null {
    return this.neg?.request ?? null;
  }

  get reply(): StartupRecord | null {
    return this.neg?.reply ?? null;
  }

  /** Octets each direction sent before its startup frame (streaming mode), null when none. */
  get leading(): readonly [LeadingOctets | null, LeadingOctets | null] {
    return [this.dir0?.leading ?? null, this.dir1?.leading ?? null];
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

  peer(d: MpaDirection): MpaDirection {
    return this.direction(d.dir === 0 ? 1 : 0);
  }

  // ---------------------------------------------------------------- state machine

  /** Re-evaluates a direction after bytes were held (final = no more bytes will come). */
  progress(d: MpaDirection, final: boolean): void {
    for (let guard = 0; guard < 64; guard++) {
      const before = d.state;
      switch (d.state) {
        case 'scan':
          stepScan(this, d, final);
          break;
        case 'startup':
          this.stepStartup(d, final);
          break;
        case 'await':
          stepAwait(this, d, final);
          break;
        case 'diagnose':
          stepDiagnose(this, d, final);
          break;
        case 'hunt':
          stepHunt(this, d, final);
          break;
        case 'streaming':
          stepStreaming(this, d, final);
          break;
        default:
          return;
      }
      if (d.state === before) return;
    }
  }

  /** The 'startup' state: the negotiation collects the direction's startup frame (RFC 5044 §7.1). */
  stepStartup(d: MpaDirection, final: boolean): void {
    (this.neg ??= new StartupNegotiation(this)).step(d, final);
  }

  /** Leaves 'await' (NegotiationHost: both startup frames are known). */
  resolveAwait(d: MpaDirection, final: boolean): void {
    leaveAwait(this, d, final);
  }

  /** Called by a direction's framer for each FPDU. Returns false to stop that framer (resync). */
  onFpdu(d: MpaDirection, f: FramedFpdu): boolean {
    return checkFpdu(this, d, f);
  }

  /** A framer stopped itself (suspected framing loss): diagnose or hunt from here. */
  afterFramerStop(d: MpaDirection): void {
    framerStopped(d);
  }

  bodyBytes(d: MpaDirection): number {
    return this.upper ? (this.upper.bodyBytes?.(d.dir) ?? 0) : (this.opts.bodyBytes ?? 0);
  }

  upperLayer(): UpperLayer | null {
    if (this.upper || !this.opts.upper) return this.upper;
    const req = this.request;
    const rep = this.reply;
    this.upper = this.opts.upper(this, upperContext(req, rep));
    this.upper.attachHeld?.(this);
    return this.upper;
  }

  /** HeldQuery: the frame of the first octet `dir` holds back, null when none (or no such direction). */
  heldFrame(dir: 0 | 1): number | null {
    const d = dir === 0 ? this.dir0 : this.dir1;
    return d ? d.heldFrame() : null;
  }

  /** The layer above MPA once created (the owner's summary of a closed flow), else null. */
  get upperInstance(): UpperLayer | null {
    return this.upper;
  }

  // ---------------------------------------------------------------- gaps and ends

  onGap(d: MpaDirection, offset: number, length: number, cut: boolean): void {
    handleGap(this, d, offset, length, cut);
  }

  onEnd(d: MpaDirection, reason: EndReason, frame: number | null): void {
    endDirection(this, d, reason, frame);
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

  gap(offset: number, seq: number, length: number, cut?: boolean): void {
    this.flow.direction(this.dir).gap(offset, seq, length, cut);
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
