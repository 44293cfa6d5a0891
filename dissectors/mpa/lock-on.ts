import { byteSwap32, readWireCrc } from './crc32c.js';
import { CrcPrefix } from './crc32c-span.js';
import { FpduFramer, MARKER_INTERVAL, type FramerParams, type FramedFpdu } from './framer.js';

/** ULPDU_Length above this is impossible (RFC 5044 §5.2). */
export const MAX_ULPDU_LENGTH = 64768;

/**
 * Work a direction's boundary search may do: `initial` units up front plus `perOctet` for every octet
 * it is offered. A unit is about one octet framed or hashed, or one candidate offset looked at. Work is
 * then linear in the stream whatever the bytes are; when the budget is spent the search stops (the
 * caller reports it once) and resumes as more octets arrive.
 */
export interface LockBudget {
  initial: number;
  perOctet: number;
}

export const DEFAULT_LOCK_BUDGET: LockBudget = { initial: 16 * 1024 * 1024, perOctet: 16 };

/**
 * What one direction's boundary search remembers between attempts: its budget, and how far each way
 * of searching has definitively ruled out candidates (bytes at a stream offset never change, so an
 * offset whose FPDU chain broke within held bytes need not be probed again).
 */
export class LockSearch {
  private granted: number;
  private spent = 0;
  /** Octets before this stream offset have been granted for. */
  private offeredEnd = -1;
  /**
   * Per way of searching (chain or markers, CRC on or off, alignment or marker phase): every candidate
   * below the stream offset stored was ruled out. A handful of keys per direction at most.
   */
  private readonly ruledOut = new Map<string, number>();
  /** Times the budget ran out, and whether the caller has reported it. */
  exhaustions = 0;
  reported = false;
  /** Stream offset where the last search stopped for lack of budget. */
  stoppedAt = 0;

  constructor(readonly budget: LockBudget = DEFAULT_LOCK_BUDGET) {
    this.granted = budget.initial;
  }

  /** Grants for octets up to `end` not offered before. */
  offer(base: number, end: number): void {
    const from = Math.max(base, this.offeredEnd);
    if (end > from) this.granted += (end - from) * this.budget.perOctet;
    if (end > this.offeredEnd) this.offeredEnd = end;
  }

  /** Charges work; false once the budget is spent. */
  charge(units: number): boolean {
    this.spent += units;
    return this.spent <= this.granted;
  }

  get spentUnits(): number {
    return this.spent;
  }

  /**
   * Chain candidates ruled out beyond the contiguous prefix (bit per offset from bitsBase), so an
   * attempt does not judge them again while an earlier candidate is still open (garbage holds
   * candidates open up to 64 KiB back: their ULPDU_Length runs past the held bytes).
   */
  private bits: Uint8Array | null = null;
  private bitsBase = 0;
  private bitsKey = '';

  /** Sets up the bitmap for offsets from `from` under `key` (a new key or a jump starts it afresh). */
  markFrom(key: string, from: number, end: number): void {
    const need = end - from + 8;
    if (need < SMALL_WINDOW) {
      this.bits = null; // a rescan of a few KiB costs less than keeping a bitmap per direction
      return;
    }
    if (this.bits === null || key !== this.bitsKey || from < this.bitsBase) {
      this.bitsKey = key;
      this.bitsBase = from & ~7;
      if (this.bits === null || this.bits.length * 8 < need) this.bits = new Uint8Array((need >> 3) + 64);
      else this.bits.fill(0);
      return;
    }
    const shiftBytes = (from - this.bitsBase) >> 3;
    if (shiftBytes >= this.bits.length) {
      this.bits.fill(0);
      this.bitsBase = from & ~7;
    } else if (shiftBytes > 0) {
      this.bits.copyWithin(0, shiftBytes);
      this.bits.fill(0, this.bits.length - shiftBytes);
      this.bitsBase += shiftBytes * 8;
    }
    if (this.bits.length * 8 < end - this.bitsBase + 8) {
      const nb = new Uint8Array(Math.max(this.bits.length * 2, ((end - this.bitsBase) >> 3) + 2));
      nb.set(this.bits);
      this.bits = nb;
    }
  }

