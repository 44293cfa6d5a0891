/**
 * Finding TUF framing without being told (draft §4 leaves negotiation to the ULP). Conservative on
 * purpose: a false TUF flow (on MPA, random data or a plain protocol) is worse than a missed one.
 *
 * - Alignment mode: a 48-bit key that recurs across segments passing the receiver's test (§5.4),
 *   or, behind a resegmenting middlebox, a chain of Lengths under one key from where framing starts
 *   to the end of what is held. Zero and all-ones keys and empty framing PDUs are no evidence, and
 *   a candidate the owner calls foreign (an MPA FPDU whose CRC verifies) is not counted.
 * - Marker mode: a zero marker (§6: the first marker's offset is necessarily 0) followed by at
 *   least three markers on one period whose two copies agree, at least two of them non-zero and
 *   different, whose pointers do not contradict each other, and two of which point at the same PDU
 *   start (filler that repeats, or whose 16-bit halves repeat, passes everything but that). The
 *   search has a linear work budget per direction (GridSearch).
 */
import type { Hold } from './hold.js';
import { trivialKey } from './alignment.js';
import { HEADER_LEN, MARKER_LEN } from './types.js';

export type Foreign = (pdu: Uint8Array) => boolean;

/** Framing PDUs chained from s under one key; ok when the chain reaches exactly `end` or runs past it. */
export function chainFrom(
  h: Hold,
  s: number,
  end: number,
  key: number | null,
  foreign: Foreign | null,
): { key: number; count: number; reachesEnd: boolean } | null {
  if (s + HEADER_LEN > end) return null;
  const k = key ?? h.u48(s + 2);
  if (trivialKey(k)) return null;
  let p = s;
  let count = 0;
  let foreignCount = 0;
  while (p + HEADER_LEN <= end) {
    const len = h.u16(p);
    if (len === 0 || h.u48(p + 2) !== k) return count >= 3 ? { key: k, count, reachesEnd: false } : null;
    const e = p + HEADER_LEN + len;
    if (e > end) return { key: k, count, reachesEnd: true };
    if (foreign && count < 8 && foreign(h.view(p, e))) foreignCount++;
    count++;
    p = e;
    if (foreignCount * 2 > Math.min(count, 8) && count >= 2) return null;
  }
  return { key: k, count, reachesEnd: p === end || p + HEADER_LEN > end };
}

/** The earliest candidate start from which Lengths chain to the end of what is held. */
export function findChain(
  h: Hold,
  candidates: readonly number[],
  final: boolean,
  key: number | null,
  foreign: Foreign | null,
): { start: number; key: number } | null {
  const end = h.end;
  for (const s of candidates) {
    if (s < h.base) continue;
    const c = chainFrom(h, s, end, key, foreign);
    if (!c?.reachesEnd) continue;
    // Forced key: one framing PDU suffices. Otherwise four, or three ending exactly where the stream ended.
    if (key !== null ? c.count >= 1 : c.count >= 4 || (final && c.count >= 3)) return { start: s, key: c.key };
  }
  return null;
}

const MIN_INTERVAL = 8;
const MAX_INTERVAL = 65536;

/**
 * Work a direction's marker-grid search may do: `initial` units plus `perOctet` for every octet the
 * direction carried (a unit is one marker slot looked at, or one interval tried), so the search
 * is linear in the stream whatever the bytes are. Octets that look like markers everywhere used to
 * make it ten times slower than random data; when the budget is spent the search pauses in that
 * direction until more octets grant more (tuf.marker-search-budget, once); alignment mode is
 * still looked for.
 */
export const GRID_BUDGET = { initial: 4 * 1024 * 1024, perOctet: 16 };

/** Per candidate start: intervals up to hiDone were tried; open lists those still undecided (ascending) as of lastEnd. */
interface GridMemo {
  hiDone: number;
  open: number[];
  lastEnd: number;
}

/**
 * What one direction's marker-grid search remembers between attempts. Octets never change, so an
 * interval that failed from a candidate within the held octets fails for good: each later attempt
 * tries only the intervals still open (they ran out of octets) and the new ones the longer hold
 * allows, instead of every interval again.
 */
export class GridSearch {
  spent = 0;
  granted: number;
  exhausted = false;
  /** Whether tuf.marker-search-budget was raised (once per direction). */
  reported = false;
  private readonly tried = new Map<number, GridMemo>();

  constructor(readonly budget: { initial: number; perOctet: number } = GRID_BUDGET) {
    this.granted = budget.initial;
  }

  offer(octets: number): void {
    this.granted += octets * this.budget.perOctet;
  }

  /** The held octets were dropped: candidates are new. */
  forget(): void {
    this.tried.clear();
  }

  memo(s: number, lo: number): GridMemo {
    let m = this.tried.get(s);
    if (!m) {
      if (this.tried.size >= MAX_GRID_CANDIDATES * 4) this.tried.clear();
      m = { hiDone: lo - 1, open: [], lastEnd: s };
      this.tried.set(s, m);
    }
    return m;
  }
}

