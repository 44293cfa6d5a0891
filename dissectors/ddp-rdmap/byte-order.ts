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
import type { DdpSegmentRecord } from './types.js';

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
 * network order. One finding per direction, on the first such Request, naming every field that
 * reads differently swapped with both readings (the Data Source fields and the size cannot be
 * checked against the wire: they are named because the sink fields are swapped); later Requests
 * with the same mistake are counted (DdpDirection.readRequestsByteSwapped), not listed, as
 * mpa.fpdu-exceeds-emss. The pairing, and the size check when the Response ends, go on under the
 * swapped reading.
 */
export function readRequestSwapped(a: FlowCore, u: Ulpdu, rec: DdpSegmentRecord, req: OutstandingRead): void {
  const w = req.wire;
  req.swapped = true;
  req.sinkStag = bswap32(w.sinkStag);
  req.sinkTo = bswap64(w.sinkTo);
  req.size = bswap32(w.size);
  const requester = other(u.dir);
  const st = a.dir(requester);
  st.readRequestsByteSwapped++;
  if (st.byteOrderReported.has(READ_REQUEST)) return;
  st.byteOrderReported.add(READ_REQUEST);
  const fields: Array<[string, string, string]> = [
    ['Data Sink STag', hex32(w.sinkStag), hex32(req.sinkStag)],
    ['Data Sink TO', hex64(w.sinkTo), hex64(req.sinkTo)],
    ['RDMA Read Message Size', `${w.size}`, `${req.size}`],
    ['Data Source STag', hex32(w.srcStag), hex32(bswap32(w.srcStag))],
    ['Data Source TO', hex64(w.srcTo), hex64(bswap64(w.srcTo))],
  ];
  const named = fields
    .filter(([, wire, swapped]) => wire !== swapped)
    .map(([name, wire, swapped]) => `${name} ${wire} (swapped ${swapped})`)
    .join(', ');
  a.report(
    'rdmap.read-request-byte-order',
    requester,
    st.from,
    req.frames,
    req.seq,
    `Read Request at seq ${req.seq} sent in host byte order (RFC 5040 section 4: network order), as its Read Response at seq ${u.seq} (${framesText(rec.frames)}) shows: ${named}; later ones in this direction are counted, not listed`,
  );
}

/** The key byteOrderReported keeps for the Read Request diagnosis (the MO one keeps "MO"). */
const READ_REQUEST = 'Read Request';

/**
 * A Read Response under a byte-swapped Request ended: its length tells which reading of the size
 * holds (the finding already named both readings).
 */
export function swappedSizeChecked(m: OpenMsg): boolean {
  const req = m.read;
  if (!req?.swapped || req.wire.size === req.size) return false;
  if (m.length === req.size) return true;
  return m.length === req.wire.size; // the size was in network order after all
}
