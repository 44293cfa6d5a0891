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
 *
 * Events nearly always come in order: those that do (key at or past the last one queued) wait in
 * a FIFO ring, the few that come early go into a binary heap, and the smaller of the two heads
 * (by key, then arrival) goes out. That is the order one heap over all gives, at O(1) per event in
 * order and with no object per event: keys, arrival numbers and values sit in parallel arrays.
 */
export class CaptureOrder<T> {
  private readonly cap: number;
  // The in-order run: a ring of `size` entries from `head`.
  private readonly qKey: Float64Array;
  private readonly qN: Float64Array;
  private readonly qV: Array<T | undefined>;
  private head = 0;
  private size = 0;
  // The early ones: a binary min-heap of `hLen` entries.
  private readonly hKey: Float64Array;
  private readonly hN: Float64Array;
  private readonly hV: Array<T | undefined>;
  private hLen = 0;
  private n = 0;

  constructor(
    private readonly out: (v: T) => void,
    private readonly window = 4096,
  ) {
    // At most window + 1 are held at once (one pushed, then the smallest goes out).
    this.cap = Math.max(1, Math.floor(window)) + 1;
    this.qKey = new Float64Array(this.cap);
    this.qN = new Float64Array(this.cap);
    this.qV = new Array<T | undefined>(this.cap).fill(undefined);
    this.hKey = new Float64Array(this.cap);
    this.hN = new Float64Array(this.cap);
    this.hV = new Array<T | undefined>(this.cap).fill(undefined);
  }

  push(key: number, v: T): void {
    const n = this.n++;
    if (this.size === 0 || key >= this.qKey[(this.head + this.size - 1) % this.cap]!) {
      const t = (this.head + this.size) % this.cap;
      this.qKey[t] = key;
      this.qN[t] = n;
      this.qV[t] = v;
      this.size++;
    } else this.heapPush(key, n, v);
    if (this.size + this.hLen > this.window) this.out(this.pop());
  }

  /** Emits everything held, in order. */
  drain(): void {
    while (this.size + this.hLen > 0) this.out(this.pop());
  }

  private pop(): T {
    const h = this.head;
    if (
      this.hLen === 0 ||
      (this.size > 0 && (this.qKey[h]! < this.hKey[0]! || (this.qKey[h] === this.hKey[0] && this.qN[h]! < this.hN[0]!)))
    ) {
      const v = this.qV[h] as T;
      this.qV[h] = undefined;
      this.head = (h + 1) % this.cap;
      this.size--;
      return v;
    }
    return this.heapPop();
  }

  private less(a: number, b: number): boolean {
    const x = this.hKey[a]!;
    const y = this.hKey[b]!;
    return x < y || (x === y && this.hN[a]! < this.hN[b]!);
  }

  private swap(a: number, b: number): void {
    const k = this.hKey[a]!;
    this.hKey[a] = this.hKey[b]!;
    this.hKey[b] = k;
    const n = this.hN[a]!;
    this.hN[a] = this.hN[b]!;
    this.hN[b] = n;
    const v = this.hV[a];
    this.hV[a] = this.hV[b];
    this.hV[b] = v;
  }

  private heapPush(key: number, n: number, v: T): void {
    let i = this.hLen++;
    this.hKey[i] = key;
    this.hN[i] = n;
    this.hV[i] = v;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private heapPop(): T {
    const top = this.hV[0] as T;
    const last = --this.hLen;
    if (last > 0) {
      this.hKey[0] = this.hKey[last]!;
      this.hN[0] = this.hN[last]!;
      this.hV[0] = this.hV[last];
    }
    this.hV[last] = undefined;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.hLen && this.less(l, m)) m = l;
      if (r < this.hLen && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }
}
