/**
 * DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) field declarations and value names.
 *
 * Filter names are Wireshark's (packet-iwarp-ddp-rdmap.c, the version with atomics) wherever
 * Wireshark has the field, including its irregular ones (`iwarp_ddp.tagged_flag`,
 * `iwarp_rdma.rsv`, `iwarp_rdma.hdrct_d`), so users' filters carry over. Fields Wireshark does
 * not have (payload length, immediate data, analysis results) use the same prefixes.
 */

import type { FieldDef } from '../../src/vocabulary/fields.js';

// ---------------------------------------------------------------------------------------------
// Constants [WS masks; siw iwarp.h] (SPEC-NOTES 1.1 - 2.7)
// ---------------------------------------------------------------------------------------------

export const DDP_TAGGED_HEADER_LEN = 14;
export const DDP_UNTAGGED_HEADER_LEN = 18;
/** Read Request header after the untagged DDP header (SPEC-NOTES 2.3). */
export const RDMA_READ_REQUEST_HEADER_LEN = 28;
/** Copied RDMAP header in a Terminate is a Read Request header (SPEC-NOTES 2.4). */
export const RDMA_TERMINATED_RDMA_LEN = 28;
/** RFC 7306 header sizes after the untagged DDP header (SPEC-NOTES 2.7). */
export const ATOMIC_REQUEST_HEADER_LEN = 52;
export const ATOMIC_RESPONSE_HEADER_LEN = 12;
export const IMMEDIATE_DATA_LEN = 8;
/** Largest Terminate body after the DDP header: 4 + 2 + 18 + 28 [cxgb4 TERM_MAX_LENGTH]. */
export const TERMINATE_MAX_BODY = 52;

export const DDP_TAGGED_FLAG = 0x80;
export const DDP_LAST_FLAG = 0x40;
export const DDP_RSVD_MASK = 0x3c;
export const DDP_DV_MASK = 0x03;
export const RDMA_RV_MASK = 0xc0;
export const RDMA_RSV_MASK = 0x30;
export const RDMA_OPCODE_MASK = 0x0f;

export const TERM_LAYER_MASK = 0xf0;
export const TERM_ETYPE_MASK = 0x0f;
export const TERM_HDRCT_M = 0x8000;
export const TERM_HDRCT_D = 0x4000;
export const TERM_HDRCT_R = 0x2000;
export const TERM_RSVD_MASK = 0x1fff;

/** RDMAP opcodes [IANA "RDMAP Message Operation Codes"]. */
export const OP = {
  WRITE: 0x0,
  READ_REQUEST: 0x1,
  READ_RESPONSE: 0x2,
  SEND: 0x3,
  SEND_INVALIDATE: 0x4,
  SEND_SE: 0x5,
  SEND_SE_INVALIDATE: 0x6,
  TERMINATE: 0x7,
  IMMEDIATE_DATA: 0x8,
  IMMEDIATE_DATA_SE: 0x9,
  ATOMIC_REQUEST: 0xa,
  ATOMIC_RESPONSE: 0xb,
} as const;

export const OPCODE_NAMES: Readonly<Record<number, string>> = {
  0x0: 'RDMA Write',
  0x1: 'Read Request',
  0x2: 'Read Response',
  0x3: 'Send',
  0x4: 'Send with Invalidate',
  0x5: 'Send with SE',
  0x6: 'Send with SE and Invalidate',
  0x7: 'Terminate',
  0x8: 'Immediate Data',
  0x9: 'Immediate Data with SE',
  0xa: 'Atomic Request',
  0xb: 'Atomic Response',
  0xc: 'Unassigned (0xC)',
  0xd: 'Unassigned (0xD)',
  0xe: 'Unassigned (0xE)',
  0xf: 'Reserved (Experimental, 0xF)',
};

