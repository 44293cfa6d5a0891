/**
 * MPA enabled without startup frames (pre-standard stacks): before the Request/Reply frames existed,
 * MPA began at a point both ULPs agreed on (a well-known port, a service locator, or a streaming-mode
 * Hello / Hello ACK exchange: draft-elzur-iwarp-mpa-tcp-analysis-00 §8.1), with a marker of value 0
 * right there and one every 512 octets after it (draft-ietf-rddp-mpa-00 §7.1, rule 7 of §8.1). This
 * finds that point in the first octets of a stream whose start was captured.
 *
 * Evidence, all required: four zero octets at the candidate point, the FPDUs after it framed with
 * markers every 512 octets from there, and their CRCs verifying (draft-00 §7.2: the CRC covers the
 * leading marker). Random data and plain protocols do not pass that; RFC 5044 connections never get
 * here (their startup key is found first).
 */
import { FpduFramer, type FramedFpdu, type FramerParams } from './framer.js';
import { MAX_ULPDU_LENGTH, vouches } from './lock-on.js';
import type { MpaDirection } from './mpa-direction.js';
import type { MpaFlowSummary } from './mpa-types.js';
import type { StartupRecord } from './startup.js';

/** The enablement point is searched in the first octets of the stream only (after a short Hello exchange). */
export const ENABLEMENT_WINDOW = 64 * 1024;

export interface EnablementQuery {
  /** Held bytes and the stream offset of bytes[0]. */
  bytes: Uint8Array;
  base: number;
  baseSeq: number;
  /** No more bytes will come: one verified FPDU that ends exactly at the end is enough. */
  final: boolean;
  /** DDP header plausibility: the first FPDU's ULPDU must start like a DDP segment. */
  plausible: (head: Uint8Array, length: number) => boolean;
  /** Only this stream offset (`--mpa ...,start=SEQ`), else every offset in the window. */
  at?: number | null;
  /** Markers known (`--mpa`), else a zero marker is required. */
  markers?: boolean | null;
  /** CRC known (`--mpa`), else required. */
  crc?: boolean | null;
  /** Candidates below this stream offset were ruled out by an earlier search (bytes never change). */
  from?: number;
  /** Set by the search: candidates below this offset are ruled out, whatever octets come later. */
  decidedTo?: number;
  /** Octets this search may frame (default WORK); set by the search to what it framed. */
  budget?: number;
  spent?: number;
}

export interface Enablement {
  /** Stream offset of the enablement point (the zero marker, or the first ULPDU_Length without markers). */
  offset: number;
  params: FramerParams;
  fpdus: number;
  /** Markers within the verified FPDUs that only the draft-00 rule, or only the RFC 5044 rule, explains. */
  draftMarkers: number;
  rfcMarkers: number;
  evidence: string;
}

/** FPDUs that must verify before a candidate counts (one is enough when it ends the stream). */
const NEED = 2;
/** Octets framed per search at most: zero-filled data can hold many candidates that fail late. */
const WORK = 8 * 1024 * 1024;
/** Octets framed per direction over all its searches (a stream that keeps failing late gives up). */
export const ENABLEMENT_BUDGET = 32 * 1024 * 1024;

interface Probe {
  /** An FPDU failed: this candidate is not the enablement point, whatever follows. */
  bad: boolean;
  count: number;
  /** Octets the framer consumed. */
  framed: number;
  endsAtEnd: boolean;
  draft: number;
  rfc: number;
}

/**
 * Frames from `offset` and counts FPDUs whose CRC verifies. Marker contents are not part of the
 * evidence (a host-byte-order marker is still a marker at its grid point); they decide only which
 * FPDUPTR rule the sender follows.
 */
function probe(q: EnablementQuery, offset: number, params: FramerParams): Probe {
  let count = 0;
  let draft = 0;
  let rfc = 0;
  let bad = false;
  const check = (f: FramedFpdu): boolean => {
    if (!vouches(f, params.crc, q.plausible)) {
      bad = true;
      return false;
    }
    for (const m of f.markers) {
      if (m.expected === 0) continue;
      const ptr = m.fpduptr & ~3;
      // draft-00 counts from the FPDU's first octet (the framer's expectation under 'fpdu');
      // RFC 5044 from the ULPDU_Length field, 4 octets less when a marker leads the FPDU.
      const fromLen = m.offset - f.lenOffset;
      if (ptr === m.expected && ptr !== fromLen) draft++;
      else if (ptr === fromLen && ptr !== m.expected) rfc++;
    }
    count++;
    return count < NEED;
  };
  const fr = new FpduFramer(params, offset, q.baseSeq, { onFpdu: check });
  fr.push(q.bytes, offset, 0, false, false, offset - q.base, q.bytes.length);
  return {
    bad,
    count,
    draft,
    rfc,
    framed: fr.position - offset,
    endsAtEnd: !bad && fr.atBoundary && fr.position === q.base + q.bytes.length,
  };
}

