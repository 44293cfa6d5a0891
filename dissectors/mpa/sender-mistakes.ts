/**
 * Diagnosis of a broken ULPDU_Length chain: which mistake of the sender makes the octets frame again.
 *
 * When an FPDU is implausible the moment it is framed (its CRC fails, or without CRC its DDP/RDMAP
 * header cannot be one), the FPDU before it often carries the cause: a PAD of the wrong size, a
 * ULPDU_Length that counts more than the ULPDU or is little-endian, markers where none were asked
 * for (or none where they were), or markers at the wrong phase. Each hypothesis below is a way of
 * framing; the one under which the following octets frame as a chain of plausible FPDUs is kept.
 * Pure functions over held bytes: the caller (MpaFlow) decides what to report and how to go on.
 */
import { FpduFramer, rfcPad, type FramedFpdu, type FramerParams, type FramingMistake } from './framer.js';

/** What MPA knows about the DDP header of a ULPDU (injected: MPA knows nothing of DDP). */
export type HeaderCheck = (head: Uint8Array, length: number) => boolean;

/** Where the hypotheses can put the marker phase. */
export interface MarkerOrigins {
  /** Stream offset of SeqStart (first octet after this sender's startup frame), when known. */
  seqStart: number | null;
  /** Stream offset of the first octet of this sender's startup frame, when seen. */
  startupStart: number | null;
}

export interface Hypothesis {
  /** Rule id reported when it is kept. */
  readonly id: string;
  /** Framing parameters under the hypothesis, or null where it does not apply. */
  params(rfc: FramerParams, o: MarkerOrigins): FramerParams | null;
  /**
   * Plain words for the finding, from the first FPDU it changed; `peerAsked` names the peer's
   * startup frame, null when MPA was enabled without startup frames (pre-standard).
   */
  describe(f: FramedFpdu, rfc: FramerParams, peerAsked: string | null): string;
}

const mistake = (id: string, m: Partial<FramingMistake> = {}): FramingMistake => ({
  id,
  pad: 'rfc',
  lengthExtra: 0,
  lengthLittleEndian: false,
  always: false,
  ...m,
});
const mod512 = (v: number) => ((v % 512) + 512) % 512;
const octets = (n: number, s: string) => `${n} octet${n === 1 ? '' : 's'}${s}`;

