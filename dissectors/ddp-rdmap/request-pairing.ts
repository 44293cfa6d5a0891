/**
 * Requests and their Responses: the Read Requests a direction sends wait for the peer's Read
 * Responses, which pair with them by order, within the negotiated IRD/ORD; Atomic
 * Requests wait for the Response naming their Request Identifier (RFC 7306). Reads still
 * unanswered when the responder's direction closes are reported.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TaggedPdu, UntaggedPdu } from './decode.js';
import { bswap32, bswap64, readRequestSwapped } from './byte-order.js';
import {
  dropOldest,
  type DirState,
  type OpenMsg,
  type OutstandingRead,
  type PendingResponse,
} from './direction-state.js';
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
    const read: OutstandingRead = {
      seq: u.seq,
      frames: rec.frames,
      sinkStag: rr.sinkStag,
      sinkTo: rr.sinkTo,
      size: rr.size,
      rtr,
      swapped: false,
      wire: { sinkStag: rr.sinkStag, sinkTo: rr.sinkTo, size: rr.size, srcStag: rr.srcStag, srcTo: rr.srcTo },
    };
    m.rtr = rtr;
    // Held back by MPA, this Request reaches us after the Response the peer sent to it.
    if (pairLate(a, u, read)) return;
    const outstanding = st.outstandingList();
    outstanding.push(read);
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
  } else if (b.type === 'atomic-request') {
    // Held back by MPA, this Request reaches us after the Response the peer sent to it.
    const peer = a.dir(other(u.dir));
    const pending = peer.more?.pendingResponses;
    const id = b.req.requestId;
    const i = pending ? pending.findIndex((r) => r.kind === 'atomic' && r.requestId === id) : -1;
    if (i >= 0 && pending![i]!.frame > lastFrame(rec.frames)) {
      pending!.splice(i, 1);
      return;
    }
    st.atomics.set(id, { seq: u.seq, frames: rec.frames });
    if (st.atomics.size > MAX_ATOMICS) dropOldest(st.atomics);
  } else if (b.type === 'atomic-response') {
    const peer = a.dir(other(u.dir));
    if (peer.rare.atomics?.delete(b.resp.originalRequestId)) return;
    const r: PendingResponse = {
      u,
      rec,
      kind: 'atomic',
      stag: 0,
      to: 0n,
      msg: null,
      requestId: b.resp.originalRequestId,
      frame: lastFrame(rec.frames),
    };
    if (!pend(a, r)) unanswered(a, r);
  }
}

/**
 * A Response with no Request while the peer's octets from before it are still held by MPA (framing
 * being found again): its Request may be among them, so it is judged when the peer's FPDUs catch
 * up (judgePending). True when it was put aside.
 */
function pend(a: FlowCore, r: PendingResponse): boolean {
  const held = a.held?.heldFrame(other(r.u.dir)) ?? null;
  if (held === null || held > r.frame) return false;
  const pending = (a.dir(r.u.dir).rare.pendingResponses ??= []);
  pending.push(r);
  if (pending.length > MAX_PENDING) unanswered(a, pending.shift()!);
  return true;
}

/** A Response whose Request never came: reported by its kind. */
function unanswered(a: FlowCore, r: PendingResponse): void {
  if (r.kind === 'read') {
    unsolicited(a, r.u.dir, r);
    return;
  }
  if (a.ctx.rev === null) return; // the Request may precede the capture
  const st = a.dir(r.u.dir);
  const peer = a.dir(other(r.u.dir));
  const text = `Atomic Response for Request Identifier ${r.requestId}, which no captured Atomic Request from the peer carries`;
  if (peer.lossEpoch > 0)
    a.lossExplained(r.u, st, r.rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
  else a.emit('rdmap.atomic-response-unmatched', r.u, r.rec, text);
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
    const r: PendingResponse = {
      u,
      rec,
      kind: 'read',
      stag: p.stag,
      to: p.to,
      msg: m,
      requestId: 0,
      frame: lastFrame(rec.frames),
    };
    if (!pend(a, r)) unsolicited(a, u.dir, r);
    return;
  }
  pairWith(a, u, rec, p.stag, p.to, m, req);
}

/** The last (highest) frame of a record. */
export function lastFrame(frames: readonly number[]): number {
  let f = -1;
  for (const x of frames) if (x > f) f = x;
  return f;
}

