/**
 * The DDP headers of a direction's last segments, for matching the header a Terminate copies
 * (RFC 5040 §7.2: the Terminate carries the DDP header of the segment it answers). Kept compact:
 * every entry is a fixed-size slot of one octet ring (header octets, their count, seq and frame),
 * growing to its size only as segments arrive; only what is rare (a segment carried by several
 * frames, a segment with findings) takes an array slot. A direction that carried six one-frame
 * segments costs one small typed array, not 24 arrays (10,000 busy flows held 300 MB of objects
 * before, 100,000 open flows 1.5 KB each of arrays).
 */
import { DDP_UNTAGGED_HEADER_LEN } from './fields.js';

/** What a matched entry says of its segment. */
export interface HistoryHit<F> {
  seq: number;
  frames: readonly number[];
  findings: F;
}

// Slot layout: header octets, their count, one spare, seq (big-endian), frame (big-endian).
const LEN_AT = DDP_UNTAGGED_HEADER_LEN;
const SEQ_AT = LEN_AT + 2;
const FRAME_AT = SEQ_AT + 4;
const STRIDE = FRAME_AT + 4;
/** Frame field value meaning "the frames are in `frameLists`" (several frames, none, or no 32-bit one). */
const FRAMES_ELSEWHERE = 0xffffffff;

/** Slots of the first ring: 2 * 28 octets stay within V8's on-heap typed array limit (64 octets). */
const FIRST_SIZE = 2;

/**
 * Each larger ring is this many times the last: 2, 8, 32, 64 slots. Allocating a typed array beyond
 * 64 octets (an ArrayBuffer of its own) costs more than its octets: fewer, larger steps.
 */
const GROWTH = 4;

const NO_BYTES = new Uint8Array(0);

export class HeaderHistory<F> {
  /** STRIDE octets per slot: allocated on the first segment, doubled up to `size` slots. */
  private bytes = NO_BYTES;
  /** Frames of the slots whose frame field says FRAMES_ELSEWHERE; created on the first such slot. */
  private frameLists: (readonly number[] | undefined)[] | null = null;
  /** Findings of the slots that have any (anything but `none`); created on the first such slot. */
  private found: (F | undefined)[] | null = null;
  /** Entries held, and the slot the next one goes to once the ring is full. */
  private n = 0;
  private pos = 0;

  /**
   * @param none findings value not worth keeping (an entry without findings): not stored, and what
   * `match` answers for such an entry.
   */
  constructor(
    private readonly size: number,
    private readonly none?: F,
  ) {}

  get length(): number {
    return this.n;
  }

  /** Remembers a segment: its first DDP_UNTAGGED_HEADER_LEN octets (fewer when the ULPDU is shorter). */
  add(seq: number, frames: readonly number[], head: Uint8Array, findings: F): void {
    let slot: number;
    if (this.n < this.size) {
      slot = this.n++;
      if (slot * STRIDE >= this.bytes.length) {
        const b = new Uint8Array(Math.min(this.size, Math.max(FIRST_SIZE, GROWTH * slot)) * STRIDE);
        b.set(this.bytes);
        this.bytes = b;
      }
    } else {
      slot = this.pos;
      this.pos = (this.pos + 1) % this.size;
    }
    const b = this.bytes;
    const len = Math.min(head.length, DDP_UNTAGGED_HEADER_LEN);
    const o = slot * STRIDE;
    for (let i = 0; i < len; i++) b[o + i] = head[i]!;
    b[o + LEN_AT] = len;
    put32(b, o + SEQ_AT, seq >>> 0);
    const f = frames.length === 1 ? frames[0]! : -1;
    if (f >= 0 && f < FRAMES_ELSEWHERE && Number.isInteger(f)) {
      put32(b, o + FRAME_AT, f);
      if (this.frameLists !== null) this.frameLists[slot] = undefined;
    } else {
      put32(b, o + FRAME_AT, FRAMES_ELSEWHERE);
      (this.frameLists ??= [])[slot] = frames;
    }
    if (findings !== this.none) (this.found ??= [])[slot] = findings;
    else if (this.found !== null) this.found[slot] = undefined;
  }

  /** The newest segment whose header starts with `want` (all of it), or null. */
  match(want: Uint8Array): HistoryHit<F> | null {
    const n = this.n;
    const b = this.bytes;
    // Newest first: the ring's newest entry sits just before pos once it has wrapped.
    for (let k = 1; k <= n; k++) {
      const slot = (this.pos - k + n * 2) % n;
      const o = slot * STRIDE;
      if (b[o + LEN_AT]! < want.length) continue;
      let same = true;
      for (let i = 0; i < want.length; i++) {
        if (b[o + i] !== want[i]) {
          same = false;
          break;
        }
      }
      if (!same) continue;
      const frame = get32(b, o + FRAME_AT);
      const found = this.found !== null ? this.found[slot] : undefined;
      return {
        seq: get32(b, o + SEQ_AT),
        frames: frame === FRAMES_ELSEWHERE ? this.frameLists![slot]! : [frame],
        findings: found === undefined ? (this.none as F) : found,
      };
    }
    return null;
  }
}

function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = v >>> 16;
  b[o + 2] = v >>> 8;
  b[o + 3] = v;
}

function get32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}
