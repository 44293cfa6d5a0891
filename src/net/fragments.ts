/**
 * IP fragment reassembly (IPv4 and IPv6 alike): pieces kept per datagram, overlaps resolved in
 * favour of the bytes that arrived first (and reported), memory bounded by a byte cap that evicts
 * the oldest incomplete datagrams, which are reported, as are datagrams left at the end.
 */

/** Accounting overhead per held piece and per datagram, so many tiny fragments still hit the cap. */
const PIECE_COST = 64;
const DATAGRAM_COST = 256;
/** A datagram not completed within this much capture time is dropped (Linux ipfrag_time is 30 s). */
export const FRAGMENT_TIMEOUT_SEC = 60;

export interface FragmentEvents {
  /**
   * Bytes of a fragment overlapped bytes already held (or the datagram's end); the first copy is
   * kept. `frames`: the datagram's fragments so far, the overlapping one last (all of them are what
   * the datagram is made of, and what an evidence file must hold).
   */
  overlap(frames: readonly number[], message: string): void;
  /** A datagram was given up before it was complete. */
  incomplete(frames: readonly number[], message: string): void;
}

interface Piece {
  start: number;
  end: number;
  /** Null: bytes the fragment carried on the wire but the capture did not hold (snaplen). */
  data: Uint8Array | null;
}

interface Datagram {
  readonly label: string;
  readonly pieces: Piece[];
  readonly frames: number[];
  readonly firstTs: number;
  /** Wire length of the reassembled payload, once the last fragment was seen; else -1. */
  total: number;
  /** Bytes covered by pieces. */
  covered: number;
  held: number;
  /** Next protocol from the offset-0 fragment (IPv6: its fragment header's Next Header), -1 until seen. */
  next: number;
  /** Caller's value kept with the datagram (the pseudo-header address sum). */
  aux: number;
}

export interface Reassembled {
  /** The reassembled payload (after the IP header / fragment header), fresh memory. */
  data: Uint8Array;
  /** Leading bytes of data that were captured; the rest was cut by the snaplen. */
  captured: number;
  next: number;
  aux: number;
}

export interface FragmentInput {
  /** Identifies the datagram: addresses, protocol, identification. */
  key: string;
  /** Names the datagram in findings. */
  label: string;
  frame: number;
  tsSec: number;
  /** Fragment offset in bytes. */
  offset: number;
  /** Captured bytes of the fragment's payload (a view; copied if kept). */
  data: Uint8Array;
  /** Payload length on the wire (>= data.length). */
  wireLength: number;
  more: boolean;
  next: number;
  aux: number;
}

export class FragmentReassembler {
  private readonly table = new Map<string, Datagram>();
  private held = 0;

  constructor(
    private readonly cap: number,
    private readonly events: FragmentEvents,
  ) {}

  /** Datagrams waiting for more fragments. */
  get pending(): number {
    return this.table.size;
  }

  /** Adds a fragment; returns the datagram when this fragment completes it. */
  add(f: FragmentInput): Reassembled | null {
    this.expire(f.tsSec);
    let d = this.table.get(f.key);
    if (d === undefined) {
      d = {
        label: f.label,
        pieces: [],
        frames: [],
        firstTs: f.tsSec,
        total: -1,
        covered: 0,
        held: DATAGRAM_COST,
        next: -1,
        aux: f.aux,
      };
      this.table.set(f.key, d);
      this.held += DATAGRAM_COST;
    }
    d.frames.push(f.frame);
    if (f.offset === 0) d.next = f.next;
    else if (d.next < 0) d.next = f.next;

    let end = f.offset + f.wireLength;
    if (!f.more && d.total < 0) {
      d.total = end;
      this.trimTo(d);
    } else if (!f.more && end !== d.total) {
      this.events.overlap(
        d.frames,
        `${d.label}: a second last fragment ends the datagram at ${end} bytes, the first said ${d.total}; the first is kept`,
      );
      end = Math.min(end, d.total);
    } else if (d.total >= 0 && end > d.total) {
      this.events.overlap(
        d.frames,
        `${d.label}: fragment bytes ${f.offset}-${end - 1} reach past the datagram end (${d.total}) set by its last fragment; ignored`,
      );
      end = d.total;
    }
    const capEnd = Math.min(f.offset + f.data.length, end);
    const cost = Math.max(0, capEnd - f.offset) + 2 * PIECE_COST;
    this.makeRoom(cost, d);
    if (this.table.get(f.key) !== d) return null; // given up to make room
    if (capEnd > f.offset) this.insert(d, f.offset, capEnd, f.data);
    if (end > capEnd) this.insert(d, Math.max(capEnd, f.offset), end, null);

    if (d.total < 0 || d.covered !== d.total) return null;
    this.table.delete(f.key);
    this.held -= d.held;
    const out = new Uint8Array(d.total);
    let captured = d.total;
    for (const p of d.pieces) {
      if (p.data !== null) out.set(p.data, p.start);
      else if (p.start < captured) captured = p.start;
    }
    return { data: out, captured, next: d.next, aux: d.aux };
  }

