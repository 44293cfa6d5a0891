/**
 * Puts the pipeline's streaming callbacks back together as the user reads them: each startup frame
 * or FPDU with the findings raised on it (as Wireshark shows a packet with its expert infos), and
 * findings that belong to no record (a TCP close, a gap, a read error) on their own.
 *
 * Findings about an FPDU are reported while it is framed, just before the pipeline hands the FPDU
 * out; findings about a startup frame come right after it. Both happen while the same packet is
 * decoded, so everything is settled at the next packet boundary (time()): a record is held at most
 * until then, and a finding that found no record by then is emitted on its own. A finding that
 * can name no record (no flow or no sequence number) is emitted at once. Nothing accumulates: at
 * any moment the assembler holds one record and the findings of the packet being decoded.
 *
 * With `live` (-l), what is held is also emitted as soon as the current batch of packets has been
 * decoded (a microtask), so the last event of a burst is not held back until the next packet.
 */
import type { Finding } from '../vocabulary/findings.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import type { TufRecord } from '../../dissectors/tuf/types.js';

/** A record the outputs show: an MPA startup frame or FPDU, or a TUF framing PDU / marker-mode PDU. */
export type MpaRecord = StartupRecord | FpduRecord | TufRecord;

export interface EventGroup {
  /** The startup frame or FPDU, or null for a finding that belongs to no record. */
  readonly record: MpaRecord | null;
  /** Findings raised on the record (or the one standalone finding), in the order reported. */
  readonly findings: Finding[];
  /** Timestamp of the packet being read when the record (or finding) was produced. */
  readonly tsSec: number;
  readonly tsNsec: number;
  /** Frame number of the packet being read then (0 before the first packet): orders frameless findings. */
  readonly atFrame?: number;
}

export function isFpdu(r: MpaRecord): r is FpduRecord {
  return r.kind === 'fpdu';
}

export function isTuf(r: MpaRecord): r is TufRecord {
  return r.kind === 'tuf';
}

export function isStartup(r: MpaRecord): r is StartupRecord {
  return r.kind === 'request' || r.kind === 'reply';
}

/** A finding is about a record when it names the same flow, sender and sequence number. */
function belongs(f: Finding, r: MpaRecord): boolean {
  return f.seq === r.seq && f.flow === r.flow && f.from === r.from;
}

interface Pending {
  f: Finding;
  tsSec: number;
  tsNsec: number;
  atFrame: number;
}

export class EventAssembler {
  private open: { record: MpaRecord; findings: Finding[]; tsSec: number; tsNsec: number; atFrame: number } | null =
    null;
  private pending: Pending[] = [];
  private tsSec = 0;
  private tsNsec = 0;
  private frame = 0;
  private scheduled = false;
  /** An error thrown by emit from the microtask (an output error), rethrown on the next call. */
  private failure: unknown = null;

  constructor(
    private readonly emit: (g: EventGroup) => void,
    private readonly live = false,
  ) {}

  /** A new packet is being decoded (its timestamp and frame number): what the last one produced is settled. */
  time(sec: number, nsec: number, frame = this.frame + 1): void {
    this.rethrow();
    this.settle();
    this.tsSec = sec;
    this.tsNsec = nsec;
    this.frame = frame;
    if (this.live && !this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => {
        this.scheduled = false;
        try {
          this.settle();
        } catch (e) {
          this.failure ??= e;
        }
      });
    }
  }

  finding(f: Finding): void {
    this.rethrow();
    const o = this.open;
    if (o && belongs(f, o.record)) {
      o.findings.push(f);
    } else if (f.flow === null || f.seq === null) {
      // It can belong to no record: out now (after the record before it), so none pile up.
      this.flushOpen();
      this.flushPending();
      this.emit({ record: null, findings: [f], tsSec: this.tsSec, tsNsec: this.tsNsec, atFrame: this.frame });
    } else {
      this.pending.push({ f, tsSec: this.tsSec, tsNsec: this.tsNsec, atFrame: this.frame });
    }
  }

  record(r: MpaRecord): void {
    this.rethrow();
    const held = this.pending;
    this.pending = [];
    this.flushOpen();
    const mine: Finding[] = [];
    for (const p of held) {
      if (belongs(p.f, r)) mine.push(p.f);
      else this.emit({ record: null, findings: [p.f], tsSec: p.tsSec, tsNsec: p.tsNsec, atFrame: p.atFrame });
    }
    this.open = { record: r, findings: mine, tsSec: this.tsSec, tsNsec: this.tsNsec, atFrame: this.frame };
  }

  /** Emits what is still held (call once, at the end of the capture). */
  end(): void {
    this.rethrow();
    this.settle();
  }

  private rethrow(): void {
    if (this.failure !== null) {
      const e = this.failure;
      this.failure = null;
      throw e;
    }
  }

  private settle(): void {
    this.flushOpen();
    this.flushPending();
  }

  private flushPending(): void {
    if (this.pending.length === 0) return;
    const held = this.pending;
    this.pending = [];
    for (const p of held)
      this.emit({ record: null, findings: [p.f], tsSec: p.tsSec, tsNsec: p.tsNsec, atFrame: p.atFrame });
  }

  private flushOpen(): void {
    const o = this.open;
    if (!o) return;
    this.open = null;
    this.emit(o);
  }
}

/** The frame an event group is shown at: its record's first frame, else its finding's, else the packet being read. */
export function groupFrame(g: EventGroup): number {
  if (g.record) return g.record.frames[0] ?? g.atFrame ?? 0;
  const f = g.findings[0];
  if (!f || f.frames.length === 0) return g.atFrame ?? 0;
  let min = Infinity;
  for (const x of f.frames) if (x < min) min = x; // no spread: a finding may name 100,000 frames
  return min;
}

/**
 * Puts formatted events back in capture order (by first frame), holding at most `window` of them.
 * A dissector that frames a flow only once it has seen enough of it (mid-stream lock-on) hands
 * out frames 1-2 after frame 16; within the window they still come out first. Equal frames keep
 * their arrival order. Beyond the window the oldest goes out, so memory stays bounded.
 */
export class CaptureOrder<T> {
  private heap: Array<{ key: number; n: number; v: T }> = [];
  private n = 0;

  constructor(
    private readonly out: (v: T) => void,
    private readonly window = 4096,
  ) {}

  push(key: number, v: T): void {
    this.heap.push({ key, n: this.n++, v });
    this.up(this.heap.length - 1);
    if (this.heap.length > this.window) this.out(this.pop());
  }

  /** Emits everything held, in order. */
  drain(): void {
    while (this.heap.length) this.out(this.pop());
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a]!;
    const y = this.heap[b]!;
    return x.key < y.key || (x.key === y.key && x.n < y.n);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      [this.heap[i], this.heap[p]] = [this.heap[p]!, this.heap[i]!];
      i = p;
    }
  }

  private pop(): T {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && this.less(l, m)) m = l;
        if (r < h.length && this.less(r, m)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top.v;
  }
}