  isMarked(off: number): boolean {
    if (this.bits === null) return false;
    const k = off - this.bitsBase;
    return (this.bits[k >> 3]! & (1 << (k & 7))) !== 0;
  }

  mark(off: number): void {
    if (this.bits === null) return;
    const k = off - this.bitsBase;
    this.bits[k >> 3]! |= 1 << (k & 7);
  }

  /** A lock was found: the search's scratch is not needed until the next hunt. */
  locked(): void {
    this.bits = null;
    this.ruledOut.clear();
  }

  /** Where candidates of this kind are still open, at or after base. */
  startOf(key: string, base: number): number {
    return Math.max(base, this.ruledOut.get(key) ?? base);
  }

  ruleOutBefore(key: string, off: number): void {
    if (off > (this.ruledOut.get(key) ?? -1)) this.ruledOut.set(key, off);
  }
}

/** Candidate windows smaller than this are simply judged again on the next attempt (no bitmap). */
const SMALL_WINDOW = 8192;

/** Thrown inside a search when the budget is spent; caught by findLock. */
class OutOfBudget {
  constructor(readonly at: number) {}
}

/** Shared scratch for prefix CRCs (single-threaded; one search at a time). */
const PREFIX = new CrcPrefix();

export interface LockQuery {
  /** Held bytes and the stream offset of bytes[0]. */
  bytes: Uint8Array;
  base: number;
  baseSeq: number;
  /** No more bytes will come: a shorter chain that ends exactly at the end is enough evidence. */
  final: boolean;
  /** What is known; null = infer. */
  markers: boolean | null;
  markerBase: number | null;
  crc: boolean | null;
  /** FPDUs start at offsets congruent to this mod 4 (SeqStart), when known. */
  alignBase: number | null;
  /** Try bytes[0] first (we believe an FPDU starts there). */
  preferStart: boolean;
  /** DDP header plausibility (CRC-off evidence). */
  plausible: (head: Uint8Array, length: number) => boolean;
  /** The direction's search state (budget, ruled-out candidates); a fresh unbounded one when absent. */
  search?: LockSearch;
}

export interface LockResult {
  offset: number;
  params: FramerParams;
  /** FPDUs that vouched for the lock. */
  fpdus: number;
  evidence: string;
}

interface ProbeResult {
  count: number;
  /** Markers inside the FPDUs counted. */
  markers: number;
  endsAtEnd: boolean;
  /** An FPDU without its own evidence was found: this start is ruled out whatever follows. */
  bad: boolean;
}

/**
 * An FPDU carries its own evidence of framing: a possible ULPDU_Length and, with CRC, a CRC that
 * verifies (as sent or only byte-swapped), without CRC a ULPDU that starts like a DDP segment.
 */
export function vouches(
  f: FramedFpdu,
  crc: boolean,
  plausible: (head: Uint8Array, length: number) => boolean,
): boolean {
  if (f.ulpduLength > MAX_ULPDU_LENGTH) return false;
  if (crc) return f.crcStatus === 'good' || f.crcStatus === 'byte-swapped';
  return plausible(f.head, f.ulpduLength);
}

/**
 * Frames from `offset` with `params` and counts consecutive FPDUs that carry their own evidence (and
 * the markers among them, all pointing where they must); with `untilMarker`, framing goes on past
 * `need` FPDUs until one marker is among them.
 */
function probe(
  q: LockQuery,
  s: LockSearch,
  offset: number,
  params: FramerParams,
  need: number,
  untilMarker = false,
): ProbeResult {
  let count = 0;
  let markers = 0;
  let bad = false;
  const check = (f: FramedFpdu): boolean => {
    if (!vouches(f, params.crc, q.plausible)) bad = true;
    else {
      for (const m of f.markers) {
        if (m.reserved !== 0 || (m.fpduptr & ~3) !== m.expected) {
          bad = true;
          break;
        }
      }
    }
    if (bad) return false;
    count++;
    markers += f.markers.length;
    return count < need || (untilMarker && markers === 0);
  };
  const fr = new FpduFramer(params, offset, q.baseSeq, { onFpdu: check });
  const from = offset - q.base;
  fr.push(q.bytes, offset, 0, false, false, from, q.bytes.length);
  if (!s.charge(64 + fr.position - offset)) throw new OutOfBudget(offset);
  return { count, markers, bad, endsAtEnd: !bad && fr.atBoundary && fr.position === q.base + q.bytes.length };
}

