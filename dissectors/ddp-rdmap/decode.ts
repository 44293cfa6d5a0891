/**
 * Pure decoding of one DDP segment (RFC 5041) and the RDMAP header it carries (RFC 5040,
 * RFC 7306). Never throws on wire data: what does not fit becomes a `truncated` record or a
 * `truncated` body, which the analyzer turns into findings.
 *
 * Offsets are from the DDP control byte (the first ULPDU octet). Layouts: SPEC-NOTES Part 2.
 */

import {
  ATOMIC_REQUEST_HEADER_LEN,
  ATOMIC_RESPONSE_HEADER_LEN,
  DDP_DV_MASK,
  DDP_LAST_FLAG,
  DDP_RSVD_MASK,
  DDP_TAGGED_FLAG,
  DDP_TAGGED_HEADER_LEN,
  DDP_UNTAGGED_HEADER_LEN,
  IMMEDIATE_DATA_LEN,
  OP,
  OPCODE_SPECS,
  RDMA_OPCODE_MASK,
  RDMA_READ_REQUEST_HEADER_LEN,
  RDMA_RSV_MASK,
  RDMA_RV_MASK,
  RDMA_TERMINATED_RDMA_LEN,
  TERM_ETYPE_MASK,
  TERM_HDRCT_D,
  TERM_HDRCT_M,
  TERM_HDRCT_R,
  TERM_LAYER_MASK,
  TERM_RSVD_MASK,
  termCodeName,
  termEtypeName,
  TERM_LAYER_NAMES,
} from './fields.js';

export interface DdpControl {
  readonly raw: number;
  readonly t: boolean;
  readonly l: boolean;
  readonly rsvd: number;
  readonly dv: number;
}

export interface RdmapControl {
  readonly raw: number;
  readonly rv: number;
  readonly rsv: number;
  readonly opcode: number;
}

export interface ReadRequestHeader {
  readonly sinkStag: number;
  readonly sinkTo: bigint;
  readonly size: number;
  readonly srcStag: number;
  readonly srcTo: bigint;
}

export interface AtomicRequestHeader {
  /** Bits 31..4 of the first word (reserved). */
  readonly reserved: number;
  readonly atomicOpcode: number;
  readonly requestId: number;
  readonly remoteStag: number;
  readonly remoteTo: bigint;
  /** Add Data (FetchAdd) or Swap Data (CmpSwap). */
  readonly data: bigint;
  /** Add Mask or Swap Mask. */
  readonly mask: bigint;
  readonly compareData: bigint;
  readonly compareMask: bigint;
}

export interface AtomicResponseHeader {
  readonly originalRequestId: number;
  readonly originalValue: bigint;
}

/** A DDP header on its own (also what a Terminate copies). */
export type DdpHeader =
  | {
      readonly kind: 'tagged';
      readonly ddp: DdpControl;
      readonly rdmap: RdmapControl;
      readonly stag: number;
      readonly to: bigint;
    }
  | {
      readonly kind: 'untagged';
      readonly ddp: DdpControl;
      readonly rdmap: RdmapControl;
      /** RsvdULP[8:39]: bytes 2..5. */
      readonly rsvdUlp: Uint8Array;
      readonly qn: number;
      readonly msn: number;
      readonly mo: number;
    };

export interface TerminateMessage {
  /** The 32-bit word at offset 18: Layer, EType, Error Code, Hdrct, reserved. */
  readonly ctrlWord: number;
  readonly layer: number;
  readonly etype: number;
  readonly code: number;
  readonly layerName: string | null;
  readonly etypeName: string | null;
  /** Null when the (layer, etype, code) triple is not registered. */
  readonly codeName: string | null;
  readonly m: boolean;
  readonly d: boolean;
  readonly r: boolean;
  /** Low 13 bits of the Hdrct word (reserved). */
  readonly rsvd: number;
  /** Present when M or D is set (SPEC-NOTES 2.4 note; provisional 5 for M=0, D=1). */
  readonly ddpSegmentLength: number | null;
  /** The copied DDP header (D), decoded again; `header` null when fewer octets than it needs. */
  readonly ddpHeader: { readonly offset: number; readonly bytes: Uint8Array; readonly header: DdpHeader | null } | null;
  /** The copied RDMAP header (R), bounded by the remaining length. */
  readonly rdmapHeader: {
    readonly offset: number;
    readonly bytes: Uint8Array;
    readonly readRequest: ReadRequestHeader | null;
  } | null;
  /** Octets of the Terminate after the 18-octet DDP header. */
  readonly bodyLength: number;
  /** Layout problems (missing or short copied headers), for the analyzer to report. */
  readonly problems: readonly string[];
}

