/**
 * Wireshark-style detail tree and one-line Info text for a decoded DDP segment. Every node names a
 * field declared once in fields.ts; this module only fills values in.
 */

import { indexFields, type FieldDef, type FieldValue, type TreeNode } from '../../src/vocabulary/fields.js';
import type { DdpHeader, DdpPdu, ReadRequestHeader, TerminateMessage } from './decode.js';
import {
  ATOMIC_OPCODE_NAMES,
  DDP_ANALYSIS_FIELDS,
  DDP_FIELDS,
  DDP_UNTAGGED_HEADER_LEN,
  OPCODE_SPECS,
  opcodeName,
  RDMA_FIELDS,
  termEtypeShort,
  TERM_LAYER,
  TERM_LAYER_NAMES,
} from './fields.js';
import type { DdpSegmentRecord } from './types.js';

const FIELDS: ReadonlyMap<string, FieldDef> = indexFields(DDP_FIELDS, RDMA_FIELDS, DDP_ANALYSIS_FIELDS);

function field(abbrev: string): FieldDef {
  const fd = FIELDS.get(abbrev);
  if (!fd) throw new Error(`undeclared field ${abbrev}`); // a programming error, never wire data
  return fd;
}

interface NodeOpts {
  offset?: number;
  length?: number;
  display?: string;
  children?: readonly TreeNode[];
}

function node(abbrev: string, value: FieldValue, o: NodeOpts = {}): TreeNode {
  const n: { -readonly [K in keyof TreeNode]: TreeNode[K] } = { field: field(abbrev), value };
  if (o.display !== undefined) n.display = o.display;
  if (o.offset !== undefined) n.offset = o.offset;
  if (o.length !== undefined) n.length = o.length;
  if (o.children !== undefined) n.children = o.children;
  return n;
}