/** In the order they are tried: the commonest real mistakes first. */
export const HYPOTHESES: readonly Hypothesis[] = [
  {
    id: 'mpa.pad-miscomputed',
    params: (rfc) => ({ ...rfc, mistake: mistake('mpa.pad-miscomputed', { pad: 'len-plus-2' }) }),
    describe: (f) =>
      `PAD is ${octets(f.pad, '')} where RFC 5044 section 4.2 requires ${rfcPad(f.ulpduLength)} (ULPDU_Length ${f.ulpduLength}); the sender appears to pad to (ULPDU_Length+2) mod 4 instead of (4 - (ULPDU_Length+2) mod 4) mod 4`,
  },
  {
    id: 'mpa.pad-omitted',
    params: (rfc) => ({ ...rfc, mistake: mistake('mpa.pad-omitted', { pad: 'none' }) }),
    describe: (f) =>
      `no PAD after a ${f.ulpduLength}-octet ULPDU where RFC 5044 section 4.2 requires ${rfcPad(f.ulpduLength)}; the sender appears to omit PAD`,
  },
  {
    id: 'mpa.ulpdu-length-counts-header',
    params: (rfc) => ({ ...rfc, mistake: mistake('mpa.ulpdu-length-counts-header', { lengthExtra: 2 }) }),
    describe: (f) =>
      `ULPDU_Length ${f.ulpduLength + 2} counts its own 2 octets: the ULPDU is ${f.ulpduLength} octets, and RFC 5044 section 4.2 counts the ULPDU only`,
  },
  {
    id: 'mpa.ulpdu-length-counts-crc',
    params: (rfc) => ({ ...rfc, mistake: mistake('mpa.ulpdu-length-counts-crc', { lengthExtra: 4 }) }),
    describe: (f) =>
      `ULPDU_Length ${f.ulpduLength + 4} counts the 4-octet CRC: the ULPDU is ${f.ulpduLength} octets, and RFC 5044 section 4.2 counts the ULPDU only`,
  },
  {
    id: 'mpa.ulpdu-length-byte-order',
    params: (rfc) => ({ ...rfc, mistake: mistake('mpa.ulpdu-length-byte-order', { lengthLittleEndian: true }) }),
    describe: (f) => {
      const wire = ((f.ulpduLength & 0xff) << 8) | (f.ulpduLength >> 8);
      return `ULPDU_Length sent least significant octet first: read in network byte order (RFC 5044 section 4.2) it is ${wire}, the sender meant ${f.ulpduLength}`;
    },
  },
  {
    id: 'mpa.markers-unrequested',
    params: (rfc, o) =>
      rfc.markers || o.seqStart === null
        ? null
        : {
            ...rfc,
            markers: true,
            markerBase: o.seqStart,
            mistake: mistake('mpa.markers-unrequested', { always: true }),
          },
    describe: (_f, _rfc, peerAsked) =>
      peerAsked === null
        ? 'the sender inserts markers every 512 octets although the FPDUs from its enablement point had none'
        : `the sender inserts markers every 512 octets although ${peerAsked} did not ask for them (M=0; RFC 5044 sections 4.3 and 7.1.1)`,
  },
  {
    id: 'mpa.marker-phase',
    // Counted from the first octet of the TCP stream (stream offset 0).
    params: (rfc, o) =>
      !rfc.markers || o.seqStart === null || mod512(o.seqStart) === 0
        ? null
        : { ...rfc, markerBase: 0, mistake: mistake('mpa.marker-phase', { always: true }) },
    describe: () =>
      `markers are placed every 512 octets counted from the first octet of the TCP stream, not from SeqStart (the first octet after the sender's startup frame; RFC 5044 section 4.3)`,
  },
  {
    id: 'mpa.marker-phase',
    // Counted from the first octet of the sender's startup frame.
    params: (rfc, o) =>
      !rfc.markers ||
      o.seqStart === null ||
      o.startupStart === null ||
      mod512(o.startupStart - o.seqStart) === 0 ||
      mod512(o.startupStart) === 0
        ? null
        : { ...rfc, markerBase: o.startupStart, mistake: mistake('mpa.marker-phase', { always: true }) },
    describe: () =>
      `markers are placed every 512 octets counted from the first octet of the sender's startup frame, not from SeqStart (the first octet after it; RFC 5044 section 4.3)`,
  },
  {
    id: 'mpa.markers-missing',
    params: (rfc) =>
      rfc.markers ? { ...rfc, markers: false, mistake: mistake('mpa.markers-missing', { always: true }) } : null,
    describe: (_f, _rfc, peerAsked) =>
      peerAsked === null
        ? 'the sender stops inserting markers: the FPDUs from its enablement point had one every 512 octets (draft-ietf-rddp-mpa-00 section 7.1), this one has none at the grid points inside it'
        : `the sender inserts no markers although ${peerAsked} asked for them (M=1; RFC 5044 sections 4.3 and 7.1.1)`,
  },
];

/** An FPDU that could be one as framed: CRC good (or only byte-swapped), else a DDP header; markers consistent. */
export function fpduPlausible(f: FramedFpdu, params: FramerParams, header: HeaderCheck): boolean {
  if (params.crc) {
    if (f.crcStatus !== 'good' && f.crcStatus !== 'byte-swapped') return false;
  } else if (!header(f.head, f.ulpduLength)) return false;
  for (const m of f.markers) if (m.reserved !== 0 || (m.fpduptr & ~3) !== m.expected) return false;
  return true;
}

export interface ChainProbe {
  /** Consecutive plausible FPDUs (an exempt first one included). */
  count: number;
  /** Framing under these parameters met an implausible FPDU. */
  bad: boolean;
  /** The chain ended exactly at the end of the bytes. */
  endsAtEnd: boolean;
  /** First FPDU whose framing the mistake changed, if any. */
  firstAffected: FramedFpdu | null;
  /** Stream offset where the chain ends. */
  end: number;
}

