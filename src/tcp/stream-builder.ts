/**
 * Per-direction stream building, the hot path: a segment's payload, FIN and RST become in-order
 * deliveries to the direction's consumer, held out-of-order pieces, gaps (with their findings) and
 * an end. Every position is a stream offset; a wire sequence number is turned into one by its signed
 * 32-bit distance from the next expected sequence number, so wrap-around needs no special case.
 */
import { TCP_ACK, TCP_FIN, TCP_RST, TCP_SYN, type TcpSegment } from '../net/segment.js';
import type { FindingSink } from '../vocabulary/findings.js';
import { type Dir, type Flow, GapLog } from './direction.js';
import { MAX_GAPS } from './flow-stats.js';
import type { HeldMemory } from './held-memory.js';
import { HoldState } from './held-pieces.js';
import type { HistoryRings } from './history.js';
import { OverlapCheck } from './overlap.js';
import type { EndReason } from './stream.js';

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

export class StreamBuilder {
  private readonly overlap = new OverlapCheck();
  /** Per-segment scratch (reset at the start of segment()): the segment repeated sequence space. */
  private old = false;

  constructor(
    private readonly sink: FindingSink,
    private readonly mem: HeldMemory,
    private readonly rings: HistoryRings,
    private readonly histOn: boolean,
    private readonly reorderWindow: number,
    private readonly maxPerFlow: number,
    private readonly maxTotal: number,
  ) {}

  /** One segment of direction d (the flow table found or opened d). */
  segment(d: Dir, s: TcpSegment): void {
    const f = s.flags;
    d.segments++;
    this.old = false;
    this.overlap.count = 0;

    let keepalive = false;
    if (f & TCP_RST && d.flow.resetFrame === null) d.flow.resetFrame = s.frame;
    if (f & TCP_SYN) this.syn(d, s);
    // What the peer acknowledged was sent before this segment: its held octets (and the hole the
    // ACK declares lost) go out before this segment's payload, so the layers above see a request
    // before the response that acknowledges it.
    if (f & TCP_ACK) this.acked(d.flow.dirs[1 - d.index]!, s);
    if (s.payload.length > 0 || s.missing > 0 || (f & (TCP_FIN | TCP_RST)) !== 0) {
      keepalive = this.carry(d, s, (f & TCP_SYN) !== 0 ? (s.seq + 1) >>> 0 : s.seq);
    }
    if (this.overlap.count > 0) this.reportConflict(d, s.frame);
    if (this.old && !keepalive) d.retransmissions++;
  }

  /** Ends every direction of a flow still open (end of capture, or its 4-tuple was reused). */
  closeFlow(fl: Flow): void {
    for (const d of fl.dirs) {
      if (d.ended) continue;
      this.flushTo(d, d.knownEnd, 'eof', null);
      this.end(d, 'eof', null);
    }
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
        this.mem.release(d, h);
      } else {
        h.end = from;
        h.segEnd = false;
      }
    }
    if (held !== null && held.size === 0) this.mem.emptied(d);
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
        if (d.hist !== null) this.overlap.compareHistory(d, a, b, p, off);
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
          this.overlap.compareBytes(p, segOff, h.slab.buf, h.off - h.at, pos, ov, h.frame);
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
    if (!whole && end === pEnd && d.nextOffset === pEnd) this.snapCut(d, s);
    this.drain(d);
  }

  /**
   * The segment just delivered had its tail cut by the capture's snaplen: its octets were sent (the IP
   * length says how many), so the stream goes on right after them. Passed on at once as a cut (no
   * finding per segment: tcp.snaplen-cut sums them up once per direction).
   */
  private snapCut(d: Dir, s: TcpSegment): void {
    const off = d.nextOffset;
    let len = s.missing;
    const h = d.held === null ? null : d.held.first();
    if (h !== null && h.off < off + len) len = h.off - off; // a copy of them was captured after all
    if (d.limit >= 0 && off + len > d.limit) len = d.limit - off;
    if (len <= 0) return;
    const g = (d.gapLog ??= new GapLog());
    if (g.snapCuts++ === 0) {
      g.snapFrame = s.frame;
      g.snapSeq = d.seqOf(off);
    }
    g.snapOctets += len;
    if (s.payload.length > g.snapKept) g.snapKept = s.payload.length;
    d.nextOffset = off + len;
    d.hist?.gap(off);
    d.consumer?.gap(off, d.seqOf(off), len, true);
  }

  /** Out of order: copy the parts of [a, end) not held yet, compare the parts that are. */
  private hold(d: Dir, s: TcpSegment, segOff: number, a: number, end: number): void {
    const p = s.payload;
    const pEnd = segOff + p.length;
    const whole = s.missing === 0;
    const held = (d.held ??= new HoldState());
    const mem = this.mem;
    let pos = a;
    while (pos < end) {
      const h = held.ceilEnd(pos);
      if (h !== null && h.off <= pos) {
        const ov = h.end < end ? h.end : end;
        this.old = true;
        this.overlap.compareBytes(p, segOff, h.slab.buf, h.off - h.at, pos, ov, h.frame);
        pos = ov;
        continue;
      }
      const stop = h !== null && h.off < end ? h.off : end;
      held.insert(mem.store(d, p, segOff, pos, stop, s.frame, pos === segOff, stop === pEnd && whole));
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

  // ---- holes and caps ----

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
    while (this.mem.heldCost > this.maxTotal) {
      const v = this.mem.holding.values().next().value;
      if (v === undefined) break;
      if (v.live() === 0)
        this.mem.emptied(v); // nothing to give up (should not happen): just stop counting it
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
    this.mem.release(d, h);
    if (held.size === 0) this.mem.emptied(d);
  }

  // ---- output ----

  private emit(d: Dir, off: number, data: Uint8Array, frame: number, segStart: boolean, segEnd: boolean): void {
    d.nextOffset = off + data.length;
    d.delivered += data.length;
    if (this.histOn) {
      const h = d.hist ?? this.rings.attach(d);
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
    const g = d.gapLog;
    if (g !== null && g.snapCuts > 0) {
      this.report(
        'tcp.snaplen-cut',
        d,
        [g.snapFrame],
        g.snapSeq,
        `${g.snapCuts} segment(s) cut by the capture's snaplen (at most ${g.snapKept} payload octets kept), ${g.snapOctets} octet(s) not captured, the first in frame ${g.snapFrame}; checks that need them were skipped`,
      );
    }
    if (reason !== 'eof') {
      d.closed = reason;
      d.flow.closedAny = true;
    }
    // Release what the direction held: nothing more will be delivered.
    d.held?.forEach((h) => {
      this.mem.release(d, h);
    });
    d.heldData = 0;
    if (d.held !== null || d.slab !== null || this.mem.holding.has(d)) this.mem.emptied(d);
    this.rings.detach(d);
    const c = d.consumer;
    d.consumer = null;
    c?.end(reason, frame);
  }

  private reportConflict(d: Dir, frame: number): void {
    const ov = this.overlap;
    const frames = ov.frames.includes(frame) ? [...ov.frames] : [...ov.frames, frame];
    frames.sort((x, y) => x - y);
    const seq = d.seqOf(ov.first);
    this.report(
      'tcp.overlap-conflict',
      d,
      frames,
      seq,
      `${ov.count} retransmitted octet(s) differ from the first copy, first at seq ${seq}; the first copy is kept`,
    );
  }

  private report(rule: string, d: Dir, frames: number[], seq: number, message: string): void {
    this.sink.report(rule, { flow: d.flow.id, from: d.from, frames, seq, message });
  }
}
