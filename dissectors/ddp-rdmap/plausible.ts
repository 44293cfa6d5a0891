/**
 * A cheap "does this look like a DDP/RDMAP header" test, used by the MPA layer to find FPDU
 * boundaries when CRC is off (RFC 5044 §6 leaves a receiver only the ULPDU_Length chain then).
 * Checks only what every conforming segment satisfies (RFC 5041 §4, RFC 5040 §4; SPEC-NOTES 1.1-2.1),
 * from the one opcode table (OPCODE_SPECS: buffer model and queue number of each opcode).
 */
import {
  DDP_DV_MASK,
  DDP_RSVD_MASK,
  DDP_TAGGED_FLAG,
  DDP_TAGGED_HEADER_LEN,
  DDP_UNTAGGED_HEADER_LEN,
  OPCODE_SPECS,
  RDMA_OPCODE_MASK,
  RDMA_RSV_MASK,
} from './fields.js';

export function plausibleDdpHeader(head: Uint8Array, length: number): boolean {
  if (length < DDP_TAGGED_HEADER_LEN || head.length < 2) return false;
  const ctrl = head[0]!;
  const rdma = head[1]!;
  const dv = ctrl & DDP_DV_MASK;
  if ((ctrl & DDP_RSVD_MASK) !== 0 || dv > 1) return false;
  if (rdma >> 6 !== dv || (rdma & RDMA_RSV_MASK) !== 0) return false;
  const spec = OPCODE_SPECS[rdma & RDMA_OPCODE_MASK];
  if (!spec) return false;
  if (((ctrl & DDP_TAGGED_FLAG) !== 0) !== spec.tagged) return false;
  if (spec.tagged) return true;
  if (length < DDP_UNTAGGED_HEADER_LEN) return false;
  if (head.length < DDP_UNTAGGED_HEADER_LEN) return true; // QN not in view: nothing more to check
  const qn = ((head[6]! << 24) | (head[7]! << 16) | (head[8]! << 8) | head[9]!) >>> 0;
  return qn === spec.qn;
}

/**
 * Looser than plausibleDdpHeader, for checking each FPDU as MPA frames it (a broken ULPDU_Length
 * chain shows as the first ULPDU that cannot start a DDP segment): DDP and RDMAP versions may each
 * be 0 or 1 without agreeing (a real early SoftUiWarp client sent DDP version 0 under RDMAP version
 * 1; that is a version finding of the DDP layer, not lost framing).
 */
export function plausibleDdpSegmentStart(head: Uint8Array, length: number): boolean {
  if (length < DDP_TAGGED_HEADER_LEN || head.length < 2) return false;
  const ctrl = head[0]!;
  const rdma = head[1]!;
  if ((ctrl & DDP_RSVD_MASK) !== 0 || (ctrl & DDP_DV_MASK) > 1 || rdma >> 6 > 1 || (rdma & RDMA_RSV_MASK) !== 0)
    return false;
  const spec = OPCODE_SPECS[rdma & RDMA_OPCODE_MASK];
  if (!spec || ((ctrl & DDP_TAGGED_FLAG) !== 0) !== spec.tagged) return false;
  if (spec.tagged) return true;
  if (length < DDP_UNTAGGED_HEADER_LEN) return false;
  if (head.length < DDP_UNTAGGED_HEADER_LEN) return true;
  const qn = ((head[6]! << 24) | (head[7]! << 16) | (head[8]! << 8) | head[9]!) >>> 0;
  return qn === spec.qn;
}
