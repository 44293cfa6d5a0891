import type { FieldDef } from '../../src/vocabulary/fields.js';
import { byteSwap32 } from './crc32c.js';

/**
 * MPA fields. Names are Wireshark's (packet-iwarp-mpa.c) where Wireshark has the field, so users'
 * filters carry over; the rest are ours, in the same namespace.
 */
const f = (
  abbrev: string,
  name: string,
  type: FieldDef['type'],
  blurb: string,
  extra: Partial<FieldDef> = {},
): FieldDef => ({
  abbrev,
  name,
  type,
  blurb,
  ...extra,
});

export const MPA_FIELDS = {
  proto: f('iwarp_mpa', 'iWARP Marker Protocol data unit Aligned framing', 'protocol', 'MPA'),
  keyReq: f('iwarp_mpa.key.req', 'ID Req frame', 'bytes', 'MPA Request key "MPA ID Req Frame"'),
  keyRep: f('iwarp_mpa.key.rep', 'ID Rep frame', 'bytes', 'MPA Reply key "MPA ID Rep Frame"'),
  markerFlag: f(
    'iwarp_mpa.marker_flag',
    'Marker flag',
    'bool',
    'M: the sender asks for markers in the FPDUs it receives',
    { mask: 0x80, bits: 8 },
  ),
  crcFlag: f('iwarp_mpa.crc_flag', 'CRC flag', 'bool', 'C: CRC in use (both directions if either sets it)', {
    mask: 0x40,
    bits: 8,
  }),
  rejFlag: f('iwarp_mpa.rej_flag', 'Connection rejected flag', 'bool', 'R: the Responder rejects the connection', {
    mask: 0x20,
    bits: 8,
  }),
  enhancedFlag: f(
    'iwarp_mpa.enhanced_flag',
    'Enhanced RDMA connection establishment flag',
    'bool',
    'RFC 6581 enhanced connection establishment',
    { mask: 0x10, bits: 8 },
  ),
  res: f('iwarp_mpa.res', 'Reserved', 'uint', 'Reserved flag bits (0x0F)', { mask: 0x0f, bits: 8, base: 'hex' }),
  rev: f('iwarp_mpa.rev', 'Revision', 'uint', 'MPA revision: 0 RDMAC draft, 1 RFC 5044, 2 RFC 6581', { width: 8 }),
  pdLength: f('iwarp_mpa.pdlength', 'Private data length', 'uint', 'PD_Length', { width: 16 }),
  privateData: f('iwarp_mpa.privatedata', 'Private data', 'bytes', 'Private Data octets'),
  ird: f('iwarp_mpa.ird', 'IRD', 'uint', 'RFC 6581 inbound RDMA read queue depth', { mask: 0x3fff, bits: 16 }),
  ord: f('iwarp_mpa.ord', 'ORD', 'uint', 'RFC 6581 outbound RDMA read queue depth', { mask: 0x3fff, bits: 16 }),
  p2p: f('iwarp_mpa.peer_to_peer', 'Peer-to-peer (A)', 'bool', 'RFC 6581 flag A: peer-to-peer model, RTR in use', {
    mask: 0x8000,
    bits: 16,
  }),
  rtrSend: f('iwarp_mpa.rtr_send', 'Zero-length SEND RTR (B)', 'bool', 'RFC 6581 flag B', { mask: 0x4000, bits: 16 }),
  rtrWrite: f('iwarp_mpa.rtr_write', 'Zero-length RDMA WRITE RTR (C)', 'bool', 'RFC 6581 flag C', {
    mask: 0x8000,
    bits: 16,
  }),
  rtrRead: f('iwarp_mpa.rtr_read', 'Zero-length RDMA READ RTR (D)', 'bool', 'RFC 6581 flag D', {
    mask: 0x4000,
    bits: 16,
  }),
  vendor: f('iwarp_mpa.vendor', 'Vendor extension', 'string', 'Known vendor extension recognised in the startup frame'),
  ulpduLength: f(
    'iwarp_mpa.ulpdulength',
    'ULPDU length',
    'uint',
    'ULPDU_Length as sent (RFC 5044 section 4.1): ULPDU octets only (not itself, PAD, CRC or markers); under a diagnosed length mistake the framing used iwarp_mpa.ulpdulength_framed',
    { width: 16 },
  ),
  ulpduLengthFramed: f(
    'iwarp_mpa.ulpdulength_framed',
    'ULPDU length as framed',
    'uint',
    'ULPDU octets the framing used, where a diagnosed sender mistake (iwarp_mpa.sender_mistake) makes it differ from the ULPDU_Length field; absent otherwise',
  ),
  pad: f('iwarp_mpa.pad', 'Padding', 'bytes', "PAD octets on the wire (the sender's)"),
  padExpected: f(
    'iwarp_mpa.pad_expected',
    'Expected padding length',
    'uint',
    'PAD octets RFC 5044 section 4.2 requires for the ULPDU as framed, (4 - (ULPDU_Length + 2) mod 4) mod 4, where the PAD on the wire has another length; absent otherwise',
  ),
  crc: f(
    'iwarp_mpa.crc',
    'CRC',
    'uint',
    'CRC field as received, as Wireshark shows it: the four wire octets read most significant first (33 9b 50 b3 is 0x339b50b3)',
    { base: 'hex' },
  ),
  crcCheck: f(
    'iwarp_mpa.crc_check',
    'CRC check',
    'uint',
    'CRC computed over the FPDU, in the same form: equal to iwarp_mpa.crc when the CRC is good',
    { base: 'hex' },
  ),
  crcStatus: f(
    'iwarp_mpa.crc_status',
    'CRC status',
    'string',
    '"good", "bad", "byte-swapped", "unchecked" (CRC not negotiated) or "not-captured" (octets of the FPDU cut by the capture\'s snaplen)',
  ),
  markerRes: f('iwarp_mpa.marker_res', 'Reserved', 'uint', 'Marker: Reserved', { base: 'hex', width: 16 }),
  markerFpduptr: f('iwarp_mpa.marker_fpduptr', 'FPDU back pointer', 'uint', 'Marker: FPDU Pointer', { width: 16 }),
  markerExpected: f(
    'iwarp_mpa.marker_fpduptr_expected',
    'Expected FPDU back pointer',
    'uint',
    'FPDUPTR the framing implies',
    { width: 16 },
  ),
  markerSeq: f(
    'iwarp_mpa.marker_seq',
    'Marker sequence number',
    'uint',
    "Absolute TCP sequence number of the marker's first octet",
  ),
  markerCount: f('iwarp_mpa.markers', 'Markers', 'uint', 'Markers inside this FPDU'),
  fpduSeq: f('iwarp_mpa.seq', 'FPDU sequence number', 'uint', 'Absolute TCP sequence number of the ULPDU_Length field'),
  senderMistake: f(
    'iwarp_mpa.sender_mistake',
    'Sender mistake',
    'string',
    'Framed under a diagnosed sender mistake that changes this FPDU (the rule id, e.g. mpa.pad-miscomputed)',
  ),
  afterError: f(
    'iwarp_mpa.after_error',
    'After error',
    'bool',
    'An earlier MPA error on this half connection: a real receiver would have stopped delivering',
  ),
} as const satisfies Record<string, FieldDef>;

export const MPA_FIELD_LIST: readonly FieldDef[] = Object.values(MPA_FIELDS);

/**
 * The CRC field as Wireshark shows and filters it (packet-iwarp-mpa.c reads it with
 * tvb_get_ntohl): the four wire octets read most significant first. The framer keeps the CRC32c
 * value itself (RFC 5044 §4.4: sent least significant octet first, so the wire octets read
 * least significant first); every text, filter value and export shows this form instead, for a
 * received CRC (crcWire) and a computed one (crcComputed) alike, so a good CRC shows the same
 * number twice and a value copied from Wireshark filters here.
 */
export function crcAsShown(crc32c: number): number {
  return byteSwap32(crc32c);
}

/** "0x339b50b3": crcAsShown in hex, eight digits. */
export function crcHex(crc32c: number): string {
  return `0x${crcAsShown(crc32c).toString(16).padStart(8, '0')}`;
}