export type RdmapBody =
  | { readonly type: 'none' }
  | { readonly type: 'read-request'; readonly rr: ReadRequestHeader }
  | { readonly type: 'terminate'; readonly term: TerminateMessage }
  | { readonly type: 'atomic-request'; readonly req: AtomicRequestHeader }
  | { readonly type: 'atomic-response'; readonly resp: AtomicResponseHeader }
  | { readonly type: 'immediate'; readonly data: Uint8Array }
  /** The opcode's RDMAP header did not fit in the ULPDU. */
  | { readonly type: 'truncated'; readonly what: string; readonly need: number; readonly have: number };

interface PduBase {
  /** ULPDU_Length. */
  readonly length: number;
  readonly headerLength: 14 | 18;
  /** length - headerLength: the DDP payload (RDMAP headers of Read Request etc. included). */
  readonly payloadLength: number;
  readonly ddp: DdpControl;
  readonly rdmap: RdmapControl;
  readonly body: RdmapBody;
}

export interface TaggedPdu extends PduBase {
  readonly kind: 'tagged';
  readonly headerLength: 14;
  readonly stag: number;
  readonly to: bigint;
}

export interface UntaggedPdu extends PduBase {
  readonly kind: 'untagged';
  readonly headerLength: 18;
  readonly rsvdUlp: Uint8Array;
  /** Bytes 2..5 as the Invalidate STag, for Send with (SE and) Invalidate. */
  readonly invalidateStag: number | null;
  /** Bytes 2..5 as a reserved word, for Read Request, Send, Send/SE, Terminate (else null). */
  readonly reservedWord: number | null;
  readonly qn: number;
  readonly msn: number;
  readonly mo: number;
}

/** The ULPDU is shorter than its own DDP header: a malformed segment, decoded as far as it goes. */
export interface TruncatedPdu {
  readonly kind: 'truncated';
  readonly truncated: true;
  readonly length: number;
  /** Octets that were available to decode. */
  readonly available: number;
  readonly ddp: DdpControl | null;
  readonly rdmap: RdmapControl | null;
  readonly need: number;
  readonly reason: string;
}

export type DdpPdu = TaggedPdu | UntaggedPdu | TruncatedPdu;

// ---------------------------------------------------------------------------------------------

// Big-endian reads straight from the octets: a DataView per segment costs more than the decode.
function u16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

function u64(b: Uint8Array, o: number): bigint {
  return (BigInt(u32(b, o)) << 32n) | BigInt(u32(b, o + 4));
}

function buildDdpControl(raw: number): DdpControl {
  return {
    raw,
    t: (raw & DDP_TAGGED_FLAG) !== 0,
    l: (raw & DDP_LAST_FLAG) !== 0,
    rsvd: (raw & DDP_RSVD_MASK) >> 2,
    dv: raw & DDP_DV_MASK,
  };
}

/** Every control octet decoded once: records share these read-only objects (no allocation per segment). */
const DDP_CONTROLS: readonly DdpControl[] = Array.from({ length: 256 }, (_, raw) => buildDdpControl(raw));

export function decodeDdpControl(raw: number): DdpControl {
  return DDP_CONTROLS[raw & 0xff]!;
}

const RDMAP_CONTROLS: readonly RdmapControl[] = Array.from({ length: 256 }, (_, raw) => ({
  raw,
  rv: (raw & RDMA_RV_MASK) >> 6,
  rsv: (raw & RDMA_RSV_MASK) >> 4,
  opcode: raw & RDMA_OPCODE_MASK,
}));

export function decodeRdmapControl(raw: number): RdmapControl {
  return RDMAP_CONTROLS[raw & 0xff]!;
}

/**
 * Decodes a bare DDP header (14 octets tagged, 18 untagged, chosen by its own T bit), or null
 * when `b` is too short. Used for segments and for the header a Terminate copies.
 */
/**
 * RsvdULP (bytes 2..5 of an untagged header) as its own copy; the usual all-zero field is one shared
 * array (read-only by contract, as every decoded field), so a Send costs no allocation for it.
 */
const ZERO_RSVD = new Uint8Array(4);
function rsvdUlpOf(b: Uint8Array): Uint8Array {
  return b[2] === 0 && b[3] === 0 && b[4] === 0 && b[5] === 0 ? ZERO_RSVD : b.slice(2, 6);
}