/** Frames held bytes from `start` under `params` and counts plausible FPDUs, up to `need`. */
export function probeChain(
  bytes: Uint8Array,
  base: number,
  baseSeq: number,
  start: number,
  params: FramerParams,
  header: HeaderCheck,
  exemptFirst: boolean,
  need: number,
  minSpan = 0,
): ChainProbe {
  const r: ChainProbe = { count: 0, bad: false, endsAtEnd: false, firstAffected: null, end: start };
  const fr = new FpduFramer(params, start, baseSeq, {
    onFpdu: (f) => {
      if (!(exemptFirst && r.count === 0) && !fpduPlausible(f, params, header)) {
        r.bad = true;
        return false;
      }
      if (f.senderMistake && r.firstAffected === null) r.firstAffected = f;
      r.count++;
      r.end = f.start + f.wireSize;
      return r.count < need || r.end - start < minSpan;
    },
  });
  fr.push(bytes, start, 0, false, false, start - base, bytes.length);
  r.endsAtEnd = !r.bad && fr.atBoundary && fr.position === base + bytes.length;
  return r;
}

export interface BreakQuery {
  bytes: Uint8Array;
  base: number;
  baseSeq: number;
  /** No more bytes will come. */
  final: boolean;
  /** Parameters the direction was framing with when it broke. */
  current: FramerParams;
  /** RFC 5044 parameters of the direction (negotiated or inferred). */
  rfc: FramerParams;
  origins: MarkerOrigins;
  /** Start of the last FPDU that framed plausibly (null: the break is the direction's first FPDU). */
  prevStart: number | null;
  /** Start of the implausible FPDU. */
  badStart: number;
  header: HeaderCheck;
}

export type Diagnosis =
  | { kind: 'intact' }
  | { kind: 'mistake'; hypothesis: Hypothesis; params: FramerParams; start: number; first: FramedFpdu }
  | { kind: 'more' }
  | { kind: 'none' };

/** FPDUs after the one a hypothesis is about that must frame plausibly (RFC 5044 §6 resync uses chains too). */
export const CHAIN_AFTER = 3;

function accepted(
  p: ChainProbe,
  need: number,
  final: boolean,
  least: number,
  start = 0,
  minSpan = 0,
): 'ok' | 'bad' | 'more' {
  if (p.count >= need && p.end - start >= minSpan) return 'ok';
  if (p.bad) return 'bad';
  if (final) return p.endsAtEnd && p.count >= least ? 'ok' : 'bad';
  return 'more';
}

/**
 * Decides what broke: nothing (the implausible FPDU is a bad one on its own and the chain goes on
 * after it), a sender mistake (with where to frame again under it), not yet known, or nothing known.
 */
export function diagnoseBreak(q: BreakQuery): Diagnosis {
  // A single bad FPDU whose successors frame: framing is intact.
  const intact = accepted(
    probeChain(q.bytes, q.base, q.baseSeq, q.badStart, q.current, q.header, true, 1 + CHAIN_AFTER),
    1 + CHAIN_AFTER,
    q.final,
    1,
  );
  if (intact === 'ok') return { kind: 'intact' };
  let waiting = intact === 'more';
  // With CRC the broken FPDU shows itself (its CRC is read at the wrong octets); without it the
  // FPDU before the break carried the mistake and its successor shows it.
  const starts = (q.rfc.crc ? [q.badStart, q.prevStart] : [q.prevStart, q.badStart]).filter(
    (s): s is number => s !== null,
  );
  for (const h of HYPOTHESES) {
    const params = h.params(q.rfc, q.origins);
    if (!params || sameFraming(params, q.current)) continue;
    for (const s of starts) {
      const need = 1 + CHAIN_AFTER;
      // A marker hypothesis must have passed marker positions to be told from the others.
      const span = params.markers !== q.rfc.markers || params.markerBase !== q.rfc.markerBase ? 2 * 512 : 0;
      const p = probeChain(q.bytes, q.base, q.baseSeq, s, params, q.header, false, need, span);
      // At the end of the stream, a chain of two must frame; with CRC, one FPDU whose CRC verifies
      // only under the hypothesis is proof enough (a 32-bit check, as for enablement).
      const v = accepted(p, need, q.final, q.rfc.crc ? 1 : 2, s, span);
      if (v === 'ok' && p.firstAffected)
        return { kind: 'mistake', hypothesis: h, params, start: s, first: p.firstAffected };
      if (v === 'more') waiting = true;
    }
  }
  return waiting && !q.final ? { kind: 'more' } : { kind: 'none' };
}

function sameFraming(a: FramerParams, b: FramerParams): boolean {
  return (
    a.markers === b.markers &&
    (!a.markers || mod512(a.markerBase - b.markerBase) === 0) &&
    (a.mistake?.id ?? null) === (b.mistake?.id ?? null)
  );
}
