/**
 * Per-connection DDP/RDMAP analysis: DdpFlowAnalyzer takes MPA's ULPDUs one by one, decodes each,
 * and leads it through the steps in the files beside this one: header checks (header-checks.ts),
 * RFC 6581 RTR (rtr.ts), untagged queues, MSN and MO (untagged.ts), tagged TO continuity
 * (tagged.ts), Request/Response pairing (request-pairing.ts), byte-order diagnosis (byte-order.ts),
 * message assembly (messages.ts) and Terminate linking (terminate.ts). Public shapes: types.ts.
 *
 * Memory is bounded: only open messages, outstanding requests and a short history of recent
 * segment headers (for Terminate matching) are kept; completed messages reduce to counters and
 * are handed to an optional callback.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import { decodeDdp, type DdpPdu } from './decode.js';
import { NO_FINDINGS, type DirState } from './direction-state.js';
import { countSegment, keyIndex, summarizeDirection, UNKNOWN_KEY } from './direction-summary.js';
import { OP, opcodeName } from './fields.js';
import { FlowCore, framesText, other } from './flow-core.js';
import { checkHeader, checkVersions } from './header-checks.js';
import { closeOpenMessages, messageEnded, openMessages, snapshot } from './messages.js';
import { endUnansweredReads, judgePending, lastFrame as lastFrameOf } from './request-pairing.js';
import { checkRtr, rtrExpected } from './rtr.js';
import { taggedSegment } from './tagged.js';
import { handleTerminate } from './terminate.js';
import { untaggedSegment } from './untagged.js';
import type { DdpDirection, DdpMessage, DdpSegmentRecord, Dir } from './types.js';
import type { UlpFlowSummary, UlpHandoff } from './ulp-handoff.js';

const MAX_NOTED = 16;

/** One connection's DDP/RDMAP analyzer (the flow-wide state and finding plumbing: FlowCore). */
export class DdpFlowAnalyzer extends FlowCore {
  /** The hand-off to the connection's upper layer, when upper layers are decoded (ulp-handoff.ts). */
  ulp: UlpHandoff | null = null;

  attachUlp(h: UlpHandoff): void {
    this.ulp = h;
  }

  /** The upper layer decoded on the connection, for the report. */
  ulpSummary(): UlpFlowSummary | null {
    return this.ulp?.summary() ?? null;
  }

  /** Octets of each untagged ULPDU the upper layer wants whole from MPA (0: none). */
  bodyBytes(_dir: Dir): number {
    return this.ulp?.bodyBytes ?? 0;
  }

  /** Octets of each tagged ULPDU of `dir` the upper layer wants from MPA (0: none, the bulk). */
  taggedBytes(dir: Dir): number {
    return this.ulp?.taggedBytes(dir) ?? 0;
  }

  // -------------------------------------------------------------------------------------------
  // Inputs from the layers below
  // -------------------------------------------------------------------------------------------

  /**
   * The MPA layer reports an MPA error (RFC 5044 §8 codes 1-4, or RFC 6581 codes 5-7) it detected
   * in the data of direction `dir` (the half connection whose sender erred). A receiver answers it
   * with a Terminate (layer LLP) in the other direction; this lets that Terminate be explained.
   */
  noteMpaError(dir: Dir, code: number, seq: number, frames: number[]): void {
    const st = this.dir(dir);
    const list = st.mpaErrorList();
    list.push({ code, seq, frames: [...frames] });
    if (list.length > MAX_NOTED) list.shift();
  }

  /** The TCP layer lost bytes of direction `dir` (a capture gap): later sequence jumps may be explained by it. */
  noteCaptureGap(dir: Dir, seq: number, length: number): void {
    const st = this.dir(dir);
    st.lossEpoch++;
    st.lastLoss = `a capture gap of ${length} octets at seq ${seq}`;
    st.lastLossKind = 'capture';
    this.ulp?.captureGap(dir);
  }

  // -------------------------------------------------------------------------------------------
  // Per-segment analysis
  // -------------------------------------------------------------------------------------------

