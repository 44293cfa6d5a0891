/**
 * A cheap "does this look like a DDP/RDMAP header" test, used by the MPA layer to find FPDU
 * boundaries when CRC is off (RFC 5044 §6 leaves a receiver only the ULPDU_Length chain then).
 * Checks only what every conforming segment satisfies (RFC 5041 §4, RFC 5040 §4; SPEC-NOTES 1.1-2.1).
 */

/** Queue number each untagged opcode uses; -1 = not an untagged opcode. */
const QN_OF = [-1, 1, -1, 0, 0, 0, 0, 2, 0, 0, 1, 3];

export function plausibleDdpHeader(head: Uint8Array, length: number): boolean {
  if (length < 14 || head.length < 2) return false;
  const ctrl = head[0]!;
  const rdma = head[1]!;
  const dv = ctrl & 0x03;
  if ((ctrl & 0x3c) !== 0 || dv > 1) return false;
  if (rdma >> 6 !== dv || (rdma & 0x30) !== 0) return false;
  const op = rdma & 0x0f;
  if (op > 0x0b) return false;
  const tagged = (ctrl & 0x80) !== 0;
  // Only RDMA Write (0x0) and RDMA Read Response (0x2) use the tagged buffer model.
  if (tagged !== (op === 0x0 || op === 0x2)) return false;
  if (tagged) return true;
  if (length < 18) return false;
  if (head.length < 18) return true; // QN not in view: nothing more to check
  const qn = ((head[6]! << 24) | (head[7]! << 16) | (head[8]! << 8) | head[9]!) >>> 0;
  return qn === QN_OF[op];
}