export const hex32 = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, '0')}`;
export const hex64 = (n: bigint): string => `0x${n.toString(16)}`;
const hexBytes = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

// ---------------------------------------------------------------------------------------------
// Tree
// ---------------------------------------------------------------------------------------------

function ddpControlNode(raw: number, base: number): TreeNode {
  return node('iwarp_ddp.control_field', raw, {
    offset: base,
    length: 1,
    display: `0x${raw.toString(16).padStart(2, '0')}`,
    children: [
      node('iwarp_ddp.tagged_flag', (raw & 0x80) !== 0, { offset: base, length: 1 }),
      node('iwarp_ddp.last_flag', (raw & 0x40) !== 0, { offset: base, length: 1 }),
      node('iwarp_ddp.rsvd', (raw & 0x3c) >> 2, { offset: base, length: 1 }),
      node('iwarp_ddp.dv', raw & 0x03, { offset: base, length: 1 }),
    ],
  });
}

function rdmaControlNode(raw: number, base: number): TreeNode {
  const op = raw & 0x0f;
  return node('iwarp_rdma.control_field', raw, {
    offset: base,
    length: 1,
    display: `0x${raw.toString(16).padStart(2, '0')}`,
    children: [
      node('iwarp_rdma.version', (raw & 0xc0) >> 6, { offset: base, length: 1 }),
      node('iwarp_rdma.rsv', (raw & 0x30) >> 4, { offset: base, length: 1 }),
      node('iwarp_rdma.opcode', op, { offset: base, length: 1, display: `${opcodeName(op)} (0x${op.toString(16)})` }),
    ],
  });
}

/** DDP header nodes (control, RsvdULP, buffer model), at `base` within the described bytes. */
function ddpHeaderNodes(h: DdpHeader, base: number): TreeNode[] {
  const out: TreeNode[] = [ddpControlNode(h.ddp.raw, base)];
  if (h.kind === 'tagged') {
    out.push(
      node('iwarp_ddp.tagged', 'Tagged buffer model', {
        offset: base + 2,
        length: 12,
        children: [
          node('iwarp_ddp.stag', h.stag, { offset: base + 2, length: 4, display: hex32(h.stag) }),
          node('iwarp_ddp.tagged_offset', h.to, { offset: base + 6, length: 8, display: hex64(h.to) }),
        ],
      }),
    );
  } else {
    out.push(node('iwarp_ddp.rsvdulp', h.rsvdUlp, { offset: base + 2, length: 4, display: hexBytes(h.rsvdUlp) }));
    out.push(
      node('iwarp_ddp.untagged', 'Untagged buffer model', {
        offset: base + 6,
        length: 12,
        children: [
          node('iwarp_ddp.qn', h.qn, { offset: base + 6, length: 4 }),
          node('iwarp_ddp.msn', h.msn, { offset: base + 10, length: 4 }),
          node('iwarp_ddp.mo', h.mo, { offset: base + 14, length: 4 }),
        ],
      }),
    );
  }
  return out;
}

/** A copied header: DDP control, then the RDMAP control octet, then the rest of the DDP header. */
function copiedHeaderNodes(h: DdpHeader, base: number): TreeNode[] {
  const d = ddpHeaderNodes(h, base);
  return [d[0]!, rdmaControlNode(h.rdmap.raw, base + 1), ...d.slice(1)];
}

function readRequestNodes(rr: ReadRequestHeader, base: number): TreeNode[] {
  return [
    node('iwarp_rdma.sinkstag', rr.sinkStag, { offset: base, length: 4, display: hex32(rr.sinkStag) }),
    node('iwarp_rdma.sinkto', rr.sinkTo, { offset: base + 4, length: 8, display: hex64(rr.sinkTo) }),
    node('iwarp_rdma.rdmardsz', rr.size, { offset: base + 12, length: 4, display: `${rr.size} bytes` }),
    node('iwarp_rdma.srcstag', rr.srcStag, { offset: base + 16, length: 4, display: hex32(rr.srcStag) }),
    node('iwarp_rdma.srcto', rr.srcTo, { offset: base + 20, length: 8, display: hex64(rr.srcTo) }),
  ];
}

function terminateNode(t: TerminateMessage): TreeNode {
  const base = DDP_UNTAGGED_HEADER_LEN;
  const etypeField =
    t.layer === TERM_LAYER.RDMAP
      ? 'iwarp_rdma.term_etype_rdma'
      : t.layer === TERM_LAYER.DDP
        ? 'iwarp_rdma.term_etype_ddp'
        : t.layer === TERM_LAYER.LLP
          ? 'iwarp_rdma.term_etype_llp'
          : 'iwarp_rdma.term_etype';
  const codeField =
    t.layer === TERM_LAYER.RDMAP && t.etype !== 0
      ? 'iwarp_rdma.term_errcode_rdma'
      : t.layer === TERM_LAYER.DDP && t.etype === 1
        ? 'iwarp_rdma.term_errcode_ddp_tagged'
        : t.layer === TERM_LAYER.DDP && t.etype === 2
          ? 'iwarp_rdma.term_errcode_ddp_untagged'
          : t.layer === TERM_LAYER.LLP
            ? 'iwarp_rdma.term_errcode_llp'
            : 'iwarp_rdma.term_errcode';
  const hdrct = t.ctrlWord & 0xe000;
  const ctrl = t.ctrlWord >>> 8; // Layer, EType, Error Code and the Hdrct octet: 24 bits
  const kids: TreeNode[] = [
    node('iwarp_rdma.term_ctrl', ctrl, {
      offset: base,
      length: 3,
      display: `0x${ctrl.toString(16).padStart(6, '0')}`,
      children: [
        node('iwarp_rdma.term_layer', t.layer, {
          offset: base,
          length: 1,
          display: `${t.layerName ?? 'Unknown'} (0x${t.layer.toString(16)})`,
        }),
        node(etypeField, t.etype, {
          offset: base,
          length: 1,
          display: `${t.etypeName ?? 'Unknown'} (0x${t.etype.toString(16)})`,
        }),
        node(codeField, t.code, {
          offset: base + 1,
          length: 1,
          display: `${t.codeName ?? 'Unknown'} (0x${t.code.toString(16).padStart(2, '0')})`,
        }),
        node('iwarp_rdma.term_hdrct', hdrct, {
          offset: base + 2,
          length: 1,
          display: `0x${(hdrct >> 8).toString(16).padStart(2, '0')}`,
          children: [
            node('iwarp_rdma.term_hdrct_m', t.m, { offset: base + 2, length: 1 }),
            node('iwarp_rdma.hdrct_d', t.d, { offset: base + 2, length: 1 }),
            node('iwarp_rdma.hdrct_r', t.r, { offset: base + 2, length: 1 }),
          ],
        }),
      ],
    }),
    node('iwarp_rdma.term_rsvd', t.rsvd, { offset: base + 2, length: 2 }),
  ];
  if (t.ddpSegmentLength !== null) {
    kids.push(node('iwarp_rdma.term_ddp_seg_len', t.ddpSegmentLength, { offset: base + 4, length: 2 }));
  }
  if (t.ddpHeader) {
    const h = t.ddpHeader;
    kids.push(
      node('iwarp_rdma.term_ddp_h', h.bytes, {
        offset: h.offset,
        length: h.bytes.length,
        display: hexBytes(h.bytes),
        // Decoded again as a header, as Wireshark does for the IP header inside ICMP errors.
        ...(h.header ? { children: copiedHeaderNodes(h.header, h.offset) } : {}),
      }),
    );
  }
  if (t.rdmapHeader) {
    const h = t.rdmapHeader;
    kids.push(
      node('iwarp_rdma.term_rdma_h', h.bytes, {
        offset: h.offset,
        length: h.bytes.length,
        display: hexBytes(h.bytes),
        ...(h.readRequest ? { children: readRequestNodes(h.readRequest, h.offset) } : {}),
      }),
    );
  }
  return node('iwarp_rdma.terminate', 'Terminate', { offset: base, length: t.bodyLength, children: kids });
}

function rdmaNodes(p: Exclude<DdpPdu, { kind: 'truncated' }>): TreeNode[] {
  const kids: TreeNode[] = [rdmaControlNode(p.rdmap.raw, 1)];
  if (p.kind === 'untagged') {
    if (p.invalidateStag !== null) {
      kids.push(
        node('iwarp_rdma.inval_stag', p.invalidateStag, { offset: 2, length: 4, display: hex32(p.invalidateStag) }),
      );
    } else if (p.reservedWord !== null) {
      kids.push(node('iwarp_rdma.reserved', p.rsvdUlp, { offset: 2, length: 4, display: hexBytes(p.rsvdUlp) }));
    }
  }
  const b = p.body;
  const base = p.headerLength;
  switch (b.type) {
    case 'read-request':
      kids.push(
        node('iwarp_rdma.rr', 'Read request', { offset: base, length: 28, children: readRequestNodes(b.rr, base) }),
      );
      break;
    case 'terminate':
      kids.push(terminateNode(b.term));
      break;
    case 'atomic-request': {
      const r = b.req;
      const swap = r.atomicOpcode === 0x2;
      kids.push(
        node('iwarp_rdma.atomic.reserved', r.reserved, { offset: base, length: 4 }),
        node('iwarp_rdma.atomic.opcode', r.atomicOpcode, {
          offset: base,
          length: 4,
          display: `${ATOMIC_OPCODE_NAMES[r.atomicOpcode] ?? 'Unassigned'} (${r.atomicOpcode})`,
        }),
        node('iwarp_rdma.atomic.request_identifier', r.requestId, { offset: base + 4, length: 4 }),
        node('iwarp_rdma.atomic.remote_stag', r.remoteStag, {
          offset: base + 8,
          length: 4,
          display: hex32(r.remoteStag),
        }),
        node('iwarp_rdma.atomic.remote_tagged_offset', r.remoteTo, {
          offset: base + 12,
          length: 8,
          display: hex64(r.remoteTo),
        }),
        node(swap ? 'iwarp_rdma.atomic.swap_data' : 'iwarp_rdma.atomic.add_data', r.data, {
          offset: base + 20,
          length: 8,
        }),
        node(swap ? 'iwarp_rdma.atomic.swap_mask' : 'iwarp_rdma.atomic.add_mask', r.mask, {
          offset: base + 28,
          length: 8,
          display: hex64(r.mask),
        }),
        node('iwarp_rdma.atomic.compare_data', r.compareData, { offset: base + 36, length: 8 }),
        node('iwarp_rdma.atomic.compare_mask', r.compareMask, {
          offset: base + 44,
          length: 8,
          display: hex64(r.compareMask),
        }),
      );
      break;
    }
    case 'atomic-response':
      kids.push(
        node('iwarp_rdma.atomic.original_request_identifier', b.resp.originalRequestId, { offset: base, length: 4 }),
        node('iwarp_rdma.atomic.original_remote_data_value', b.resp.originalValue, {
          offset: base + 4,
          length: 8,
          display: hex64(b.resp.originalValue),
        }),
      );
      break;
    case 'immediate':
      kids.push(node('iwarp_rdma.immediate_data', b.data, { offset: base, length: 8, display: hexBytes(b.data) }));
      break;
    case 'truncated':
      kids.push(
        node('iwarp_ddp.malformed', `${b.what} needs ${b.need} octets, the ULPDU has ${b.have}`, {
          offset: base,
          length: Math.max(0, b.have - base),
        }),
      );
      break;
    case 'none':
      break;
  }
  return kids;
}

function pduNodes(p: DdpPdu): TreeNode[] {
  if (p.kind === 'truncated') {
    const kids: TreeNode[] = [];
    if (p.ddp) kids.push(ddpControlNode(p.ddp.raw, 0));
    kids.push(node('iwarp_ddp.malformed', p.reason, { offset: 0, length: p.available }));
    const out: TreeNode[] = [
      node('iwarp_ddp', 'Direct Data Placement Protocol', {
        offset: 0,
        length: p.available,
        display: `[Malformed: ${p.reason}]`,
        children: kids,
      }),
    ];
    if (p.rdmap) {
      out.push(
        node('iwarp_rdma', 'Remote Direct Memory Access Protocol', {
          offset: 1,
          length: 1,
          children: [rdmaControlNode(p.rdmap.raw, 1)],
        }),
      );
    }
    return out;
  }
  const header: DdpHeader =
    p.kind === 'tagged'
      ? { kind: 'tagged', ddp: p.ddp, rdmap: p.rdmap, stag: p.stag, to: p.to }
      : { kind: 'untagged', ddp: p.ddp, rdmap: p.rdmap, rsvdUlp: p.rsvdUlp, qn: p.qn, msn: p.msn, mo: p.mo };
  const ddpKids = ddpHeaderNodes(header, 0);
  ddpKids.push(node('iwarp_ddp.payload_length', p.payloadLength, { display: `${p.payloadLength}` }));
  const ddpDisplay =
    p.kind === 'tagged'
      ? `Tagged, ${p.ddp.l ? 'Last' : 'More'}, STag ${hex32(p.stag)}, TO ${hex64(p.to)}`
      : `Untagged, ${p.ddp.l ? 'Last' : 'More'}, QN ${p.qn}, MSN ${p.msn}, MO ${p.mo}`;
  return [
    node('iwarp_ddp', 'Direct Data Placement Protocol', {
      offset: 0,
      length: p.headerLength,
      display: ddpDisplay,
      children: ddpKids,
    }),
    node('iwarp_rdma', 'Remote Direct Memory Access Protocol', {
      offset: 1,
      length: p.length - 1,
      display: opcodeName(p.rdmap.opcode),
      children: rdmaNodes(p),
    }),
  ];
}

function analysisNode(rec: DdpSegmentRecord): TreeNode | null {
  const kids: TreeNode[] = [];
  if (rec.skipped !== null) kids.push(node('iwarp_ddp.analysis.skipped', rec.skipped));
  if (rec.message) {
    kids.push(node('iwarp_ddp.analysis.message', rec.message.index));
    kids.push(node('iwarp_ddp.analysis.message_length', rec.message.length));
    kids.push(node('iwarp_ddp.analysis.message_complete', rec.message.complete));
  }
  if (rec.rtr) kids.push(node('iwarp_ddp.analysis.rtr', `zero-length ${rec.rtr} RTR (RFC 6581)`));
  if (rec.readRequest) {
    kids.push(
      node('iwarp_ddp.analysis.request_frames', `${rec.readRequest.frames.join(',')} (seq ${rec.readRequest.seq})`),
    );
  }
  if (rec.terminated) {
    kids.push(
      node('iwarp_ddp.analysis.terminated', `seq ${rec.terminated.seq}, frames ${rec.terminated.frames.join(',')}`),
    );
  }
  for (const f of rec.findings) kids.push(node('iwarp_ddp.analysis.finding', `${f.rule}: ${f.message}`));
  return kids.length ? node('iwarp_ddp.analysis', 'DDP/RDMAP analysis', { children: kids }) : null;
}

/**
 * The detail tree of one segment: the decoded headers, and when given the analyzer's record, a
 * generated "analysis" subtree (message, RTR, pairing, findings) as Wireshark shows [SEQ/ACK analysis].
 */
export function ddpTree(rec: DdpPdu | DdpSegmentRecord): TreeNode[] {
  if ('pdu' in rec) {
    const out = pduNodes(rec.pdu);
    const a = analysisNode(rec);
    if (a) out.push(a);
    return out;
  }
  return pduNodes(rec);
}

// ---------------------------------------------------------------------------------------------
// One-line summary (tshark Info column)
// ---------------------------------------------------------------------------------------------

function termSummary(t: TerminateMessage): string {
  const layer = TERM_LAYER_NAMES[t.layer] ?? `Layer 0x${t.layer.toString(16)}`;
  const code = t.codeName ?? `code 0x${t.code.toString(16).padStart(2, '0')}`;
  const bits = [t.m ? 'M' : '', t.d ? 'D' : '', t.r ? 'R' : ''].filter((x) => x).join('');
  return `Terminate ${layer}/${termEtypeShort(t.layer, t.etype)}: ${code}${bits ? ` [${bits}]` : ''}`;
}

export function ddpSummary(rec: DdpPdu | DdpSegmentRecord): string {
  const p = 'pdu' in rec ? rec.pdu : rec;
  if (p.kind === 'truncated') {
    const op = p.rdmap ? `${opcodeName(p.rdmap.opcode)} ` : '';
    // ULPDU_Length covers the header: only the capture (its snaplen) cut it short.
    if (p.length >= p.need) return `${op}[DDP header not captured: ${p.available} of ${p.need} octets]`;
    return `${op}[Malformed DDP segment: ${p.reason}]`;
  }
  const l = p.ddp.l ? ' L' : '';
  const op = p.rdmap.opcode;
  const b = p.body;
  if (b.type === 'terminate') return termSummary(b.term);
  if (b.type === 'read-request') {
    const rr = b.rr;
    return `Read Request sink ${hex32(rr.sinkStag)}/${hex64(rr.sinkTo)} size ${rr.size} src ${hex32(rr.srcStag)}/${hex64(rr.srcTo)}${p.kind === 'untagged' ? ` MSN=${p.msn}` : ''}`;
  }
  if (b.type === 'atomic-request') {
    const r = b.req;
    return `Atomic Request ${ATOMIC_OPCODE_NAMES[r.atomicOpcode] ?? `op ${r.atomicOpcode}`} id=${r.requestId} STag=${hex32(r.remoteStag)} TO=${hex64(r.remoteTo)}${p.kind === 'untagged' ? ` MSN=${p.msn}` : ''}`;
  }
  if (b.type === 'atomic-response') {
    return `Atomic Response id=${b.resp.originalRequestId} value=${hex64(b.resp.originalValue)}${p.kind === 'untagged' ? ` MSN=${p.msn}` : ''}`;
  }
  const name = opcodeName(op);
  let s: string;
  if (p.kind === 'tagged') {
    s = `${name} STag=${hex32(p.stag)} TO=${hex64(p.to)}${l} len=${p.payloadLength}`;
  } else {
    s = `${name} QN=${p.qn} MSN=${p.msn} MO=${p.mo}${l} len=${p.payloadLength}`;
    if (p.invalidateStag !== null) s += ` inval=${hex32(p.invalidateStag)}`;
    if (b.type === 'immediate') s += ` data=0x${hexBytes(b.data)}`;
  }
  if (b.type === 'truncated')
    s +=
      p.length >= b.need
        ? ` [${b.what} not captured: ${b.have} of ${b.need} octets]`
        : ` [Malformed: ${b.what} needs ${b.need} octets, has ${b.have}]`;
  // Flag a buffer model the opcode does not use (a Send sent tagged, say) right in the Info text.
  const spec = OPCODE_SPECS[op];
  if (spec && spec.tagged !== (p.kind === 'tagged')) s += p.kind === 'tagged' ? ' [tagged!]' : ' [untagged!]';
  return s;
}

/** tshark-style Info text of a segment: built only when an output shows it (formatting per segment is costly). */
export function segmentInfo(rec: DdpSegmentRecord): string {
  // The upper layer's Info (tshark's Info column shows the top protocol) follows the RDMAP summary.
  const ulp = rec.ulp;
  return ulp ? `${ddpSummary(rec.pdu)}  ${ulp.info}` : ddpSummary(rec.pdu);
}