export function decodeDdpHeader(b: Uint8Array): DdpHeader | null {
  if (b.length < 2) return null;
  const ddp = decodeDdpControl(b[0]!);
  const rdmap = decodeRdmapControl(b[1]!);
  if (ddp.t) {
    if (b.length < DDP_TAGGED_HEADER_LEN) return null;
    return { kind: 'tagged', ddp, rdmap, stag: u32(b, 2), to: u64(b, 6) };
  }
  if (b.length < DDP_UNTAGGED_HEADER_LEN) return null;
  return {
    kind: 'untagged',
    ddp,
    rdmap,
    rsvdUlp: rsvdUlpOf(b),
    qn: u32(b, 6),
    msn: u32(b, 10),
    mo: u32(b, 14),
  };
}

export function decodeReadRequestHeader(b: Uint8Array, off: number): ReadRequestHeader | null {
  if (b.length < off + RDMA_READ_REQUEST_HEADER_LEN) return null;
  return {
    sinkStag: u32(b, off),
    sinkTo: u64(b, off + 4),
    size: u32(b, off + 12),
    srcStag: u32(b, off + 16),
    srcTo: u64(b, off + 20),
  };
}

/**
 * Terminate body at offset 18 (SPEC-NOTES 2.4). The segment-length field is read when M or D is
 * set (siw omits it when M=D=R=0; Wireshark reads it only for D, SPEC-NOTES provisional 5); the
 * copied DDP header's size comes from its own T bit, not from the EType as Wireshark does; the
 * copied RDMAP header is bounded by what remains (siw sends R with no RDMAP header for a Send).
 */
function decodeTerminate(b: Uint8Array, avail: number): RdmapBody {
  const base = DDP_UNTAGGED_HEADER_LEN;
  if (avail < base + 4) return { type: 'truncated', what: 'Terminate Control', need: base + 4, have: avail };
  const layer = (b[base]! & TERM_LAYER_MASK) >> 4;
  const etype = b[base]! & TERM_ETYPE_MASK;
  const code = b[base + 1]!;
  const hdrct = u16(b, base + 2);
  const m = (hdrct & TERM_HDRCT_M) !== 0;
  const d = (hdrct & TERM_HDRCT_D) !== 0;
  const r = (hdrct & TERM_HDRCT_R) !== 0;
  const problems: string[] = [];
  let off = base + 4;
  let ddpSegmentLength: number | null = null;
  if (m || d) {
    if (avail >= off + 2) {
      ddpSegmentLength = u16(b, off);
      off += 2;
    } else {
      problems.push(`${m ? 'M' : 'D'} is set but the DDP Segment Length field is missing`);
      off = avail;
    }
  }
  let ddpHeader: TerminateMessage['ddpHeader'] = null;
  if (d && off < avail) {
    // The copied header's own T bit says whether it is 14 or 18 octets.
    const want = (b[off]! & DDP_TAGGED_FLAG) !== 0 ? DDP_TAGGED_HEADER_LEN : DDP_UNTAGGED_HEADER_LEN;
    const n = Math.min(want, avail - off);
    const bytes = b.slice(off, off + n);
    if (n < want)
      problems.push(`D is set but only ${n} of the ${want} octets of the terminated DDP header are present`);
    ddpHeader = { offset: off, bytes, header: decodeDdpHeader(bytes) };
    off += n;
  } else if (d) {
    problems.push('D is set but no terminated DDP header follows');
  }
  let rdmapHeader: TerminateMessage['rdmapHeader'] = null;
  if (r && off < avail) {
    const n = Math.min(RDMA_TERMINATED_RDMA_LEN, avail - off);
    const bytes = b.slice(off, off + n);
    if (n < RDMA_TERMINATED_RDMA_LEN)
      problems.push(`R is set but only ${n} of the 28 octets of the terminated RDMAP header are present`);
    rdmapHeader = { offset: off, bytes, readRequest: decodeReadRequestHeader(bytes, 0) };
    off += n;
  } else if (r) {
    // siw does this for a terminated Send: not a layout error worth more than a note.
    problems.push('R is set but no terminated RDMAP header follows');
  }
  return {
    type: 'terminate',
    term: {
      ctrlWord: u32(b, base),
      layer,
      etype,
      code,
      layerName: TERM_LAYER_NAMES[layer] ?? null,
      etypeName: termEtypeName(layer, etype),
      codeName: termCodeName(layer, etype, code),
      m,
      d,
      r,
      rsvd: hdrct & TERM_RSVD_MASK,
      ddpSegmentLength,
      ddpHeader,
      rdmapHeader,
      bodyLength: avail - base,
      problems,
    },
  };
}

