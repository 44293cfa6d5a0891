/**
 * TCP sequence numbers relative to each direction's start, as Wireshark shows them by default
 * (its preference tcp.relative_sequence_numbers): the SYN is 0 and the first octet after it 1;
 * without a SYN, the first octet seen is 1. tshark's `-o tcp.relative_sequence_numbers:FALSE`
 * shows absolute ones, as does the JSON report (which adds the relative ones beside them).
 *
 * The reassembler numbers each direction's byte stream from 0 at the octet after the SYN (or the
 * first octet seen), so a record's relative sequence number is its stream offset plus one, and
 * base = seq - offset - 1 is what every other absolute number of that direction is made relative
 * by (findings name only their flow, sender and absolute seq). Bases are learned from the records
 * as they stream; a finding of a direction with no record yet keeps its absolute number, marked.
 */
import type { MpaRecord } from './events.js';

/** A record's stream offset (the octet its `seq` names), when the record carries it. */
export function recordOffset(r: MpaRecord): number | undefined {
  if (r.kind === 'fpdu') return r.lenOffset;
  if (r.kind === 'tuf') return r.start;
  return r.offset;
}

/** Wireshark's relative form of `seq` given the direction's base (mod 2^32, as TCP's numbers). */
export function relativeSeq(seq: number, base: number): number {
  return (seq - base) >>> 0;
}

/** Bases per flow and direction, learned from records: one small entry per flow. */
export class SeqBases {
  /** flow -> [from of direction 0, its base, from of direction 1, its base]. */
  private readonly flows = new Map<number, [string | null, number, string | null, number]>();

  /** The base `r` shows its direction's numbers relative to (learned on the way), or null. */
  learn(r: MpaRecord): number | null {
    const off = recordOffset(r);
    if (off === undefined) return this.base(r.flow, r.from);
    const base = (r.seq - off - 1) >>> 0;
    let e = this.flows.get(r.flow);
    if (!e) {
      e = [null, 0, null, 0];
      this.flows.set(r.flow, e);
    }
    const i = r.dir === 0 ? 0 : 2;
    e[i] = r.from;
    e[i + 1] = base;
    return base;
  }

  /** The base of the direction `from` sends on flow `flow`, or null when none of its records was seen. */
  base(flow: number | null, from: string | null): number | null {
    if (flow === null || from === null) return null;
    const e = this.flows.get(flow);
    if (!e) return null;
    if (e[0] === from) return e[1];
    if (e[2] === from) return e[3];
    return null;
  }
}