/** A cheap first look at a candidate: a possible ULPDU_Length and a DDP header after it. */
function headLooksRight(q: EnablementQuery, i: number): boolean {
  const b = q.bytes;
  if (i + 6 > b.length) return false;
  const len = (b[i]! << 8) | b[i + 1]!;
  // A DDP segment is at least its tagged header (14 octets, RFC 5041 §4): cheap before any view.
  if (len < 14 || len > MAX_ULPDU_LENGTH) return false;
  return q.plausible(b.subarray(i + 2, Math.min(b.length, i + 2 + Math.min(len, 18))), len);
}

/** Finds the enablement point in held bytes, or null (not yet, or not there). */
export function findEnablement(q: EnablementQuery): Enablement | null {
  const b = q.bytes;
  const crcs = q.crc === null || q.crc === undefined ? [true] : [q.crc];
  const markers = q.markers ?? true;
  const from = q.at ?? Math.max(q.base, q.from ?? q.base);
  const to = q.at ?? Math.min(q.base + b.length - 4, ENABLEMENT_WINDOW);
  let work = 0;
  // Candidates before `open` are decided (not the point); from the first undecided one on, later
  // octets may still make one the point.
  let open = -1;
  let off = from;
  const budget = q.budget ?? WORK;
  for (; off <= to && work < budget; off++) {
    const i = off - q.base;
    if (i < 0) continue;
    // A candidate is judged once its marker, length and DDP header are held.
    if (i + (markers ? 24 : 20) > b.length && !q.final) {
      if (open < 0) open = off;
      continue;
    }
    if (i + 4 > b.length) continue;
    if (markers) {
      // draft-00 §7.1: the first marker, value 0, sits at the enablement point.
      if (b[i] !== 0 || b[i + 1] !== 0 || b[i + 2] !== 0 || b[i + 3] !== 0) continue;
      if (!headLooksRight(q, i + 4)) continue;
    } else if (!headLooksRight(q, i)) continue;
    for (const crc of crcs) {
      const params: FramerParams = { markers, markerBase: off, crc, fpduptrFrom: 'fpdu' };
      const r = probe(q, off, params);
      work += 64 + r.framed;
      if (!r.bad && r.count < NEED && open < 0) open = off;
      // One FPDU whose CRC verifies over its zero marker, its markers and a DDP header is proof
      // enough (a 32-bit check): what breaks after it is the sender's framing to diagnose, not a
      // reason to look for MPA elsewhere. Without a CRC, two chained FPDUs must frame.
      if (r.count >= NEED || (q.final && r.count >= 1 && r.endsAtEnd) || (crc && r.count >= 1)) {
        // The rule the sender follows: draft-00's unless its markers only fit RFC 5044's.
        if (r.rfc > r.draft) params.fpduptrFrom = 'length';
        return {
          offset: off,
          params,
          fpdus: r.count,
          draftMarkers: r.draft,
          rfcMarkers: r.rfc,
          evidence: markers
            ? `zero marker at the enablement point, ${r.count} FPDU(s) with markers every 512 octets from it${crc ? ' and valid CRCs' : ''}`
            : `${r.count} FPDU(s) from the enablement point${crc ? ' with valid CRCs' : ''}`,
        };
      }
    }
  }
  q.decidedTo = open >= 0 ? open : off;
  q.spent = work;
  return null;
}

/**
 * `--mpa ...,start=SEQ`: is `off` the enablement point under the parameters given? 'more' while the
 * first FPDUs are not all held yet (and the stream goes on).
 */
export function judgeEnablementAt(q: EnablementQuery, off: number, params: FramerParams): Enablement | 'no' | 'more' {
  const i = off - q.base;
  const b = q.bytes;
  if (i < 0) return 'no';
  if (i + 4 > b.length) return q.final ? 'no' : 'more';
  if (params.markers && (b[i] !== 0 || b[i + 1] !== 0 || b[i + 2] !== 0 || b[i + 3] !== 0)) return 'no';
  const p: FramerParams = { ...params, markerBase: off };
  const r = probe(q, off, p);
  if (r.count >= NEED || (q.final && r.count >= 1 && r.endsAtEnd)) {
    if (p.markers && r.rfc > r.draft) p.fpduptrFrom = 'length';
    return {
      offset: off,
      params: p,
      fpdus: r.count,
      draftMarkers: r.draft,
      rfcMarkers: r.rfc,
      evidence: `${r.count} FPDU(s) verified from the given start`,
    };
  }
  return r.bad || q.final ? 'no' : 'more';
}

// ---------------------------------------------------------------- applied to a connection

/** What enabling MPA without startup frames needs of the flow (MpaFlow). */
export interface EnablementHost {
  detection: MpaFlowSummary['detection'] | null;
  crc: boolean | null;
  readonly request: StartupRecord | null;
  readonly reply: StartupRecord | null;
  direction(dir: 0 | 1): MpaDirection;
  find(d: MpaDirection, rule: string, seq: number | null, frames: readonly number[], message: string): void;
}

/** Under `--mpa ...,start=`, MPA is a given: only CRCs (and markers) vouch for FPDUs. */
function acceptAll(): boolean {
  return true;
}

/**
 * Can this direction still show MPA enabled without startup frames? Its first octet was captured
 * (SYN seen) and is still held (a gap or a trim moves the held octets' base past 0), no startup
 * frame was seen on the connection, the search has budget left, and the flow is not forced by
 * `--mpa` (which has its own `start=`).
 */
