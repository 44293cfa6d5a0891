/**
 * The main thread's table of 4-tuples: which worker a segment goes to (a hash of its 4-tuple that
 * is the same for both directions), the tuple's index in that worker, and whether the segment can
 * open a TCP flow. Flow ids are given here, in capture order, so they are the ids one thread gives.
 *
 * The reassembler opens a flow on a tuple's first segment, and again only on a SYN without ACK
 * whose ISN starts a new connection (port reuse, Reassembler.reused). Whether such a SYN does
 * depends on reassembly state only its worker has: the id it would take is held open until the
 * worker has said (ask()), which is needed only before the next id is given.
 */
export interface Tuple {
  readonly a: string;
  readonly ap: number;
  readonly b: string;
  readonly bp: number;
  readonly worker: number;
  /** Index in its worker's tuple table. */
  readonly index: number;
  next: Tuple | null;
}

function endpointHash(addr: string, port: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < addr.length; i++) h = Math.imul(h ^ addr.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ port, 0x01000193) >>> 0;
}

export class FlowShards {
  private readonly table = new Map<number, Tuple>();
  private readonly perWorker: number[];
  private last: Tuple | null = null;
  /** The id the next flow gets, once the pending SYN (if any) is settled. */
  private nextId = 1;
  /** Worker of a SYN that may have opened a flow, not yet asked. */
  private pendingWorker = -1;

  constructor(readonly workers: number) {
    this.perWorker = new Array<number>(workers).fill(0);
  }

  /** The tuple of src:sp -> dst:dp, or null when it was never seen. Sets `key` for add(). */
  find(src: string, sp: number, dst: string, dp: number): Tuple | null {
    const l = this.last;
    if (
      l !== null &&
      ((l.ap === sp && l.bp === dp && l.a === src && l.b === dst) ||
        (l.ap === dp && l.bp === sp && l.a === dst && l.b === src))
    )
      return l;
    // Symmetric: the sum of the endpoints' hashes, so both directions land in one bucket.
    this.key = ((endpointHash(src, sp) + endpointHash(dst, dp)) >>> 0) & 0x3fffffff;
    for (let t = this.table.get(this.key) ?? null; t !== null; t = t.next) {
      if (
        (t.ap === sp && t.bp === dp && t.a === src && t.b === dst) ||
        (t.ap === dp && t.bp === sp && t.a === dst && t.b === src)
      ) {
        this.last = t;
        return t;
      }
    }
    return null;
  }

  private key = 0;

  /** A tuple seen for the first time (call right after find() returned null). */
  add(src: string, sp: number, dst: string, dp: number): Tuple {
    const mixed = Math.imul(this.key ^ (this.key >>> 15), 0x2c1b3c6d) >>> 0;
    const worker = (mixed >>> 8) % this.workers;
    const t: Tuple = {
      a: src,
      ap: sp,
      b: dst,
      bp: dp,
      worker,
      index: this.perWorker[worker]!++,
      next: this.table.get(this.key) ?? null,
    };
    this.table.set(this.key, t);
    this.last = t;
    return t;
  }

  /**
   * The id for a segment that certainly opens a flow. `ask(w)` waits for worker w to say whether
   * its pending SYN opened one.
   */
  newId(ask: (worker: number) => boolean): number {
    this.settle(ask);
    return this.nextId++;
  }

  /** The id a SYN that may open a flow on a known tuple would take; settled before the next id is given. */
  maybeId(worker: number, ask: (worker: number) => boolean): number {
    this.settle(ask);
    this.pendingWorker = worker;
    return this.nextId;
  }

  private settle(ask: (worker: number) => boolean): void {
    if (this.pendingWorker < 0) return;
    const w = this.pendingWorker;
    this.pendingWorker = -1;
    if (ask(w)) this.nextId++;
  }
}