/** Keys of report-schema DdpDirection.byOpcode. */
export type OpcodeKey =
  | 'write'
  | 'read-request'
  | 'read-response'
  | 'send'
  | 'send-invalidate'
  | 'send-se'
  | 'send-se-invalidate'
  | 'terminate'
  | 'immediate-data'
  | 'immediate-data-se'
  | 'atomic-request'
  | 'atomic-response'
  | 'unknown';

const OPCODE_KEYS: readonly OpcodeKey[] = [
  'write',
  'read-request',
  'read-response',
  'send',
  'send-invalidate',
  'send-se',
  'send-se-invalidate',
  'terminate',
  'immediate-data',
  'immediate-data-se',
  'atomic-request',
  'atomic-response',
];

export function opcodeKey(opcode: number): OpcodeKey {
  return OPCODE_KEYS[opcode] ?? 'unknown';
}

export function opcodeName(opcode: number): string {
  return OPCODE_NAMES[opcode] ?? `Opcode 0x${opcode.toString(16)}`;
}

/** What each opcode requires of the DDP header (SPEC-NOTES 2.1, 2.2). */
export interface OpcodeSpec {
  readonly tagged: boolean;
  /** Queue the untagged opcode must use, null for tagged opcodes. */
  readonly qn: number | null;
  /** The QN rests on a provisional fact (SPEC-NOTES "Still provisional" 4: RFC 7306 QNs). */
  readonly qnProvisional: boolean;
  /** Bytes 2..5 carry an Invalidate STag (else they are reserved, for untagged opcodes). */
  readonly invalidate: boolean;
  /** Bytes 2..5 are reserved (SPEC-NOTES 2.2: Read Request, Send, Send/SE, Terminate). */
  readonly reservedWord: boolean;
  /** Must be a single DDP segment (L=1, MO=0). */
  readonly single: boolean;
}

export const OPCODE_SPECS: Readonly<Record<number, OpcodeSpec>> = {
  0x0: { tagged: true, qn: null, qnProvisional: false, invalidate: false, reservedWord: false, single: false },
  0x1: { tagged: false, qn: 1, qnProvisional: false, invalidate: false, reservedWord: true, single: true },
  0x2: { tagged: true, qn: null, qnProvisional: false, invalidate: false, reservedWord: false, single: false },
  0x3: { tagged: false, qn: 0, qnProvisional: false, invalidate: false, reservedWord: true, single: false },
  0x4: { tagged: false, qn: 0, qnProvisional: false, invalidate: true, reservedWord: false, single: false },
  0x5: { tagged: false, qn: 0, qnProvisional: false, invalidate: false, reservedWord: true, single: false },
  0x6: { tagged: false, qn: 0, qnProvisional: false, invalidate: true, reservedWord: false, single: false },
  0x7: { tagged: false, qn: 2, qnProvisional: false, invalidate: false, reservedWord: true, single: true },
  0x8: { tagged: false, qn: 0, qnProvisional: true, invalidate: false, reservedWord: false, single: true },
  0x9: { tagged: false, qn: 0, qnProvisional: true, invalidate: false, reservedWord: false, single: true },
  0xa: { tagged: false, qn: 1, qnProvisional: true, invalidate: false, reservedWord: false, single: true },
  0xb: { tagged: false, qn: 3, qnProvisional: false, invalidate: false, reservedWord: false, single: true },
};

/** RDMAP use of DDP untagged queues [IANA "RDMAP DDP Untagged Queue Numbers"]. */
export const QN_NAMES: Readonly<Record<number, string>> = {
  0: 'Send',
  1: 'RDMA Read Request',
  2: 'Terminate',
  3: 'Atomic Response',
};

// --- Terminate (SPEC-NOTES 2.4 - 2.6) ---

export const TERM_LAYER = { RDMAP: 0x0, DDP: 0x1, LLP: 0x2 } as const;

export const TERM_LAYER_NAMES: Readonly<Record<number, string>> = { 0x0: 'RDMAP', 0x1: 'DDP', 0x2: 'LLP' };

