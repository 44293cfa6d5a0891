/**
 * Each framed FPDU: whether it can be one at all (else the ULPDU_Length chain may have broken: held
 * for framing-breaks.ts), then its counters, its CRC, marker, PAD, length and EMSS findings, and its
 * hand-off to the outputs and the layer above. Runs once per FPDU: beyond the ULPDU handed to the
 * layer above and the record an output asks for, it allocates only for findings.
 */
import { byteSwap32, crc32c, readWireCrc } from './crc32c.js';
import { crcHex } from './fields.js';
import type { FlowHost } from './flow-host.js';
import { framedPad, framedUlpduLength, type FramedFpdu, type FramerParams, type MarkerInfo } from './framer.js';
import { MAX_ULPDU_LENGTH } from './lock-on.js';
import type { MpaDirection } from './mpa-direction.js';
import type { FpduRecord } from './mpa-types.js';

/** Called by a direction's framer for each FPDU. Returns false to stop that framer (resync). */
export function checkFpdu(flow: FlowHost, d: MpaDirection, f: FramedFpdu): boolean {
  if (d.suppressStart === f.start) {
    // Reported already under RFC framing; re-framed under the diagnosed mistake only to go on from it.
    d.suppressStart = null;
    if (f.senderMistake) {
      d.senderMistakeFpdus++;
      if (d.lastRecord && d.lastRecord.start === f.start) d.lastRecord.senderMistake = f.senderMistake;
    }
    notePlausible(flow, d, f);
    return true;
  }
  // An FPDU cut by the snaplen before its DDP control octets shows nothing to judge: the chain of
  // ULPDU_Length fields across the hole is all the evidence there is.
  const trusted =
    f.crcStatus === 'good' || f.crcStatus === 'byte-swapped' || (f.notCaptured !== undefined && f.head.length < 2);
  if (d.exemptStart === f.start) d.exemptStart = null;
  else if (flow.detection !== 'forced' && !trusted && !flow.framingPlausible(f.head, f.ulpduLength)) {
    // An FPDU that cannot be one: hold it (a verified CRC proves the framing; a bad CRC alone is
    // reported as such).
    holdBreak(flow, d, f, false);
    return false;
  } else if (flow.detection !== 'forced' && !trusted && markersImplausible(f)) {
    // A bad CRC with markers that are not markers where the grid puts them: the sender's marker
    // placement may be the mistake (markers missing at grid points, a wrong phase). Held and
    // diagnosed; a lone corrupted FPDU is framed as it is once its successors frame.
    holdBreak(flow, d, f, false);
    return false;
  } else if (flow.detection !== 'forced' && !trusted && successorImplausible(flow, d, f)) {
    // The octets after this FPDU cannot start one: its own trailer (PAD, length) may be the
    // sender's mistake. Held, not reported yet, so that it is reported once and right.
    holdBreak(flow, d, f, true);
    return false;
  } else if (
    flow.detection !== 'forced' &&
    (f.crcStatus === 'bad' || f.padNonZero) &&
    !trusted &&
    d.params?.markers === false &&
    (f.crcStatus === 'bad' || successorUnseen(d, f))
  ) {
    // A bad CRC or a non-zero PAD is what a sender's PAD or length mistake looks like under RFC
    // 5044 framing, and only the octets after the FPDU tell the two apart (sender-mistakes.ts): the
    // verdict waits for them (settlePending says how many), so that it does not depend on where
    // the segment happened to end. Without markers only: with them, markersImplausible decides.
    d.brk = {
      prevStart: d.lastStart,
      prevSeq: d.lastSeq,
      badStart: f.start,
      badSeq: f.seq,
      badFrames: f.frames,
      headerOk: true,
      what: '',
      afterSeq: d.lastSeq,
      pending: f,
    };
    d.stopKind = 'break';
    return false;
  }
  notePlausible(flow, d, f);
  if (f.senderMistake) d.senderMistakeFpdus++;
  return emitFpdu(flow, d, f);
}

/** Some marker of `f` is neither a marker for its place nor one in host byte order. */
function markersImplausible(f: FramedFpdu): boolean {
  for (const m of f.markers) {
    if (isHostOrderMarker(m)) continue;
    if (m.reserved !== 0 || (m.fpduptr & ~3) !== m.expected) return true;
  }
  return false;
}

