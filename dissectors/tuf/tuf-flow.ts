/**
 * ULP Framing for TCP on one TCP connection: per direction, holds octets while it looks for
 * framing (detect.ts), then frames them in the mode found (alignment.ts, markers.ts). Emits
 * nothing (no record, no finding) until the flow is claimed: the owner says whether it may be
 * TUF (a flow is TUF or MPA, never both), so a flow it gives up on leaves no trace.
 */
import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { DirectionConsumer, EndReason, FlowConsumer, FlowHandle, StreamChunk } from '../../src/tcp/stream.js';
import { AlignmentFramer, trivialKey } from './alignment.js';
import type { DirectionContext } from './context.js';
import { findChain, findMarkerGrid, GRID_BUDGET, GridSearch, type Foreign } from './detect.js';
import { Hold } from './hold.js';
import { MarkerFramer } from './markers.js';
import {
  HEADER_LEN,
  keyHex,
  type ForcedTuf,
  type TufDirectionSummary,
  type TufFlowSummary,
  type TufMode,
  type TufRecord,
} from './types.js';

export type { ForcedTuf, TufFlowSummary, TufRecord } from './types.js';

export interface TufFlowOptions {
  forced?: ForcedTuf;
  /** A candidate framing PDU that is another protocol's (an MPA FPDU whose CRC verifies). */
  foreign?: Foreign;
  onClosed?: (f: TufFlow) => void;
  onRecord?: (r: TufRecord) => void;
}

/**
 * Could framing start at this chunk? It must start a segment and open like a framing header (a
 * Length of at least 1 and a key that is not six equal octets: a random 48-bit key practically
 * never is, and text or padding often is) or like a first marker (four zero octets, not followed
 * by more zeros).
 */
function couldStartFraming(c: StreamChunk): boolean {
  const b = c.data;
  if (!c.segmentStart) return false;
  if (b.length < HEADER_LEN) return true; // too short to tell
  if (b[0] === 0 && b[1] === 0 && b[2] === 0 && b[3] === 0) {
    for (let i = 4; i < Math.min(b.length, 64); i++) if (b[i] !== 0) return true;
    return b.length < 64;
  }
  if (((b[0]! << 8) | b[1]!) === 0) return false;
  for (let i = 3; i < HEADER_LEN; i++) if (b[i] !== b[2]) return true;
  return false;
}

/** Shared empty list (never pushed to): a direction gets its own on its first segment. */
const NO_STARTS: number[] = [];

/** Octets a direction holds while looking for framing; beyond it only the segment test goes on. */
const HOLD_LIMIT = 256 * 1024;
/** Stream octets after which an unframed direction stops looking. */
const LOOK_LIMIT = 4 * 1024 * 1024;
/** Segments that pass the receiver's test under one key before that key is believed. */
const PASSES_NEEDED = 3;
/** Held octets between two searches for a chain or a marker grid. */
const SEARCH_STEP = 8 * 1024;

type State = 'look' | 'frame' | 'off';

class TufDirection implements DirectionConsumer, DirectionContext {
  readonly hold = new Hold();
  state: State = 'look';
  align: AlignmentFramer | null = null;
  markers: MarkerFramer | null = null;
  private tally: Map<number, { n: number; first: number }> | null = null;
  /** Whole segment starts held while looking (candidates for where framing starts). */
  private starts: number[] = NO_STARTS;
  private lastSearch = 0;
  private seen = 0;
  /** The marker-grid search's budget and memory; made on the first search that needs it. */
  private grid: GridSearch | null = null;
  /** Where the marker-grid search gave up (stream offset), until said. */
  private gaveUpAt: number | null = null;
  private baseSeq = 0;
  private ended = false;
  readonly from: string;
  readonly to: string;
  readonly flow: number;

  constructor(
    private readonly owner: TufFlow,
    readonly dir: 0 | 1,
  ) {
    const info = owner.handle.info(dir);
    this.from = info.from;
    this.to = info.to;
    this.flow = owner.handle.id;
  }

  seqOf(offset: number): number {
    return (this.baseSeq + offset) >>> 0;
  }

  emit(rec: TufRecord): void {
    this.owner.record(rec);
  }

  find(rule: string, seq: number | null, frames: readonly number[], message: string): void {
    this.owner.find(this, rule, seq, frames, message);
  }