export const RDMAP_ETYPE_NAMES: Readonly<Record<number, string>> = {
  0x0: 'Local Catastrophic Error',
  0x1: 'Remote Protection Error',
  0x2: 'Remote Operation Error',
};

/** [IANA "RDMAP Errors"]: codes of EType 0x1 Remote Protection and 0x2 Remote Operation. */
export const RDMAP_ERRCODE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Invalid Steering Tag',
  0x01: 'Base or bounds violation',
  0x02: 'Access rights violation',
  0x03: 'Steering Tag not associated with RDMAP Stream',
  0x04: 'Tagged Offset wrap',
  0x05: 'Invalid RDMAP version',
  0x06: 'Unexpected OpCode',
  0x07: 'Catastrophic error, localized to RDMAP Stream',
  0x08: 'Catastrophic error, global',
  0x09: 'Steering Tag cannot be Invalidated',
  0xff: 'Unspecified Error',
};

const RDMAP_PROTECTION_CODES: ReadonlySet<number> = new Set([0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0xff]);
const RDMAP_OPERATION_CODES: ReadonlySet<number> = new Set([0x05, 0x06, 0x07, 0x08, 0x09, 0xff]);

export const DDP_ETYPE_NAMES: Readonly<Record<number, string>> = {
  0x0: 'Local Catastrophic Error',
  0x1: 'Tagged Buffer Error',
  0x2: 'Untagged Buffer Error',
  0x3: 'Reserved for the use by the LLP',
};

export const DDP_TAGGED_ERRCODE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Invalid Steering Tag',
  0x01: 'Base or bounds violation',
  0x02: 'Steering Tag not associated with DDP Stream',
  0x03: 'Tagged Offset wrap',
  0x04: 'Invalid DDP version',
};

export const DDP_UNTAGGED_ERRCODE_NAMES: Readonly<Record<number, string>> = {
  0x01: 'Invalid Queue Number',
  0x02: 'Invalid MSN - no buffer available',
  0x03: 'Invalid MSN - MSN range is not valid',
  0x04: 'Invalid Message Offset',
  0x05: 'DDP Message too long for available buffer',
  0x06: 'Invalid DDP version',
};

export const LLP_ETYPE_NAMES: Readonly<Record<number, string>> = { 0x0: 'MPA Error' };

/** [IANA "MPA Errors"]; 1-4 RFC 5044 §8, 5-7 RFC 6581. */
export const MPA_ERRCODE_NAMES: Readonly<Record<number, string>> = {
  0x01: 'TCP connection closed, terminated, or lost',
  0x02: 'MPA CRC Error',
  0x03: 'MPA Marker and ULPDU Length field mismatch',
  0x04: 'Invalid MPA Request Frame or MPA Response Frame',
  0x05: 'Local catastrophic error',
  0x06: 'Insufficient IRD resources',
  0x07: 'No matching RTR option',
};

/** Short error-type labels for one-line summaries ("LLP/MPA", "DDP/Untagged"). */
const ETYPE_SHORT: Readonly<Record<number, Readonly<Record<number, string>>>> = {
  0x0: { 0x0: 'Local Catastrophic', 0x1: 'Remote Protection', 0x2: 'Remote Operation' },
  0x1: { 0x0: 'Local Catastrophic', 0x1: 'Tagged', 0x2: 'Untagged', 0x3: 'LLP-reserved' },
  0x2: { 0x0: 'MPA' },
};

export function termEtypeName(layer: number, etype: number): string | null {
  const t = layer === 0 ? RDMAP_ETYPE_NAMES : layer === 1 ? DDP_ETYPE_NAMES : layer === 2 ? LLP_ETYPE_NAMES : null;
  return t?.[etype] ?? null;
}

export function termEtypeShort(layer: number, etype: number): string {
  return ETYPE_SHORT[layer]?.[etype] ?? `EType 0x${etype.toString(16)}`;
}