function accepted(r: ProbeResult, need: number, final: boolean): boolean {
  return r.count >= need || (final && r.count >= 1 && r.endsAtEnd);
}

const mod = (a: number, m: number) => ((a % m) + m) % m;
const HEAD_SCRATCH = new Uint8Array(18);

/** Marker phases (offset mod 512) where every marker slot in the buffer looks like a marker. */
function markerPhases(q: LockQuery, s: LockSearch): number[] {
  const b = q.bytes;
  const out: number[] = [];
  const slots = Math.floor((b.length - 4) / MARKER_INTERVAL) + 1;
  if (slots < 2) return out;
  for (let p = 0; p < MARKER_INTERVAL && p + 4 <= b.length; p++) {
    if (q.alignBase !== null && mod(q.base + p - q.alignBase, 4) !== 0) continue;
    let ok = true;
    let n = 0;
    for (let i = p; i + 4 <= b.length; i += MARKER_INTERVAL) {
      if (!s.charge(1)) throw new OutOfBudget(q.base + p);
      if (b[i] !== 0 || b[i + 1] !== 0 || (b[i + 3]! & 3) !== 0) {
        ok = false;
        break;
      }
      n++;
    }
    if (ok && n >= 2) out.push(mod(q.base + p, MARKER_INTERVAL));
  }
  return out;
}

/** Marker phases with one slot only in the held bytes: each such slot shaped like a marker. */
function singleSlotPhases(q: LockQuery, s: LockSearch): number[] {
  const b = q.bytes;
  const out: number[] = [];
  // Phases from here on have one slot in the held bytes (fewer than 1028 octets held).
  for (let p = Math.max(0, b.length - 4 - MARKER_INTERVAL + 1); p < MARKER_INTERVAL && p + 4 <= b.length; p++) {
    if (!s.charge(1)) throw new OutOfBudget(q.base + p);
    if (q.alignBase !== null && mod(q.base + p - q.alignBase, 4) !== 0) continue;
    if (b[p] === 0 && b[p + 1] === 0 && (b[p + 3]! & 3) === 0) out.push(mod(q.base + p, MARKER_INTERVAL));
  }
  return out;
}

