/**
 * The FPDUs one direction of a knob-driven connection will send, planned without their octets: per
 * FPDU its ULPDU's length, the round (request/answer turn) it belongs to, what RDMAP message it is
 * part of, in columns of typed arrays; per message a recipe that makes its DDP segments again
 * (payload from its seed) when the stream reaches it. A gigabyte of messages is a few bytes per
 * FPDU here, not the gigabyte.
 */
import type { MessageKind } from './knobs.js';
import type { FpduFault } from './mpa-encoder.js';

export type FpduKind = MessageKind | 'rtr' | 'read-response' | 'atomic-response';

const KINDS: readonly FpduKind[] = [
  'send',
  'send-se',
  'send-inv',
  'write',
  'read',
  'atomic',
  'immediate',
  'terminate',
  'rtr',
  'read-response',
  'atomic-response',
];

/** A growing Int32Array. */
class Ints {
  a = new Int32Array(256);
  length = 0;
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
}

const WHOLE = 1;
const FIRST = 2;

export class FpduList {
  private readonly lens = new Ints();
  private readonly rounds = new Ints();
  /** Kind code | WHOLE << 8 | FIRST << 8. */
  private readonly info = new Ints();
  private readonly msgOf = new Ints();
  private readonly segOf = new Ints();
  private readonly recipes: Array<() => Uint8Array[]> = [];
  /** One-FPDU faults by index (at most a few). */
  readonly faults = new Map<number, FpduFault>();
  private cachedMsg = -1;
  private cached: Uint8Array[] = [];

  get length(): number {
    return this.lens.length;
  }

  /**
   * A message of `lengths.length` DDP segments (its ULPDUs' lengths, in order), made again by
   * `recipe` when its octets are needed; `whole` when it is one segment.
   */
  add(lengths: readonly number[], round: number, kind: FpduKind, recipe: () => Uint8Array[]): void {
    const m = this.recipes.length;
    this.recipes.push(recipe);
    const code = KINDS.indexOf(kind);
    lengths.forEach((n, i) => {
      this.lens.push(n);
      this.rounds.push(round);
      this.info.push(code | ((lengths.length === 1 ? WHOLE : 0) << 8) | ((i === 0 ? FIRST : 0) << 8));
      this.msgOf.push(m);
      this.segOf.push(i);
    });
  }

  /** A message of one ULPDU already made. */
  addOne(ulpdu: Uint8Array, round: number, kind: FpduKind): void {
    this.add([ulpdu.length], round, kind, () => [ulpdu]);
  }

  ulpduLength(i: number): number {
    return this.lens.a[i]!;
  }
  round(i: number): number {
    return this.rounds.a[i]!;
  }
  kind(i: number): FpduKind {
    return KINDS[this.info.a[i]! & 0xff]!;
  }
  /** The message is this one DDP segment. */
  whole(i: number): boolean {
    return ((this.info.a[i]! >> 8) & WHOLE) !== 0;
  }
  /** The message's first DDP segment. */
  first(i: number): boolean {
    return ((this.info.a[i]! >> 8) & FIRST) !== 0;
  }

  /** FPDU i's ULPDU (its message made again when the stream reaches it; the last one kept). */
  ulpdu(i: number): Uint8Array {
    const m = this.msgOf.a[i]!;
    if (m !== this.cachedMsg) {
      this.cached = this.recipes[m]!();
      this.cachedMsg = m;
    }
    const u = this.cached[this.segOf.a[i]!];
    if (!u || u.length !== this.lens.a[i])
      throw new Error(`generator: message ${m} made again differs from its plan at FPDU ${i}`);
    return u;
  }
}

/** ULPDU lengths of a message of `payload` octets cut into segments of at most `max` (ddp-ulpdu.ts's sendSegments, taggedSegments). */
export function segmentLengths(header: number, payload: number, max: number): number[] {
  const out: number[] = [];
  let off = 0;
  do {
    const n = Math.min(max, payload - off);
    out.push(header + n);
    off += n;
  } while (off < payload);
  return out;
}