/**
 * Name of a Terminate error code, or null when the (layer, etype, code) triple is not registered
 * [IANA "RDMAP Errors", "DDP Errors", "MPA Errors"].
 */
export function termCodeName(layer: number, etype: number, code: number): string | null {
  if (layer === TERM_LAYER.RDMAP) {
    if (etype === 0x0) return 'Local Catastrophic Error'; // IANA: code ALL
    if (etype === 0x1 && RDMAP_PROTECTION_CODES.has(code)) return RDMAP_ERRCODE_NAMES[code] ?? null;
    if (etype === 0x2 && RDMAP_OPERATION_CODES.has(code)) return RDMAP_ERRCODE_NAMES[code] ?? null;
    return null;
  }
  if (layer === TERM_LAYER.DDP) {
    if (etype === 0x0) return code === 0 ? 'Local Catastrophic' : null;
    if (etype === 0x1) return DDP_TAGGED_ERRCODE_NAMES[code] ?? null;
    if (etype === 0x2) return DDP_UNTAGGED_ERRCODE_NAMES[code] ?? null;
    if (etype === 0x3) return 'Reserved for use by the LLP'; // IANA: code ALL
    return null;
  }
  if (layer === TERM_LAYER.LLP) return etype === 0x0 ? (MPA_ERRCODE_NAMES[code] ?? null) : null;
  return null;
}

/** [IANA "RDMAP Message Atomic Operation Subcodes"]. */
export const ATOMIC_OPCODE_NAMES: Readonly<Record<number, string>> = {
  0x0: 'FetchAdd',
  0x1: 'Reserved',
  0x2: 'CmpSwap',
};

// ---------------------------------------------------------------------------------------------
// Field tables
// ---------------------------------------------------------------------------------------------

const f = (
  abbrev: string,
  name: string,
  type: FieldDef['type'],
  blurb: string,
  extra: Partial<Pick<FieldDef, 'base' | 'mask' | 'bits' | 'width' | 'strings'>> = {},
): FieldDef => ({ abbrev, name, type, blurb, ...extra });

export const DDP_FIELDS: readonly FieldDef[] = [
  f('iwarp_ddp', 'Direct Data Placement Protocol', 'protocol', 'DDP header (RFC 5041)'),
  f('iwarp_ddp.control_field', 'DDP control field', 'uint', 'First octet of the DDP header', { base: 'hex', width: 8 }),
  f('iwarp_ddp.tagged_flag', 'Tagged flag', 'bool', 'T: tagged buffer model', { mask: DDP_TAGGED_FLAG, bits: 8 }),
  f('iwarp_ddp.last_flag', 'Last flag', 'bool', 'L: last segment of the DDP message', { mask: DDP_LAST_FLAG, bits: 8 }),
  f('iwarp_ddp.rsvd', 'Reserved', 'uint', 'Reserved, sent as zero', { base: 'hex', mask: DDP_RSVD_MASK, bits: 8 }),
  f('iwarp_ddp.dv', 'DDP protocol version', 'uint', 'DV: 1 (IETF), 0 (RDMA Consortium)', {
    base: 'dec',
    mask: DDP_DV_MASK,
    bits: 8,
  }),
  f(
    'iwarp_ddp.rsvdulp',
    'Reserved for use by the ULP',
    'bytes',
    'RsvdULP[8:39] of an untagged header (RDMAP: Invalidate STag or reserved)',
  ),
  f('iwarp_ddp.tagged', 'Tagged buffer model', 'protocol', 'DDP Tagged Buffer Model Header'),
  f('iwarp_ddp.stag', '(Data Sink) Steering Tag', 'uint', 'STag of the Data Sink buffer', { base: 'hex' }),
  f('iwarp_ddp.tagged_offset', '(Data Sink) Tagged offset', 'uint64', 'TO: 64-bit offset in the Data Sink buffer', {
    base: 'hex',
  }),
  f('iwarp_ddp.untagged', 'Untagged buffer model', 'protocol', 'DDP Untagged Buffer Model Header'),
  f('iwarp_ddp.qn', 'Queue number', 'uint', 'QN', { base: 'dec', strings: QN_NAMES }),
  f('iwarp_ddp.msn', 'Message sequence number', 'uint', 'MSN, per queue, +1 per message', { base: 'dec' }),
  f('iwarp_ddp.mo', 'Message offset', 'uint', 'MO: offset of this payload within the message', { base: 'dec' }),
  f('iwarp_ddp.payload_length', 'DDP payload length', 'uint', 'ULPDU_Length minus the DDP header length', {
    base: 'dec',
  }),
  f('iwarp_ddp.malformed', 'Malformed DDP segment', 'string', 'The ULPDU is too short for the headers it announces'),
];