/** With markers at a known phase: lock through the first marker whose FPDUPTR leads to a verified FPDU. */
function lockViaMarkers(
  q: LockQuery,
  s: LockSearch,
  markerBase: number,
  crc: boolean,
  need: number,
): LockResult | null {
  const params: FramerParams = { markers: true, markerBase, crc };
  const b = q.bytes;
  const end = q.base + b.length;
  /** Targets probed in this attempt, and whether each was ruled out. */
  const tried = new Map<number, boolean>();
  if (q.preferStart) {
    const r = probe(q, s, q.base, params, need);
    if (accepted(r, need, q.final))
      return { offset: q.base, params, fpdus: r.count, evidence: 'framing continues where it was' };
    tried.set(q.base, r.bad);
  }
  // Marker slots before `from` led only to FPDU chains that broke within bytes seen (earlier attempts).
  const key = `m|${crc}|${markerBase}`;
  const from = s.startOf(key, q.base);
  let rejectedTo = from;
  let contiguous = true;
  try {
    for (let i = from - q.base + mod(markerBase - from, MARKER_INTERVAL); i + 4 <= b.length; i += MARKER_INTERVAL) {
      if (!s.charge(1)) throw new OutOfBudget(q.base + i);
      const ptr = ((b[i + 2]! << 8) | b[i + 3]!) & ~3;
      const target = q.base + i - ptr;
      let decided = tried.get(target) ?? true;
      if (target >= q.base && !tried.has(target)) {
        // Cheap: an FPDU whose marker-free extent already passes the held bytes cannot be judged yet.
        const t = target - q.base;
        const lenAt = mod(target - markerBase, MARKER_INTERVAL) === 0 ? t + 4 : t;
        const len = lenAt + 2 <= b.length ? (b[lenAt]! << 8) | b[lenAt + 1]! : -1;
        if (len < 0 || (len <= MAX_ULPDU_LENGTH && target + ((2 + len + 3) & ~3) + 4 > end)) {
          decided = false;
        } else {
          const r = probe(q, s, target, params, need);
          if (accepted(r, need, q.final)) {
            // The FPDUs before the first marker are framed too when a chain from the first held
            // octet (where a capture that starts mid-stream, or resumes after a hole, usually starts
            // an FPDU) verifies just as well: the marker grid checks them, and their CRCs.
            if (
              !q.preferStart &&
              target > q.base &&
              !tried.has(q.base) &&
              (q.alignBase === null || mod(q.base - q.alignBase, 4) === 0)
            ) {
              const first = probe(q, s, q.base, params, need);
              tried.set(q.base, first.bad);
              if (!first.bad && accepted(first, need, q.final))
                return {
                  offset: q.base,
                  params,
                  fpdus: first.count,
                  evidence: `marker at stream offset ${q.base + i} (FPDUPTR ${ptr}), FPDUs before it chained from the first octet`,
                };
            }
            return {
              offset: target,
              params,
              fpdus: r.count,
              evidence: `marker at stream offset ${q.base + i} (FPDUPTR ${ptr})`,
            };
          }
          decided = r.bad;
        }
        tried.set(target, decided);
      } else if (target < q.base) {
        decided = false; // points before the held bytes: may be tried again after they are reset
      }
      if (!decided) contiguous = false;
      if (contiguous) rejectedTo = q.base + i + 1; // the next attempt starts at the next slot
    }
  } finally {
    s.ruleOutBefore(key, rejectedTo);
  }
  // No marker's own FPDU could vouch yet (it runs past the held octets, or too few follow it): a
  // chain from the first held octet through at least one marker of this phase is evidence enough,
  // where a chain without markers would stop short of the marker.
  if (q.markerBase === null && !q.preferStart && !tried.has(q.base)) {
    const r = probe(q, s, q.base, params, need, true);
    if (!r.bad && r.markers > 0 && accepted(r, need, q.final))
      return {
        offset: q.base,
        params,
        fpdus: r.count,
        evidence: `${r.count} FPDUs chained from the first octet through ${r.markers} marker${r.markers === 1 ? '' : 's'}`,
      };
  }
  return null;
}

/**
 * End of stream (or of the octets before a hole), markers at a known phase, no marker slot left: a
 * chain up to the last octet whose FPDUs all vouch (CRCs, or without CRC plausible DDP headers),
 * from the first aligned offset on.
 */
function lockViaMarkedChain(q: LockQuery, s: LockSearch, markerBase: number, crc: boolean): LockResult | null {
  const params: FramerParams = { markers: true, markerBase, crc };
  const b = q.bytes;
  const step = q.alignBase === null ? 1 : 4;
  const first = q.alignBase === null ? 0 : mod(q.alignBase - q.base, 4);
  for (let i = first; i + 8 <= b.length; i += step) {
    if (!s.charge(16)) throw new OutOfBudget(q.base + i);
    // Framed to the end (a probe stops at `need` FPDUs): every FPDU up to the last octet must verify.
    const r = probe(q, s, q.base + i, params, Number.MAX_SAFE_INTEGER);
    if (!r.bad && r.count >= 1 && r.endsAtEnd)
      return {
        offset: q.base + i,
        params,
        fpdus: r.count,
        evidence: `${r.count} FPDU${r.count === 1 ? '' : 's'} with ${crc ? 'valid CRCs' : 'plausible DDP headers'} up to the end of the stream`,
      };
  }
  return null;
}