  data(c: StreamChunk): void {
    if (this.state === 'off' || this.owner.abandoned) return;
    this.baseSeq = (c.seq - c.offset) >>> 0;
    const h = this.hold;
    h.append(c.offset, c.data, c.frame);
    const a = c.offset;
    const b = c.offset + c.data.length;
    const whole = c.segmentStart && c.segmentEnd;
    this.seen += c.data.length;
    this.grid?.offer(c.data.length);
    if (this.state === 'frame') {
      const al = this.align;
      if (al) {
        const passed = whole && al.testSegment(a, b);
        al.advance(b, false);
        if (whole) al.classify(a, b, c.frame, passed);
      } else this.markers!.advance(false);
      return;
    }
    this.look(a, b, whole, false);
  }

  private look(a: number, b: number, whole: boolean, final: boolean): void {
    const h = this.hold;
    const mode = this.owner.mode;
    const forced = this.owner.forced;
    if (whole && this.starts.length < 64 && a >= h.base) {
      if (this.starts === NO_STARTS) this.starts = [a];
      else this.starts.push(a);
    }
    if (whole && mode !== 'markers' && !forced) this.testForKey(a, b);
    if (this.state !== 'look') return;
    if (final || h.length - this.lastSearch >= SEARCH_STEP || forced) {
      this.lastSearch = h.length;
      this.search(final);
      if (this.state !== 'look') return;
    }
    if (h.length > HOLD_LIMIT) {
      h.reset(h.end);
      this.starts = NO_STARTS;
      this.lastSearch = 0;
      this.grid?.forget();
    }
    if (this.seen > LOOK_LIMIT && !forced) {
      this.state = 'off';
      h.reset(h.end);
    }
  }

  /** The receiver's test (§5.4) without a key yet: a key that recurs across passing segments. */
  private testForKey(a: number, b: number): void {
    const h = this.hold;
    if (b - a <= HEADER_LEN || !h.has(a, b) || h.u16(a) !== b - a - HEADER_LEN) return;
    const k = h.u48(a + 2);
    if (trivialKey(k)) return;
    const foreign = this.owner.opts.foreign;
    if (foreign?.(h.view(a, b))) return;
    const tally = (this.tally ??= new Map());
    const t = tally.get(k);
    if (t) t.n++;
    else if (tally.size < 32) tally.set(k, { n: 1, first: a });
    const n = t ? t.n : 1;
    if (n >= PASSES_NEEDED) {
      const first = t ? t.first : a;
      // Framing may have started before the first passing segment: the earliest start that chains to it.
      let start = first;
      for (const s of this.starts) {
        if (s >= first || s < h.base) continue;
        let p = s;
        while (p + HEADER_LEN <= first && h.u48(p + 2) === k && h.u16(p) > 0) p += HEADER_LEN + h.u16(p);
        if (p === first) {
          start = s;
          break;
        }
      }
      this.begin('alignment', start, k, 0);
    }
  }

  private search(final: boolean): void {
    const h = this.hold;
    const mode = this.owner.mode;
    const f = this.owner.forced;
    const fs = f ? f.start[this.dir] : null;
    const startOff = fs !== null ? h.base + ((fs - this.seqOf(h.base)) | 0) : null;
    if (startOff !== null && startOff < h.base) return; // before what was captured: nothing to anchor
    const cands =
      startOff !== null ? [startOff] : h.base === 0 && !this.starts.includes(0) ? [0, ...this.starts] : this.starts;
    if (mode !== 'markers' && (!f || f.mode === 'alignment')) {
      const c = findChain(h, cands, final, f ? f.key[this.dir] : null, f ? null : (this.owner.opts.foreign ?? null));
      if (c) {
        this.begin('alignment', c.start, c.key, 0);
        return;
      }
    }
    if (mode !== 'alignment' && (!f || f.mode === 'markers')) {
      if (f && startOff !== null && f.interval !== null) {
        if (startOff < h.end) this.begin('markers', startOff, 0, f.interval);
        return;
      }
      if (this.grid !== null && this.grid.spent >= this.grid.granted) return; // until more octets grant more
      if (this.grid === null) {
        this.grid = new GridSearch();
        this.grid.offer(this.seen);
      }
      const g = findMarkerGrid(h, cands, f ? f.interval : null, this.grid);
      if (g) this.begin('markers', g.start, 0, g.interval);
      else if (this.grid.exhausted && !this.grid.reported) {
        this.grid.reported = true;
        this.gaveUpAt = h.end;
        this.sayGaveUp();
      }
    }
  }