export const RDMA_FIELDS: readonly FieldDef[] = [
  f('iwarp_rdma', 'Remote Direct Memory Access Protocol', 'protocol', 'RDMAP header (RFC 5040, RFC 7306)'),
  f('iwarp_rdma.control_field', 'RDMAP control field', 'uint', 'RDMA Control Field (DDP RsvdULP[0:7])', {
    base: 'hex',
    width: 8,
  }),
  f('iwarp_rdma.version', 'Version', 'uint', 'RV: 1 (IETF), 0 (RDMA Consortium)', {
    base: 'dec',
    mask: RDMA_RV_MASK,
    bits: 8,
  }),
  f('iwarp_rdma.rsv', 'Reserved', 'uint', 'RDMA Control Field Reserved', { base: 'hex', mask: RDMA_RSV_MASK, bits: 8 }),
  f('iwarp_rdma.opcode', 'OpCode', 'uint', 'RDMA OpCode Field', {
    base: 'hex',
    mask: RDMA_OPCODE_MASK,
    bits: 8,
    strings: OPCODE_NAMES,
  }),
  f('iwarp_rdma.reserved', 'Reserved', 'bytes', 'Reserved RsvdULP[8:39], sent as zero'),
  f('iwarp_rdma.inval_stag', 'Invalidate STag', 'uint', 'STag the Send asks the receiver to invalidate', {
    base: 'hex',
  }),
  // Read Request (SPEC-NOTES 2.3)
  f('iwarp_rdma.rr', 'Read request', 'protocol', 'RDMA Read Request Header'),
  f('iwarp_rdma.sinkstag', 'Data Sink STag', 'uint', 'STag the Read Response will be placed into', { base: 'hex' }),
  f('iwarp_rdma.sinkto', 'Data Sink Tagged Offset', 'uint64', 'TO the Read Response starts at', { base: 'hex' }),
  f('iwarp_rdma.rdmardsz', 'RDMA Read Message Size', 'uint', 'Octets requested', { base: 'dec' }),
  f('iwarp_rdma.srcstag', 'Data Source STag', 'uint', 'STag of the buffer read', { base: 'hex' }),
  f('iwarp_rdma.srcto', 'Data Source Tagged Offset', 'uint64', 'TO of the buffer read', { base: 'hex' }),
  // Terminate (SPEC-NOTES 2.4 - 2.6)
  f('iwarp_rdma.terminate', 'Terminate', 'protocol', 'RDMA Terminate Header'),
  f('iwarp_rdma.term_ctrl', 'Terminate Control', 'uint', 'Layer, EType, Error Code (24 bits)', { base: 'hex' }),
  f('iwarp_rdma.term_layer', 'Layer', 'uint', 'Layer that detected the error', {
    base: 'hex',
    mask: TERM_LAYER_MASK,
    bits: 8,
    strings: TERM_LAYER_NAMES,
  }),
  f('iwarp_rdma.term_etype_rdma', 'Error Types for RDMA layer', 'uint', 'Terminate Control Field: Error Type', {
    base: 'hex',
    mask: TERM_ETYPE_MASK,
    bits: 8,
    strings: RDMAP_ETYPE_NAMES,
  }),
  f('iwarp_rdma.term_etype_ddp', 'Error Types for DDP layer', 'uint', 'Terminate Control Field: Error Type', {
    base: 'hex',
    mask: TERM_ETYPE_MASK,
    bits: 8,
    strings: DDP_ETYPE_NAMES,
  }),
  f('iwarp_rdma.term_etype_llp', 'Error Types for LLP layer', 'uint', 'Terminate Control Field: Error Type', {
    base: 'hex',
    mask: TERM_ETYPE_MASK,
    bits: 8,
    strings: LLP_ETYPE_NAMES,
  }),
  f('iwarp_rdma.term_etype', 'Error Types', 'uint', 'Terminate Control Field: Error Type (unknown layer)', {
    base: 'hex',
    mask: TERM_ETYPE_MASK,
    bits: 8,
  }),
  f('iwarp_rdma.term_errcode_rdma', 'Error Code for RDMA layer', 'uint', 'Terminate Control Field: Error Code', {
    base: 'hex',
    strings: RDMAP_ERRCODE_NAMES,
    width: 8,
  }),
  f(
    'iwarp_rdma.term_errcode_ddp_tagged',
    'Error Code for DDP Tagged Buffer',
    'uint',
    'Terminate Control Field: Error Code',
    { base: 'hex', strings: DDP_TAGGED_ERRCODE_NAMES, width: 8 },
  ),
  f(
    'iwarp_rdma.term_errcode_ddp_untagged',
    'Error Code for DDP Untagged Buffer',
    'uint',
    'Terminate Control Field: Error Code',
    { base: 'hex', strings: DDP_UNTAGGED_ERRCODE_NAMES, width: 8 },
  ),
  f(
    'iwarp_rdma.term_errcode_llp',
    'Error Code for LLP layer',
    'uint',
    'Terminate Control Field: Lower Layer Protocol Error Code',
    { base: 'hex', strings: MPA_ERRCODE_NAMES, width: 8 },
  ),
  f('iwarp_rdma.term_errcode', 'Error Code', 'uint', 'Terminate Control Field: Error Code', { base: 'hex', width: 8 }),
  f('iwarp_rdma.term_hdrct', 'Header control bits', 'uint', 'Terminate Control Field: Header control bits', {
    base: 'hex',
    mask: 0xe000,
    bits: 16,
  }),
  f('iwarp_rdma.term_hdrct_m', 'M bit', 'bool', 'Header control bit m: DDP Segment Length valid', {
    mask: TERM_HDRCT_M,
    bits: 16,
  }),
  f('iwarp_rdma.hdrct_d', 'D bit', 'bool', 'Header control bit d: DDP Header Included', {
    mask: TERM_HDRCT_D,
    bits: 16,
  }),
  f('iwarp_rdma.hdrct_r', 'R bit', 'bool', 'Header control bit r: RDMAP Header Included', {
    mask: TERM_HDRCT_R,
    bits: 16,
  }),
  f('iwarp_rdma.term_rsvd', 'Reserved', 'uint', 'Reserved, sent as zero', {
    base: 'hex',
    mask: TERM_RSVD_MASK,
    bits: 16,
  }),
  f('iwarp_rdma.term_ddp_seg_len', 'DDP Segment Length', 'uint', 'Length of the terminated DDP segment', {
    base: 'dec',
    width: 16,
  }),
  f(
    'iwarp_rdma.term_ddp_h',
    'Terminated DDP Header',
    'bytes',
    'First 14 (tagged) or 18 (untagged) octets of the offending segment',
  ),
  f(
    'iwarp_rdma.term_rdma_h',
    'Terminated RDMA Header',
    'bytes',
    'RDMAP header (Read Request) of the offending segment',
  ),
  // RFC 7306 (SPEC-NOTES 2.7)
  f('iwarp_rdma.atomic.reserved', 'Reserved', 'uint', 'Atomic Request reserved bits', {
    base: 'hex',
    mask: 0xfffffff0,
    bits: 32,
  }),
  f('iwarp_rdma.atomic.opcode', 'OpCode', 'uint', 'Atomic operation', {
    base: 'dec',
    mask: 0x0000000f,
    bits: 32,
    strings: ATOMIC_OPCODE_NAMES,
  }),
  f('iwarp_rdma.atomic.request_identifier', 'Request Identifier', 'uint', 'Echoed in the Atomic Response', {
    base: 'dec',
  }),
  f('iwarp_rdma.atomic.remote_stag', 'Remote STag', 'uint', 'STag of the target buffer', { base: 'hex' }),
  f('iwarp_rdma.atomic.remote_tagged_offset', 'Remote Tagged Offset', 'uint64', 'TO of the target', { base: 'hex' }),
  f('iwarp_rdma.atomic.add_data', 'Add Data', 'uint64', 'FetchAdd operand', { base: 'dec' }),
  f('iwarp_rdma.atomic.add_mask', 'Add Mask', 'uint64', 'FetchAdd mask', { base: 'hex' }),
  f('iwarp_rdma.atomic.swap_data', 'Swap Data', 'uint64', 'CmpSwap operand', { base: 'dec' }),
  f('iwarp_rdma.atomic.swap_mask', 'Swap Mask', 'uint64', 'CmpSwap mask', { base: 'hex' }),
  f('iwarp_rdma.atomic.compare_data', 'Compare Data', 'uint64', 'CmpSwap compare operand', { base: 'dec' }),
  f('iwarp_rdma.atomic.compare_mask', 'Compare Mask', 'uint64', 'CmpSwap compare mask', { base: 'hex' }),
  f(
    'iwarp_rdma.atomic.original_request_identifier',
    'Original Request Identifier',
    'uint',
    'Request Identifier of the answered Atomic Request',
    { base: 'dec' },
  ),
  f(
    'iwarp_rdma.atomic.original_remote_data_value',
    'Original Remote Data Value',
    'uint64',
    'Value at the target before the operation',
    { base: 'hex' },
  ),
  f(
    'iwarp_rdma.immediate_data',
    'Immediate Data',
    'bytes',
    'Eight octets of Immediate Data (RFC 7306; layout provisional)',
  ),
];

