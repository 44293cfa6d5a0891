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
 *   different, and whose pointers do not contradict each other.
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

/** A marker grid starting at one of the candidates (4 zero octets there), or null. */
export function findMarkerGrid(
  h: Hold,
  candidates: readonly number[],
  interval: number | null,
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
    for (let i = lo; i <= hi; i++) {
      if (gridHolds(h, s, i, end)) return { start: s, interval: i };
    }
  }
  return null;
}

/** Zero markers tried as the enablement point per search: each costs a pass over every period. */
const MAX_GRID_CANDIDATES = 4;

function allZero(h: Hold, a: number, b: number): boolean {
  for (let x = a; x < b; x++) if (h.at(x) !== 0) return false;
  return true;
}

function gridHolds(h: Hold, s: number, i: number, end: number): boolean {
  let n = 0;
  const nonzero: number[] = [];
  // One bad marker (copies that differ, or a pointer the others contradict) is reported once
  // framing is found; a second one in the first few means this is no marker grid.
  let bad = 0;
  let target = s + MARKER_LEN; // the zero marker: the first PDU starts right after it
  for (let p = s + i; p + MARKER_LEN <= end; p += i) {
    const a = h.u16(p);
    if (target === p) target = p + MARKER_LEN;
    if (a !== h.u16(p + 2)) {
      if (++bad > 1 || n === 0) return false;
      continue;
    }
    const q = p + MARKER_LEN + a;
    // A marker inside the stretch a previous marker announced must announce the same PDU start.
    if (target > p && q !== target) {
      if (++bad > 1 || n === 0) return false;
      continue;
    }
    target = q;
    if (a !== 0 && !nonzero.includes(a)) nonzero.push(a);
    n++;
    if (n >= 3 && nonzero.length >= 2) return true;
    // Markers that keep saying "the next PDU starts right after me" are zeros, not a grid.
    if (n >= 8) break;
  }
  return false;
}
