/**
 * Requests and their Responses: the Read Requests a direction sends wait for the peer's Read
 * Responses, which pair with them by order, within the negotiated IRD/ORD; Atomic
 * Requests wait for the Response naming their Request Identifier (RFC 7306). Reads still
 * unanswered when the responder's direction closes are reported.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TaggedPdu, UntaggedPdu } from './decode.js';
import { bswap32, bswap64, readRequestSwapped } from './byte-order.js';
import { dropOldest, type DirState, type OpenMsg } from './direction-state.js';
import { framesText, other, type FlowCore } from './flow-core.js';
import { hex32, hex64 } from './tree.js';
import type { DdpSegmentRecord, Dir } from './types.js';

const MAX_ATOMICS = 1024;
/** IRD/ORD value Intel drivers use for "no value" (SPEC-NOTES RFC 6581; provisional 3). */
const NO_IRD_ORD = 0x3fff;

/** Read Request / Atomic bookkeeping at the start of an untagged message. */
export function pairUntaggedStart(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: UntaggedPdu,
  rec: DdpSegmentRecord,
  m: OpenMsg,
): void {
  const b = p.body;
  if (b.type === 'read-request') {
    st.readRequests++;
    const rtr = rec.rtr === 'read';
    const rr = b.rr;
    const outstanding = st.outstandingList();
    outstanding.push({
      seq: u.seq,
      frames: rec.frames,
      sinkStag: rr.sinkStag,
      sinkTo: rr.sinkTo,
      size: rr.size,
      rtr,
      swapped: false,
      wire: { sinkStag: rr.sinkStag, sinkTo: rr.sinkTo, size: rr.size, srcStag: rr.srcStag, srcTo: rr.srcTo },
    });
    if (outstanding.length > a.maxReads) outstanding.shift();
    const limit = readLimit(a, u.dir);
    if (limit !== null && !rtr) {
      const n = st.outstanding.filter((r) => !r.rtr).length;
      if (n > limit.value) {
        a.emit(
          'rdmap.ird-exceeded',
          u,
          rec,
          `${n} Read Requests outstanding; the negotiated limit is ${limit.value} (${limit.why})`,
        );
      }
    }
    m.rtr = rtr;
  } else if (b.type === 'atomic-request') {
    st.atomics.set(b.req.requestId, { seq: u.seq, frames: rec.frames });
    if (st.atomics.size > MAX_ATOMICS) dropOldest(st.atomics);
  } else if (b.type === 'atomic-response') {
    const peer = a.dir(other(u.dir));
    if (peer.rare.atomics?.delete(b.resp.originalRequestId)) return;
    const text = `Atomic Response for Request Identifier ${b.resp.originalRequestId}, which no captured Atomic Request from the peer carries`;
    if (a.ctx.rev === null) return; // the Request may precede the capture
    if (peer.lossEpoch > 0)
      a.lossExplained(u, st, rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
    else a.emit('rdmap.atomic-response-unmatched', u, rec, text);
  }
}

function readLimit(a: FlowCore, dir: Dir): { value: number; why: string } | null {
  const c = a.ctx;
  if (c.initiatorDir === null) return null;
  // A requester may have min(its ORD, the peer's IRD) reads outstanding (SPEC-NOTES RFC 6581 rules).
  const mine = dir === c.initiatorDir ? c.requestOrd : c.replyOrd;
  const peers = dir === c.initiatorDir ? c.replyIrd : c.requestIrd;
  const who = dir === c.initiatorDir ? ['Initiator', 'Responder'] : ['Responder', 'Initiator'];
  const parts: { v: number; why: string }[] = [];
  if (mine !== null && mine !== NO_IRD_ORD) parts.push({ v: mine, why: `${who[0]} ORD ${mine}` });
  if (peers !== null && peers !== NO_IRD_ORD) parts.push({ v: peers, why: `${who[1]} IRD ${peers}` });
  if (parts.length === 0) return null;
  const best = parts.reduce((lo, x) => (x.v < lo.v ? x : lo));
  return { value: best.v, why: parts.map((x) => x.why).join(', ') };
}

/** A Read Response's first segment: paired with the peer's oldest outstanding Read Request. */
export function pairReadResponse(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: TaggedPdu,
  rec: DdpSegmentRecord,
  m: OpenMsg,
): void {
  st.readResponses++;
  const peer = a.dir(other(u.dir));
  const req = peer.outstanding.length === 0 ? undefined : peer.outstandingList().shift();
  if (!req) {
    // Without the startup the Requests may precede the capture, until one pairing shows otherwise.
    if (a.ctx.rev === null && !st.pairedResponse) return;
    const text = `Read Response to STag ${hex32(p.stag)} TO ${hex64(p.to)} with no outstanding Read Request from the peer`;
    if (peer.lossEpoch > 0)
      a.lossExplained(u, st, rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
    else a.emit('rdmap.read-response-unsolicited', u, rec, text);
    return;
  }
  st.pairedResponse = true;
  m.read = req;
  m.rtr = m.rtr || req.rtr;
  rec.readRequest = { seq: req.seq, frames: req.frames };
  // A Request written in host order: the Response matches it byte-swapped (SoftUiWarp does this).
  if (
    !req.rtr &&
    (p.stag !== req.sinkStag || p.to !== req.sinkTo) &&
    p.stag === bswap32(req.sinkStag) &&
    p.to === bswap64(req.sinkTo)
  ) {
    readRequestSwapped(a, u, rec, req);
  }
  // siw: STag/TO of zero-length RTR operations must not be checked.
  if (!req.rtr && (p.stag !== req.sinkStag || p.to !== req.sinkTo)) {
    const text = `Read Response to STag ${hex32(p.stag)} TO ${hex64(p.to)}; the Read Request at seq ${req.seq} (${framesText(req.frames)}) named Data Sink ${hex32(req.sinkStag)}/${hex64(req.sinkTo)}`;
    if (peer.lossEpoch > 0)
      a.lossExplained(
        u,
        st,
        rec,
        `${text}; paired by order, and the peer's direction lost ${peer.lastLoss}`,
        peer.lastLossKind,
      );
    else a.emit('rdmap.read-response-mismatch', u, rec, text);
  }
}

/**
 * Direction `dir` (the responder to the peer's Read Requests) ended: the Requests it left
 * unanswered are reported unless the capture merely ran out, and forgotten.
 */
export function endUnansweredReads(a: FlowCore, dir: Dir, reason: 'fin' | 'rst' | 'eof', frame: number | null): void {
  const peer = a.dir(other(dir));
  if (reason !== 'eof') {
    for (const r of peer.outstanding) {
      // A RST (RFC 9293 §3.5.3) aborts both directions: name it, and its frame, as the end.
      const how =
        reason === 'rst' && frame !== null
          ? `the connection was reset (RST in frame ${frame})`
          : `the responder's direction closed (${reason})`;
      a.report(
        'rdmap.read-unanswered',
        other(dir),
        peer.from,
        frame !== null && reason === 'rst' ? [...r.frames, frame] : r.frames,
        r.seq,
        `${r.rtr ? 'Read RTR' : 'Read Request'} for ${r.size} octets (sink ${hex32(r.sinkStag)}/${hex64(r.sinkTo)}) not answered before ${how}`,
      );
    }
  }
  if (peer.outstanding.length > 0) peer.rare.outstanding = [];
}
