/**
 * Message assembly: a message opens with its first segment seen, grows by each segment, and
 * closes complete (its L segment), superseded, evicted, or still open when its direction ends.
 * messageEnded is the one place where a message becomes known as a whole, in capture order.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TaggedPdu, UntaggedPdu } from './decode.js';
import { NO_MSGS, NO_QUEUES, type DirState, type OpenMsg } from './direction-state.js';
import { countCompleteSize } from './direction-summary.js';
import { opcodeKey, opcodeName } from './fields.js';
import type { FlowCore } from './flow-core.js';
import { hex32 } from './tree.js';
import type { DdpMessage, DdpSegmentRecord, Dir } from './types.js';

const MAX_FRAMES = 64;

/** A message's first segment seen: a new open message, counted against the direction's limit. */
export function openMessage(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: TaggedPdu | UntaggedPdu,
  o: {
    qn: number | null;
    msn: number | null;
    stag: number | null;
    to: bigint | null;
    startSeen: boolean;
    rtr: boolean;
  },
): OpenMsg {
  if (st.openCount >= a.maxOpen) evictOldest(a, u.dir, st);
  st.openCount++;
  return {
    index: ++st.messageIndex,
    opcode: p.rdmap.opcode,
    tagged: p.kind === 'tagged',
    qn: o.qn,
    msn: o.msn,
    stag: o.stag,
    firstTo: o.to,
    nextTo: o.to ?? 0n,
    length: 0,
    segments: 0,
    frames: [],
    framesTruncated: false,
    firstSeq: u.seq,
    lastSeq: u.seq,
    startSeen: o.startSeen,
    rtr: o.rtr,
    epoch: st.lossEpoch,
    read: null,
    sizeReported: false,
    interleaveReported: false,
  };
}

/**
 * Segment `p` joins message `m`. Every segment of a message passes here in capture order (a hand-off
 * that reassembles untagged payload would gather each segment's octets here).
 */
export function appendSegment(
  u: Ulpdu,
  st: DirState,
  m: OpenMsg,
  p: TaggedPdu | UntaggedPdu,
  rec: DdpSegmentRecord,
): void {
  m.segments++;
  m.length += Math.max(0, p.payloadLength);
  m.lastSeq = u.seq;
  m.epoch = st.lossEpoch;
  for (const f of u.frames) {
    if (m.frames.length && m.frames[m.frames.length - 1] === f) continue;
    if (m.frames.includes(f)) continue;
    if (m.frames.length < MAX_FRAMES) m.frames.push(f);
    else m.framesTruncated = true;
  }
  rec.message = { index: m.index, length: m.length, complete: p.ddp.l, segment: m.segments };
}

/**
 * Segment `p` ended message `m` (already out of its queue or tagged list): the one place where a
 * message becomes known as a whole, once, in capture order. With L set it is complete (Send family,
 * RDMA Write, Read Request, Read Response, Terminate, Atomic); without L only a single-segment opcode
 * gets here (reported as rdmap.not-single-segment), and it counts as incomplete.
 *
 * At hand: `m` (opcode; QN/MSN, or STag and first TO; payload length, segments, frames, first and
 * last seq, rtr; for a Read Response, `read`: the Read Request it answers), the last segment `p`
 * (MO, Invalidate STag, body: Read Request fields, Terminate, Atomic, Immediate Data) and `u` (seq,
 * frames, the ULPDU's first octets). Payload octets are not kept across segments. Its caller runs
 * the Terminate analysis just after; a segment whose CRC fails is never bookkept, so never comes here.
 */
export function messageEnded(a: FlowCore, u: Ulpdu, st: DirState, m: OpenMsg, p: TaggedPdu | UntaggedPdu): void {
  closeMessage(a, u.dir, st, m, p.ddp.l);
}

/** Message `m` leaves the open ones: counted, and handed to onMessage. */
export function closeMessage(a: FlowCore, dir: Dir, st: DirState, m: OpenMsg, complete: boolean): void {
  st.openCount = Math.max(0, st.openCount - 1);
  if (complete) {
    st.messagesComplete++;
    countCompleteSize(st, m.opcode, m.length);
  } else st.messagesIncomplete++;
  a.opts.onMessage?.(snapshot(a, dir, st, m, complete));
}

function evictOldest(a: FlowCore, dir: Dir, st: DirState): void {
  let oldest: OpenMsg | null = null;
  for (const q of st.queues ?? NO_QUEUES)
    if (q.open) for (const m of q.open.values()) if (!oldest || m.index < oldest.index) oldest = m;
  for (const m of st.openTagged ?? NO_MSGS) if (!oldest || m.index < oldest.index) oldest = m;
  if (!oldest) return;
  if (oldest.tagged) st.tagged().splice(st.tagged().indexOf(oldest), 1);
  else if (oldest.qn !== null && oldest.msn !== null) st.queue(oldest.qn)?.open?.delete(oldest.msn);
  closeMessage(a, dir, st, oldest, false);
}

export function snapshot(a: FlowCore, dir: Dir, st: DirState, m: OpenMsg, complete: boolean): DdpMessage {
  return {
    flow: a.flowId,
    dir,
    from: st.from,
    index: m.index,
    opcode: m.opcode,
    key: opcodeKey(m.opcode),
    tagged: m.tagged,
    qn: m.qn,
    msn: m.msn,
    stag: m.stag,
    to: m.firstTo,
    length: m.length,
    segments: m.segments,
    frames: [...m.frames],
    framesTruncated: m.framesTruncated,
    firstSeq: m.firstSeq,
    lastSeq: m.lastSeq,
    complete,
    startSeen: m.startSeen,
    rtr: m.rtr,
  };
}

/** The direction's open messages, oldest first. */
export function openMessages(st: DirState): OpenMsg[] {
  const all: OpenMsg[] = [];
  for (const q of st.queues ?? NO_QUEUES) if (q.open) for (const m of q.open.values()) all.push(m);
  if (st.openTagged) for (const m of st.openTagged) all.push(m);
  return all.sort((a, b) => a.index - b.index);
}

/** The direction ended: every open message closes incomplete (a finding unless the capture ran out). */
export function closeOpenMessages(a: FlowCore, dir: Dir, st: DirState, reason: 'fin' | 'rst' | 'eof'): void {
  for (const m of openMessages(st)) {
    if (reason !== 'eof') {
      a.report(
        'ddp.incomplete-message',
        dir,
        st.from,
        m.frames,
        m.lastSeq,
        `${opcodeName(m.opcode)} ${m.tagged ? `to STag ${hex32(m.stag ?? 0)}` : `QN ${m.qn} MSN ${m.msn}`} (${m.segments} segment${m.segments === 1 ? '' : 's'}, ${m.length} octets) had no L segment when the direction closed (${reason})`,
      );
    }
    closeMessage(a, dir, st, m, false);
  }
  for (const q of st.queues ?? NO_QUEUES) q.open?.clear();
  if (st.openTagged) st.openTagged = [];
  st.openCount = 0;
}