/** A marker grid starting at one of the candidates (4 zero octets there), or null. */
export function findMarkerGrid(
  h: Hold,
  candidates: readonly number[],
  interval: number | null,
  search: GridSearch | null = null,
): { start: number; interval: number } | null {
  const end = h.end;
  let tried = 0;
  for (const s of candidates) {
    if (s < h.base || s + MARKER_LEN > end) continue;
    if (h.u16(s) !== 0 || h.u16(s + 2) !== 0) continue;
    // Zeros after the zero marker too: padding, not a framed PDU (and every period would fit it).
    if (s + 64 <= end && allZero(h, s, s + 64)) continue;
    if (++tried > MAX_GRID_CANDIDATES) break;
    const lo = interval ?? MIN_INTERVAL;
    const hi = interval ?? Math.min(MAX_INTERVAL, Math.floor((end - s - MARKER_LEN) / 3));
    const m: GridMemo = search ? search.memo(s, lo) : { hiDone: lo - 1, open: [], lastEnd: s };
    // Intervals still open from earlier attempts (all below the new ones), lowest first; one is
    // looked at again only once the hold has grown by a marker slot for it.
    const open = m.open;
    let keep = 0;
    let k = 0;
    for (; k < open.length; k++) {
      const i = open[k]!;
      // Marker slot k is readable once s + k*i + 4 <= end.
      if (i > hi || Math.floor((end - s - MARKER_LEN) / i) === Math.floor((m.lastEnd - s - MARKER_LEN) / i)) {
        open[keep++] = i;
        continue;
      }
      const v = gridHolds(h, s, i, end);
      if (v === HOLDS) return { start: s, interval: i };
      if (v === UNDECIDED) open[keep++] = i;
      if (search && !charge(search, steps + 1)) {
        k++;
        break;
      }
    }
    // Passing over the open list is work too (a unit per interval), or it grows with the hold unbudgeted.
    const scanned = k;
    for (; k < open.length; k++) open[keep++] = open[k]!;
    open.length = keep;
    if (search && !charge(search, scanned)) return null;
    m.lastEnd = end;
    for (let i = m.hiDone + 1; i <= hi; i++) {
      const v = gridHolds(h, s, i, end);
      m.hiDone = i;
      if (v === HOLDS) return { start: s, interval: i };
      if (v === UNDECIDED) m.open.push(i);
      if (search && !charge(search, steps + 1)) return null;
    }
  }
  return null;
}

function charge(search: GridSearch, units: number): boolean {
  search.spent += units;
  if (search.spent <= search.granted) return true;
  search.exhausted = true;
  return false;
}

/** Zero markers tried as the enablement point per search: each costs a pass over every period. */
const MAX_GRID_CANDIDATES = 4;

function allZero(h: Hold, a: number, b: number): boolean {
  for (let x = a; x < b; x++) if (h.at(x) !== 0) return false;
  return true;
}

const FAILS = 0;
const HOLDS = 1;
/** The held octets ran out before the markers decided: try again with more. */
const UNDECIDED = 2;
/** Marker slots the last gridHolds looked at (its cost; a module variable, not an allocation per call). */
let steps = 0;
/** Markers looked at before a grid that has not shown its evidence is given up. */
const MAX_GRID_MARKERS = 16;

/**
 * Octets between the markers that look like markers too (two equal, non-zero 16-bit halves) in
 * more than an eighth of the places looked at: filler whose halves repeat everywhere (a counter written twice, a
 * repeated pattern), where any period finds "markers". In PDUs of real data such a pair is a
 * 1-in-65536 chance; zeros are left out (zero-filled PDUs are real data).
 */
function markerLikeBetween(h: Hold, s: number, i: number, end: number): boolean {
  let like = 0;
  let looked = 0;
  for (let k = 0; k < 16; k++) {
    const gap = s + k * i + MARKER_LEN; // first octet after marker k
    const room = i - 2 * MARKER_LEN; // the last place a 4-octet look fits before marker k+1
    // Four consecutive places midway to the next marker: filler aligned to any phase shows in one.
    const q = gap + Math.max(0, (room >> 1) - 2);
    for (let j = 0; j < 4 && j <= room; j++) {
      if (q + j + MARKER_LEN > end) break;
      looked++;
      const a = h.u16(q + j);
      if (a !== 0 && a === h.u16(q + j + 2)) like++;
    }
  }
  steps += looked;
  return like >= 2 && like * 8 >= looked;
}

/**
 * Whether markers every `i` octets from the zero marker at `s` hold. Evidence filler cannot give
 * (periodic octets, or octets whose 16-bit halves repeat, pass a test of copies alone everywhere):
 * at least three markers whose copies agree, two distinct non-zero offsets, pointers that never
 * contradict each other, and at least one PDU start confirmed by two markers (a marker inside the
 * stretch the previous one announced points at the same octet: §6, a PDU longer than the interval).
 */
function gridHolds(h: Hold, s: number, i: number, end: number): number {
  let n = 0;
  let nz1 = 0;
  let nz2 = 0;
  let confirmed = 0;
  // One bad marker (copies that differ, or a pointer the others contradict) is reported once
  // framing is found; a second one in the first few means this is no marker grid.
  let bad = 0;
  let target = s + MARKER_LEN; // the zero marker: the first PDU starts right after it
  steps = 0;
  for (let p = s + i; ; p += i) {
    steps++;
    if (p + MARKER_LEN > end) return UNDECIDED;
    const a = h.u16(p);
    if (target === p) target = p + MARKER_LEN;
    if (a !== h.u16(p + 2)) {
      if (++bad > 1 || n === 0) return FAILS;
      continue;
    }
    const q = p + MARKER_LEN + a;
    // A marker inside the stretch a previous marker announced must announce the same PDU start.
    if (target > p) {
      if (q !== target) {
        if (++bad > 1 || n === 0) return FAILS;
        continue;
      }
      confirmed++;
    }
    target = q;
    if (a !== 0) {
      if (nz1 === 0) nz1 = a;
      else if (a !== nz1 && nz2 === 0) nz2 = a;
    }
    n++;
    if (n >= 3 && nz2 !== 0 && confirmed > 0) return markerLikeBetween(h, s, i, end) ? FAILS : HOLDS;
    // Markers that keep saying "the next PDU starts right after me" are zeros, not a grid.
    if (n >= MAX_GRID_MARKERS) return FAILS;
  }
}
