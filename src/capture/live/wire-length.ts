/**
 * The length a frame had on the wire, read from its own headers: for a capture source that hands
 * over the captured octets but not the original length (the cap binding), so that a frame its
 * snaplen cut is a cut frame (the decoder uses what is there and TCP sees a gap of exactly the
 * missing octets), not a malformed one.
 */
import {
  LINKTYPE_ETHERNET,
  LINKTYPE_IPV4,
  LINKTYPE_IPV6,
  LINKTYPE_LINUX_SLL,
  LINKTYPE_LINUX_SLL2,
  LINKTYPE_LOOP,
  LINKTYPE_NULL,
  LINKTYPE_RAW,
  LINKTYPE_RAW_12,
  LINKTYPE_RAW_14,
} from '../link-types.js';

const ETHERTYPE_IPV4 = 0x0800;
const ETHERTYPE_IPV6 = 0x86dd;
const VLAN_TAGS = new Set([0x8100, 0x88a8, 0x9100]);

/** Link header length and the network protocol after it (4 or 6), or null when not IP or not held. */
function linkHeader(b: Uint8Array, linkType: number): { off: number; ip: number } | null {
  const ethertype = (off: number) => (b.length >= off + 2 ? (b[off]! << 8) | b[off + 1]! : -1);
  const byType = (t: number, off: number) =>
    t === ETHERTYPE_IPV4 ? { off, ip: 4 } : t === ETHERTYPE_IPV6 ? { off, ip: 6 } : null;
  switch (linkType) {
    case LINKTYPE_ETHERNET: {
      let off = 12;
      let t = ethertype(off);
      // At most two tags (802.1ad QinQ): more is not a frame this tool decodes.
      for (let i = 0; i < 2 && VLAN_TAGS.has(t); i++) {
        off += 4;
        t = ethertype(off);
      }
      return byType(t, off + 2);
    }
    case LINKTYPE_LINUX_SLL:
      return byType(ethertype(14), 16);
    case LINKTYPE_LINUX_SLL2:
      return byType(ethertype(0), 20);
    case LINKTYPE_NULL:
    case LINKTYPE_LOOP: {
      if (b.length < 5) return null;
      const v = b[4]! >> 4;
      return v === 4 || v === 6 ? { off: 4, ip: v } : null;
    }
    case LINKTYPE_RAW:
    case LINKTYPE_RAW_12:
    case LINKTYPE_RAW_14:
    case LINKTYPE_IPV4:
    case LINKTYPE_IPV6: {
      if (b.length < 1) return null;
      const v = b[0]! >> 4;
      return v === 4 || v === 6 ? { off: 0, ip: v } : null;
    }
    default:
      return null;
  }
}

/**
 * The frame's length on the wire from its link and IP headers (IPv4 total length, IPv6 payload
 * length plus its header), or null when the headers do not say: not IP, not held, or an IPv4 total
 * length of 0 (segmentation offload, BIG TCP: the decoder takes the captured length then).
 */
export function wireLengthFromHeaders(b: Uint8Array, linkType: number): number | null {
  const l = linkHeader(b, linkType);
  if (l === null) return null;
  if (l.ip === 4) {
    if (b.length < l.off + 4) return null;
    const total = (b[l.off + 2]! << 8) | b[l.off + 3]!;
    return total === 0 ? null : l.off + total;
  }
  if (b.length < l.off + 6) return null;
  const payload = (b[l.off + 4]! << 8) | b[l.off + 5]!;
  // A jumbogram (payload length 0, RFC 2675) says its length in a hop-by-hop option: not read here.
  return payload === 0 ? null : l.off + 40 + payload;
}
