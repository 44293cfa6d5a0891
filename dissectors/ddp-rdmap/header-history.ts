/**
 * The DDP headers of a direction's last segments, for matching the header a Terminate copies
 * (RFC 5040 §7.2: the Terminate carries the DDP header of the segment it answers). Kept compact:
 * one ring of header octets and parallel arrays, growing to its size only as segments arrive, so a
 * flow that carried a few segments costs a few hundred octets, not 64 objects and 64 arrays per
 * direction (10,000 busy flows held 300 MB of them).
 */
import { DDP_UNTAGGED_HEADER_LEN } from './fields.js';

/** What a matched entry says of its segment. */
export interface HistoryHit<F> {
  seq: number;
  frames: readonly number[];
  findings: F;
}

const FIRST_SIZE = 4;

const NO_BYTES = new Uint8Array(0);

export class HeaderHistory<F> {
  /** Header octets, DDP_UNTAGGED_HEADER_LEN per slot: allocated on the first segment, doubled up to `size` slots. */
  private bytes = NO_BYTES;
  private readonly lengths: number[] = [];
  private readonly seqs: number[] = [];
  private readonly frames: (readonly number[])[] = [];
  private readonly findings: F[] = [];
  /** Entries held, and the slot the next one goes to once the ring is full. */
  private n = 0;
  private pos = 0;

  constructor(private readonly size: number) {}

  get length(): number {
    return this.n;
  }

  /** Remembers a segment: its first DDP_UNTAGGED_HEADER_LEN octets (fewer when the ULPDU is shorter). */
  add(seq: number, frames: readonly number[], head: Uint8Array, findings: F): void {
    let slot: number;
    if (this.n < this.size) {
      slot = this.n++;
      if (slot * DDP_UNTAGGED_HEADER_LEN >= this.bytes.length) {
        const b = new Uint8Array(Math.min(this.size, Math.max(FIRST_SIZE, 2 * slot)) * DDP_UNTAGGED_HEADER_LEN);
        b.set(this.bytes);
        this.bytes = b;
      }
    } else {
      slot = this.pos;
      this.pos = (this.pos + 1) % this.size;
    }
    const len = Math.min(head.length, DDP_UNTAGGED_HEADER_LEN);
    const o = slot * DDP_UNTAGGED_HEADER_LEN;
    for (let i = 0; i < len; i++) this.bytes[o + i] = head[i]!;
    this.lengths[slot] = len;
    this.seqs[slot] = seq;
    this.frames[slot] = frames;
    this.findings[slot] = findings;
  }

  /** The newest segment whose header starts with `want` (all of it), or null. */
  match(want: Uint8Array): HistoryHit<F> | null {
    const n = this.n;
    // Newest first: the ring's newest entry sits just before pos once it has wrapped.
    for (let k = 1; k <= n; k++) {
      const slot = (this.pos - k + n * 2) % n;
      if (this.lengths[slot]! < want.length) continue;
      const o = slot * DDP_UNTAGGED_HEADER_LEN;
      let same = true;
      for (let i = 0; i < want.length; i++) {
        if (this.bytes[o + i] !== want[i]) {
          same = false;
          break;
        }
      }
      if (same) return { seq: this.seqs[slot]!, frames: this.frames[slot]!, findings: this.findings[slot]! };
    }
    return null;
  }
}
