/**
 * Tagged bookkeeping (RFC 5041 tagged buffer model): a tagged message continues at the TO where its
 * last segment ended; a new one while another still waits for its L segment is interleaving (or the
 * other's tail was lost). A Read Response's size is checked against the Read Request it answers.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TaggedPdu } from './decode.js';
import { swappedSizeChecked } from './byte-order.js';
import type { DirState, OpenMsg } from './direction-state.js';
import { OP, opcodeName } from './fields.js';
import { framesText, type FlowCore } from './flow-core.js';
import { appendSegment, closeMessage, openMessage } from './messages.js';
import { pairReadResponse } from './request-pairing.js';
import { hex32, hex64 } from './tree.js';
import type { DdpSegmentRecord } from './types.js';

/**
 * One tagged segment (CRC good) into its message. Returns the message when this segment ends it
 * (L set; out of the open list, the caller closes it), else null.
 */
export function taggedSegment(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: TaggedPdu,
  rec: DdpSegmentRecord,
): OpenMsg | null {
  let m = st.openTagged?.find((x) => x.stag === p.stag && x.opcode === p.rdmap.opcode);
  if (m) {
    if (p.to !== m.nextTo) {
      const why = p.to > m.nextTo ? `${p.to - m.nextTo} octets missing` : `${m.nextTo - p.to} octets overlap`;
      const text = `STag ${hex32(p.stag)}: TO=${hex64(p.to)}, expected ${hex64(m.nextTo)} (${why})`;
      if (st.lossEpoch !== m.epoch) a.lossExplained(u, st, rec, text);
      else {
        st.toErrors++;
        a.emit(
          'ddp.to-discontinuity',
          u,
          rec,
          `${text}; a receiver answers Terminate DDP/Tagged 0x01 Base or bounds violation`,
        );
      }
    }
  } else {
    const open = st.tagged();
    for (const old of [...open]) {
      const text = `new ${opcodeName(p.rdmap.opcode)} to STag ${hex32(p.stag)} while ${opcodeName(old.opcode)} to STag ${hex32(old.stag ?? 0)} (from seq ${old.firstSeq}) still awaits its L segment`;
      if (st.lossEpoch !== old.epoch) {
        // Its tail was probably lost: close it rather than keep waiting.
        a.lossExplained(u, st, rec, text);
        open.splice(open.indexOf(old), 1);
        closeMessage(a, u.dir, st, old, false);
      } else if (!old.interleaveReported) {
        old.interleaveReported = true;
        a.emit('ddp.tagged-interleaved', u, rec, text);
      }
    }
    m = openMessage(a, u, st, p, {
      qn: null,
      msn: null,
      stag: p.stag,
      to: p.to,
      startSeen: true,
      rtr: rec.rtr !== null,
    });
    open.push(m);
    if (p.rdmap.opcode === OP.READ_RESPONSE) pairReadResponse(a, u, st, p, rec, m);
  }
  m.nextTo = BigInt.asUintN(64, p.to + BigInt(Math.max(0, p.payloadLength)));
  appendSegment(u, st, m, p, rec);
  if (m.read && !m.sizeReported && m.length > m.read.size) {
    m.sizeReported = true;
    a.emit(
      'rdmap.read-response-size',
      u,
      rec,
      `Read Response already ${m.length} octets; the Read Request at seq ${m.read.seq} (${framesText(m.read.frames)}) asked for ${m.read.size}`,
    );
  }
  if (!p.ddp.l) return null;
  const open = st.tagged();
  open.splice(open.indexOf(m), 1);
  if (m.read && !m.sizeReported && !swappedSizeChecked(m) && m.length !== m.read.size) {
    m.sizeReported = true;
    a.emit(
      'rdmap.read-response-size',
      u,
      rec,
      `Read Response of ${m.length} octets; the Read Request at seq ${m.read.seq} (${framesText(m.read.frames)}) asked for ${m.read.size}`,
    );
  }
  return m;
}