  /** Gives up every datagram still incomplete (end of capture). */
  finish(): void {
    for (const d of this.table.values()) this.drop(d, 'the capture ended before it was complete');
    this.table.clear();
    this.held = 0;
  }

  /** Inserts [start, end) of a fragment (data: a view whose byte 0 is datagram offset start, or null), keeping bytes already held. */
  private insert(d: Datagram, start: number, end: number, data: Uint8Array | null): void {
    const base = start;
    const add: Piece[] = [];
    let cursor = start;
    let overlapped = 0;
    let differ = false;
    for (const q of d.pieces) {
      if (q.end <= cursor) continue;
      if (q.start >= end) break;
      if (q.start > cursor) add.push(this.piece(cursor, q.start, data, base));
      const os = Math.max(cursor, q.start);
      const oe = Math.min(q.end, end);
      overlapped += oe - os;
      if (!differ && data !== null && q.data !== null) {
        for (let i = os; i < oe; i++) {
          if (q.data[i - q.start] !== data[i - base]) {
            differ = true;
            break;
          }
        }
      }
      cursor = oe;
    }
    if (cursor < end) add.push(this.piece(cursor, end, data, base));
    if (overlapped > 0) {
      this.events.overlap(
        d.frames,
        `${d.label}: fragment bytes ${start}-${end - 1} overlap ${overlapped} bytes already received` +
          (differ ? ' with different data' : '') +
          '; the first copy is kept',
      );
    }
    if (add.length === 0) return;
    for (const p of add) {
      d.pieces.push(p);
      d.covered += p.end - p.start;
      const cost = (p.data === null ? 0 : p.data.length) + PIECE_COST;
      d.held += cost;
      this.held += cost;
    }
    d.pieces.sort((a, b) => a.start - b.start);
  }

  /** A piece [s, e) copied out of a fragment whose offset-0 byte is data[0] at datagram offset base. */
  private piece(s: number, e: number, data: Uint8Array | null, base: number): Piece {
    return { start: s, end: e, data: data === null ? null : data.slice(s - base, e - base) };
  }

  /** The last fragment fixed the datagram's length: drop held bytes beyond it. */
  private trimTo(d: Datagram): void {
    const total = d.total;
    let beyond = 0;
    for (let i = d.pieces.length - 1; i >= 0; i--) {
      const p = d.pieces[i]!;
      if (p.end <= total) break;
      const cut = p.end - Math.max(p.start, total);
      beyond += cut;
      d.covered -= cut;
      if (p.start >= total) {
        d.pieces.pop();
        const cost = (p.data === null ? 0 : p.data.length) + PIECE_COST;
        d.held -= cost;
        this.held -= cost;
      } else {
        p.end = total;
        if (p.data !== null) p.data = p.data.subarray(0, total - p.start);
      }
    }
    if (beyond > 0)
      this.events.overlap(
        d.frames,
        `${d.label}: ${beyond} bytes received earlier lie past the datagram end (${total}) set by its last fragment; ignored`,
      );
  }

  /** Evicts the oldest datagrams until `cost` more bytes fit under the cap (possibly `current` itself). */
  private makeRoom(cost: number, current: Datagram): void {
    while (this.held + cost > this.cap) {
      const oldest = this.table.entries().next();
      if (oldest.done === true) return;
      const [key, d] = oldest.value;
      if (d === current && this.table.size > 1) {
        // Keep the datagram being added to for last: move it behind the others.
        this.table.delete(key);
        this.table.set(key, d);
        continue;
      }
      this.table.delete(key);
      this.held -= d.held;
      this.drop(d, `the ${Math.round(this.cap / 1024)} KiB fragment memory cap was reached`);
    }
  }

  /** Drops datagrams that saw no completing fragment within the timeout (oldest first). */
  private expire(now: number): void {
    for (const [key, d] of this.table) {
      if (d.firstTs >= now - FRAGMENT_TIMEOUT_SEC) break;
      this.table.delete(key);
      this.held -= d.held;
      this.drop(d, `not completed within ${FRAGMENT_TIMEOUT_SEC} s`);
    }
  }

  private drop(d: Datagram, why: string): void {
    let have = 0;
    for (const p of d.pieces) if (p.data !== null) have += p.data.length;
    const of = d.total >= 0 ? `${d.total}` : 'an unknown number of';
    const n = d.frames.length;
    this.events.incomplete(
      [...d.frames].sort((a, b) => a - b),
      `${d.label}: ${n === 1 ? '1 fragment' : `${n} fragments`} holding ${have} of ${of} bytes dropped: ${why}`,
    );
  }
}
