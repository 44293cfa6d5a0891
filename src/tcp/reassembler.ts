/**
 * TCP reassembly: a flow table, and per direction an ordered byte stream with frame attribution,
 * explicit gaps and close events. Like gopacket's `reassembly`, it knows nothing of what the stream
 * carries. Internally every position is a stream offset (a plain number, good past 4 GiB); a wire
 * sequence number is turned into an offset once, by its signed 32-bit distance from the next
 * expected sequence number, so wrap-around near 2^32 needs no special case.
 */
import type { FindingSink } from '../vocabulary/findings.js';
import { TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, endpoint, type TcpSegment } from '../net/segment.js';
import { HeldQueue } from './held-queue.js';
import type { DirectionConsumer, DirectionInfo, EndReason, FlowConsumer, FlowHandle } from './stream.js';

export interface ReassemblyOptions {
  /** Out-of-order bytes held per flow (both directions), default 16 MiB. */
  maxBufferedPerFlow?: number;
  /** Out-of-order bytes held across all flows, default 64 MiB. */
  maxBufferedTotal?: number;
  /**
   * A hole is declared lost once this many bytes are buffered beyond it, default 4 MiB.
   * (A FIN or RST on the direction, the peer acknowledging beyond the hole, or end of capture do it too.)
   */
  reorderWindow?: number;
  /** Delivered bytes kept per direction to compare overlapping retransmissions, default 64 KiB. */
  historyBytes?: number;
  /**
   * Budget for all directions' history together, default 32 MiB (512 rings of 64 KiB). A ring is taken
   * on a direction's first delivery and given back when the direction ends. When the budget is spent,
   * the ring of a direction that has not delivered since the clock hand last passed it is taken over;
   * if every ring is busy the newcomer goes without and tries again after 4 rings' worth of delivery.
   * Overlaps with bytes no longer in history are counted as retransmissions but not compared.
   */
  maxHistoryTotal?: number;
}

/*
 * Memory, all told: held out-of-order data is charged in whole slabs (4 KiB growing to 256 KiB per
 * direction, plus 64 octets per piece), so maxBufferedTotal bounds the real allocation; history is
 * bounded by maxHistoryTotal; up to 4 MiB of free slabs are kept for reuse. With the defaults that is
 * at most about 100 MiB. Besides that, every flow keeps about 1 KiB of state and statistics until the
 * end (flows() reports them all).
 */

export type { FlowHandle } from './stream.js';

export interface TcpDirectionStats {
  from: string;
  to: string;
  /**
   * Distinct payload octets seen (delivered, or still held): retransmitted copies count once; octets in
   * gaps, after the FIN, or arriving only after their range was declared a gap are not counted.
   */
  bytes: number;
  /** Every TCP segment sent in this direction (pure ACKs, SYN, FIN, RST included). */
  segments: number;
  /**
   * Segments that repeated sequence space already seen in this direction: at least one payload octet
   * already delivered or held (or lying in a range already declared a gap), or a repeated SYN or FIN.
   * Keep-alives (at most one octet just below the next expected one) are not counted.
   */
  retransmissions: number;
  /** Ranges never captured, in stream order; adjacent gaps are merged. At most MAX_GAPS entries. */
  gaps: { seq: number; length: number }[];
  /** Gaps beyond MAX_GAPS, counted but not listed. */
  gapsOmitted: number;
  mss: number | null;
  closed: 'fin' | 'rst' | null;
}

export interface TcpFlowStats {
  id: number;
  client: string;
  server: string;
  firstFrame: number;
  lastFrame: number;
  directions: [TcpDirectionStats, TcpDirectionStats];
}

/** Gaps listed per direction in the stats; the rest are only counted. */
export const MAX_GAPS = 10000;

const MIB = 1024 * 1024;
/** Bookkeeping charged per held piece on top of its slab space, so tiny segments cannot dodge the caps. */
const HELD_OVERHEAD = 64;
/** Slab sizes for held copies: a direction's slabs grow from MIN to MAX while it keeps holding data. */
const SLAB_MIN = 4096;
const SLAB_MAX = 256 * 1024;
/** Free slabs kept for reuse, in bytes. */
const SLAB_POOL_BYTES = 4 * MIB;
/** A direction that found no free history ring waits this many ring-fulls of delivery before trying again. */
const HIST_BACKOFF = 4;

/** Why a hole became a gap (the finding says so). */
type GapCause = 'reorder-window' | 'ack' | 'fin' | 'rst' | 'eof' | 'flow-cap' | 'total-cap';

const CAUSE_TEXT: Readonly<Record<GapCause, string>> = {
  'reorder-window': 'the reorder window was exceeded',
  ack: 'the peer acknowledged beyond it',
  fin: 'the direction closed with FIN',
  rst: 'the direction was reset',
  eof: 'the capture ended',
  'flow-cap': 'the per-flow buffer cap was reached',
  'total-cap': 'the total buffer cap was reached',
};

/**
 * Held copies are carved out of slabs (one ArrayBuffer per held segment would dominate the cost).
 * A direction allocates from its own current slab, so a slab is pinned only by pieces of one
 * direction, and the caps are charged whole slabs: they bound real memory, fragmentation included.
 */
