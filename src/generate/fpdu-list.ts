/**
 * The FPDUs one direction of a knob-driven connection will send, planned without their octets: per
 * FPDU its ULPDU's length, the round (request/answer turn) it belongs to, what RDMAP message it is
 * part of, all kept per message; per message a recipe that makes its DDP segments again (payload
 * from its seed) when the stream reaches it. A gigabyte of messages is a few thousand records here.
 */
import type { MessageKind } from './knobs.js';
import type { FpduFault } from './mpa-encoder.js';

export type FpduKind = MessageKind | 'rtr' | 'read-response' | 'atomic-response';

/** A message: its FPDUs are [first, first + count); FPDU first + k carries DDP segment k. */
interface Message {
  first: number;
  count: number;
  round: number;
  kind: FpduKind;
  /** Segment k's ULPDU length. */
  length: (k: number) => number;
  recipe: () => Uint8Array[];
}

export class FpduList {
  private readonly messages: Message[] = [];
  private total = 0;
  /** One-FPDU faults by index (at most a few). */
  readonly faults = new Map<number, FpduFault>();
  /** The message found last (lookups mostly walk the FPDUs in order). */
  private hit = 0;
  private cachedMsg = -1;
  private cached: Uint8Array[] = [];

  get length(): number {
    return this.total;
  }

  /**
   * A message of `count` DDP segments (segment k's ULPDU `length(k)` octets long), made again by
   * `recipe` when its octets are needed.
   */
  add(count: number, length: (k: number) => number, round: number, kind: FpduKind, recipe: () => Uint8Array[]): void {
    this.messages.push({ first: this.total, count, round, kind, length, recipe });
    this.total += count;
  }

  /** A message of one ULPDU already made. */
  addOne(ulpdu: Uint8Array, round: number, kind: FpduKind): void {
    const n = ulpdu.length;
    this.add(
      1,
      () => n,
      round,
      kind,
      () => [ulpdu],
    );
  }

  /** Index of the message FPDU i belongs to. */
  private messageOf(i: number): number {
    const ms = this.messages;
    const h = ms[this.hit];
    if (h && i >= h.first && i < h.first + h.count) return this.hit;
    const n = ms[this.hit + 1];
    if (n && i >= n.first && i < n.first + n.count) return ++this.hit;
    let lo = 0;
    let hi = ms.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (ms[mid]!.first <= i) lo = mid;
      else hi = mid - 1;
    }
    this.hit = lo;
    return lo;
  }

  private message(i: number): Message {
    if (i < 0 || i >= this.total) throw new RangeError(`generator: no FPDU ${i}`);
    return this.messages[this.messageOf(i)]!;
  }

  ulpduLength(i: number): number {
    const m = this.message(i);
    return m.length(i - m.first);
  }
  round(i: number): number {
    return this.message(i).round;
  }
  kind(i: number): FpduKind {
    return this.message(i).kind;
  }
  /** The message is this one DDP segment. */
  whole(i: number): boolean {
    return this.message(i).count === 1;
  }
  /** The message's first DDP segment. */
  first(i: number): boolean {
    return this.message(i).first === i;
  }

  /** FPDU i's ULPDU (its message made again when the stream reaches it; the last one kept). */
  ulpdu(i: number): Uint8Array {
    const m = this.message(i);
    const mi = this.hit;
    if (mi !== this.cachedMsg) {
      this.cached = m.recipe();
      this.cachedMsg = mi;
    }
    const u = this.cached[i - m.first];
    if (!u || u.length !== m.length(i - m.first) || this.cached.length !== m.count)
      throw new Error(`generator: message ${mi} made again differs from its plan at FPDU ${i}`);
    return u;
  }
}

/**
 * A message of `payload` octets cut into segments of at most `max` after a `header`-octet DDP
 * header (ddp-ulpdu.ts's sendSegments, taggedSegments): how many, and segment k's ULPDU length.
 */
export function segmented(header: number, payload: number, max: number): [number, (k: number) => number] {
  const count = Math.max(1, Math.ceil(payload / max));
  return [count, (k) => header + Math.min(max, payload - k * max)];
}