/** Without markers: the first offset where ULPDU_Length chains across `need` verified FPDUs. */
function lockViaChain(q: LockQuery, s: LockSearch, crc: boolean, need: number): LockResult | null {
  const params: FramerParams = { markers: false, markerBase: 0, crc };
  const b = q.bytes;
  // Offsets before `start` began FPDU chains that broke within bytes seen (earlier attempts).
  const key = `c|${crc}|${q.alignBase === null ? '' : mod(q.alignBase, 4)}`;
  const start = s.startOf(key, q.base) - q.base;
  let rejectedTo = start;
  if (crc && start < b.length) {
    // Prefix CRCs make each candidate's first CRC check O(1) instead of O(ULPDU_Length).
    if (!s.charge(PREFIX.cover(b, start, b.length))) throw new OutOfBudget(q.base + start);
  }
  s.markFrom(key, q.base + start, q.base + b.length);
  try {
    for (let i = start; i + 6 <= b.length; i++) {
      if (!s.charge(1)) throw new OutOfBudget(q.base + i);
      if (s.isMarked(q.base + i)) {
        if (rejectedTo === i) rejectedTo = i + 1;
        continue;
      }
      let decided = true;
      const len = (b[i]! << 8) | b[i + 1]!;
      if (q.alignBase !== null && mod(q.base + i - q.alignBase, 4) !== 0) {
        // never a start under this alignment
      } else if (len > MAX_ULPDU_LENGTH) {
        // impossible length
      } else if (i + ((2 + len + 3) & ~3) + 4 > b.length) {
        // The first FPDU is not all here yet: judged on a later attempt (the common case near the end
        // of garbage, where lengths up to 64768 run past the held bytes; O(1) here).
        decided = false;
      } else {
        // Cheap pre-filter: a DDP header must follow the length field (copied into scratch: no allocation).
        const n = Math.min(b.length - i - 2, HEAD_SCRATCH.length);
        for (let k = 0; k < n; k++) HEAD_SCRATCH[k] = b[i + 2 + k]!;
        const covEnd = i + ((2 + len + 3) & ~3);
        if (!s.charge(16)) throw new OutOfBudget(q.base + i);
        if (!q.plausible(n === HEAD_SCRATCH.length ? HEAD_SCRATCH : HEAD_SCRATCH.subarray(0, n), len)) {
          // not a DDP header
        } else if (crc && !crcMatches(b, i, covEnd)) {
          // the first FPDU's CRC does not match (nor byte-swapped): the framer would call it bad
        } else {
          const r = probe(q, s, q.base + i, params, need);
          if (accepted(r, need, q.final)) {
            return {
              offset: q.base + i,
              params,
              fpdus: r.count,
              evidence: `${r.count} chained FPDUs with ${crc ? 'valid CRCs' : 'plausible DDP headers'}`,
            };
          }
          decided = r.bad;
        }
      }
      if (decided) {
        if (rejectedTo === i) rejectedTo = i + 1;
        else s.mark(q.base + i);
      }
    }
  } finally {
    s.ruleOutBefore(key, q.base + rejectedTo);
  }
  return null;
}

/**
 * A CRC-verified chain found past the first held octet, in a search that knows nothing of where FPDUs
 * start (mid-stream, SeqStart unknown): when ULPDU_Length chains from the first held octet (where a
 * capture that starts mid-stream usually starts an FPDU) land exactly on the chain found, through
 * FPDUs that each verify or start like a DDP segment, framing starts there. A bad CRC among them is
 * then reported as one (RFC 5044 §8), not skipped as octets that never framed.
 */