  /**
   * tuf.marker-search-budget, once, when the flow is TUF (forced, or claimed by either direction):
   * on other TCP payload the search stops quietly, as a flow TUF gives up on leaves no trace.
   */
  sayGaveUp(): void {
    const at = this.gaveUpAt;
    if (at === null || !(this.owner.claimed || this.owner.forced) || this.owner.abandoned) return;
    this.gaveUpAt = null;
    const g = this.grid!;
    this.owner.find(
      this,
      'tuf.marker-search-budget',
      this.seqOf(at),
      this.hold.has(at - 1, at) ? this.hold.framesIn(at - 1, at) : [],
      `marker-grid search gave up at seq ${this.seqOf(at)} after ${g.spent} units of work (budget ${GRID_BUDGET.initial} + ${GRID_BUDGET.perOctet} per octet); it goes on as more octets arrive`,
    );
  }

  private begin(mode: TufMode, start: number, key: number, interval: number): void {
    if (!this.owner.claimFor(mode)) {
      this.state = 'off';
      this.hold.reset(this.hold.end);
      return;
    }
    this.state = 'frame';
    this.tally = null;
    const h = this.hold;
    h.dropBefore(start);
    if (mode === 'alignment') {
      const al = (this.align = new AlignmentFramer(this, key, start));
      // Replay what was held: segment by segment, as if it arrived now.
      const segs = this.starts.filter((s) => s >= start);
      for (let i = 0; i < segs.length; i++) {
        const a = segs[i]!;
        const b = i + 1 < segs.length ? segs[i + 1]! : h.end;
        const passed = al.testSegment(a, b);
        al.advance(b, false);
        if (h.framesIn(a, b).length === 1) al.classify(a, b, h.frameAt(a), passed);
      }
      al.advance(h.end, false);
    } else {
      this.markers = new MarkerFramer(this, start, interval, this.owner.forced !== null);
      this.markers.advance(false);
    }
    this.starts = NO_STARTS;
  }

  gap(offset: number, _seq: number, length: number): void {
    if (this.state === 'look') {
      this.hold.reset(offset + length);
      this.starts = NO_STARTS;
      this.lastSearch = 0;
      this.grid?.forget();
      return;
    }
    if (this.state !== 'frame') return;
    this.hold.reset(offset + length);
    this.align?.gap(offset + length);
    this.markers?.gap(offset + length);
  }

  end(reason: EndReason, _frame: number | null): void {
    if (this.ended) return;
    this.ended = true;
    if (this.state === 'look' && !this.owner.abandoned && this.hold.length > 0)
      this.look(this.hold.end, this.hold.end, false, true);
    if (this.state === 'frame' && !this.owner.abandoned) {
      this.align?.advance(this.hold.end, true);
      this.align?.finish();
      this.markers?.advance(true);
      this.markers?.finish(reason === 'fin');
    }
    this.hold.release();
    this.owner.directionEnded();
  }

  summary(mode: TufMode): TufDirectionSummary {
    const al = this.align;
    const mk = this.markers;
    const a = mode === 'alignment';
    return {
      from: this.from,
      to: this.to,
      key: al ? keyHex(al.key) : null,
      start: al ? this.seqOf(al.start) : mk ? this.seqOf(mk.start) : null,
      framingPdus: a ? (al?.framingPdus ?? 0) : null,
      alignedSegments: a ? (al?.alignedSegments ?? 0) : null,
      unalignedSegments: a ? (al?.unalignedSegments ?? 0) : null,
      interval: a ? null : (mk?.interval ?? null),
      markers: a ? null : (mk?.markers ?? 0),
      pdus: a ? null : (mk?.pdus ?? 0),
      splitMarkers: a ? null : (mk?.splitMarkers ?? 0),
    };
  }
}