/** Octets after an FPDU that show whether they can start one: ULPDU_Length and the DDP/RDMAP header octets judged. */
const SUCCESSOR_PEEK = 2 + 18;

/**
 * The octets after `f` (when already held, and no marker can sit there) cannot start an FPDU, their
 * ULPDU_Length read as the direction frames (under a diagnosed length mistake, as the sender meant it).
 */
function successorImplausible(flow: FlowHost, d: MpaDirection, f: FramedFpdu): boolean {
  const p = d.params;
  if (p?.markers !== false) return false;
  const at = f.start + f.wireSize - d.log.base;
  const b = d.log.bytes;
  if (at < 0 || at + SUCCESSOR_PEEK > b.length) return false;
  return !flow.framingPlausible(
    b.subarray(at + 2, at + SUCCESSOR_PEEK),
    framedUlpduLength(p.mistake, b[at]!, b[at + 1]!),
  );
}

/** Without markers, the octets after `f` that successorImplausible judges have not all arrived yet. */
function successorUnseen(d: MpaDirection, f: FramedFpdu): boolean {
  return d.params?.markers === false && f.start + f.wireSize + SUCCESSOR_PEEK > d.log.end;
}

/**
 * Octets of the FPDU without markers whose ULPDU_Length field is `hi`, `lo` (RFC 5044 §4.1, §4.2),
 * laid out as the direction frames (under a diagnosed mistake, as the sender lays it out).
 */
function wireSizeAt(p: FramerParams, hi: number, lo: number): number {
  const len = framedUlpduLength(p.mistake, hi, lo);
  return 2 + len + framedPad(p.mistake, len) + 4;
}

/**
 * The FPDU at stream offset `at`, framed as the direction frames, fails its CRC, or (`final`: no
 * more octets will come) announces more octets than the stream holds.
 */
function successorCrcFails(d: MpaDirection, at: number, final: boolean): boolean {
  const b = d.log.bytes;
  const i = at - d.log.base;
  if (i < 0 || i + 2 > b.length) return false;
  const n = wireSizeAt(d.params!, b[i]!, b[i + 1]!);
  if (i + n > b.length) return final;
  const computed = crc32c(b, i, i + n - 4);
  const wire = readWireCrc(b[i + n - 4]!, b[i + n - 3]!, b[i + n - 2]!, b[i + n - 1]!);
  return computed !== wire && byteSwap32(computed) !== wire;
}

/**
 * The verdict on an FPDU held for the octets after it (checkFpdu): 'wait' until they are there (or
 * the stream ends), then 'break' when they cannot start an FPDU (d.brk is then the break to
 * diagnose, as if they had been there when the FPDU was framed), else 'frame': the FPDU is framed
 * as it is, its findings reported.
 */
export function settlePending(flow: FlowHost, d: MpaDirection, final: boolean): 'wait' | 'break' | 'frame' {
  const f = d.brk!.pending!;
  const at = f.start + f.wireSize;
  // With CRC, a bad one is judged by the FPDU after it as RFC 5044 §4 frames it: a DDP header can
  // pass by chance (a short ULPDU_Length reads as DDP control 0), its CRC cannot. At most one more
  // FPDU is held (ULPDU_Length is 16 bits).
  const byCrc = f.crcStatus === 'bad' && d.params!.crc;
  let need = at + SUCCESSOR_PEEK;
  const i = at - d.log.base;
  const b = d.log.bytes;
  if (byCrc && i >= 0 && i + 2 <= b.length) need = Math.max(need, at + wireSizeAt(d.params!, b[i]!, b[i + 1]!));
  if (!final && need > d.log.end) return 'wait';
  if (successorImplausible(flow, d, f) || (byCrc && successorCrcFails(d, at, final))) {
    holdBreak(flow, d, f, true);
    d.stopKind = 'resync';
    return 'break';
  }
  d.brk = null;
  d.exemptStart = f.start;
  return 'frame';
}

export function flushPendingPad(flow: FlowHost, d: MpaDirection, drop = false): void {
  const p = d.pendingPad;
  if (!p) return;
  d.pendingPad = null;
  if (!drop) flow.find(d, 'mpa.pad-not-zero', p.seq, p.frames, p.message);
}

function notePlausible(flow: FlowHost, d: MpaDirection, f: FramedFpdu): void {
  if (d.pendingPad && d.pendingPad.seq !== f.seq) flushPendingPad(flow, d);
  d.lastStart = f.start;
  d.lastSeq = f.seq;
}