/** Read Responses held pending at most, per direction: past it the oldest is judged at once. */
const MAX_PENDING = 64;

/** A Response with no Request: unsolicited, or explained by the peer's loss. */
function unsolicited(a: FlowCore, dir: Dir, r: PendingResponse): void {
  const st = a.dir(dir);
  // Without the startup the Requests may precede the capture, until one pairing shows otherwise.
  if (a.ctx.rev === null && !st.pairedResponse) return;
  const peer = a.dir(other(dir));
  const text = `Read Response to STag ${hex32(r.stag)} TO ${hex64(r.to)} with no outstanding Read Request from the peer`;
  if (peer.lossEpoch > 0)
    a.lossExplained(r.u, st, r.rec, `${text}; the peer's direction lost ${peer.lastLoss}`, peer.lastLossKind);
  else a.emit('rdmap.read-response-unsolicited', r.u, r.rec, text);
}

/**
 * A Read Request of direction u.dir that MPA held back: the oldest pending Response of the peer
 * captured after it answers it (Responses come in Request order, RFC 5040 section 5.1). True
 * when one did.
 */
function pairLate(a: FlowCore, u: Ulpdu, read: OutstandingRead): boolean {
  const peer = a.dir(other(u.dir));
  const pending = peer.more?.pendingResponses;
  if (!pending || pending.length === 0) return false;
  const mine = lastFrame(read.frames);
  const i = pending.findIndex((r) => r.kind === 'read' && r.frame > mine);
  if (i < 0) return false;
  const answer = pending[i]!;
  // Read Responses pending from before this Request answer none of the Requests still held.
  for (let k = i - 1; k >= 0; k--) {
    const r = pending[k]!;
    if (r.kind !== 'read') continue;
    pending.splice(k, 1);
    unsolicited(a, r.u.dir, r);
  }
  pending.splice(pending.indexOf(answer), 1);
  const m = answer.msg!;
  pairWith(a, answer.u, answer.rec, answer.stag, answer.to, m, read);
  // A Response already complete gets the size check its last segment would have made.
  const rst = a.dir(answer.u.dir);
  if (!rst.tagged().includes(m) && !m.sizeReported && m.length !== read.size) {
    m.sizeReported = true;
    a.emit(
      'rdmap.read-response-size',
      answer.u,
      answer.rec,
      `Read Response of ${m.length} octets; the Read Request at seq ${read.seq} (${framesText(read.frames)}) asked for ${read.size}`,
    );
  }
  return true;
}

/**
 * Direction `dir` handed on an FPDU (or ended: `frame` Infinity): the peer's Responses pending
 * from before it have no Request among dir's held-back octets any more.
 */
export function judgePending(a: FlowCore, dir: Dir, frame: number): void {
  const peer = a.dir(other(dir));
  const pending = peer.more?.pendingResponses;
  if (!pending || pending.length === 0) return;
  while (pending.length > 0 && pending[0]!.frame < frame) unanswered(a, pending.shift()!);
}

/** Pairs the first segment of a Read Response with its Request (also late: pairLate). */
function pairWith(
  a: FlowCore,
  u: Ulpdu,
  rec: DdpSegmentRecord,
  stag: number,
  to: bigint,
  m: OpenMsg,
  req: OutstandingRead,
): void {
  const st = a.dir(u.dir);
  const peer = a.dir(other(u.dir));
  st.pairedResponse = true;
  m.read = req;
  m.rtr = m.rtr || req.rtr;
  rec.readRequest = { seq: req.seq, frames: req.frames };
  // A Request written in host order: the Response matches it byte-swapped (SoftUiWarp does this).
  if (
    !req.rtr &&
    (stag !== req.sinkStag || to !== req.sinkTo) &&
    stag === bswap32(req.sinkStag) &&
    to === bswap64(req.sinkTo)
  ) {
    readRequestSwapped(a, u, rec, req);
  }
  // siw: STag/TO of zero-length RTR operations must not be checked.
  if (!req.rtr && (stag !== req.sinkStag || to !== req.sinkTo)) {
    const text = `Read Response to STag ${hex32(stag)} TO ${hex64(to)}; the Read Request at seq ${req.seq} (${framesText(req.frames)}) named Data Sink ${hex32(req.sinkStag)}/${hex64(req.sinkTo)}`;
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
