import type { RuleDef } from '../vocabulary/findings.js';

/** Rules of this layer (ids, severities, references). Joined into the catalog by src/analysis/rules-catalog.ts. */
export const NET_RULES: readonly RuleDef[] = [
  {
    id: 'net.unknown-linktype',
    severity: 'info',
    ref: 'https://www.tcpdump.org/linktypes.html',
    rfcErrorCode: null,
    summary: 'Frames of a link type the decoder does not know were skipped',
    explanation:
      'The decoder reads Ethernet (with 802.1Q/802.1ad tags), Linux cooked capture v1 and v2, raw IP, BSD loopback (NULL, LOOP) and ' +
      'the IPv4/IPv6 link types. Frames of any other link type are counted per link type and skipped; this is reported once per link type. ' +
      'Convert the capture (for example with `editcap -T ether`) or capture on another interface if those frames matter.',
  },
  {
    id: 'net.link-malformed',
    severity: 'warning',
    ref: null,
    rfcErrorCode: null,
    summary: 'A link-layer header is truncated or inconsistent; the frame was skipped',
    explanation:
      'The frame is shorter than its link-layer header (Ethernet, VLAN tag, Linux cooked header, loopback family) without the snaplen ' +
      'having cut it, or a raw-IP frame carries an IP version other than 4 or 6. The frame is skipped; if it carried TCP payload, ' +
      'the stream shows a gap there.',
  },
  {
    id: 'net.ipv4-malformed',
    severity: 'warning',
    ref: 'RFC 791 §3.1',
    rfcErrorCode: null,
    summary: 'An IPv4 header is malformed; the frame was skipped',
    explanation:
      'Version not 4, IHL below 5, a header longer than the frame, a total length below the header length or beyond what the frame ' +
      'carried on the wire, or a fragment that breaks the fragmentation rules (a non-final fragment whose length is not a multiple of 8, ' +
      'an empty fragment, a fragment ending past 65535 bytes). The frame is skipped.',
  },
  {
    id: 'net.ipv6-malformed',
    severity: 'warning',
    ref: 'RFC 8200 §3, §4',
    rfcErrorCode: null,
    summary: 'An IPv6 header or extension header is malformed; the frame was skipped',
    explanation:
      'Version not 6, a payload length beyond what the frame carried on the wire, an extension header running past the payload, ' +
      'a fragment header inside a reassembled datagram, or a fragment breaking RFC 8200 §4.5 (non-final length not a multiple of 8, ' +
      'ending past 65535 bytes). The frame is skipped.',
  },
  {
    id: 'net.tcp-malformed',
    severity: 'warning',
    ref: 'RFC 9293 §3.1',
    rfcErrorCode: null,
    summary: 'A TCP header is malformed; the segment was skipped',
    explanation:
      'The IP header leaves fewer than 20 bytes for TCP, or the data offset is below 5 or points past the end of the segment. ' +
      'Where the payload starts cannot be known, so the segment is skipped and the stream shows a gap there.',
  },
  {
    id: 'net.tcp-option-malformed',
    severity: 'warning',
    ref: 'RFC 9293 §3.1, RFC 7323, RFC 2018',
    rfcErrorCode: null,
    summary: 'A TCP option list is malformed; options after the fault are ignored',
    explanation:
      'An option has a length below 2, runs past the header, or a known option has the wrong length (MSS 4, window scale 3, ' +
      'SACK-permitted 2, SACK 2 + 8n, timestamps 10). Options before the fault are kept. The data offset itself is sound, ' +
      'so the payload is still delivered to the stream.',
  },
  {
    id: 'net.ipv4-checksum-bad',
    severity: 'warning',
    ref: 'RFC 791 §3.1',
    rfcErrorCode: null,
    summary: 'IPv4 header checksum is wrong (checked only with checksum verification on)',
    explanation:
      "The one's-complement sum of the IPv4 header does not come out right. On a capture taken on the sending host this is usually " +
      'checksum offload (the NIC fills the checksum in after the capture point), which is why checking is off by default. ' +
      'The packet is still decoded.',
  },
  {
    id: 'net.tcp-checksum-bad',
    severity: 'warning',
    ref: 'RFC 9293 §3.1',
    rfcErrorCode: null,
    summary: 'TCP checksum is wrong (checked only with checksum verification on)',
    explanation:
      'The TCP checksum over the pseudo-header (addresses, protocol, length) and the segment does not come out right. Segments cut by the ' +
      'snaplen cannot be checked. Offload on the capturing host is the usual cause; on a capture from a tap or a receiver it means ' +
      'corruption the receiver will have dropped. The segment is still delivered.',
  },
  {
    id: 'net.fragment-overlap',
    severity: 'warning',
    ref: 'RFC 5722; RFC 791',
    rfcErrorCode: null,
    summary: 'IP fragments overlap or disagree on the datagram end; the first copy was kept',
    explanation:
      'A fragment covers bytes already received (the message says whether the data differ), reaches past the end set by the last ' +
      'fragment, or a second last fragment sets a different end. Reassembly keeps the bytes that arrived first. Receivers differ: ' +
      'RFC 5722 has IPv6 receivers drop the whole datagram, and current Linux drops overlapping IPv4 datagrams too.',
  },
  {
    id: 'net.fragment-incomplete',
    severity: 'warning',
    ref: 'RFC 791; RFC 8200 §4.5',
    rfcErrorCode: null,
    summary: 'An IP datagram was never completely reassembled; its fragments were dropped',
    explanation:
      'Fragments of a datagram were seen but not all of them: the capture lost some, the capture ended, no completing fragment came ' +
      'within 60 s of capture time, or the fragment memory cap was reached and the oldest incomplete datagram was given up. ' +
      "The TCP stream shows a gap where the datagram's payload was.",
  },
  {
    id: 'net.headers-cut',
    severity: 'info',
    ref: null,
    rfcErrorCode: null,
    summary: 'The snaplen cut into IP or TCP headers; such frames are skipped (reported once)',
    explanation:
      'The capture was taken with a snaplen too small to hold the link, IP and TCP headers of some frames (IPv6 extension headers and ' +
      'TCP options make headers long). Those frames are counted and skipped, and only the first is reported. Capture with a larger ' +
      'snaplen (tcpdump -s 0) to analyze them.',
  },
];