export class TufFlow implements FlowConsumer {
  private slots: readonly [DirectionConsumer, DirectionConsumer] | null = null;
  private dir0: TufDirection | null = null;
  private dir1: TufDirection | null = null;
  mode: TufMode | null = null;
  claimed = false;
  abandoned = false;
  readonly forced: ForcedTuf | null;
  private endedCount = 0;
  /** Asked once, when framing is first found: may this flow be TUF? false abandons it for good. */
  claimer: { claimForTuf(): boolean } | null = null;

  constructor(
    readonly handle: FlowHandle,
    private readonly sink: FindingSink,
    readonly opts: TufFlowOptions = {},
  ) {
    this.forced = opts.forced ?? null;
    if (this.forced) this.mode = this.forced.mode;
  }

  /** What the reassembler feeds when this flow is its consumer (--tuf); the tee calls data() etc. directly. */
  get directions(): readonly [DirectionConsumer, DirectionConsumer] {
    return (this.slots ??= [new Slot(this, 0), new Slot(this, 1)]);
  }

  data(dir: 0 | 1, c: StreamChunk): void {
    // No state for a direction until a segment could start framing: 100,000 flows of text keep none.
    if ((dir === 0 ? this.dir0 : this.dir1) === null && !this.forced && !couldStartFraming(c)) return;
    this.direction(dir).data(c);
  }

  gap(dir: 0 | 1, offset: number, seq: number, length: number): void {
    this.direction(dir).gap(offset, seq, length);
  }

  /** A direction that never carried an octet ends without state being made for it. */
  end(dir: 0 | 1, reason: EndReason, frame: number | null): void {
    if ((dir === 0 ? this.dir0 : this.dir1) === null) this.directionEnded();
    else this.direction(dir).end(reason, frame);
  }

  /** A direction's state, created on its first event (a flow whose server never sends keeps none). */
  direction(dir: 0 | 1): TufDirection {
    const have = dir === 0 ? this.dir0 : this.dir1;
    if (have) return have;
    const d = new TufDirection(this, dir);
    if (dir === 0) this.dir0 = d;
    else this.dir1 = d;
    return d;
  }

  get isTuf(): boolean {
    return this.claimed;
  }

  /** Framing was found in one direction: the flow becomes TUF if the owner lets it. */
  claimFor(mode: TufMode): boolean {
    if (this.abandoned) return false;
    if (this.claimed) return mode === this.mode;
    if (this.claimer && !this.claimer.claimForTuf()) {
      this.abandoned = true;
      return false;
    }
    this.claimed = true;
    this.mode = mode;
    // A direction whose marker search gave up before the flow was TUF says so now.
    this.dir0?.sayGaveUp();
    this.dir1?.sayGaveUp();
    return true;
  }

  /** The owner gave the flow to another dissector: nothing more is looked at or said. */
  abandon(): void {
    this.abandoned = true;
  }

  record(r: TufRecord): void {
    if (this.claimed && !this.abandoned) this.opts.onRecord?.(r);
  }

  find(d: TufDirection, rule: string, seq: number | null, frames: readonly number[], message: string): void {
    if (!(this.claimed || (this.forced && rule === 'tuf.marker-search-budget')) || this.abandoned) return;
    this.sink.report(rule, {
      flow: this.handle.id,
      from: d.from,
      frames: [...new Set(frames)].sort((a, b) => a - b),
      seq,
      message,
    });
  }

  directionEnded(): void {
    if (++this.endedCount === 2) this.opts.onClosed?.(this);
  }

  summary(): TufFlowSummary | null {
    if (!this.claimed || this.abandoned || this.mode === null) return null;
    return {
      mode: this.mode,
      detection: this.forced ? 'forced' : 'heuristic',
      directions: [this.direction(0).summary(this.mode), this.direction(1).summary(this.mode)],
    };
  }
}

/** What the reassembler (or the tee) feeds: the direction's state is made on its first event. */
class Slot implements DirectionConsumer {
  constructor(
    private readonly flow: TufFlow,
    private readonly dir: 0 | 1,
  ) {}

  data(c: StreamChunk): void {
    this.flow.data(this.dir, c);
  }

  gap(offset: number, seq: number, length: number): void {
    this.flow.gap(this.dir, offset, seq, length);
  }

  end(reason: EndReason, frame: number | null): void {
    this.flow.end(this.dir, reason, frame);
  }
}