function decodeUntaggedBody(b: Uint8Array, avail: number, opcode: number): RdmapBody {
  const base = DDP_UNTAGGED_HEADER_LEN;
  switch (opcode) {
    case OP.READ_REQUEST: {
      const rr = decodeReadRequestHeader(b.subarray(0, avail), base);
      return rr
        ? { type: 'read-request', rr }
        : { type: 'truncated', what: 'Read Request header', need: base + RDMA_READ_REQUEST_HEADER_LEN, have: avail };
    }
    case OP.TERMINATE:
      return decodeTerminate(b, avail);
    case OP.ATOMIC_REQUEST: {
      const need = base + ATOMIC_REQUEST_HEADER_LEN;
      if (avail < need) return { type: 'truncated', what: 'Atomic Request header', need, have: avail };
      const w0 = u32(b, base);
      return {
        type: 'atomic-request',
        req: {
          reserved: w0 >>> 4,
          atomicOpcode: w0 & 0xf,
          requestId: u32(b, base + 4),
          remoteStag: u32(b, base + 8),
          remoteTo: u64(b, base + 12),
          data: u64(b, base + 20),
          mask: u64(b, base + 28),
          compareData: u64(b, base + 36),
          compareMask: u64(b, base + 44),
        },
      };
    }
    case OP.ATOMIC_RESPONSE: {
      // Wireshark advances only 4 octets past the 8-octet value (SPEC-NOTES 2.7): not copied.
      const need = base + ATOMIC_RESPONSE_HEADER_LEN;
      if (avail < need) return { type: 'truncated', what: 'Atomic Response header', need, have: avail };
      return { type: 'atomic-response', resp: { originalRequestId: u32(b, base), originalValue: u64(b, base + 4) } };
    }
    case OP.IMMEDIATE_DATA:
    case OP.IMMEDIATE_DATA_SE: {
      const need = base + IMMEDIATE_DATA_LEN;
      if (avail < need) return { type: 'truncated', what: 'Immediate Data', need, have: avail };
      return { type: 'immediate', data: b.slice(base, need) };
    }
    default:
      return { type: 'none' };
  }
}

/**
 * Decodes one DDP segment. `head` holds the first octets of the ULPDU (markers removed; MPA
 * keeps 96, enough for every header), `length` is ULPDU_Length.
 */
export function decodeDdp(head: Uint8Array, length: number): DdpPdu {
  const avail = Math.min(head.length, length);
  const ddp = avail >= 1 ? decodeDdpControl(head[0]!) : null;
  const rdmap = avail >= 2 ? decodeRdmapControl(head[1]!) : null;
  const need = ddp?.t ? DDP_TAGGED_HEADER_LEN : DDP_UNTAGGED_HEADER_LEN;
  if (ddp === null || rdmap === null || avail < need) {
    const model = ddp === null ? 'DDP' : ddp.t ? 'tagged DDP' : 'untagged DDP';
    const reason =
      length < need
        ? `ULPDU of ${length} octet${length === 1 ? '' : 's'} is shorter than the ${need}-octet ${model} header`
        : `only ${avail} of the ${need} octets of the ${model} header were available`;
    return { kind: 'truncated', truncated: true, length, available: avail, ddp, rdmap, need, reason };
  }
  // The header fields are read in place (avail covers the header): no view, no second control decode.
  const spec = OPCODE_SPECS[rdmap.opcode];
  if (ddp.t) {
    return {
      kind: 'tagged',
      length,
      headerLength: DDP_TAGGED_HEADER_LEN,
      payloadLength: length - DDP_TAGGED_HEADER_LEN,
      ddp,
      rdmap,
      stag: u32(head, 2),
      to: u64(head, 6),
      // Untagged-only RDMAP headers are not looked for behind a tagged header: the opcode/model
      // mismatch is the finding, and what follows is unknown.
      body: { type: 'none' },
    };
  }
  const word = u32(head, 2);
  const invalidate = spec?.invalidate === true;
  return {
    kind: 'untagged',
    length,
    headerLength: DDP_UNTAGGED_HEADER_LEN,
    payloadLength: length - DDP_UNTAGGED_HEADER_LEN,
    ddp,
    rdmap,
    rsvdUlp: rsvdUlpOf(head),
    invalidateStag: invalidate ? word : null,
    // SPEC-NOTES 2.2 names the opcodes whose bytes 2..5 are reserved; for the others (RFC 7306,
    // unknown opcodes) their use was not confirmed, so they are shown as raw RsvdULP.
    reservedWord: spec?.reservedWord === true ? word : null,
    qn: u32(head, 6),
    msn: u32(head, 10),
    mo: u32(head, 14),
    body: spec !== undefined && !spec.tagged ? decodeUntaggedBody(head, avail, rdmap.opcode) : { type: 'none' },
  };
}
