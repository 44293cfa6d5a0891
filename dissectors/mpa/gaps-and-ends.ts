/**
 * Octets missing from the capture and a direction's end, in whatever state it is: FPDUs cut by a
 * gap or by the end, a TCP close during full operation (a FIN or RST between or inside FPDUs, RFC
 * 5044 §8), and a RST that aborts the whole connection (RFC 9293 §3.5.3). What closes the flow once
 * both directions ended stays with MpaFlow.
 */
import type { EndReason } from '../../src/tcp/stream.js';
import { leaveAwait } from './await-negotiation.js';
import { flushPendingPad } from './fpdu-checks.js';
import type { FlowHost } from './flow-host.js';
import { diagnoseCut, stepDiagnose } from './framing-breaks.js';
import { stepHunt } from './framing-search.js';
import type { MpaDirection, State } from './mpa-direction.js';

export function handleGap(flow: FlowHost, d: MpaDirection, offset: number, length: number, cut = false): void {
  const end = offset + length;
  // A snaplen cut inside an FPDU whose ULPDU_Length was captured: framing goes on across it, and
  // the FPDU reaches the layer above marked as not captured whole (that layer judges what it lost).
  if (cut && d.state === 'frame' && d.framer!.skip(offset, length)) {
    if (!d.framer!.isStopped) return;
    // The FPDU completed in the hole could not be one (its captured header is implausible): what
    // it held is unknown, so framing is looked for again after the hole.
    d.brk = null;
    d.retireFramer();
    d.state = 'hunt';
    d.huntReason = 'gap';
    d.log.reset(end);
    d.resetHuntTries();
    return;
  }
  if (flow.isMpa) flow.upperInstance?.noteCaptureGap?.(d.dir, d.seqOf(offset), length);
  switch (d.state) {
    case 'frame': {
      const fr = d.framer!;
      if (!fr.atBoundary) {
        flow.find(
          d,
          'mpa.fpdu-truncated-by-gap',
          fr.pendingSeq,
          [...fr.pendingFrames],
          `FPDU at seq ${fr.pendingSeq} cut by ${length} octets missing from the capture at seq ${d.seqOf(offset)}`,
        );
      } else {
        flow.find(
          d,
          'mpa.fpdu-truncated-by-gap',
          d.seqOf(offset),
          [],
          `${length} octets missing from the capture at seq ${d.seqOf(offset)}; FPDUs in them are lost`,
        );
      }
      d.retireFramer();
      d.state = 'hunt';
      d.huntReason = 'gap';
      d.log.reset(end);
      d.resetHuntTries();
      return;
    }
    case 'await':
      leaveAwait(flow, d, true);
      if ((d.state as State) === 'frame' || (d.state as State) === 'hunt') {
        handleGap(flow, d, offset, length, cut);
        return;
      }
      d.log.reset(end);
      return;
    case 'diagnose':
      settleDiagnosis(flow, d);
      if ((d.state as State) !== 'diagnose') {
        handleGap(flow, d, offset, length, cut);
        return;
      }
      d.log.reset(end);
      return;
    case 'hunt':
      stepHunt(flow, d, true);
      if ((d.state as State) === 'frame') {
        handleGap(flow, d, offset, length, cut);
        return;
      }
      d.huntReason = 'gap';
      d.log.reset(end);
      d.resetHuntTries();
      return;
    case 'scan':
      // The octets held before the hole are all this stretch of the stream will have: they are
      // searched for MPA as at the stream's end (else FPDUs before a loss in a capture that starts
      // mid-stream are dropped unframed, with the hole itself unreported).
      flow.progress(d, true);
      if ((d.state as State) !== 'scan') {
        handleGap(flow, d, offset, length, cut);
        return;
      }
      d.log.reset(end);
      return;
    case 'startup':
      flow.find(
        d,
        'mpa.pd-short',
        d.seqOf(d.startupOffset),
        d.log.framesIn(d.startupOffset, d.log.end),
        `startup frame cut by missing capture data`,
      );
      d.state = 'scan';
      d.log.reset(end);
      return;
    default:
      d.log.reset(end);
  }
}

export function endDirection(flow: FlowHost, d: MpaDirection, reason: EndReason, frame: number | null): void {
  // A RST aborts the whole connection (RFC 9293 §3.5.3): a direction still open at the end of the
  // capture after a RST from either side ended with that RST, not with the capture.
  const rst = flow.handle.resetFrame ?? null;
  const aborted = reason === 'rst' || (reason === 'eof' && rst !== null);
  if (reason === 'eof' && rst !== null) {
    reason = 'rst';
    frame = rst;
  }
  flow.progress(d, true);
  if (d.state === 'diagnose') settleDiagnosis(flow, d);
  if (d.state === 'await' || d.state === 'hunt' || d.state === 'diagnose') flow.progress(d, true);
  flushPendingPad(flow, d);
  if (d.state === 'frame' && !d.framer!.atBoundary) diagnoseCut(flow, d);
  if (d.state === 'frame') {
    const fr = d.framer!;
    if (!fr.atBoundary) {
      const frames = [...fr.pendingFrames, ...(frame !== null ? [frame] : [])];
      if (reason === 'eof') {
        flow.find(
          d,
          'mpa.fpdu-truncated-by-gap',
          fr.pendingSeq,
          frames,
          `capture ended inside the FPDU at seq ${fr.pendingSeq}`,
        );
      } else {
        flow.find(
          d,
          'mpa.tcp-closed-mid-fpdu',
          fr.pendingSeq,
          frames,
          `${reason.toUpperCase()} in frame ${frame} while the FPDU at seq ${fr.pendingSeq} was incomplete`,
        );
        flow.upperLayer()?.noteMpaError?.(d.dir, 1, fr.pendingSeq, frames);
      }
    } else if (reason !== 'eof') {
      // The abort is one event for the connection: reported once, with the RST's frame.
      if (!aborted || !flow.abortReported) {
        flow.find(
          d,
          'mpa.tcp-closed-between',
          d.seqOf(fr.position),
          frame !== null ? [frame] : [],
          aborted
            ? `RST in frame ${frame} aborts the connection during full operation (between FPDUs); both directions end (RFC 9293 section 3.5.3)`
            : `${reason.toUpperCase()} in frame ${frame} during full operation (between FPDUs)`,
        );
      }
      flow.upperLayer()?.noteMpaError?.(d.dir, 1, d.seqOf(fr.position), frame !== null ? [frame] : []);
    }
  } else if (d.state === 'startup') {
    flow.stepStartup(d, true);
  }
  if (aborted) flow.abortReported = true;
  if (flow.isMpa) flow.upperLayer()?.end(d.dir, reason, frame);
  // Appendix C.2.2: a non-permissive Initiator shows itself by closing (not by the capture ending).
  if (flow.negotiation && flow.request?.dir === d.dir && reason !== 'eof') flow.negotiation.initiatorClosed = true;
  d.state = 'ended';
}

/**
 * Diagnoses what is held with no more octets to come. Framing restarted after a diagnosis can meet
 * the next break (or the next FPDU whose verdict waits for its successor) in the same octets: each
 * is settled in turn, so no FPDU held at the end is left unframed. Each round frames at least one
 * FPDU or settles another break; the guard only bounds a bug.
 */
function settleDiagnosis(flow: FlowHost, d: MpaDirection): void {
  for (let guard = 0; guard < 1 << 20 && d.state === 'diagnose'; guard++) {
    const brk = d.brk;
    const fpdus = d.fpdus;
    stepDiagnose(flow, d, true);
    if ((d.state as State) === 'diagnose' && d.brk === brk && d.fpdus === fpdus) return;
  }
}
