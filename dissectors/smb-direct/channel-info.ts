/**
 * The channel information of SMB2 READ and WRITE requests (MS-SMB2 2.2.19, 2.2.21): a list of
 * SMB_DIRECT_BUFFER_DESCRIPTOR_V1 (MS-SMBD 2.2.3.1), directly or wrapped in an
 * SMB2_RDMA_TRANSFORM (MS-SMB2 2.2.43). Bounded: at most MAX_DESCRIPTORS are decoded whatever the
 * length field says.
 */
import { BUFFER_DESCRIPTOR_V1_LEN } from './decode.js';

/** 2.2.19 / 2.2.21 Channel. */
export const CHANNEL = { NONE: 0, RDMA_V1: 1, RDMA_V1_INVALIDATE: 2, RDMA_TRANSFORM: 3 } as const;
export const CHANNEL_NAMES: readonly string[] = ['NONE', 'RDMA_V1', 'RDMA_V1_INVALIDATE', 'RDMA_TRANSFORM'];

/** Descriptors decoded per channel, whatever the (16-bit) length announces. */
export const MAX_DESCRIPTORS = 256;

/** SMB2 header and fixed request part: channel information lies after them (ksmbd's check). */
const SMB2_HEADER_LEN = 64;

/** MS-SMBD 2.2.3.1. `at` is its offset within the SMB2 message. */
export interface BufferDescriptor {
  readonly offset: bigint;
  readonly token: number;
  readonly length: number;
  readonly at: number;
}

/** 2.2.43 SMB2_RDMA_TRANSFORM (its first 16 octets). */
export interface RdmaTransform {
  readonly descriptorOffset: number;
  readonly descriptorLength: number;
  readonly channel: number;
  readonly transformCount: number;
}

export interface ChannelInfo {
  /** From the start of the SMB2 header, as on the wire. */
  readonly offset: number;
  readonly length: number;
  /** Descriptors decoded (at most MAX_DESCRIPTORS). */
  readonly descriptors: readonly BufferDescriptor[];
  /** Descriptors the length announces. */
  readonly declared: number;
  /** What is wrong with the channel information, if anything. */
  readonly problem: string | null;
  /** Octets of the channel information were not captured: descriptors may be missing. */
  readonly missing: boolean;
  readonly transform: RdmaTransform | null;
  /** The channel the descriptors are for (inside a transform: its inner Channel). */
  readonly effectiveChannel: number;
}

const view = (b: Uint8Array): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength);

/** Fixed part of the READ and WRITE requests after the header (StructureSize 49 counts one Buffer octet). */
const REQUEST_FIXED = 48;

function descriptorsAt(
  msg: Uint8Array,
  start: number,
  length: number,
): { list: BufferDescriptor[]; declared: number; problem: string | null; missing: boolean } {
  const declared = Math.floor(length / BUFFER_DESCRIPTOR_V1_LEN);
  let problem: string | null = null;
  if (length === 0) problem = 'no Buffer Descriptor V1 (channel information length 0)';
  else if (length % BUFFER_DESCRIPTOR_V1_LEN !== 0)
    problem = `channel information length ${length} is not a multiple of the 16-octet Buffer Descriptor V1`;
  else if (declared > MAX_DESCRIPTORS)
    problem = `${declared} Buffer Descriptor V1 entries announced; only the first ${MAX_DESCRIPTORS} are decoded`;
  const v = view(msg);
  const list: BufferDescriptor[] = [];
  let missing = false;
  for (let i = 0; i < Math.min(declared, MAX_DESCRIPTORS); i++) {
    const at = start + i * BUFFER_DESCRIPTOR_V1_LEN;
    if (at + BUFFER_DESCRIPTOR_V1_LEN > msg.length) {
      missing = true;
      break;
    }
    list.push({
      offset: v.getBigUint64(at, true),
      token: v.getUint32(at + 8, true),
      length: v.getUint32(at + 12, true),
      at,
    });
  }
  return { list, declared, problem, missing };
}

/**
 * The channel information of a READ or WRITE request: `offset`/`length` from the header at
 * `hdrAt`; `cmdEnd` is where the command ends (its octets may extend past those captured).
 */
export function decodeChannelInfo(
  msg: Uint8Array,
  hdrAt: number,
  cmdEnd: number,
  channel: number,
  offset: number,
  length: number,
): ChannelInfo | null {
  if (channel !== CHANNEL.RDMA_V1 && channel !== CHANNEL.RDMA_V1_INVALIDATE && channel !== CHANNEL.RDMA_TRANSFORM)
    return null;
  const start = hdrAt + offset;
  const end = start + length;
  const base = { offset, length, transform: null, effectiveChannel: channel };
  // ksmbd refuses channel information inside the fixed part (offset < offsetof(req, Buffer)).
  if (length > 0 && offset < SMB2_HEADER_LEN + REQUEST_FIXED)
    return {
      ...base,
      descriptors: [],
      declared: 0,
      missing: false,
      problem: `channel information offset ${offset} lies inside the ${SMB2_HEADER_LEN + REQUEST_FIXED}-octet header and fixed part`,
    };
  if (end > cmdEnd)
    return {
      ...base,
      descriptors: [],
      declared: 0,
      missing: false,
      problem: `channel information (offset ${offset}, ${length} octets) reaches past the end of the command (${cmdEnd - hdrAt} octets)`,
    };
  if (channel !== CHANNEL.RDMA_TRANSFORM) {
    const d = descriptorsAt(msg, start, length);
    return { ...base, descriptors: d.list, declared: d.declared, problem: d.problem, missing: d.missing };
  }
  // 2.2.43: SMB2_RDMA_TRANSFORM, descriptors at RdmaDescriptorOffset from the start of the structure.
  if (length < 16)
    return {
      ...base,
      descriptors: [],
      declared: 0,
      missing: false,
      problem: 'SMB2_RDMA_TRANSFORM shorter than 16 octets',
    };
  if (start + 16 > msg.length) return { ...base, descriptors: [], declared: 0, missing: true, problem: null };
  const v = view(msg);
  const t: RdmaTransform = {
    descriptorOffset: v.getUint16(start, true),
    descriptorLength: v.getUint16(start + 2, true),
    channel: v.getUint32(start + 4, true),
    transformCount: v.getUint16(start + 8, true),
  };
  const inner = { ...base, transform: t, effectiveChannel: t.channel };
  if (t.channel !== CHANNEL.RDMA_V1 && t.channel !== CHANNEL.RDMA_V1_INVALIDATE)
    return { ...inner, descriptors: [], declared: 0, missing: false, problem: null };
  if (t.descriptorOffset + t.descriptorLength > length)
    return {
      ...inner,
      descriptors: [],
      declared: 0,
      missing: false,
      problem: `SMB2_RDMA_TRANSFORM descriptors (offset ${t.descriptorOffset}, ${t.descriptorLength} octets) reach past its ${length} octets`,
    };
  const d = descriptorsAt(msg, start + t.descriptorOffset, t.descriptorLength);
  return { ...inner, descriptors: d.list, declared: d.declared, problem: d.problem, missing: d.missing };
}