/**
 * An implausible FPDU (or, `successor`, one whose following octets cannot start an FPDU): hold it
 * and what follows until diagnosed.
 */
function holdBreak(flow: FlowHost, d: MpaDirection, f: FramedFpdu, successor: boolean): void {
  const headerOk = flow.framingPlausible(f.head, f.ulpduLength);
  let lostSeq = f.seq;
  let lostFrames = [...f.frames];
  let what: string;
  if (successor) {
    const at = f.start + f.wireSize;
    const b = d.log.bytes;
    const i = at - d.log.base;
    lostSeq = d.seqOf(at);
    lostFrames = d.log.framesIn(at, Math.min(d.log.end, at + 20));
    what = `ULPDU_Length ${(b[i]! << 8) | b[i + 1]!}, DDP control 0x${b[i + 2]!.toString(16).padStart(2, '0')}, RDMAP control 0x${b[i + 3]!.toString(16).padStart(2, '0')}`;
  } else {
    const h = f.head;
    what = `ULPDU_Length ${f.ulpduLength}${h.length >= 2 ? `, DDP control 0x${h[0]!.toString(16).padStart(2, '0')}, RDMAP control 0x${h[1]!.toString(16).padStart(2, '0')}` : ''}${
      f.crcStatus === 'bad' ? ', CRC does not verify' : ''
    }`;
  }
  d.brk = {
    prevStart: d.lastStart,
    prevSeq: d.lastSeq,
    badStart: f.start,
    badSeq: lostSeq,
    badFrames: lostFrames,
    headerOk,
    what,
    afterSeq: successor ? f.seq : d.lastSeq,
  };
  d.stopKind = 'break';
}