class Slab {
  readonly buf: Uint8Array;
  used = 0;
  /** Held pieces still referencing this slab. */
  live = 0;
  constructor(size: number) {
    this.buf = new Uint8Array(size);
  }
}

/**
 * Out-of-order bytes waiting for the hole before them: a private copy at slab.buf[at, at + end - off).
 * No view is kept per piece (a Uint8Array costs more than the piece's bookkeeping); one is made on delivery.
 */
class Held {
  constructor(
    public off: number,
    public end: number,
    readonly slab: Slab,
    readonly at: number,
    public frame: number,
    public segStart: boolean,
    public segEnd: boolean,
  ) {}

  view(): Uint8Array {
    return this.slab.buf.subarray(this.at, this.at + this.end - this.off);
  }
}

function pow2AtLeast(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/** First size of a history ring and of its run arrays: most directions deliver little. */
const HIST_MIN = 4096;
const RUNS_MIN = 64;

/**
 * The last delivered bytes of a direction, as a ring, with runs of (start offset, frame) so an
 * overlap conflict can name the frame that carried the first copy. Frame 0 marks a gap run. The ring
 * starts at 4 KiB and doubles up to its full size as the direction delivers, so 512 rings held by
 * directions that carried one small segment each cost 2.5 MiB, not 40.
 */
class History {
  buf: Uint8Array;
  cap: number;
  private runOff: Float64Array;
  private runFrame: Float64Array;
  private runCap: number;
  private readonly maxRunCap: number;
  private first = 0;
  count = 0;
  /** Offset of the first octet written since the last reset, -1 before. */
  private lo = -1;
  owner: Dir | null = null;

  constructor(readonly maxCap: number) {
    this.cap = Math.min(maxCap, HIST_MIN);
    this.buf = new Uint8Array(this.cap);
    // Enough runs for 64-octet average chunks; smaller chunks just shorten the usable history.
    this.maxRunCap = Math.max(RUNS_MIN, Math.ceil(maxCap / 64));
    this.runCap = RUNS_MIN;
    this.runOff = new Float64Array(this.runCap);
    this.runFrame = new Float64Array(this.runCap);
  }

  reset(): void {
    this.first = 0;
    this.count = 0;
    this.lo = -1;
  }

  offAt(k: number): number {
    return this.runOff[(this.first + k) % this.runCap]!;
  }

  frameAt(k: number): number {
    return this.runFrame[(this.first + k) % this.runCap]!;
  }

  private push(off: number, frame: number): void {
    if (this.count > 0 && this.runFrame[(this.first + this.count - 1) % this.runCap] === frame) return;
    if (this.count === this.runCap) {
      if (this.runCap < this.maxRunCap) {
        this.growRuns();
      } else {
        this.first = (this.first + 1) % this.runCap;
        this.count--;
      }
    }
    const i = (this.first + this.count) % this.runCap;
    this.runOff[i] = off;
    this.runFrame[i] = frame;
    this.count++;
  }

  private growRuns(): void {
    const n = Math.min(this.maxRunCap, this.runCap * 2);
    const ro = new Float64Array(n);
    const rf = new Float64Array(n);
    for (let k = 0; k < this.count; k++) {
      ro[k] = this.offAt(k);
      rf[k] = this.frameAt(k);
    }
    this.runOff = ro;
    this.runFrame = rf;
    this.runCap = n;
    this.first = 0;
  }

  /** Room for the octets up to `end`: the ring grows (to at most maxCap) keeping what it holds. */
  private grow(end: number, next: number): void {
    const nc = Math.min(this.maxCap, pow2AtLeast(end - this.lo));
    const nb = new Uint8Array(nc);
    const cap = this.cap;
    for (let x = Math.max(this.lo, next - cap); x < next; x++) nb[x % nc] = this.buf[x % cap]!;
    this.buf = nb;
    this.cap = nc;
  }

  write(off: number, data: Uint8Array, frame: number): void {
    this.push(off, frame);
    if (this.lo < 0) this.lo = off;
    if (this.cap < this.maxCap && off + data.length - this.lo > this.cap) this.grow(off + data.length, off);
    const cap = this.cap;
    let n = data.length;
    let src = data;
    if (n >= cap) {
      src = data.subarray(n - cap);
      off += n - cap;
      n = cap;
    }
    const pos = off % cap;
    if (pos + n <= cap) {
      this.buf.set(src, pos);
    } else {
      const first = cap - pos;
      this.buf.set(src.subarray(0, first), pos);
      this.buf.set(src.subarray(first), 0);
    }
  }

  gap(off: number): void {
    this.push(off, 0);
  }

  /** Index of the last run starting at or before off (runs are in offset order). */
  find(off: number): number {
    let lo = 0;
    let hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offAt(mid) <= off) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

/**
 * What a direction holding out-of-order data needs besides the pieces: created with the first held
 * piece and dropped when the last one goes (most directions never hold anything).
 */
class HoldState extends HeldQueue<Held> {
  /** Octets held. */
  data = 0;
  /** Slab space and per-piece overhead charged to this direction. */
  cost = 0;
  /** Order in which this direction's current holes started (for "oldest hole" under the per-flow cap). */
  since = 0;
  /** Slab new held copies go to, and the size of the next one. */
  slab: Slab | null = null;
  slabNext = 0;
}

/** Gaps of a direction, created on the first one (most directions never have one). */
class GapLog {
  readonly list: { seq: number; length: number }[] = [];
  /** Gaps beyond MAX_GAPS, counted but not listed. */
  omitted = 0;
  /** Stream offset just past the last gap (adjacent gaps are merged). */
  lastEnd = -1;
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
class Dir implements DirectionInfo {
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

class Flow implements FlowHandle {
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

/**
 * Flow-table key: FNV-1a over the 4-tuple, folded to 30 bits so it stays a V8 small integer (no
 * string is built and no number boxed per lookup). Directions that collide are chained (Dir.chain).
 */
function tupleHash(src: string, sport: number, dst: string, dport: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < src.length; i++) h = Math.imul(h ^ src.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ sport, 0x01000193);
  for (let i = 0; i < dst.length; i++) h = Math.imul(h ^ dst.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ dport, 0x01000193);
  return (h ^ (h >>> 15)) & 0x3fffffff;
}

export class Reassembler {
  private readonly maxPerFlow: number;
  private readonly maxTotal: number;
  private readonly reorderWindow: number;
  private readonly histBytes: number;
  private readonly histTotal: number;
  private readonly histOn: boolean;

  /** Both directions of every current flow, by tupleHash (collisions chained through Dir.chain). */
  private readonly table = new Map<number, Dir>();
  private readonly all: Flow[] = [];
  private nextId = 1;
  /**
   * Where a new flow's id comes from: 1, 2, 3... in the order flows open. The parallel pipeline
   * (src/analysis/parallel) replaces it in each worker with the id one thread would have given.
   */
  flowId: () => number = () => this.nextId++;
  /** The direction of the previous segment: consecutive segments mostly share it, saving the hash lookup. */
  private last: Dir | null = null;

  private heldCost = 0;
  private holdSeq = 0;
  /** Directions holding data, in the order their current holes started (first = oldest hole). */
  private readonly holding = new Set<Dir>();

  private readonly slabMin: number;
  private readonly slabMax: number;
  /** Free slabs by size class (log2(size / slabMin)). */
  private readonly slabPool: Slab[][] = [];
  private slabPooled = 0;

  /** Every history ring allocated (at most maxHistoryTotal / historyBytes), swept by a clock hand. */
  private readonly rings: History[] = [];
  private readonly ringsMax: number;
  private readonly ringFree: History[] = [];
  private hand = 0;

  // Per-segment scratch state (reset at the start of segment()).
  private old = false;
  private cfCount = 0;
  private cfFirst = 0;
  private readonly cfFrames: number[] = [];

  constructor(
    private readonly sink: FindingSink,
    private readonly newFlow: (f: FlowHandle) => FlowConsumer | null,
    opts: ReassemblyOptions = {},
  ) {
    this.maxPerFlow = opts.maxBufferedPerFlow ?? 16 * MIB;
    this.maxTotal = opts.maxBufferedTotal ?? 64 * MIB;
    this.reorderWindow = opts.reorderWindow ?? 4 * MIB;
    this.histBytes = opts.historyBytes ?? 64 * 1024;
    this.histTotal = opts.maxHistoryTotal ?? 32 * MIB;
    this.histOn = this.histBytes > 0 && this.histTotal >= this.histBytes;
    this.ringsMax = this.histOn ? Math.floor(this.histTotal / this.histBytes) : 0;
    // Slabs stay small against small caps, so a cap still means roughly its number of bytes.
    const capSlab = Math.min(this.maxPerFlow, this.maxTotal) / 16;
    this.slabMax = Math.max(1, Math.min(SLAB_MAX, pow2AtLeast(capSlab + 1) / 2));
    this.slabMin = Math.min(SLAB_MIN, this.slabMax);
  }

  /** Memory charged for held out-of-order data right now (slab space plus bookkeeping), all flows. */
  bufferedBytes(): number {
    return this.heldCost;
  }

  segment(s: TcpSegment): void {
    let d = this.last;
    if (
      d === null ||
      d.srcPort !== s.srcPort ||
      d.dstPort !== s.dstPort ||
      d.srcAddr !== s.src ||
      d.dstAddr !== s.dst
    ) {
      d = this.lookup(s);
    }
    const f = s.flags;
    if (d === null) {
      d = this.open(s);
    } else if ((f & (TCP_SYN | TCP_ACK)) === TCP_SYN && this.reused(d, s.seq)) {
      this.retire(d.flow);
      d = this.open(s);
    }
    this.last = d;
    d.flow.lastFrame = s.frame;
    d.flow.lastSec = s.tsSec + s.tsNsec / 1e9;
    d.segments++;
    this.old = false;
    this.cfCount = 0;

    let keepalive = false;
    if (f & TCP_RST && d.flow.resetFrame === null) d.flow.resetFrame = s.frame;
    if (f & TCP_SYN) this.syn(d, s);
    if (s.payload.length > 0 || s.missing > 0 || (f & (TCP_FIN | TCP_RST)) !== 0) {
      keepalive = this.carry(d, s, (f & TCP_SYN) !== 0 ? (s.seq + 1) >>> 0 : s.seq);
    }
    if (this.cfCount > 0) this.reportConflict(d, s.frame);
    if (this.old && !keepalive) d.retransmissions++;
    if (f & TCP_ACK) this.acked(d.flow.dirs[1 - d.index]!, s);
  }

  /** Ends every flow still open, in the order they opened (`each` is told which flow is ending next). */
  finish(each?: (id: number) => void): void {
    for (const fl of this.all) {
      each?.(fl.id);
      this.close(fl);
    }
  }

  /**
   * Live capture: ends every flow that has carried no segment for `timeoutSec` seconds before
   * `nowSec` (its directions end as at the end of a capture) and takes it out of the flow table, so
   * its buffers and dissector state can go; a later segment on the same 4-tuple opens a new flow.
   * Returns the statistics of the flows let go (each only once).
   */
  expireIdle(nowSec: number, timeoutSec: number): TcpFlowStats[] {
    const out: TcpFlowStats[] = [];
    for (const fl of this.all) {
      if (fl.expired || nowSec - fl.lastSec < timeoutSec) continue;
      fl.expired = true;
      this.retire(fl);
      if (this.last !== null && this.last.flow === fl) this.last = null;
      out.push({
        id: fl.id,
        client: fl.client,
        server: fl.server,
        firstFrame: fl.firstFrame,
        lastFrame: fl.lastFrame,
        directions: [stats(fl.dirs[0]), stats(fl.dirs[1])],
      });
    }
    return out;
  }

  flows(): TcpFlowStats[] {
    return this.all.map((fl) => ({
      id: fl.id,
      client: fl.client,
      server: fl.server,
      firstFrame: fl.firstFrame,
      lastFrame: fl.lastFrame,
      directions: [stats(fl.dirs[0]), stats(fl.dirs[1])],
    }));
  }

  // ---- flow table ----

  private open(s: TcpSegment): Dir {
    // A SYN-ACK's sender is the server; otherwise the first sender (a SYN's sender) is the client.
    const synAck = (s.flags & (TCP_SYN | TCP_ACK)) === (TCP_SYN | TCP_ACK);
    const fl = synAck
      ? new Flow(this.flowId(), s.dst, s.dstPort, s.src, s.srcPort, s.frame)
      : new Flow(this.flowId(), s.src, s.srcPort, s.dst, s.dstPort, s.frame);
    this.all.push(fl);
    for (const d of fl.dirs) this.insert(d);
    const c = this.newFlow(fl);
    if (c !== null) {
      fl.dirs[0].consumer = c.directions[0];
      fl.dirs[1].consumer = c.directions[1];
    }
    return synAck ? fl.dirs[1] : fl.dirs[0];
  }

  private lookup(s: TcpSegment): Dir | null {
    for (let d = this.table.get(tupleHash(s.src, s.srcPort, s.dst, s.dstPort)) ?? null; d !== null; d = d.chain) {
      if (d.srcPort === s.srcPort && d.dstPort === s.dstPort && d.srcAddr === s.src && d.dstAddr === s.dst) return d;
    }
    return null;
  }

  private insert(d: Dir): void {
    const k = tupleHash(d.srcAddr, d.srcPort, d.dstAddr, d.dstPort);
    d.chain = this.table.get(k) ?? null;
    this.table.set(k, d);
  }

  private remove(d: Dir): void {
    const k = tupleHash(d.srcAddr, d.srcPort, d.dstAddr, d.dstPort);
    const head = this.table.get(k);
    if (head === d) {
      if (d.chain === null) this.table.delete(k);
      else this.table.set(k, d.chain);
    } else {
      for (let x = head ?? null; x !== null; x = x.chain) {
        if (x.chain === d) {
          x.chain = d.chain;
          break;
        }
      }
    }
    d.chain = null;
  }

  /** Does a SYN with this ISN start a new connection on d's 4-tuple? */
  private reused(d: Dir, isn: number): boolean {
    if (d.synSeen && d.isn === isn) return false; // a retransmitted SYN
    // After a close, a new ISN is port reuse; on a live flow that already carried data it is a new
    // connection whose predecessor's close was not captured. Before any data it is a fresh attempt.
    return d.flow.closedAny || d.flow.carried();
  }

  /** Ends every direction of a flow still open (end of capture, or its 4-tuple was reused). */
  private close(fl: Flow): void {
    for (const d of fl.dirs) {
      if (d.ended) continue;
      this.flushTo(d, d.knownEnd, 'eof', null);
      this.end(d, 'eof', null);
    }
  }

  private retire(fl: Flow): void {
    this.close(fl);
    for (const d of fl.dirs) this.remove(d);
  }

  // ---- per segment ----

  private syn(d: Dir, s: TcpSegment): void {
    if (d.synSeen && d.isn === s.seq) {
      this.old = true;
      return;
    }
    if (d.based && d.knownEnd > 0) return; // a SYN after data in the same direction: keep the stream as it is
    d.synSeen = true;
    d.isn = s.seq;
    d.baseSeq = (s.seq + 1) >>> 0;
    d.based = true;
    d.mss = s.options?.mss ?? null;
  }

  /** Payload, FIN and RST of one segment. Returns true for a keep-alive. */
  private carry(d: Dir, s: TcpSegment, dataSeq: number): boolean {
    const f = s.flags;
    const len = s.payload.length;
    if (!d.based) {
      d.based = true;
      d.baseSeq = dataSeq;
    }
    const off = d.nextOffset + ((dataSeq - d.seqOf(d.nextOffset)) | 0);
    const sent = off + len + s.missing;
    if (d.ended) {
      this.afterEnd(d, s, off, sent);
      return false;
    }
    if (f & TCP_FIN) this.setFin(d, sent, s.frame); // the first FIN: a repeated one finds the direction ended
    // Keep-alive: at most one (garbage) octet just below the next expected one; not data.
    if (len <= 1 && s.missing === 0 && off === d.nextOffset - 1 && (f & (TCP_SYN | TCP_FIN | TCP_RST)) === 0) {
      return true;
    }
    // A bare RST's sequence number proves nothing was sent up to it (it may answer a stray segment).
    if (len > 0 || s.missing > 0 || (f & TCP_RST) === 0) {
      const known = d.limit >= 0 && d.limit < sent ? d.limit : sent;
      if (known > d.knownEnd) d.knownEnd = known;
    }
    if (len > 0) this.take(d, s, off);
    if (f & TCP_FIN) {
      this.flushTo(d, d.limit, 'fin', s.frame);
      this.end(d, 'fin', d.finFrame);
    } else if (f & TCP_RST) {
      this.flushTo(d, d.knownEnd, 'rst', s.frame);
      this.end(d, 'rst', s.frame);
    }
    return false;
  }

  private afterEnd(d: Dir, s: TcpSegment, off: number, sent: number): void {
    const end = off + s.payload.length;
    // Only payload counts: a bare RST (or ACK) after the FIN sits one past it and carries nothing.
    if (d.closed === 'fin' && s.payload.length > 0 && end > Math.max(off, d.limit)) {
      const from = Math.max(off, d.limit);
      this.report(
        'tcp.data-after-fin',
        d,
        [s.frame],
        d.seqOf(from),
        `${end - from} octet(s) after the FIN at seq ${d.seqOf(d.limit)}`,
      );
    }
    if (
      (s.payload.length > 0 && off < d.nextOffset) ||
      (d.closed === 'fin' && (s.flags & TCP_FIN) !== 0 && sent === d.limit)
    )
      this.old = true;
  }

  /** The first FIN fixes where the direction ends; held bytes beyond it are not stream data. */
  private setFin(d: Dir, finOff: number, frame: number): void {
    if (finOff < d.nextOffset) finOff = d.nextOffset;
    d.limit = finOff;
    d.finFrame = frame;
    if (d.knownEnd > finOff) d.knownEnd = finOff;
    const held = d.held;
    let cut = 0;
    let frames: number[] | null = null;
    let first = Infinity;
    while (held !== null && held.size > 0) {
      const h = held.last()!;
      if (h.end <= finOff) break;
      const from = Math.max(h.off, finOff);
      first = from;
      cut += h.end - from;
      (frames ??= []).push(h.frame);
      d.heldData -= h.end - from;
      if (from === h.off) {
        held.pop();
        this.release(d, h);
      } else {
        h.end = from;
        h.segEnd = false;
      }
    }
    if (held !== null && held.size === 0) this.emptied(d);
    if (frames !== null) {
      frames.push(frame);
      frames = [...new Set(frames)].sort((x, y) => x - y);
      this.report(
        'tcp.data-after-fin',
        d,
        frames,
        d.seqOf(first),
        `${cut} octet(s) after the FIN at seq ${d.seqOf(finOff)}`,
      );
    }
  }

  /** Payload octets [off, off + payload.length). */
  private take(d: Dir, s: TcpSegment, off: number): void {
    const p = s.payload;
    let end = off + p.length;
    let a = off;
    if (d.limit >= 0 && end > d.limit) {
      const from = Math.max(a, d.limit);
      this.report(
        'tcp.data-after-fin',
        d,
        [s.frame],
        d.seqOf(from),
        `${end - from} octet(s) after the FIN at seq ${d.seqOf(d.limit)}`,
      );
      end = from;
    }
    if (a < d.nextOffset) {
      const b = end < d.nextOffset ? end : d.nextOffset;
      if (a < b) {
        this.old = true;
        if (d.hist !== null) this.compareHistory(d, a, b, p, off);
      }
      a = b;
    }
    if (a >= end) return;
    if (a === d.nextOffset) this.deliverFrom(d, s, off, a, end);
    else this.hold(d, s, off, a, end);
  }

  /** In order: deliver [a, end) of the payload as views, interleaved with held pieces it reaches. */
  private deliverFrom(d: Dir, s: TcpSegment, segOff: number, a: number, end: number): void {
    const p = s.payload;
    const pEnd = segOff + p.length;
    const whole = s.missing === 0;
    let pos = a;
    while (pos < end) {
      let stop = end;
      const h = d.held === null ? null : d.held.first();
      if (h !== null) {
        if (h.off === pos) {
          // Held bytes were here first: they win; ours are only compared.
          const ov = h.end < end ? h.end : end;
          this.old = true;
          this.compareBytes(p, segOff, h.slab.buf, h.off - h.at, pos, ov, h.frame);
          this.popHeld(d);
          pos = d.nextOffset;
          continue;
        }
        if (h.off < end) stop = h.off;
      }
      const data = pos === segOff && stop === pEnd ? p : p.subarray(pos - segOff, stop - segOff);
      this.emit(d, pos, data, s.frame, pos === segOff, stop === pEnd && whole);
      pos = stop;
    }
    this.drain(d);
  }

  /** Out of order: copy the parts of [a, end) not held yet, compare the parts that are. */
  private hold(d: Dir, s: TcpSegment, segOff: number, a: number, end: number): void {
    const p = s.payload;
    const pEnd = segOff + p.length;
    const whole = s.missing === 0;
    const held = (d.held ??= new HoldState());
    let pos = a;
    while (pos < end) {
      const h = held.ceilEnd(pos);
      if (h !== null && h.off <= pos) {
        const ov = h.end < end ? h.end : end;
        this.old = true;
        this.compareBytes(p, segOff, h.slab.buf, h.off - h.at, pos, ov, h.frame);
        pos = ov;
        continue;
      }
      const stop = h !== null && h.off < end ? h.off : end;
      held.insert(this.store(d, p, segOff, pos, stop, s.frame, pos === segOff, stop === pEnd && whole));
      d.heldData += stop - pos;
      pos = stop;
    }
    this.enforce(d, s.frame);
  }

  /** The peer acknowledged up to s.ack: bytes of q below it that were never captured are lost. */
  private acked(q: Dir, s: TcpSegment): void {
    // Only holes already known (data seen beyond them, or a snaplen-cut tail) are declared: an ACK
    // alone, captured a little before the data it covers, must not make a gap.
    if (!q.based || q.ended || q.nextOffset >= q.knownEnd) return;
    const ackOff = q.nextOffset + ((s.ack - q.seqOf(q.nextOffset)) | 0);
    if (ackOff <= q.nextOffset) return;
    this.flushTo(q, ackOff < q.knownEnd ? ackOff : q.knownEnd, 'ack', s.frame);
  }

  // ---- buffers ----

  private charge(d: Dir, cost: number): void {
    if (d.heldCost === 0) {
      d.heldSince = ++this.holdSeq;
      this.holding.add(d);
    }
    d.heldCost += cost;
    d.flow.heldCost += cost;
    this.heldCost += cost;
  }

  private uncharge(d: Dir, cost: number): void {
    d.heldCost -= cost;
    d.flow.heldCost -= cost;
    this.heldCost -= cost;
  }

  /** Copies payload octets [a, b) into d's current slab (a new one when it is full): a held piece. */
  private store(
    d: Dir,
    p: Uint8Array,
    segOff: number,
    a: number,
    b: number,
    frame: number,
    segStart: boolean,
    segEnd: boolean,
  ): Held {
    const from = a - segOff;
    const to = b - segOff;
    const n = to - from;
    let sl = d.slab;
    if (n > this.slabMax / 2) {
      sl = new Slab(n); // a big piece gets its own, exactly sized
      this.charge(d, n);
    } else if (sl === null || sl.used + n > sl.buf.length) {
      if (sl !== null && sl.live === 0) this.dropSlab(d, sl);
      const size = Math.max(d.slabNext, this.slabMin, pow2AtLeast(n));
      d.slabNext = Math.min(size * 2, this.slabMax);
      sl = this.takeSlab(size);
      this.charge(d, size);
      d.slab = sl;
    }
    const at = sl.used;
    sl.buf.set(from === 0 && to === p.length ? p : p.subarray(from, to), at);
    sl.used += n;
    sl.live++;
    this.charge(d, HELD_OVERHEAD);
    return new Held(a, b, sl, at, frame, segStart, segEnd);
  }

  /** A held piece is gone (delivered or dropped); its slab goes when its last piece does. */
  private release(d: Dir, h: Held): void {
    const sl = h.slab;
    this.uncharge(d, HELD_OVERHEAD);
    if (--sl.live > 0) return;
    if (sl === d.slab) sl.used = 0;
    else this.dropSlab(d, sl);
  }

  private dropSlab(d: Dir, sl: Slab): void {
    const size = sl.buf.length;
    this.uncharge(d, size);
    if (d.slab === sl) d.slab = null;
    // Only the power-of-two sizes handed out by store() are pooled.
    const c = Math.log2(size / this.slabMin);
    if (Number.isInteger(c) && c >= 0 && size <= this.slabMax && this.slabPooled + size <= SLAB_POOL_BYTES) {
      sl.used = 0;
      (this.slabPool[c] ??= []).push(sl);
      this.slabPooled += size;
    }
  }

  private takeSlab(size: number): Slab {
    const sl = this.slabPool[Math.log2(size / this.slabMin)]?.pop();
    if (sl === undefined) return new Slab(size);
    this.slabPooled -= size;
    return sl;
  }

  /** No live pieces left: give the slab back and start small again next time. */
  private emptied(d: Dir): void {
    if (d.slab !== null) this.dropSlab(d, d.slab);
    this.holding.delete(d);
    d.held = null; // a burst's queue and bookkeeping are not kept around (slabs start small again)
  }

  /** Reorder window, then the per-flow and total caps: each turns an oldest hole into a gap. */
  private enforce(d: Dir, frame: number): void {
    while (d.heldData >= this.reorderWindow && d.live() > 0) this.skipHole(d, 'reorder-window', frame);
    const fl = d.flow;
    while (fl.heldCost > this.maxPerFlow) {
      const [x, y] = fl.dirs;
      const v = x.live() === 0 ? y : y.live() === 0 ? x : x.heldSince <= y.heldSince ? x : y;
      if (v.live() === 0) break;
      this.skipHole(v, 'flow-cap', frame);
    }
    while (this.heldCost > this.maxTotal) {
      const v = this.holding.values().next().value;
      if (v === undefined) break;
      if (v.live() === 0)
        this.emptied(v); // nothing to give up (should not happen): just stop counting it
      else this.skipHole(v, 'total-cap', frame);
    }
  }

  private skipHole(d: Dir, cause: GapCause, frame: number): void {
    const h = d.held!.first()!;
    this.gap(d, h.off - d.nextOffset, cause, frame);
    this.drain(d);
  }

  /** Delivers everything up to target: held pieces, and gaps for what is missing. */
  private flushTo(d: Dir, target: number, cause: GapCause, frame: number | null): void {
    while (d.nextOffset < target) {
      const h = d.held === null ? null : d.held.first();
      if (h !== null) {
        if (h.off === d.nextOffset) {
          this.popHeld(d);
          continue;
        }
        this.gap(d, (h.off < target ? h.off : target) - d.nextOffset, cause, frame);
      } else {
        this.gap(d, target - d.nextOffset, cause, frame);
      }
    }
    this.drain(d);
  }

  private drain(d: Dir): void {
    for (
      let h = d.held === null ? null : d.held.first();
      h !== null && h.off === d.nextOffset;
      h = d.held === null ? null : d.held.first()
    ) {
      this.popHeld(d);
    }
  }

  private popHeld(d: Dir): void {
    const held = d.held!;
    const h = held.shift();
    d.heldData -= h.end - h.off;
    // Deliver before the slab space can be handed back (and reused).
    this.emit(d, h.off, h.view(), h.frame, h.segStart, h.segEnd);
    this.release(d, h);
    if (held.size === 0) this.emptied(d);
  }

  // ---- output ----

  private emit(d: Dir, off: number, data: Uint8Array, frame: number, segStart: boolean, segEnd: boolean): void {
    d.nextOffset = off + data.length;
    d.delivered += data.length;
    if (this.histOn) {
      const h = d.hist ?? this.attachHistory(d);
      if (h !== null) {
        h.write(off, data, frame);
        d.histUsed = true;
      }
    }
    if (d.consumer !== null) {
      d.consumer.data({ offset: off, seq: d.seqOf(off), data, frame, segmentStart: segStart, segmentEnd: segEnd });
    }
  }

  /** [nextOffset, nextOffset + len) will never arrive. */
  private gap(d: Dir, len: number, cause: GapCause, frame: number | null): void {
    const off = d.nextOffset;
    const seq = d.seqOf(off);
    d.nextOffset = off + len;
    const g = (d.gapLog ??= new GapLog());
    const gaps = g.list;
    if (g.lastEnd === off) {
      if (g.omitted === 0) gaps[gaps.length - 1]!.length += len;
    } else if (gaps.length < MAX_GAPS) {
      gaps.push({ seq, length: len });
    } else {
      g.omitted++;
    }
    g.lastEnd = off + len;
    d.hist?.gap(off);
    // Name the frame that revealed the gap and the one right after it (Wireshark's
    // "previous segment not captured" sits on the latter).
    const frames: number[] = [];
    if (frame !== null) frames.push(frame);
    const next = d.held === null ? null : d.held.first();
    if (next !== null && next.off === off + len && next.frame !== frame) frames.push(next.frame);
    frames.sort((x, y) => x - y);
    const where = `${len} octet(s) at seq ${seq}`;
    if (cause === 'flow-cap' || cause === 'total-cap') {
      this.report('tcp.buffer-cap', d, frames, seq, `${where} given up: ${CAUSE_TEXT[cause]}`);
    } else {
      this.report(
        'tcp.capture-loss',
        d,
        frames,
        seq,
        `previous segment(s) not captured: ${where} missing (${CAUSE_TEXT[cause]})`,
      );
    }
    d.consumer?.gap(off, seq, len);
  }

  private end(d: Dir, reason: EndReason, frame: number | null): void {
    d.ended = true;
    if (reason !== 'eof') {
      d.closed = reason;
      d.flow.closedAny = true;
    }
    // Release what the direction held: nothing more will be delivered.
    d.held?.forEach((h) => {
      this.release(d, h);
    });
    d.heldData = 0;
    if (d.held !== null || d.slab !== null || this.holding.has(d)) this.emptied(d);
    this.detachHistory(d);
    const c = d.consumer;
    d.consumer = null;
    c?.end(reason, frame);
  }

  // ---- history ----

  /**
   * A ring for d: a free one, a new one within the budget, or one taken from a direction that has
   * not delivered since the clock hand last passed it. When every ring is busy, d goes without for
   * a while instead of evicting a busy one (which would leave both with useless history).
   */
  private attachHistory(d: Dir): History | null {
    if (d.delivered < d.histRetryAt) return null;
    let h = this.ringFree.pop() ?? null;
    if (h === null && this.rings.length < this.ringsMax) {
      h = new History(this.histBytes);
      this.rings.push(h);
    }
    // At most one pass (and 8 rings) per attempt: a ring used since the hand last passed is spared.
    const look = Math.min(8, this.rings.length);
    for (let k = 0; h === null && k < look; k++) {
      const c = this.rings[this.hand]!;
      this.hand = (this.hand + 1) % this.rings.length;
      const o = c.owner;
      if (o === null) continue;
      if (o.histUsed) {
        o.histUsed = false;
        continue;
      }
      o.hist = null;
      o.histRetryAt = o.delivered + HIST_BACKOFF * this.histBytes;
      h = c;
    }
    if (h === null) {
      d.histRetryAt = d.delivered + HIST_BACKOFF * this.histBytes;
      return null;
    }
    h.reset();
    h.owner = d;
    d.hist = h;
    return h;
  }

  private detachHistory(d: Dir): void {
    const h = d.hist;
    if (h === null) return;
    h.owner = null;
    this.ringFree.push(h);
    d.hist = null;
  }

  // ---- overlap comparison ----

  /** Compares payload [a, b) (b <= nextOffset) with what was delivered, where history still holds it. */
  private compareHistory(d: Dir, a: number, b: number, p: Uint8Array, segOff: number): void {
    const h = d.hist!;
    if (h.count === 0) return;
    const next = d.nextOffset;
    const lo = Math.max(a, next - h.cap, h.offAt(0));
    if (lo >= b) return;
    const buf = h.buf;
    const cap = h.cap;
    for (let k = h.find(lo); k < h.count; k++) {
      const rs = h.offAt(k);
      if (rs >= b) break;
      const frame = h.frameAt(k);
      if (frame === 0) continue;
      const re = k + 1 < h.count ? h.offAt(k + 1) : next;
      const s0 = rs > lo ? rs : lo;
      const e0 = re < b ? re : b;
      let ri = s0 % cap;
      for (let x = s0; x < e0; x++) {
        if (buf[ri] !== p[x - segOff]) this.conflict(x, frame);
        if (++ri === cap) ri = 0;
      }
    }
  }

  private compareBytes(
    p: Uint8Array,
    pOff: number,
    q: Uint8Array,
    qOff: number,
    a: number,
    b: number,
    frame: number,
  ): void {
    for (let x = a; x < b; x++) {
      if (p[x - pOff] !== q[x - qOff]) this.conflict(x, frame);
    }
  }

  private conflict(off: number, frame: number): void {
    if (this.cfCount === 0) {
      this.cfFirst = off;
      this.cfFrames.length = 0;
    }
    this.cfCount++;
    if (!this.cfFrames.includes(frame)) this.cfFrames.push(frame);
  }

  private reportConflict(d: Dir, frame: number): void {
    const frames = this.cfFrames.includes(frame) ? [...this.cfFrames] : [...this.cfFrames, frame];
    frames.sort((x, y) => x - y);
    const seq = d.seqOf(this.cfFirst);
    this.report(
      'tcp.overlap-conflict',
      d,
      frames,
      seq,
      `${this.cfCount} retransmitted octet(s) differ from the first copy, first at seq ${seq}; the first copy is kept`,
    );
  }

  private report(rule: string, d: Dir, frames: number[], seq: number, message: string): void {
    this.sink.report(rule, { flow: d.flow.id, from: d.from, frames, seq, message });
  }
}

function stats(d: Dir): TcpDirectionStats {
  return {
    from: d.from,
    to: d.to,
    bytes: d.delivered + d.heldData,
    segments: d.segments,
    retransmissions: d.retransmissions,
    gaps: d.gapLog === null ? [] : d.gapLog.list.map((g) => ({ seq: g.seq, length: g.length })),
    gapsOmitted: d.gapLog === null ? 0 : d.gapLog.omitted,
    mss: d.mss,
    closed: d.closed,
  };
}
