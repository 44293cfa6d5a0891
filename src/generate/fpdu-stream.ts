/**
 * One direction's FPDU stream without holding it: where each FPDU falls (FpduLayout, from the
 * ULPDU lengths alone, mpa-encoder.ts's layoutFpdus), and its octets made in order, a batch of
 * FPDUs at a time, as the TCP segments ask for them (FpduStream.take). The octets are those
 * encodeFpdus gives for the whole stream at once: it continues from each batch's startRel.
 */
import type { FpduList } from './fpdu-list.js';
import { encodeFpdus, layoutFpdus, type FpduEncoding, type FpduSpec } from './mpa-encoder.js';

/**
 * Per FPDU: offsets relative to SeqStart of its first octet, its ULPDU_Length field and its end; its
 * markers. Ten octets an FPDU: the FPDUs follow each other, so an end is the next one's start, and
 * the length field is at the start or after a marker there.
 */
export class FpduLayout {
  /** 32 bits are enough: knob-connection.ts's Offsets says why (and checks). */
  private readonly starts: Uint32Array;
  /** Markers, and 0x8000 when a marker precedes the ULPDU_Length field. */
  private readonly meta: Uint16Array;
  private end = 0;

  constructor(list: FpduList, opts: FpduEncoding) {
    this.starts = new Uint32Array(list.length);
    this.meta = new Uint16Array(list.length);
    let i = 0;
    layoutFpdus(
      list.length,
      (j) => list.ulpduLength(j),
      (j) => list.faults.get(j),
      opts,
      (lenRel, startRel, endRel, _len, markers) => {
        if (
          (lenRel !== startRel && lenRel !== startRel + 4) ||
          markers > 0x7fff ||
          (i > 0 && startRel !== this.end) ||
          endRel > 0xffffffff
        )
          throw new Error(`generator: FPDU ${i} laid out where this layout cannot say`);
        this.starts[i] = startRel;
        this.meta[i++] = markers | (lenRel !== startRel ? 0x8000 : 0);
        this.end = endRel;
      },
    );
  }

  get length(): number {
    return this.starts.length;
  }
  /** Octets of the whole stream. */
  get bytes(): number {
    return this.end;
  }
  startRel(i: number): number {
    return this.starts[i]!;
  }
  lenRel(i: number): number {
    return this.starts[i]! + (this.meta[i]! & 0x8000 ? 4 : 0);
  }
  endRel(i: number): number {
    return i + 1 < this.starts.length ? this.starts[i + 1]! : this.end;
  }
  markers(i: number): number {
    return this.meta[i]! & 0x7fff;
  }
  /** The FPDU holding offset `rel` (the first whose end is past it), or -1. */
  fpduAt(rel: number): number {
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.endRel(mid) <= rel) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.length && this.starts[lo]! <= rel ? lo : -1;
  }
  /** The FPDU starting at `rel`, or -1. */
  fpduStartingAt(rel: number): number {
    const i = this.fpduAt(rel);
    return i >= 0 && this.starts[i] === rel ? i : -1;
  }
}

/** Octets of a batch: enough FPDUs to amortise a call, few enough to stay small. */
const BATCH = 256 * 1024;

export class FpduStream {
  private next = 0;
  /** Batches made and not yet passed, in order: each one's stream offset and octets. */
  private held: Array<{ rel: number; bytes: Uint8Array }> = [];

  constructor(
    private readonly list: FpduList,
    private readonly layout: FpduLayout,
    private readonly opts: FpduEncoding,
  ) {}

  /** Octets [start, end) of the stream; calls come in stream order (each start at or after the last end). */
  take(start: number, end: number): Uint8Array {
    const held = this.held;
    while (held.length && held[0]!.rel + held[0]!.bytes.length <= start) held.shift();
    if (held.length && start < held[0]!.rel) throw new Error('generator: stream octets asked for out of order');
    const heldEnd = () => (held.length ? held[held.length - 1]!.rel + held[held.length - 1]!.bytes.length : start);
    while (heldEnd() < end && this.next < this.layout.length) {
      const rel = this.layout.startRel(this.next);
      held.push({ rel, bytes: this.encodeBatch() });
    }
    if (heldEnd() < end || !held.length) {
      if (start === end) return new Uint8Array(0);
      throw new Error('generator: stream octets asked for past its end');
    }
    const first = held[0]!;
    // Within one batch: a view of it; across batches (a segment over a batch boundary): a copy.
    if (end <= first.rel + first.bytes.length) return first.bytes.subarray(start - first.rel, end - first.rel);
    const out = new Uint8Array(end - start);
    for (const h of held) {
      const a = Math.max(start, h.rel);
      const b = Math.min(end, h.rel + h.bytes.length);
      if (a < b) out.set(h.bytes.subarray(a - h.rel, b - h.rel), a - start);
    }
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
    const expected = layout.endRel(last - 1) - layout.startRel(first);
    const enc = encodeFpdus(specs(), { ...this.opts, startRel: layout.startRel(first) }, expected);
    const lastInfo = enc.fpdus[enc.fpdus.length - 1];
    if (enc.fpdus.length !== last - first || lastInfo?.endRel !== layout.endRel(last - 1))
      throw new Error(`generator: FPDUs ${first}..${last - 1} encoded elsewhere than laid out`);
    this.next = last;
    return enc.bytes;
  }
}
