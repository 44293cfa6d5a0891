/**
 * RFC 6581 Ready To Receive: in peer-to-peer mode the Initiator's first FPDU must be the
 * zero-length RTR the Reply chose (Send, RDMA Write or Read Request); a wrong one draws a Terminate
 * LLP/MPA 0x07 from the Responder, which terminate.ts explains by it.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { DdpPdu } from './decode.js';
import type { DirState } from './direction-state.js';
import { OP } from './fields.js';
import type { FlowCore } from './flow-core.js';
import { ddpSummary } from './tree.js';
import type { DdpSegmentRecord, Dir, RtrKind } from './types.js';

/** An RTR is due from direction `dir`: peer-to-peer was negotiated and `dir` is the Initiator. */
export function rtrExpected(a: FlowCore, dir: Dir): boolean {
  return a.ctx.p2p && a.ctx.rev !== null && a.ctx.initiatorDir === dir;
}

/** The Initiator's first FPDU (seen with no loss before it) against the negotiated RTR. */
export function checkRtr(a: FlowCore, u: Ulpdu, st: DirState, p: DdpPdu, rec: DdpSegmentRecord, bad: boolean): void {
  if (a.ctx.rev === null || a.ctx.initiatorDir !== u.dir) return;
  // An Initiator that rejects the Reply (no matching RTR, too little IRD) sends a Terminate as its
  // first FPDU instead of an RTR [siw]: that Terminate is reported on its own, not as a wrong RTR.
  if (p.kind === 'untagged' && p.rdmap.opcode === OP.TERMINATE) return;
  const kind = rtrShape(p);
  if (!a.ctx.p2p) {
    // cxgb4 sends a Read RTR even after falling back to Rev 1 without peer-to-peer (SPEC-NOTES quirks).
    if (kind === 'write' || kind === 'read') {
      a.emit(
        'rdmap.rtr-without-p2p',
        u,
        rec,
        `the Initiator's first FPDU is a zero-length ${kind === 'write' ? 'RDMA Write' : 'Read Request'}, shaped like a ${kind} RTR, but peer-to-peer mode was not negotiated`,
      );
    }
    return;
  }
  st.rtr = kind;
  rec.rtr = kind;
  const want = a.ctx.rtr;
  const crcNote = bad ? ' (its CRC does not verify)' : '';
  if (want !== null && kind === want) return;
  if (want === null && kind !== null) return; // A set but no choice recorded: any RTR form will do
  const what = kind !== null ? `a zero-length ${kind} RTR` : ddpSummary(p);
  const expected =
    want !== null ? `the negotiated zero-length ${want} RTR (${rtrDescription(want)})` : 'a zero-length RTR';
  a.emit(
    'rdmap.rtr-mismatch',
    u,
    rec,
    `peer-to-peer mode: the Initiator's first FPDU should be ${expected}, but it is ${what}${crcNote}; expect a Terminate LLP/MPA 0x07 No matching RTR option from the Responder`,
  );
  st.rtrMismatch = { seq: u.seq, frames: rec.frames };
}

/** The RTR kind a decoded segment has the exact shape of (SPEC-NOTES "Startup and RTR"), or null. */
export function rtrShape(p: DdpPdu): RtrKind | null {
  if (p.kind === 'truncated' || !p.ddp.l) return null;
  const op = p.rdmap.opcode;
  if (p.kind === 'tagged') return op === OP.WRITE && p.payloadLength === 0 ? 'write' : null;
  if (op === OP.SEND && p.qn === 0 && p.msn === 1 && p.mo === 0 && p.payloadLength === 0) return 'send';
  if (
    op === OP.READ_REQUEST &&
    p.qn === 1 &&
    p.msn === 1 &&
    p.mo === 0 &&
    p.body.type === 'read-request' &&
    p.body.rr.size === 0
  ) {
    return 'read';
  }
  return null;
}

function rtrDescription(k: RtrKind): string {
  return k === 'send'
    ? 'untagged Send, QN 0, MSN 1, no payload'
    : k === 'write'
      ? 'tagged RDMA Write, no payload'
      : 'Read Request, QN 1, MSN 1, RDMA Read Message Size 0';
}
