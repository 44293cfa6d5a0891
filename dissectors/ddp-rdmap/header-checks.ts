/**
 * Sender mistakes one segment's headers show on their own: DDP/RDMAP versions against the MPA
 * startup and the connection, reserved bits, unassigned opcodes, the wrong buffer model or queue,
 * single-segment opcodes split, fixed-size headers with octets beyond them, short Terminates.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TaggedPdu, UntaggedPdu } from './decode.js';
import { OP, OPCODE_SPECS, opcodeName } from './fields.js';
import { framesText, type FlowCore } from './flow-core.js';
import { hex32 } from './tree.js';
import type { DdpSegmentRecord } from './types.js';

export function checkVersions(a: FlowCore, u: Ulpdu, rec: DdpSegmentRecord, p: TaggedPdu | UntaggedPdu): void {
  const dvv = p.ddp.dv;
  const rvv = p.rdmap.rv;
  const rev = a.ctx.rev;
  // RFC 5044 Appendix C: version 1 (IETF) after Rev 1/2, version 0 (RDMA Consortium) after Rev 0.
  const expected = rev === 0 ? 0 : rev === 1 || rev === 2 ? 1 : null;
  if (expected !== null) {
    if (dvv !== expected) {
      const term = p.kind === 'tagged' ? 'DDP/Tagged 0x04' : 'DDP/Untagged 0x06';
      a.emit(
        'ddp.invalid-dv',
        u,
        rec,
        `DV=${dvv}, expected ${expected} after a Rev ${rev} MPA startup (a receiver answers Terminate ${term} Invalid DDP version)`,
      );
    }
    if (rvv !== expected) {
      a.emit(
        'rdmap.invalid-rv',
        u,
        rec,
        `RV=${rvv}, expected ${expected} after a Rev ${rev} MPA startup (a receiver answers Terminate RDMAP/Remote Operation 0x05 Invalid RDMAP version)`,
      );
    }
    return;
  }
  // Startup unknown (or an unknown Rev such as erdma's 0x81): accept 1, or 0, consistently.
  if (dvv > 1) a.emit('ddp.invalid-dv', u, rec, `DV=${dvv} is neither 1 (IETF) nor 0 (RDMA Consortium)`);
  if (rvv > 1) a.emit('rdmap.invalid-rv', u, rec, `RV=${rvv} is neither 1 (IETF) nor 0 (RDMA Consortium)`);
  if (dvv > 1 || rvv > 1) return;
  if (dvv !== rvv) {
    a.emit(
      'ddp.version-mix',
      u,
      rec,
      `DV=${dvv} with RV=${rvv}: DDP and RDMAP versions must match (RFC 5044 Appendix C)`,
    );
    return;
  }
  if (a.connVersion === null) a.connVersion = { v: dvv, seq: u.seq, frames: [...u.frames] };
  else if (a.connVersion.v !== dvv) {
    a.emit(
      'ddp.version-mix',
      u,
      rec,
      `version ${dvv}, but the connection started with version ${a.connVersion.v} (seq ${a.connVersion.seq}, ${framesText(a.connVersion.frames)}); versions must be identical in both directions (RFC 5044 Appendix C)`,
    );
  }
}

export function checkHeader(a: FlowCore, u: Ulpdu, rec: DdpSegmentRecord, p: TaggedPdu | UntaggedPdu): void {
  const op = p.rdmap.opcode;
  const spec = OPCODE_SPECS[op];
  if (p.ddp.rsvd !== 0)
    a.emit(
      'ddp.reserved-nonzero',
      u,
      rec,
      `DDP Rsvd bits = 0x${(p.ddp.rsvd << 2).toString(16)} (control octet 0x${p.ddp.raw.toString(16).padStart(2, '0')})`,
    );
  if (p.rdmap.rsv !== 0)
    a.emit(
      'rdmap.reserved-nonzero',
      u,
      rec,
      `RDMAP Rsv bits = 0x${(p.rdmap.rsv << 4).toString(16)} (control octet 0x${p.rdmap.raw.toString(16).padStart(2, '0')})`,
    );
  if (p.kind === 'untagged' && p.reservedWord !== null && p.reservedWord !== 0) {
    a.emit(
      'rdmap.reserved-nonzero',
      u,
      rec,
      `reserved bytes 2..5 of the ${opcodeName(op)} header = ${hex32(p.reservedWord)}`,
    );
  }
  if (!spec) {
    a.emit(
      'rdmap.unexpected-opcode',
      u,
      rec,
      `opcode 0x${op.toString(16)} is ${op === 0xf ? 'reserved for experiments' : 'unassigned'} (a receiver answers Terminate RDMAP/Remote Operation 0x06 Unexpected OpCode)`,
    );
    return;
  }
  if (spec.tagged !== (p.kind === 'tagged')) {
    a.emit(
      'rdmap.opcode-buffer-model',
      u,
      rec,
      `${opcodeName(op)} sent ${p.kind}; it uses the ${spec.tagged ? 'tagged' : 'untagged'} buffer model`,
    );
    return;
  }
  if (p.kind === 'untagged' && spec.qn !== null && p.qn !== spec.qn) {
    if (spec.qnProvisional) {
      a.emit(
        'rdmap.rfc7306-qn',
        u,
        rec,
        `${opcodeName(op)} on QN ${p.qn}; expected QN ${spec.qn} (RFC 7306 queue assignment not verified)`,
      );
    } else {
      const invalid =
        p.qn > 3 ? ' (QN above 3 is unassigned: a receiver answers Terminate DDP/Untagged 0x01 Invalid QN)' : '';
      a.emit('ddp.invalid-qn', u, rec, `${opcodeName(op)} on QN ${p.qn}; it must use QN ${spec.qn}${invalid}`);
    }
  }
  const immediate = op === OP.IMMEDIATE_DATA || op === OP.IMMEDIATE_DATA_SE;
  const single = immediate ? 'rdmap.immediate-length' : 'rdmap.not-single-segment';
  if (spec.single && p.kind === 'untagged' && (!p.ddp.l || p.mo !== 0)) {
    a.emit(single, u, rec, `${opcodeName(op)} must be a single DDP segment, but has L=${p.ddp.l ? 1 : 0} MO=${p.mo}`);
  }
  const b = p.body;
  if (b.type === 'truncated') {
    // ULPDU_Length covers the header: the capture's snaplen cut it, the sender did nothing wrong.
    if (p.length >= b.need) return;
    a.emit(
      immediate ? 'rdmap.immediate-length' : 'rdmap.truncated-header',
      u,
      rec,
      `${b.what} needs a ${b.need}-octet ULPDU; this one has ${p.length}`,
    );
    return;
  }
  const fixed =
    op === OP.READ_REQUEST
      ? 46
      : op === OP.ATOMIC_REQUEST
        ? 70
        : op === OP.ATOMIC_RESPONSE
          ? 30
          : immediate
            ? 26
            : null;
  if (fixed !== null && p.length > fixed) {
    a.emit(
      single,
      u,
      rec,
      `${opcodeName(op)} segment is ${p.length} octets; it should be exactly ${fixed} (${p.length - fixed} octets beyond its header)`,
    );
  }
  if (b.type === 'terminate') {
    const t = b.term;
    if (t.rsvd !== 0) a.emit('rdmap.reserved-nonzero', u, rec, `Terminate reserved bits = 0x${t.rsvd.toString(16)}`);
    if ((t.m || t.d) && t.ddpSegmentLength === null) {
      a.emit(
        'rdmap.truncated-header',
        u,
        rec,
        `Terminate has ${t.m ? 'M' : 'D'} set but ends before the DDP Segment Length field`,
      );
    } else if (t.d && (t.ddpHeader === null || t.ddpHeader.header === null)) {
      a.emit(
        'rdmap.truncated-header',
        u,
        rec,
        `Terminate has D set but ${t.ddpHeader ? `only ${t.ddpHeader.bytes.length} octets of` : 'no'} terminated DDP header`,
      );
    }
  }
  if (b.type === 'atomic-request' && b.req.reserved !== 0) {
    a.emit(
      'rdmap.reserved-nonzero',
      u,
      rec,
      `Atomic Request reserved bits = 0x${((b.req.reserved << 4) >>> 0).toString(16)}`,
    );
  }
}