export function enablementOpen(flow: EnablementHost, d: MpaDirection): boolean {
  return (
    (flow.detection === null || flow.detection === 'prestandard') &&
    d.info.synSeen === true &&
    d.enableSpent < ENABLEMENT_BUDGET &&
    d.log.base === 0 &&
    flow.request === null &&
    flow.reply === null
  );
}

/** MPA enabled without startup frames at `en.offset`: frame from there (draft-00 §7.1, seed 002 §8.1). */
export function enable(flow: EnablementHost, d: MpaDirection, en: Enablement): void {
  flow.detection ??= 'prestandard';
  if (flow.crc === null) flow.crc = en.params.crc;
  d.seqStartOffset = en.offset;
  d.seqStartExact = true;
  d.enabledAt = en.offset;
  d.enabledFrame = d.log.frameAt(en.offset);
  const seq = d.seqOf(en.offset);
  const rule = !en.params.markers
    ? ''
    : en.params.fpduptrFrom === 'length'
      ? `; FPDUPTR counted from the ULPDU_Length field (RFC 5044 §4.3: ${en.rfcMarkers} marker(s) fit only that)`
      : "; FPDUPTR counted from the FPDU's first octet (draft-ietf-rddp-mpa-00 §7.1)";
  flow.find(
    d,
    'mpa.enabled-without-startup',
    seq,
    [d.enabledFrame],
    `MPA enabled without startup frames at seq ${seq}${en.offset === 0 ? " (the stream's first octet)" : ` after ${en.offset} octets of streaming-mode data`} (${en.evidence}); markers ${en.params.markers ? 'on' : 'off'}, CRC ${en.params.crc ? 'on' : 'off'}${rule}`,
  );
  // Octets before the enablement point are streaming-mode data (a Hello exchange), not skipped MPA.
  d.startFramer(en.params, en.offset);
  d.replayInto(en.offset);
}

/**
 * `--mpa ...,start=SEQ`: MPA was enabled at `off`. Frame from there when the octets bear it out;
 * octets there that are not MPA are the analysis draft's enablement error (a receiver expecting
 * MPA gets octet-stream data, seed 002 §8.1, Figure 4 and 5).
 */
export function forcedEnablement(
  flow: EnablementHost,
  d: MpaDirection,
  off: number,
  final: boolean,
  holdBytes: number,
): void {
  const v = judgeEnablementAt(
    { bytes: d.log.bytes, base: d.log.base, baseSeq: d.info.baseSeq, final, plausible: acceptAll },
    off,
    d.params!,
  );
  if (v === 'more') {
    if (d.log.length <= holdBytes) return;
  }
  if (v !== 'more' && v !== 'no') {
    d.params = v.params;
    d.enabledAt = off;
    d.enabledFrame = d.log.frameAt(off);
    d.seqStartExact = true;
    d.startFramer(v.params, off);
    d.replayInto(off);
    return;
  }
  const seq = d.seqOf(off);
  const b = d.log.bytes;
  const i = off - d.log.base;
  const head = Array.from(b.subarray(i, Math.min(b.length, i + 8)), (x) => x.toString(16).padStart(2, '0')).join(' ');
  flow.find(
    d,
    'mpa.enablement-error',
    seq,
    d.log.framesIn(off, Math.min(d.log.end, off + 64)),
    `MPA was to start at seq ${seq} (--mpa start=) but the octets there (${head}) are not ${d.params!.markers ? 'a zero marker leading ' : ''}FPDUs with ${d.params!.crc ? 'valid CRCs' : 'DDP headers'}: octet-stream data where MPA was expected (seed 002 section 8.1, Figure 4 and 5)`,
  );
  d.enablementReported = true;
  d.seqStartExact = true;
  d.state = 'hunt';
  d.huntReason = 'midstream';
}

/**
 * Seed 002 §8, Figures 3 to 5 ("MPA enablement error"): one side enabled MPA while the other sent
 * octet-stream data after that point which never framed as MPA. Judged when both directions ended.
 */
export function checkEnablementError(flow: EnablementHost): void {
  if (flow.detection !== 'prestandard' && flow.detection !== 'forced') return;
  for (const dir of [0, 1] as const) {
    const a = flow.direction(dir);
    const b = flow.direction(dir === 0 ? 1 : 0);
    if (a.enabledAt === null || b.enabledAt !== null || b.fpdus > 0 || !b.unframed || b.enablementReported) continue;
    const after = b.unframed.filter(([, fr]) => fr > a.enabledFrame);
    if (after.length === 0) continue;
    const [seq] = after[0]!;
    flow.find(
      b,
      'mpa.enablement-error',
      seq,
      after.map(([, fr]) => fr),
      `${a.info.from} enabled MPA at seq ${a.seqOf(a.enabledAt)} (frame ${a.enabledFrame}) but ${b.info.from} sent octet-stream data from seq ${seq} that never frames as MPA: one side is not MPA-enabled (seed 002 section 8, Figure 4 and 5)`,
    );
  }
}
