/**
 * One direction's FPDU stream without holding it: where each FPDU falls (FpduLayout, from the
 * ULPDU lengths alone, mpa-encoder.ts's layoutFpdus), and its octets made in order, a batch of
 * FPDUs at a time, as the TCP segments ask for them (FpduStream.take). The octets are those
 * encodeFpdus gives for the whole stream at once: it continues from each batch's startRel.
 */
import type { FpduList } from './fpdu-list.js';
import { encodeFpdus, layoutFpdus, type FpduEncoding, type FpduSpec } from './mpa-encoder.js';

/** A growing Float64Array (stream offsets pass 2^31 in a large capture). */
class Doubles {
  a = new Float64Array(256);
  length = 0;
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
}

/** Per FPDU: offsets relative to SeqStart of its first octet, its ULPDU_Length field and its end; its markers. */
export class FpduLayout {
  private readonly starts = new Doubles();
  private readonly lens = new Doubles();
  private readonly ends = new Doubles();
  private readonly marks = new Doubles();

  constructor(list: FpduList, opts: FpduEncoding) {
    layoutFpdus(
      list.length,
      (i) => list.ulpduLength(i),
      (i) => list.faults.get(i),
      opts,
      (lenRel, startRel, endRel, _len, markers) => {
        this.starts.push(startRel);
        this.lens.push(lenRel);
        this.ends.push(endRel);
        this.marks.push(markers);
      },
    );
  }

  get length(): number {
    return this.starts.length;
  }
  /** Octets of the whole stream. */
  get bytes(): number {
    return this.length ? this.ends.a[this.length - 1]! : 0;
  }
  startRel(i: number): number {
    return this.starts.a[i]!;
  }
  lenRel(i: number): number {
    return this.lens.a[i]!;
  }
  endRel(i: number): number {
    return this.ends.a[i]!;
  }
  markers(i: number): number {
    return this.marks.a[i]!;
  }
  /** The FPDU holding offset `rel` (the first whose end is past it), or -1. */
  fpduAt(rel: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends.a[mid]! <= rel) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.length && this.starts.a[lo]! <= rel ? lo : -1;
  }
  /** The FPDU starting at `rel`, or -1. */
  fpduStartingAt(rel: number): number {
    const i = this.fpduAt(rel);
    return i >= 0 && this.starts.a[i] === rel ? i : -1;
  }
}

/** Octets of a batch: enough FPDUs to amortise a call, few enough to stay small. */
const BATCH = 256 * 1024;

export class FpduStream {
  private next = 0;
  /** Octets made and not yet passed, from stream offset `heldRel`. */
  private held = new Uint8Array(0);
  private heldRel = 0;

  constructor(
    private readonly list: FpduList,
    private readonly layout: FpduLayout,
    private readonly opts: FpduEncoding,
  ) {}

  /** Octets [start, end) of the stream; calls come in stream order (each start at or after the last end). */
  take(start: number, end: number): Uint8Array {
    if (start < this.heldRel) throw new Error('generator: stream octets asked for out of order');
    while (this.heldRel + this.held.length < end && this.next < this.layout.length) {
      const batch = this.encodeBatch();
      const keep = this.held.subarray(Math.min(this.held.length, start - this.heldRel));
      const joined = new Uint8Array(keep.length + batch.length);
      joined.set(keep);
      joined.set(batch, keep.length);
      this.heldRel = this.heldRel + this.held.length - keep.length;
      this.held = joined;
    }
    const out = this.held.subarray(start - this.heldRel, end - this.heldRel);
    if (out.length !== end - start) throw new Error('generator: stream octets asked for past its end');
    return out;
  }

  private encodeBatch(): Uint8Array {
    const { list, layout } = this;
    const first = this.next;
    let last = first;
    while (last < layout.length && (last === first || layout.endRel(last - 1) - layout.startRel(first) < BATCH)) last++;
    function* specs(): Generator<FpduSpec> {
      for (let i = first; i < last; i++) {
        const f = list.faults.get(i);
        yield f ? { ulpdu: list.ulpdu(i), fault: f } : { ulpdu: list.ulpdu(i) };
      }
    }
    const enc = encodeFpdus(specs(), { ...this.opts, startRel: layout.startRel(first) });
    const lastInfo = enc.fpdus[enc.fpdus.length - 1];
    if (enc.fpdus.length !== last - first || lastInfo?.endRel !== layout.endRel(last - 1))
      throw new Error(`generator: FPDUs ${first}..${last - 1} encoded elsewhere than laid out`);
    this.next = last;
    return enc.bytes;
  }
}
