/**
 * Memory for held out-of-order data: copies go into slabs, every slab and piece is charged to its
 * direction, its flow and the total (which the caps are checked against), and emptied slabs are
 * pooled for reuse. The caps themselves are enforced by the stream builder, which turns holes into gaps.
 */
import type { Dir } from './direction.js';
import { Held, Slab } from './held-pieces.js';
import { pow2AtLeast } from './pow2.js';

const MIB = 1024 * 1024;
/** Bookkeeping charged per held piece on top of its slab space, so tiny segments cannot dodge the caps. */
const HELD_OVERHEAD = 64;
/** Slab sizes for held copies: a direction's slabs grow from MIN to MAX while it keeps holding data. */
const SLAB_MIN = 4096;
const SLAB_MAX = 256 * 1024;
/** Free slabs kept for reuse, in bytes. */
const SLAB_POOL_BYTES = 4 * MIB;

export class HeldMemory {
  /** Charged right now (slab space plus bookkeeping), all flows. */
  heldCost = 0;
  private holdSeq = 0;
  /** Directions holding data, in the order their current holes started (first = oldest hole). */
  readonly holding = new Set<Dir>();

  private readonly slabMin: number;
  private readonly slabMax: number;
  /** Free slabs by size class (log2(size / slabMin)). */
  private readonly slabPool: Slab[][] = [];
  private slabPooled = 0;

  constructor(maxPerFlow: number, maxTotal: number) {
    // Slabs stay small against small caps, so a cap still means roughly its number of bytes.
    const capSlab = Math.min(maxPerFlow, maxTotal) / 16;
    this.slabMax = Math.max(1, Math.min(SLAB_MAX, pow2AtLeast(capSlab + 1) / 2));
    this.slabMin = Math.min(SLAB_MIN, this.slabMax);
  }

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
  store(
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
  release(d: Dir, h: Held): void {
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
  emptied(d: Dir): void {
    if (d.slab !== null) this.dropSlab(d, d.slab);
    this.holding.delete(d);
    d.held = null; // a burst's queue and bookkeeping are not kept around (slabs start small again)
  }
}