  ulpdu(u: Ulpdu): DdpSegmentRecord {
    const st = this.dir(u.dir);
    st.from = u.from;
    const pdu = decodeDdp(u.head, u.length);
    const rec: DdpSegmentRecord = {
      flow: this.flowId,
      dir: u.dir,
      from: u.from,
      seq: u.seq,
      frames: u.frames, // the MPA layer hands over a fresh array per FPDU
      length: u.length,
      crc: u.crc,
      afterError: u.afterError,
      pdu,

      skipped: null,
      findings: [],
      message: null,
      rtr: null,
      readRequest: null,
      terminated: null,
    };
    st.segments++;
    // The peer's Read Responses waiting for this direction's held-back octets (request-pairing.ts).
    judgePending(this, u.dir, lastFrameOf(u.frames));
    this.analyze(u, st, pdu, rec);
    // Remember the header octets for a later Terminate from the peer (it copies them), with the
    // findings this segment drew: added after them, so an entry without findings keeps no array.
    st.history.add(u.seq, rec.frames, u.head, rec.findings.length === 0 ? NO_FINDINGS : rec.findings);
    return rec;
  }

  private analyze(u: Ulpdu, st: DirState, pdu: DdpPdu, rec: DdpSegmentRecord): void {
    const first = !st.seenAny;
    st.seenAny = true;

    // Every decoded segment counts by opcode, CRC-bad ones too (report-schema byOpcode).
    countSegment(st, pdu.rdmap ? keyIndex(pdu.rdmap.opcode) : UNKNOWN_KEY);
    this.checkContinuity(u, st);

    const bad = u.crc === 'bad';
    if (first && st.lossEpoch === 0) checkRtr(this, u, st, pdu, rec, bad);
    else if (first && rtrExpected(this, u.dir)) {
      this.emit(
        'ddp.capture-loss',
        u,
        rec,
        `RTR check not possible: data was missing from the capture (${st.lastLoss}) before the Initiator's first FPDU seen`,
      );
    }

    if (pdu.kind === 'truncated' && pdu.length >= pdu.need) {
      // The header is on the wire (ULPDU_Length covers it) but the capture's snaplen cut it off:
      // nothing the sender did, and nothing of it to check.
      rec.skipped = 'not captured';
      st.lossEpoch++;
      st.lastLoss = `the segment at seq ${u.seq} (${framesText(u.frames)}) whose header the capture cut off`;
      st.lastLossKind = 'capture';
      this.ulp?.captureGap(u.dir);
      return;
    }
    // A Send whose payload the snaplen cut: the upper layer may miss what it advertised there.
    if (u.notCaptured !== undefined && pdu.kind === 'untagged') this.ulp?.captureGap(u.dir);
    if (pdu.kind === 'truncated') {
      st.malformed++;
      if (!bad) this.emit('ddp.truncated', u, rec, pdu.reason);
      st.lossEpoch++;
      st.lastLoss = `the malformed segment at seq ${u.seq}`;
      st.lastLossKind = 'other';
      rec.skipped = 'malformed';
      return;
    }

    if (bad) {
      // Decoded and shown, but its octets are not trustworthy: no sequence bookkeeping, and what
      // follows may show jumps that this segment explains. (Segments after an MPA error but with a
      // good CRC are analysed normally: the sender's behaviour is still visible in them.)
      rec.skipped = 'CRC does not verify';
      st.skipped++;
      st.lossEpoch++;
      st.lastLoss = `the segment at seq ${u.seq} (${framesText(u.frames)}) left out because its CRC does not verify`;
      st.lastLossKind = 'crc';
      // Every Terminate is reported, even one a receiver would discard (its note says why).
      if (pdu.kind === 'untagged' && pdu.body.type === 'terminate')
        handleTerminate(this, u, st, pdu, pdu.body.term, rec);
      return;
    }

    if (st.terminated && !st.afterTerminateReported && pdu.rdmap.opcode !== OP.TERMINATE) {
      st.afterTerminateReported = true;
      this.emit(
        'rdmap.after-terminate',
        u,
        rec,
        `${opcodeName(pdu.rdmap.opcode)} sent after this side's Terminate at seq ${st.terminated.seq} (${framesText(st.terminated.frames)})`,
      );
    }
    checkVersions(this, u, rec, pdu);
    checkHeader(this, u, rec, pdu);

    // The segment joins its message; when it ends one, the message closes here, in capture order.
    const ended =
      pdu.kind === 'untagged' ? untaggedSegment(this, u, st, pdu, rec) : taggedSegment(this, u, st, pdu, rec);
    if (this.ulp !== null) {
      if (pdu.kind === 'untagged') this.ulp.segment(u, pdu);
      else if (this.ulp.keeping(u.dir)) this.ulp.tagged(u, pdu);
    }
    if (ended !== null) {
      messageEnded(this, u, st, ended, pdu);
      if (this.ulp !== null) rec.ulp = this.ulp.message(u, ended, pdu, pdu.ddp.l);
    }

    if (pdu.kind === 'untagged' && pdu.body.type === 'terminate') handleTerminate(this, u, st, pdu, pdu.body.term, rec);
  }

