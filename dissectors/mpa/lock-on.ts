import { FpduFramer, MARKER_INTERVAL, type FramerParams, type FramedFpdu } from './framer.js';

/** ULPDU_Length above this is impossible (RFC 5044 §5.2). */
export const MAX_ULPDU_LENGTH = 64768;

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
  endsAtEnd: boolean;
}

/** Frames from `offset` with `params` and counts consecutive FPDUs that carry their own evidence. */
function probe(q: LockQuery, offset: number, params: FramerParams, need: number): ProbeResult {
  let count = 0;
  let bad = false;
  const check = (f: FramedFpdu): boolean => {
    if (f.ulpduLength > MAX_ULPDU_LENGTH) bad = true;
    else if (params.crc && f.crcStatus !== 'good' && f.crcStatus !== 'byte-swapped') bad = true;
    else if (!params.crc && !q.plausible(f.head, f.ulpduLength)) bad = true;
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
    return count < need;
  };
  const fr = new FpduFramer(params, offset, q.baseSeq, check);
  const from = offset - q.base;
  fr.push(q.bytes, offset, 0, false, false, from, q.bytes.length);
  return { count, endsAtEnd: !bad && fr.atBoundary && fr.position === q.base + q.bytes.length };
}

function accepted(r: ProbeResult, need: number, final: boolean): boolean {
  return r.count >= need || (final && r.count >= 1 && r.endsAtEnd);
}

const mod = (a: number, m: number) => ((a % m) + m) % m;
const HEAD_SCRATCH = new Uint8Array(18);

/** Marker phases (offset mod 512) where every marker slot in the buffer looks like a marker. */
function markerPhases(q: LockQuery): number[] {
  const b = q.bytes;
  const out: number[] = [];
  const slots = Math.floor((b.length - 4) / MARKER_INTERVAL) + 1;
  if (slots < 2) return out;
  for (let p = 0; p < MARKER_INTERVAL && p + 4 <= b.length; p++) {
    if (q.alignBase !== null && mod(q.base + p - q.alignBase, 4) !== 0) continue;
    let ok = true;
    let n = 0;
    for (let i = p; i + 4 <= b.length; i += MARKER_INTERVAL) {
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

/** With markers at a known phase: lock through the first marker whose FPDUPTR leads to a verified FPDU. */
function lockViaMarkers(q: LockQuery, markerBase: number, crc: boolean, need: number): LockResult | null {
  const params: FramerParams = { markers: true, markerBase, crc };
  const b = q.bytes;
  const tried = new Set<number>();
  if (q.preferStart) {
    tried.add(q.base);
    const r = probe(q, q.base, params, need);
    if (accepted(r, need, q.final)) return { offset: q.base, params, fpdus: r.count, evidence: 'framing continues where it was' };
  }
  const first = mod(markerBase - q.base, MARKER_INTERVAL);
  for (let i = first; i + 4 <= b.length; i += MARKER_INTERVAL) {
    const ptr = ((b[i + 2]! << 8) | b[i + 3]!) & ~3;
    const target = q.base + i - ptr;
    if (target < q.base || tried.has(target)) continue;
    tried.add(target);
    const r = probe(q, target, params, need);
    if (accepted(r, need, q.final)) {
      return { offset: target, params, fpdus: r.count, evidence: `marker at stream offset ${q.base + i} (FPDUPTR ${ptr})` };
    }
  }
  return null;
}

/** Without markers: the first offset where ULPDU_Length chains across `need` verified FPDUs. */
function lockViaChain(q: LockQuery, crc: boolean, need: number): LockResult | null {
  const params: FramerParams = { markers: false, markerBase: 0, crc };
  const b = q.bytes;
  for (let i = 0; i + 6 <= b.length; i++) {
    if (q.alignBase !== null && mod(q.base + i - q.alignBase, 4) !== 0) continue;
    const len = (b[i]! << 8) | b[i + 1]!;
    if (len > MAX_ULPDU_LENGTH) continue;
    // Cheap pre-filter: a DDP header must follow the length field (copied into scratch: no allocation).
    const n = Math.min(b.length - i - 2, HEAD_SCRATCH.length);
    for (let k = 0; k < n; k++) HEAD_SCRATCH[k] = b[i + 2 + k]!;
    if (!q.plausible(n === HEAD_SCRATCH.length ? HEAD_SCRATCH : HEAD_SCRATCH.subarray(0, n), len)) continue;
    const r = probe(q, q.base + i, params, need);
    if (accepted(r, need, q.final)) {
      return { offset: q.base + i, params, fpdus: r.count, evidence: `${r.count} chained FPDUs with ${crc ? 'valid CRCs' : 'plausible DDP headers'}` };
    }
  }
  return null;
}

/**
 * Finds where FPDU framing can (re)start in held bytes: after loss, after a framing error, or in a
 * capture that starts mid-stream (RFC 5044 §6: markers exist so a receiver can find FPDUs again).
 */
export function findLock(q: LockQuery): LockResult | null {
  if (q.bytes.length < 4) return null; // not even one minimal FPDU
  const crcs: boolean[] = q.crc === null ? [true, false] : [q.crc];
  if (q.markers !== false) {
    const phases = q.markerBase !== null ? [mod(q.markerBase, MARKER_INTERVAL)] : markerPhases(q);
    for (const crc of crcs) {
      for (const ph of phases) {
        const r = lockViaMarkers(q, ph, crc, crc ? 2 : 3);
        if (r) return r;
      }
    }
  }
  if (q.markers !== true) {
    for (const crc of crcs) {
      if (q.preferStart) {
        const params: FramerParams = { markers: false, markerBase: 0, crc };
        const r = probe(q, q.base, params, 3);
        if (accepted(r, 3, q.final)) return { offset: q.base, params, fpdus: r.count, evidence: 'framing continues where it was' };
      }
      const r = lockViaChain(q, crc, 3);
      if (r) return r;
    }
  }
  return null;
}
