/**
 * Untagged bookkeeping (RFC 5041 untagged buffer model): per queue, MSN order (gaps, reorders,
 * duplicates) and, within a message, MO continuity; a new MSN supersedes the messages still waiting
 * for their L segment. Irregularities after data went missing from the capture are reported as
 * explained by it.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { UntaggedPdu } from './decode.js';
import { bswap32, reportMoByteOrder } from './byte-order.js';
import { dropOldest, NO_OPEN, type DirState, type OpenMsg, type QueueState } from './direction-state.js';
import { OPCODE_SPECS, opcodeName } from './fields.js';
import type { FlowCore } from './flow-core.js';
import { appendSegment, closeMessage, openMessage } from './messages.js';
import { pairUntaggedStart } from './request-pairing.js';
import type { DdpSegmentRecord } from './types.js';

const MAX_QUEUES = 16;
const MAX_MISSING = 256;

function serialDiff(a: number, b: number): number {
  // (a - b) mod 2^32 as a signed distance: MSN arithmetic is modulo 2^32 (SPEC-NOTES 1.5 [RFC?]).
  const d = (a - b) >>> 0;
  return d >= 0x80000000 ? d - 0x100000000 : d;
}

/**
 * One untagged segment (CRC good) into its queue and message. Returns the message when this
 * segment ends it (out of the queue's table; the caller closes it), else null.
 */
export function untaggedSegment(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: UntaggedPdu,
  rec: DdpSegmentRecord,
): OpenMsg | null {
  let q = st.queue(p.qn);
  if (!q) {
    const qs = st.queues;
    if (qs !== null && qs.length >= MAX_QUEUES) return null; // garbage QNs must not grow the table
    q = { qn: p.qn, expected: null, open: null, missing: null, epoch: st.lossEpoch };
    if (qs === null)
      st.queues = [q]; // room for one queue, not the 17 a first push reserves
    else qs.push(q);
  }
  // Single-segment opcodes (Read Request, Terminate, RFC 7306) end with their one segment even
  // without L: that is reported once (rdmap.not-single-segment), not again as a missing L.
  const ends = p.ddp.l || OPCODE_SPECS[p.rdmap.opcode]?.single === true;
  let inTable = true;
  let m = q.open === null || q.open.size === 0 ? undefined : q.open.get(p.msn);
  if (m) {
    if (p.mo !== m.length && p.mo === bswap32(m.length) && m.length !== 0) {
      // MO in host order (SoftUiWarp after the first segment).
      reportMoByteOrder(a, u, st, p, m, rec);
    } else if (p.mo !== m.length) {
      const why = p.mo > m.length ? `${p.mo - m.length} octets missing` : `${m.length - p.mo} octets overlap`;
      const text = `QN ${p.qn} MSN ${p.msn}: MO=${p.mo}, expected ${m.length} (${why})`;
      if (st.lossEpoch !== m.epoch) a.lossExplained(u, st, rec, text);
      else {
        st.moErrors++;
        a.emit('ddp.invalid-mo', u, rec, `${text}; a receiver answers Terminate DDP/Untagged 0x04 Invalid MO`);
      }
      m.length = p.mo; // resynchronise on the sender's offsets
    }
  } else {
    const startupKnown = a.ctx.rev !== null;
    const wasFresh = q.expected === null;
    checkMsn(a, u, st, q, p, rec);
    // Earlier messages on this queue still waiting for L: the new MSN supersedes them.
    for (const [msn, old] of q.open ?? NO_OPEN) {
      if (serialDiff(p.msn, msn) <= 0) continue;
      const text = `${opcodeName(old.opcode)} QN ${p.qn} MSN ${msn} (${old.segments} segment${old.segments === 1 ? '' : 's'}, ${old.length} octets from seq ${old.firstSeq}) never got its L segment before MSN ${p.msn} started`;
      if (st.lossEpoch !== old.epoch) a.lossExplained(u, st, rec, text);
      else a.emit('ddp.missing-last', u, rec, text);
      q.open!.delete(msn);
      closeMessage(a, u.dir, st, old, false);
    }
    const midCaptureStart = wasFresh && !startupKnown;
    if (p.mo !== 0) {
      const text = `QN ${p.qn} MSN ${p.msn}: first segment seen has MO=${p.mo}; the message's earlier segments are missing`;
      if (midCaptureStart) {
        /* the capture began inside this message */
      } else if (st.lossEpoch !== q.epoch || (wasFresh && st.lossEpoch > 0)) a.lossExplained(u, st, rec, text);
      else {
        st.moErrors++;
        a.emit('ddp.invalid-mo', u, rec, `${text} (a message starts at MO 0)`);
      }
    }
    m = openMessage(a, u, st, p, {
      qn: p.qn,
      msn: p.msn,
      stag: null,
      to: null,
      startSeen: p.mo === 0,
      rtr: rec.rtr !== null,
    });
    m.length = p.mo;
    // A message that ends with this segment is never looked up: it does not enter the table.
    inTable = !ends;
    if (inTable) (q.open ??= new Map()).set(p.msn, m);
    pairUntaggedStart(a, u, st, p, rec, m);
  }
  q.epoch = st.lossEpoch;
  appendSegment(u, st, m, p, rec);
  if (!ends) return null;
  if (inTable) q.open!.delete(p.msn);
  return m;
}

function checkMsn(a: FlowCore, u: Ulpdu, st: DirState, q: QueueState, p: UntaggedPdu, rec: DdpSegmentRecord): void {
  if (q.expected === null) {
    q.expected = (p.msn + 1) >>> 0;
    // Without the startup the capture may begin anywhere in the stream: any first MSN will do.
    if (a.ctx.rev === null || p.msn === 1) return;
    const text = `first message on QN ${p.qn} has MSN ${p.msn}, expected 1`;
    if (st.lossEpoch > 0) a.lossExplained(u, st, rec, text);
    else {
      st.msnErrors++;
      a.emit(
        'ddp.msn-first',
        u,
        rec,
        `${text} (${p.msn === 0 ? 'a counter starting at 0?' : `${(p.msn - 1) >>> 0} earlier messages missing?`})`,
      );
    }
    return;
  }
  const d = serialDiff(p.msn, q.expected);
  if (d === 0) {
    q.expected = (p.msn + 1) >>> 0;
    return;
  }
  if (d > 0) {
    const text = `QN ${p.qn}: MSN ${p.msn}, expected ${q.expected} (${d} message${d === 1 ? '' : 's'} missing)`;
    if (d <= MAX_MISSING) {
      const missing = (q.missing ??= new Set());
      for (let i = 0; i < d; i++) {
        missing.add((q.expected + i) >>> 0);
        if (missing.size > MAX_MISSING) dropOldest(missing);
      }
    }
    if (st.lossEpoch !== q.epoch) a.lossExplained(u, st, rec, text);
    else {
      st.msnErrors++;
      a.emit(
        'ddp.msn-gap',
        u,
        rec,
        `${text}; a receiver answers Terminate DDP/Untagged 0x03 Invalid MSN - MSN range is not valid`,
      );
    }
    q.expected = (p.msn + 1) >>> 0;
    return;
  }
  st.msnErrors++;
  if (q.missing?.delete(p.msn)) {
    a.emit(
      'ddp.msn-reorder',
      u,
      rec,
      `QN ${p.qn}: MSN ${p.msn} arrived after MSN ${(q.expected - 1) >>> 0} (out of order)`,
    );
  } else {
    a.emit(
      'ddp.msn-duplicate',
      u,
      rec,
      `QN ${p.qn}: MSN ${p.msn} repeats an earlier message (next expected ${q.expected})`,
    );
  }
}