  /**
   * FPDUs of one direction follow each other on the wire: the next ULPDU_Length sits
   * 2 + length + PAD + 4 octets further, plus 4 per marker in between (markers every 512 octets of
   * sequence space, SPEC-NOTES "Markers"). A larger jump means FPDUs are missing from what MPA
   * framed (a capture gap, or bytes it could not frame): later sequence jumps may be explained by it.
   */
  private checkContinuity(u: Ulpdu, st: DirState): void {
    const prevSeq = st.lastFpduSeq;
    const prevSize = st.lastFpduSize;
    st.lastFpduSeq = u.seq;
    st.lastFpduSize = 2 + u.length + ((4 - ((2 + u.length) % 4)) % 4) + 4;
    if (prevSize === 0 || this.opts.seqContinuity === false) return;
    const delta = (u.seq - prevSeq) >>> 0;
    if (delta === prevSize || delta === 0 || delta >= 0x80000000) return; // contiguous, repeated, or behind
    const extra = delta - prevSize;
    if (extra > 0 && extra % 4 === 0) {
      const k = extra / 4;
      const lo = Math.floor(delta / 512);
      if (k === lo || k === lo + 1) return; // the markers in between
    }
    st.lossEpoch++;
    st.lastLossKind = 'capture';
    st.lastLoss =
      extra > 0
        ? `${extra} octets missing from the stream between seq ${prevSeq} and seq ${u.seq} (FPDUs lost from the capture or not framed)`
        : `FPDU at seq ${u.seq} overlapping the previous one at seq ${prevSeq}`;
  }

  // -------------------------------------------------------------------------------------------
  // End of a direction
  // -------------------------------------------------------------------------------------------

  /** Direction `dir` ended: FIN, RST, or the capture ran out ('eof'). */
  end(dir: Dir, reason: 'fin' | 'rst' | 'eof', frame: number | null = null): void {
    const st = this.dir(dir);
    if (st.ended) return;
    st.ended = true;
    judgePending(this, dir, Number.POSITIVE_INFINITY);
    closeOpenMessages(this, dir, st, reason);
    // Read Requests the peer sent and this direction should have answered.
    endUnansweredReads(this, dir, reason, frame);
    this.reportHeldBack(st);
    // The upper layer reports what was never answered once the whole connection is over.
    if (this.ulp !== null && this.dir(other(dir)).ended) this.ulp.end();
  }

  // -------------------------------------------------------------------------------------------
  // Outputs
  // -------------------------------------------------------------------------------------------

  directionStats(dir: Dir): DdpDirection {
    return summarizeDirection(this.dir(dir));
  }

  /** The per-direction summary the report takes (MpaDirection.ddp); same as directionStats. */
  summary(dir: Dir): DdpDirection {
    return this.directionStats(dir);
  }

  /** Messages of `dir` still open (no L yet), oldest first. Completed ones went to onMessage. */
  messages(dir: Dir): DdpMessage[] {
    const st = this.dir(dir);
    return openMessages(st).map((m) => snapshot(this, dir, st, m, false));
  }

  /** Read Requests `dir` sent that are still unanswered. */
  outstandingReads(dir: Dir): number {
    return this.dir(dir).outstanding.length;
  }
}
