/**
 * Diagnosis of a sender that writes fields in host (little-endian) order where RFC 5040 §4 and
 * RFC 5041 §4 put them in network order (SoftUiWarp does): MO after a message's first segment, and
 * a Read Request's STags, TOs and size, recognised when the Read Response matches them swapped.
 * Each field is reported once per direction.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { UntaggedPdu } from './decode.js';
import type { DirState, OpenMsg, OutstandingRead } from './direction-state.js';
import { framesText, other, type FlowCore } from './flow-core.js';
import { hex32, hex64 } from './tree.js';
import type { DdpSegmentRecord, Dir } from './types.js';

export const bswap32 = (v: number): number =>
  (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
export function bswap64(v: bigint): bigint {
  let r = 0n;
  for (let i = 0; i < 8; i++) r = (r << 8n) | ((v >> BigInt(8 * i)) & 0xffn);
  return r;
}

/** MO `p.mo` is, byte-swapped, the offset message `m` has reached: MO in host order, one finding per direction. */
export function reportMoByteOrder(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: UntaggedPdu,
  m: OpenMsg,
  rec: DdpSegmentRecord,
): void {
  if (st.byteOrderReported.has('MO')) return;
  st.byteOrderReported.add('MO');
  a.emit(
    'ddp.mo-byte-order',
    u,
    rec,
    `QN ${p.qn} MSN ${p.msn}: MO 0x${p.mo.toString(16).padStart(8, '0')} (${p.mo}) in network byte order is ${m.length} byte-swapped, the offset the message has reached; the sender writes MO in host (little-endian) order, RFC 5041 section 4 puts it in network order`,
  );
}

/**
 * The Read Response matches its Request only with the Request's fields byte-swapped: the
 * requester wrote them in host (little-endian) order where RFC 5040 §4 puts every RDMAP field in
 * network order. One finding per field and direction, naming both readings; the pairing (and the
 * size check when the Response ends) goes on under the swapped reading.
 */
export function readRequestSwapped(a: FlowCore, u: Ulpdu, rec: DdpSegmentRecord, req: OutstandingRead): void {
  const w = req.wire;
  req.swapped = true;
  req.sinkStag = bswap32(w.sinkStag);
  req.sinkTo = bswap64(w.sinkTo);
  req.size = bswap32(w.size);
  const requester = other(u.dir);
  const fields: Array<[string, string, string]> = [
    ['Data Sink STag', hex32(w.sinkStag), hex32(req.sinkStag)],
    ['Data Sink Tagged Offset', hex64(w.sinkTo), hex64(req.sinkTo)],
    ['Data Source STag', hex32(w.srcStag), hex32(bswap32(w.srcStag))],
    ['Data Source Tagged Offset', hex64(w.srcTo), hex64(bswap64(w.srcTo))],
  ];
  for (const [name, wire, swapped] of fields) {
    if (wire === swapped) continue;
    const why = name.startsWith('Data Source')
      ? 'the Data Sink fields of the same Request are byte-swapped'
      : `the Read Response at seq ${u.seq} (${framesText(rec.frames)}) carries ${swapped}`;
    reportSwapped(a, requester, req, name, wire, swapped, why);
  }
}

function reportSwapped(
  a: FlowCore,
  requester: Dir,
  req: OutstandingRead,
  name: string,
  wire: string,
  swapped: string,
  why: string,
): void {
  const st = a.dir(requester);
  if (st.byteOrderReported.has(name)) return;
  st.byteOrderReported.add(name);
  a.report(
    'rdmap.read-request-byte-order',
    requester,
    st.from,
    req.frames,
    req.seq,
    `Read Request at seq ${req.seq}: ${name} ${wire} in network byte order, ${swapped} byte-swapped (${why}); the sender writes it in host (little-endian) order, RFC 5040 section 4 puts it in network order`,
  );
}

/** A Read Response under a byte-swapped Request ended: its length tells which reading of the size holds. */
export function swappedSizeChecked(a: FlowCore, u: Ulpdu, rec: DdpSegmentRecord, m: OpenMsg): boolean {
  const req = m.read;
  if (!req?.swapped || req.wire.size === req.size) return false;
  if (m.length === req.size) {
    reportSwapped(
      a,
      other(u.dir),
      req,
      'RDMA Read Message Size',
      `${req.wire.size}`,
      `${req.size}`,
      `the Read Response at seq ${u.seq} (${framesText(rec.frames)}) carries ${m.length} octets`,
    );
    return true;
  }
  return m.length === req.wire.size; // the size was in network order after all
}