/** Counts, checks and hands on one FPDU that framed plausibly. Returns false to stop its framer (resync). */
function emitFpdu(flow: FlowHost, d: MpaDirection, f: FramedFpdu): boolean {
  const flowId = flow.handle.id;
  let mpaError: number | null = null;
  const crcBad = f.crcStatus === 'bad' || f.crcStatus === 'byte-swapped';
  d.fpdus++;
  d.ulpduBytes += f.ulpduLength;
  if (f.markers.length > 0 || f.markersNotCaptured) d.markersFramed += f.markers.length + (f.markersNotCaptured ?? 0);
  if (d.afterErrorFlag) d.afterError++;
  const afterError = d.afterErrorFlag;
  if (f.crcStatus === 'not-captured') d.crcNotCaptured++;
  if (f.crcStatus === 'bad') {
    d.crcErrors++;
    flow.find(
      d,
      'mpa.crc-mismatch',
      f.seq,
      f.frames,
      `CRC ${crcHex(f.crcWire)} on the wire, computed ${crcHex(f.crcComputed)} (ULPDU_Length ${f.ulpduLength})`,
    );
    mpaError = 2;
  } else if (f.crcStatus === 'byte-swapped') {
    d.crcErrors++;
    flow.find(
      d,
      'mpa.crc-byte-order',
      f.seq,
      f.frames,
      `CRC ${crcHex(f.crcWire)} on the wire is the computed ${crcHex(f.crcComputed)} byte-swapped (the CRC32c value sent most significant octet first)`,
    );
    mpaError = 2;
  }
  let markerMismatch = false;
  let markerOdd = false;
  let hostOrder: MarkerInfo[] | null = null;
  for (const m of f.markers) {
    const mismatch = (m.fpduptr & ~3) !== m.expected;
    if (!mismatch && m.reserved === 0 && (m.fpduptr & 3) === 0) continue; // the common case
    if (isHostOrderMarker(m)) {
      // The whole 32-bit marker written least significant octet first: one diagnosis, not a
      // Reserved finding plus an FPDUPTR one.
      (hostOrder ??= []).push(m);
      continue;
    }
    if (mismatch) markerMismatch = true;
    if (m.reserved !== 0 || (m.fpduptr & 3) !== 0) markerOdd = true;
  }
  if (hostOrder && !crcBad) {
    d.markerErrors++;
    flow.find(
      d,
      'mpa.marker-byte-order',
      f.seq,
      f.frames,
      `${hostOrder.length} marker(s) in host (little-endian) byte order: ${hostOrder
        .slice(0, 4)
        .map(
          (m) =>
            `seq ${m.seq} reads Reserved 0x${m.reserved.toString(16).padStart(4, '0')} FPDUPTR ${m.fpduptr}, meant FPDUPTR ${m.expected}`,
        )
        .join('; ')}${hostOrder.length > 4 ? '; ...' : ''}`,
    );
    mpaError = 3;
  }
  // One finding per FPDU, naming its markers: a 64 KiB FPDU holds up to 128 of them.
  const resBad = markerOdd ? f.markers.filter((m) => m.reserved !== 0) : NONE;
  const lowBad = markerOdd ? f.markers.filter((m) => (m.fpduptr & 3) !== 0) : NONE;
  if (resBad.length > 0) {
    flow.find(
      d,
      'mpa.marker-reserved',
      f.seq,
      f.frames,
      `${resBad.length} marker(s) with Reserved not zero: ${resBad
        .slice(0, 4)
        .map((m) => `seq ${m.seq} 0x${m.reserved.toString(16).padStart(4, '0')}`)
        .join(', ')}${resBad.length > 4 ? ', ...' : ''}`,
    );
  }
  if (lowBad.length > 0) {
    flow.find(
      d,
      'mpa.fpduptr-low-bits',
      f.seq,
      f.frames,
      `${lowBad.length} marker(s) with FPDUPTR low bits set: ${lowBad
        .slice(0, 4)
        .map((m) => `seq ${m.seq} 0x${m.fpduptr.toString(16).padStart(4, '0')}`)
        .join(', ')}${lowBad.length > 4 ? ', ...' : ''}`,
    );
  }
  if (markerMismatch && !crcBad) {
    if (!hostOrder) d.markerErrors++;
    const bad = f.markers.filter((m) => (m.fpduptr & ~3) !== m.expected && !isHostOrderMarker(m));
    flow.find(
      d,
      'mpa.fpduptr-mismatch',
      f.seq,
      f.frames,
      bad
        .slice(0, 4)
        .map((m) => `marker at seq ${m.seq}: FPDUPTR ${m.fpduptr & ~3}, expected ${m.expected}`)
        .join('; ') + (bad.length > 4 ? `; ${bad.length - 4} more` : ''),
    );
    mpaError ??= 3;
  }
  if (f.padNonZero) {
    const pad = { seq: f.seq, frames: f.frames, message: `PAD of ${f.pad} octets is not zero` };
    // Octets read as PAD that do not lead to a plausible FPDU may be the next FPDU's start under a
    // sender's own PAD rule: held until the break is diagnosed.
    if (successorImplausible(flow, d, f)) d.pendingPad = pad;
    else flow.find(d, 'mpa.pad-not-zero', pad.seq, pad.frames, pad.message);
  }
  if (f.ulpduLength > MAX_ULPDU_LENGTH)
    flow.find(d, 'mpa.ulpdu-too-long', f.seq, f.frames, `ULPDU_Length ${f.ulpduLength} exceeds 64768`);
  // A sender's segments are bounded by the MSS its peer (the receiver) advertised in its SYN.
  const mss = flow.peer(d).info.mss ?? d.info.mss;
  if (mss !== null && f.wireSize > mss) {
    d.emssCount++;
    if (!d.emssReported) {
      d.emssReported = true;
      const gso = flow.reply && flow.request && ((flow.reply.res | flow.request.res) & 0x08) !== 0;
      flow.find(
        d,
        'mpa.fpdu-exceeds-emss',
        f.seq,
        f.frames,
        `FPDU of ${f.wireSize} octets exceeds the EMSS ${mss}${gso ? ' (Linux siw GSO_EXP flag 0x08 was negotiated)' : ''}; further ones in this direction are counted, not listed`,
      );
    }
  }
  if (afterError && (mpaError !== null || d.afterError === 1)) {
    // The first FPDU after an error says so once; later ones are counted in afterError.
    if (d.afterError === 1)
      flow.find(
        d,
        'mpa.after-error',
        f.seq,
        f.frames,
        `FPDUs after an MPA error on this half connection (a receiver would have stopped delivering)`,
      );
  }
  if (mpaError !== null) {
    d.afterErrorFlag = true;
    flow.upperLayer()?.noteMpaError?.(d.dir, mpaError, f.seq, f.frames);
  }
  // Startup rule 4 (RFC 5044 §7.1.2): the Responder sends no FPDU before the Initiator's first FPDU arrived.
  if (d.firstFpduFirstFrame === null) {
    d.firstFpduFirstFrame = f.frames[0] ?? 0;
    d.firstFpduLastFrame = f.frames[f.frames.length - 1] ?? 0;
    d.firstFpduSeq = f.seq;
    flow.negotiation?.checkResponderFirst();
    // Appendix C.2.5: an Initiator that goes on after a Rev 0 Reply is a permissive IETF RNIC.
    if (flow.request && d.dir === flow.request.dir) flow.negotiation?.checkRdmac(false);
  }
  const upper = flow.upperLayer();
  const fr = d.madeFramer;
  const upperRec = upper?.ulpdu({
    flow: flowId,
    dir: d.dir,
    from: d.info.from,
    seq: f.seq,
    length: f.ulpduLength,
    head: f.head,
    body: fr?.bodyOf(f) ?? null,
    frames: f.frames,
    crc: f.crcStatus === 'unchecked' || f.crcStatus === 'not-captured' ? 'unchecked' : crcBad ? 'bad' : 'good',
    afterError,
    ...(f.notCaptured !== undefined ? { notCaptured: f.notCaptured } : {}),
  });
  if (fr && upper?.bodyBytes) fr.bodyBound = upper.bodyBytes(d.dir);
  // Both directions: a command on one side makes the upper layer wait for data placed by the other.
  if (upper?.taggedBytes) flow.setTaggedBounds(upper);
  if (flow.out.fpdu) {
    // Built only for an output that wants it. Field by field, not `{ ...f }`: V8's generic spread
    // of the framer's object took ~40 µs per FPDU (60 s instead of 4 s for 1.5 M FPDUs), so any
    // per-FPDU output (event lines, -z fpdu-sizes, --html) multiplied the run time by 15.
    const rec: FpduRecord = {
      start: f.start,
      lenOffset: f.lenOffset,
      seq: f.seq,
      ulpduLength: f.ulpduLength,
      lengthField: f.lengthField,
      pad: f.pad,
      wireSize: f.wireSize,
      crcWire: f.crcWire,
      crcComputed: f.crcComputed,
      crcStatus: f.crcStatus,
      markers: f.markers,
      padNonZero: f.padNonZero,
      frames: f.frames,
      head: f.head,
      senderMistake: f.senderMistake,
      kind: 'fpdu',
      flow: flowId,
      dir: d.dir,
      from: d.info.from,
      to: d.info.to,
      afterError,
      upper: upperRec ?? null,
    };
    // Rare (a snaplen cut): added only when set, so the common record keeps one shape.
    if (f.notCaptured !== undefined) rec.notCaptured = f.notCaptured;
    if (f.markersNotCaptured !== undefined) rec.markersNotCaptured = f.markersNotCaptured;
    d.lastRecord = rec; // marked later if a diagnosed mistake turns out to cover it
    flow.out.fpdu(rec);
  }
  // Framing sanity: a bad CRC with a disagreeing marker, or two bad CRCs in a row, or an
  // impossible length means the ULPDU_Length chain may be lost: hunt for it again.
  if (crcBad || f.ulpduLength > MAX_ULPDU_LENGTH) d.consecutiveBad++;
  else d.consecutiveBad = 0;
  if ((crcBad && markerMismatch) || d.consecutiveBad >= 2 || (f.ulpduLength > MAX_ULPDU_LENGTH && crcBad)) {
    d.consecutiveBad = 0;
    d.stopKind = 'resync';
    return false;
  }
  return true;
}

const NONE: readonly MarkerInfo[] = [];

/** A marker whose 32 bits, read least significant octet first, are exactly the FPDUPTR expected (Reserved 0). */
function isHostOrderMarker(m: MarkerInfo): boolean {
  if (m.expected === 0) return false; // a zero marker reads the same in either order
  // The whole 32-bit word least significant octet first, or (a struct of two 16-bit fields, as OSC
  // iWarp sends it) Reserved zero and FPDUPTR alone in host order.
  const swapped16 = ((m.fpduptr & 0xff) << 8) | (m.fpduptr >> 8);
  return (
    byteSwap32(((m.reserved << 16) | m.fpduptr) >>> 0) === m.expected || (m.reserved === 0 && swapped16 === m.expected)
  );
}