function backToFirstOctet(q: LockQuery, s: LockSearch, r: LockResult): LockResult {
  if (r.offset <= q.base || q.markerBase !== null || q.alignBase !== null || q.preferStart) return r;
  let landed = false;
  const fr = new FpduFramer(r.params, q.base, q.baseSeq, {
    onFpdu: (f) => {
      // Each FPDU's CRC verifies, or it at least starts like a DDP segment (a bad CRC then is one).
      const ok =
        vouches(f, true, q.plausible) || (f.ulpduLength <= MAX_ULPDU_LENGTH && q.plausible(f.head, f.ulpduLength));
      const end = f.start + f.wireSize;
      if (!ok || end > r.offset) return false;
      landed = end === r.offset;
      return !landed;
    },
  });
  fr.push(q.bytes, q.base, 0, false, false, 0, r.offset - q.base);
  if (!s.charge(64 + fr.position - q.base)) throw new OutOfBudget(q.base);
  if (!landed) return r;
  return { ...r, offset: q.base, evidence: `${r.evidence}, FPDUs before them chained from the first octet` };
}

/** The CRC field after [i, covEnd) matches the CRC of those octets, as sent or byte-swapped. */
function crcMatches(b: Uint8Array, i: number, covEnd: number): boolean {
  const computed = PREFIX.span(i, covEnd);
  const wire = readWireCrc(b[covEnd]!, b[covEnd + 1]!, b[covEnd + 2]!, b[covEnd + 3]!);
  return computed === wire || byteSwap32(computed) === wire;
}

/**
 * Finds where FPDU framing can (re)start in held bytes: after loss, after a framing error, or in a
 * capture that starts mid-stream (RFC 5044 §6: markers exist so a receiver can find FPDUs again).
 */
export function findLock(q: LockQuery): LockResult | null {
  if (q.bytes.length < 4) return null; // not even one minimal FPDU
  const s = q.search ?? new LockSearch({ initial: Infinity, perOctet: 0 });
  s.offer(q.base, q.base + q.bytes.length);
  if (!s.charge(0)) return null; // spent: wait for more octets
  try {
    const r = search(q, s);
    if (r !== null) s.locked();
    return r;
  } catch (e) {
    if (!(e instanceof OutOfBudget)) throw e;
    s.exhaustions++;
    s.stoppedAt = e.at;
    return null;
  }
}

function search(q: LockQuery, s: LockSearch): LockResult | null {
  const crcs: boolean[] = q.crc === null ? [true, false] : [q.crc];
  if (q.markers !== false) {
    const phases = q.markerBase !== null ? [mod(q.markerBase, MARKER_INTERVAL)] : markerPhases(q, s);
    for (const crc of crcs) {
      for (const ph of phases) {
        const r = lockViaMarkers(q, s, ph, crc, crc ? 2 : 3);
        if (r) return r;
      }
    }
    // Phases with a single marker slot among the held bytes (a short stretch before a stream's end
    // or a hole), phase unknown: each slot shaped like a marker is tried, with CRC only. Its FPDUPTR
    // must lead to FPDUs whose CRCs verify with it taken out (RFC 5044 §4.3, §4.4). Without CRC a
    // CRC field of zeros in front of an FPDU reads as a marker with FPDUPTR 0 (§7.1.1 lets it hold
    // anything), and a lone slot cannot tell the two apart.
    if (q.markers === null && q.markerBase === null && crcs.includes(true)) {
      for (const ph of singleSlotPhases(q, s)) {
        const r = lockViaMarkers(q, s, ph, true, 2);
        if (r) return r;
      }
    }
    // The stream ended with the marker phase known but no marker slot among the octets held since
    // framing was lost (fewer than 512): FPDUs that vouch for themselves up to the stream's last
    // octet are found again without one. Before the end, the next marker is worth waiting for.
    if (q.final && q.markers === true && q.markerBase !== null) {
      for (const crc of crcs) {
        const r = lockViaMarkedChain(q, s, mod(q.markerBase, MARKER_INTERVAL), crc);
        if (r) return r;
      }
    }
  }
  if (q.markers !== true) {
    for (const crc of crcs) {
      if (q.preferStart) {
        const params: FramerParams = { markers: false, markerBase: 0, crc };
        const r = probe(q, s, q.base, params, 3);
        if (accepted(r, 3, q.final))
          return { offset: q.base, params, fpdus: r.count, evidence: 'framing continues where it was' };
      }
      const r = lockViaChain(q, s, crc, 3);
      if (r) return crc ? backToFirstOctet(q, s, r) : r;
    }
  }
  return null;
}
