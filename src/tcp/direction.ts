/**
 * The state of one flow and of each of its two directions: where the stream stands, what it holds,
 * its history ring and statistics. Plain state: the reassembler's other files act on it.
 */
import { endpoint } from '../net/segment.js';
import type { Slab, HoldState } from './held-pieces.js';
import type { History, HistoryOwner } from './history.js';
import type { DirectionConsumer, DirectionInfo, FlowHandle } from './stream.js';

/** Gaps of a direction, created on the first one (most directions never have one). */
export class GapLog {
  readonly list: { seq: number; length: number }[] = [];
  /** Gaps beyond MAX_GAPS, counted but not listed. */
  omitted = 0;
  /** Stream offset just past the last gap (adjacent gaps are merged). */
  lastEnd = -1;
  /**
   * Segments whose tail the capture's snaplen cut (their octets were sent: the IP length says how
   * many), the octets cut, and the first such segment. Not listed as gaps: a hardware tracer that
   * keeps 128 octets of every frame cuts every segment.
   */
  snapCuts = 0;
  snapOctets = 0;
  snapFrame = -1;
  snapSeq = 0;
  /** The largest payload any cut segment kept (what the snaplen leaves of a segment). */
  snapKept = 0;
}

// Dir.bits: small flags packed into one integer (each boolean field would cost a word per direction).
const F_BASED = 1;
const F_SYN = 2;
const F_ENDED = 4;
const F_HIST_USED = 8;
const F_FIN = 16;
const F_RST = 32;

/**
 * One direction of a flow: its stream state, held data, history and statistics. Kept small (about
 * 20 words): a capture may have 100,000 flows open at once. Addresses live on the Flow; rarely used
 * state (held data, gaps) is allocated when first needed.
 */
export class Dir implements DirectionInfo, HistoryOwner {
  consumer: DirectionConsumer | null = null;
  /** Next direction with the same flow-table hash. */
  chain: Dir | null = null;
  private bits = 0;
  isn = 0;
  baseSeq = 0;
  /** Offset of the next octet to deliver. */
  nextOffset = 0;
  /** Offset just past the highest octet known to have been sent (captured, cut by snaplen, or acked). */
  knownEnd = 0;
  /** Offset of the FIN, -1 until one is seen (not Infinity: a non-integer field costs a box per object). */
  limit = -1;
  finFrame = 0;
  /** Held pieces, sorted and disjoint, all beyond nextOffset, with their bookkeeping; null while none. */
  held: HoldState | null = null;
  hist: History | null = null;
  /** No history ring is sought before `delivered` reaches this. */
  histRetryAt = 0;
  mss: number | null = null;
  segments = 0;
  retransmissions = 0;
  delivered = 0;
  gapLog: GapLog | null = null;

  constructor(
    readonly flow: Flow,
    readonly index: 0 | 1,
  ) {}

  private flag(f: number, v: boolean): void {
    this.bits = v ? this.bits | f : this.bits & ~f;
  }

  /** baseSeq is known (a SYN or the first data octet was seen). */
  get based(): boolean {
    return (this.bits & F_BASED) !== 0;
  }
  set based(v: boolean) {
    this.flag(F_BASED, v);
  }
  get synSeen(): boolean {
    return (this.bits & F_SYN) !== 0;
  }
  set synSeen(v: boolean) {
    this.flag(F_SYN, v);
  }
  get ended(): boolean {
    return (this.bits & F_ENDED) !== 0;
  }
  set ended(v: boolean) {
    this.flag(F_ENDED, v);
  }
  /** Delivered since the clock last looked (a ring in use is spared once). */
  get histUsed(): boolean {
    return (this.bits & F_HIST_USED) !== 0;
  }
  set histUsed(v: boolean) {
    this.flag(F_HIST_USED, v);
  }
  get closed(): 'fin' | 'rst' | null {
    return this.bits & F_FIN ? 'fin' : this.bits & F_RST ? 'rst' : null;
  }
  set closed(v: 'fin' | 'rst' | null) {
    this.bits = (this.bits & ~(F_FIN | F_RST)) | (v === 'fin' ? F_FIN : v === 'rst' ? F_RST : 0);
  }

  get srcAddr(): string {
    return this.index === 0 ? this.flow.cAddr : this.flow.sAddr;
  }
  get srcPort(): number {
    return this.index === 0 ? this.flow.cPort : this.flow.sPort;
  }
  get dstAddr(): string {
    return this.index === 0 ? this.flow.sAddr : this.flow.cAddr;
  }
  get dstPort(): number {
    return this.index === 0 ? this.flow.sPort : this.flow.cPort;
  }

  // Held-data bookkeeping reads as zero while nothing is held; writes go to the HoldState.
  get heldData(): number {
    return this.held === null ? 0 : this.held.data;
  }
  set heldData(v: number) {
    if (this.held !== null) this.held.data = v;
  }
  get heldCost(): number {
    return this.held === null ? 0 : this.held.cost;
  }
  set heldCost(v: number) {
    if (this.held !== null) this.held.cost = v;
  }
  get heldSince(): number {
    return this.held === null ? 0 : this.held.since;
  }
  set heldSince(v: number) {
    if (this.held !== null) this.held.since = v;
  }
  get slab(): Slab | null {
    return this.held === null ? null : this.held.slab;
  }
  set slab(v: Slab | null) {
    if (this.held !== null) this.held.slab = v;
  }
  get slabNext(): number {
    return this.held === null ? 0 : this.held.slabNext;
  }
  set slabNext(v: number) {
    if (this.held !== null) this.held.slabNext = v;
  }

  get from(): string {
    return this.index === 0 ? this.flow.client : this.flow.server;
  }

  get to(): string {
    return this.index === 0 ? this.flow.server : this.flow.client;
  }

  seqOf(off: number): number {
    return (this.baseSeq + off) >>> 0;
  }

  live(): number {
    return this.held === null ? 0 : this.held.size;
  }
}

export class Flow implements FlowHandle {
  readonly client: string;
  readonly server: string;
  readonly dirs: [Dir, Dir];
  lastFrame: number;
  /** A FIN or RST was seen in either direction (a new ISN on a SYN then means port reuse). */
  closedAny = false;
  /** Frame of the first RST in either direction (FlowHandle.resetFrame). */
  resetFrame: number | null = null;
  heldCost = 0;
  /** Capture time (seconds, with the fraction) of the flow's last segment, and whether expireIdle already let it go. */
  lastSec = 0;
  expired = false;

  constructor(
    readonly id: number,
    readonly cAddr: string,
    readonly cPort: number,
    readonly sAddr: string,
    readonly sPort: number,
    readonly firstFrame: number,
  ) {
    this.client = endpoint(cAddr, cPort);
    this.server = endpoint(sAddr, sPort);
    this.lastFrame = firstFrame;
    this.dirs = [new Dir(this, 0), new Dir(this, 1)];
  }

  info(dir: 0 | 1): DirectionInfo {
    const d = this.dirs[dir];
    return { from: d.from, to: d.to, mss: d.mss, baseSeq: d.baseSeq, synSeen: d.synSeen };
  }

  /** FlowHandle.view: the Dir itself (baseSeq, MSS and SYN are settled once it delivered data: syn()). */
  view(dir: 0 | 1): DirectionInfo {
    return this.dirs[dir];
  }

  /** Some sequence space was used beyond a SYN in either direction. */
  carried(): boolean {
    return this.dirs[0].knownEnd > 0 || this.dirs[1].knownEnd > 0 || this.dirs[0].ended || this.dirs[1].ended;
  }
}
