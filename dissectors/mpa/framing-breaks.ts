/**
 * After the ULPDU_Length chain broke (an FPDU that cannot be one, fpdu-checks.ts): holds the octets
 * from the last plausible FPDU on until sender-mistakes.ts can tell one bad FPDU from a sender's
 * systematic mistake, then frames on under the right reading, or hunts for boundaries again.
 */
import { flushPendingPad, settlePending } from './fpdu-checks.js';
import type { FlowHost } from './flow-host.js';
import type { FramedFpdu, FramerParams } from './framer.js';
import type { MpaDirection } from './mpa-direction.js';
import { diagnoseBreak, type Hypothesis } from './sender-mistakes.js';

/** Octets held after a break before diagnosing with what there is: four of the largest FPDUs. */
const DIAGNOSE_HOLD = 4 * 66 * 1024;

/** A framer stopped itself (suspected framing loss): hold bytes and hunt from here. */
export function framerStopped(d: MpaDirection): void {
  const fr = d.framer!;
  d.retireFramer();
  d.resetHuntTries();
  if (d.stopKind === 'break' && d.brk) {
    d.stopKind = 'resync';
    // Keep from the last plausible FPDU on: the mistake may sit in it.
    d.log.dropBefore(d.brk.prevStart ?? d.brk.badStart);
    d.state = 'diagnose';
    return;
  }
  d.state = 'hunt';
  d.huntReason = 'error';
  d.log.dropBefore(fr.position);
}

/** Waits for enough octets after a break to tell a bad FPDU from a sender mistake (sender-mistakes.ts). */
export function stepDiagnose(flow: FlowHost, d: MpaDirection, final: boolean): void {
  if (d.brk!.pending) {
    const v = settlePending(flow, d, final);
    if (v === 'wait') return;
    if (v === 'frame') {
      // The octets after it start an FPDU: a bad FPDU on its own, framed as it is.
      d.resetHuntTries();
      restartAt(d, d.params!, d.exemptStart!);
      return;
    }
  }
  const b = d.brk!;
  if (!final && !d.shouldTryHunt(false) && d.log.length <= DIAGNOSE_HOLD) return;
  const rfc = d.rfcParams ?? d.params!;
  const current = d.params!;
  const dg = diagnoseBreak({
    bytes: d.log.bytes,
    base: d.log.base,
    baseSeq: d.info.baseSeq,
    final: final || d.log.length > DIAGNOSE_HOLD,
    current,
    rfc,
    origins: {
      seqStart: d.seqStartOffset !== null && d.seqStartExact ? d.seqStartOffset : null,
      startupStart: d.startupRec ? d.startupOffset : null,
    },
    prevStart: b.prevStart !== null && b.prevStart >= d.log.base ? b.prevStart : null,
    badStart: b.badStart,
    header: flow.framingPlausible,
  });
  if (dg.kind === 'more') return;
  d.brk = null;
  d.resetHuntTries();
  if (dg.kind === 'intact' || (dg.kind === 'none' && b.headerOk)) {
    // One bad FPDU, not a broken chain: frame it as it is (its own findings follow).
    flushPendingPad(flow, d);
    d.exemptStart = b.badStart;
    restartAt(d, current, b.badStart);
    return;
  }
  flow.find(
    d,
    'mpa.framing-lost',
    b.badSeq,
    b.badFrames,
    `FPDU at seq ${b.badSeq} cannot be one (${b.what}): the ULPDU_Length chain broke${b.afterSeq !== null ? ` after the FPDU at seq ${b.afterSeq}` : ''}`,
  );
  // PAD read under RFC framing from the FPDU the mistake is about was not PAD.
  flushPendingPad(flow, d, dg.kind === 'mistake' && dg.start === b.prevStart);
  if (dg.kind === 'mistake') {
    const h = dg.hypothesis;
    reportMistake(flow, d, h, dg.first, rfc);
    d.senderMistake = h.id;
    if (dg.start === b.prevStart) d.suppressStart = dg.start;
    restartAt(d, dg.params, dg.start);
    return;
  }
  // Nothing explains it: look for FPDU boundaries again from the broken FPDU on.
  d.framingLostOpen = true;
  d.log.dropBefore(b.badStart);
  d.state = 'hunt';
  d.huntReason = 'error';
}

/**
 * The stream ended inside an FPDU: a ULPDU_Length read wrongly (little-endian, say) can announce
 * more octets than the rest of the stream holds, so no break ever shows. Diagnose it from there.
 */
export function diagnoseCut(flow: FlowHost, d: MpaDirection): void {
  const fr = d.framer!;
  const start = fr.pendingStart;
  if (flow.detection === 'forced' || start < d.log.base || d.log.end <= start) return;
  const rfc = d.rfcParams ?? d.params!;
  const dg = diagnoseBreak({
    bytes: d.log.bytes,
    base: d.log.base,
    baseSeq: d.info.baseSeq,
    final: true,
    current: d.params!,
    rfc,
    origins: {
      seqStart: d.seqStartOffset !== null && d.seqStartExact ? d.seqStartOffset : null,
      startupStart: d.startupRec ? d.startupOffset : null,
    },
    prevStart: d.lastStart !== null && d.lastStart >= d.log.base ? d.lastStart : null,
    badStart: start,
    header: flow.framingPlausible,
  });
  if (dg.kind !== 'mistake') return;
  const b = d.log.bytes;
  const at = start - d.log.base;
  const announced = at + 2 <= b.length ? (b[at]! << 8) | b[at + 1]! : null;
  flow.find(
    d,
    'mpa.framing-lost',
    fr.pendingSeq,
    [...fr.pendingFrames],
    `FPDU at seq ${fr.pendingSeq} cannot be one (ULPDU_Length ${announced ?? '?'} announces more than the stream holds): the ULPDU_Length chain broke${d.lastSeq !== null ? ` after the FPDU at seq ${d.lastSeq}` : ''}`,
  );
  flushPendingPad(flow, d, dg.start === d.lastStart);
  if (dg.start === d.lastStart) d.suppressStart = dg.start;
  reportMistake(flow, d, dg.hypothesis, dg.first, rfc);
  d.senderMistake = dg.hypothesis.id;
  restartAt(d, dg.params, dg.start);
}

function reportMistake(flow: FlowHost, d: MpaDirection, h: Hypothesis, first: FramedFpdu, rfc: FramerParams): void {
  if (d.mistakesReported?.has(h.id)) return;
  (d.mistakesReported ??= new Set()).add(h.id);
  flow.find(
    d,
    h.id,
    first.seq,
    d.log.framesIn(first.start, first.start + first.wireSize),
    `${h.describe(first, rfc, peerStartupName(flow, d))} (FPDU at seq ${first.seq}); framing goes on under that reading, and FPDUs it changes are marked`,
  );
}

function restartAt(d: MpaDirection, params: FramerParams, at: number): void {
  const rfc = d.rfcParams;
  d.log.dropBefore(at);
  d.startFramer(params, at);
  if (rfc) d.rfcParams = rfc;
  d.replayInto(at);
}

/** Who negotiated this direction's markers, in words: the peer's startup frame (null: MPA enabled without them). */
function peerStartupName(flow: FlowHost, d: MpaDirection): string | null {
  const p = flow.peer(d).startupRec;
  if (p) return `the peer's MPA ${p.kind === 'request' ? 'Request' : 'Reply'} (frame ${p.frame})`;
  return d.enabledAt !== null ? null : 'the peer';
}
