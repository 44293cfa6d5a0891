/**
 * Held out-of-order data: the slabs held copies are carved from, the pieces themselves, and the
 * queue and bookkeeping of a direction that holds any. Only data here; held-memory.ts charges and
 * pools it.
 */
import { HeldQueue } from './held-queue.js';

/**
 * Held copies are carved out of slabs (one ArrayBuffer per held segment would dominate the cost).
 * A direction allocates from its own current slab, so a slab is pinned only by pieces of one
 * direction, and the caps are charged whole slabs: they bound real memory, fragmentation included.
 */
export class Slab {
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
export class Held {
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

/**
 * What a direction holding out-of-order data needs besides the pieces: created with the first held
 * piece and dropped when the last one goes (most directions never hold anything).
 */
export class HoldState extends HeldQueue<Held> {
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
