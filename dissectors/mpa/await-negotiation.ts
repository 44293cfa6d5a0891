/**
 * The 'await' state: a direction past its startup frame (or given SeqStart by `--mpa`) waits here for
 * its framing parameters, then frames from SeqStart (RFC 5044 §7.1.2: FPDUs begin right after the
 * startup frame). Without the peer's startup frame, markers and CRC are inferred from the octets.
 */
import { forcedEnablement } from './enablement.js';
import type { FlowHost } from './flow-host.js';
import { frameFromLock, tryLock } from './framing-search.js';
import type { MpaDirection } from './mpa-direction.js';
import { STARTUP_HEADER_LEN, classifyKey } from './startup.js';

export function stepAwait(flow: FlowHost, d: MpaDirection, final: boolean): void {
  const forced = flow.opts.forced;
  if (flow.detection === 'forced' && d.params && d.forcedSeqStart === null && (forced?.startAny ?? null) !== null) {
    // `start=SEQ`: this direction's, if its octets hold SEQ; else its start is searched for.
    if (d.log.length === 0) return;
    const dist = (forced!.startAny! - d.seqOf(d.log.base)) | 0;
    if (dist >= 0 && dist < d.log.length) d.forcedSeqStart = forced!.startAny!;
    else if (dist < 0 || final) {
      d.state = 'hunt';
      return;
    } else return;
  }
  if (flow.detection === 'forced' && d.params && d.forcedSeqStart !== null) {
    if (d.log.length === 0) return;
    // Signed distance: SeqStart may lie before the first captured octet (then only its phase helps).
    const off = d.log.base + ((d.forcedSeqStart - d.seqOf(d.log.base)) | 0);
    d.seqStartOffset = off;
    d.params = { ...d.params, markerBase: off };
    if (forced?.prestandard && off >= d.log.base && off < d.log.end) {
      forcedEnablement(flow, d, off, final, flow.holdBytes);
      return;
    }
    if (off >= d.log.base && off < d.log.end) {
      d.startFramer(d.params, off);
      d.replayInto(off);
    } else if (off < d.log.base) {
      d.seqStartExact = true;
      d.state = 'hunt';
    }
    return;
  }
  if (flow.rejected) {
    d.state = 'streaming';
    return;
  }
  if (flow.negotiation?.negotiated(d) ?? null) {
    leaveAwait(flow, d, final);
    return;
  }
  if (final || d.log.length > flow.holdBytes) leaveAwait(flow, d, final);
}

/** Leaves 'await': frame with the negotiated parameters, or infer them from the bytes. */
export function leaveAwait(flow: FlowHost, d: MpaDirection, final: boolean): void {
  if (d.state !== 'await') return;
  if (flow.rejected) {
    d.state = 'streaming';
    flow.progress(d, final);
    return;
  }
  if (skipRepeatedStartup(flow, d)) return;
  const ss = d.seqStartOffset!;
  const params = flow.negotiation?.negotiated(d) ?? null;
  if (params) {
    // Both ends sent a Request: no Reply will come, so the first octets a direction sends are early
    // (RFC 5044 §7.1.2); they are waited for to be named.
    if (d.log.length === 0 && !final && d.startupRec?.kind === 'request' && !flow.reply) return;
    reportEarly(flow, d, params.markers, params.markerBase);
    d.startFramer(params, ss);
    if (d.log.length > 0) d.replayInto(Math.max(ss, d.log.base));
    return;
  }
  if (d.log.length === 0 && !final) return;
  // The peer's startup frame was not seen: infer markers and CRC from the bytes at SeqStart.
  const lock = tryLock(flow, d, final, { markerBase: ss, alignBase: ss, preferStart: true });
  reportEarly(flow, d, lock?.params.markers ?? false, lock?.params.markerBase ?? ss);
  if (lock) {
    flow.crc ??= lock.params.crc;
    frameFromLock(flow, d, lock);
  } else if (final) {
    d.state = 'ended';
  } else {
    d.state = 'hunt';
    d.huntReason = 'negotiation';
  }
}

/**
 * RFC 5044 §7.1.2: the Initiator sends no FPDU before it has the Reply (judged in capture order).
 * Named at the first FPDU's ULPDU_Length field, after the marker that leads it when markers are on.
 */
function reportEarly(flow: FlowHost, d: MpaDirection, markers: boolean, markerBase: number): void {
  if (d.startupRec?.kind !== 'request' || d.log.length === 0 || d.earlyReported) return;
  const first = d.log.frameAt(d.log.base);
  if (flow.reply && flow.reply.dir !== d.dir && first >= flow.reply.frame) return;
  d.earlyReported = true;
  const at = markers && (((d.log.base - markerBase) % 512) + 512) % 512 === 0 ? d.log.base + 4 : d.log.base;
  flow.find(
    d,
    'mpa.initiator-before-reply',
    d.seqOf(at),
    [first],
    `Initiator sent octets after its Request (frame ${first}) before ${flow.reply && flow.reply.dir !== d.dir ? `the Reply (frame ${flow.reply.frame})` : 'any Reply'}`,
  );
}

/** A second startup frame where FPDUs should begin: report it and start after it. */
function skipRepeatedStartup(flow: FlowHost, d: MpaDirection): boolean {
  const b = d.log.bytes;
  if (d.seqStartOffset === null || d.log.base !== d.seqStartOffset || b.length < STARTUP_HEADER_LEN) return false;
  const k = classifyKey(b, 0);
  if (k === null) return false;
  const total = STARTUP_HEADER_LEN + ((b[18]! << 8) | b[19]!);
  // Held until whole (its private data may follow in later segments).
  if (b.length < total) return true;
  flow.find(
    d,
    'mpa.startup-after-mpa',
    d.seqOf(d.log.base),
    d.log.framesIn(d.log.base, d.log.base + total),
    `another MPA ${k === 'request' ? 'Request' : 'Reply'} at seq ${d.seqOf(d.log.base)} where FPDUs should start; ignored for negotiation`,
  );
  d.seqStartOffset += total;
  d.log.dropBefore(d.seqStartOffset);
  return false;
}