/** Generated analysis fields (Wireshark's "[...]" items): not on the wire. */
export const DDP_ANALYSIS_FIELDS: readonly FieldDef[] = [
  f(
    'iwarp_ddp.analysis',
    'DDP/RDMAP analysis',
    'protocol',
    "Results of mpa-dissect's DDP/RDMAP checks for this segment",
  ),
  f(
    'iwarp_ddp.analysis.skipped',
    'Not used for sequence checks',
    'string',
    'Why this segment was decoded but left out of MSN/MO/TO bookkeeping',
  ),
  f(
    'iwarp_ddp.analysis.message',
    'Message number',
    'uint',
    'Index of the RDMA message (per direction) this segment belongs to',
    { base: 'dec' },
  ),
  f(
    'iwarp_ddp.analysis.message_length',
    'Message length so far',
    'uint',
    'DDP payload octets of the message up to and including this segment',
    { base: 'dec' },
  ),
  f('iwarp_ddp.analysis.message_complete', 'Message complete', 'bool', 'This segment carried L=1'),
  f('iwarp_ddp.analysis.rtr', 'RTR', 'string', 'This segment is the RFC 6581 ready-to-receive indication'),
  f(
    'iwarp_ddp.analysis.request_frames',
    'Read Request in frames',
    'string',
    'Frames of the Read Request this Read Response answers',
  ),
  f(
    'iwarp_ddp.analysis.terminated',
    'Terminated segment',
    'string',
    'Segment whose copied header this Terminate carries',
  ),
  f('iwarp_ddp.analysis.finding', 'Finding', 'string', 'A rule that fired on this segment'),
];
