import { field as f, type FieldDef } from '../../src/vocabulary/fields.js';

/**
 * TUF fields (draft-ietf-tsvwg-tcp-ulp-frame-00). Wireshark has no dissector for it, so the names
 * are ours, in a `tuf.*` namespace shaped like Wireshark's.
 */

export const TUF_FIELDS = {
  proto: f('tuf', 'ULP Framing for TCP', 'protocol', 'TUF: draft-ietf-tsvwg-tcp-ulp-frame-00'),
  mode: f('tuf.mode', 'Mode', 'string', '"alignment" (PDU alignment mode, §5) or "markers" (marker mode, §6)'),
  seq: f('tuf.seq', 'Sequence number', 'uint', "Absolute TCP sequence number of the record's first octet"),
  length: f(
    'tuf.length',
    'Length',
    'uint',
    'Alignment mode: Length of the framed ULP PDUs, not the 8-octet header (§5)',
    { width: 16 },
  ),
  key: f('tuf.key', 'Key', 'bytes', 'Alignment mode: the 48-bit framing key (§5)'),
  keyOk: f('tuf.key_ok', "Key is the direction's key", 'bool', 'False for a framing PDU sent with a second key (§5)'),
  aligned: f(
    'tuf.aligned',
    'Aligned',
    'bool',
    "The framing PDU was exactly one TCP segment passing the receiver's test (§5.4)",
  ),
  segments: f('tuf.segments', 'Segments', 'uint', 'TCP segments that carried octets of the framing PDU'),
  ulpData: f('tuf.ulp_pdus', 'ULP PDUs', 'bytes', 'The framed ULP PDU octets (first octets shown)'),
  pduLength: f(
    'tuf.pdu_length',
    'PDU length',
    'uint',
    'Marker mode: octets of the PDU the markers delimit, markers excluded (may hold several ULP PDUs)',
  ),
  pduSeq: f('tuf.pdu_seq', 'PDU sequence number', 'uint', "Absolute sequence number of the PDU's first octet"),
  marker: f('tuf.marker', 'Marker', 'protocol', 'Marker mode: a framing marker (§6)'),
  markerSeq: f(
    'tuf.marker.seq',
    'Marker sequence number',
    'uint',
    "Absolute TCP sequence number of the marker's first octet",
  ),
  markerNpo: f(
    'tuf.marker.npo',
    'Next PDU Offset',
    'uint',
    'First copy: octets from the end of the marker to the next PDU (§6)',
    { width: 16 },
  ),
  markerNpo2: f('tuf.marker.npo2', 'Next PDU Offset (copy)', 'uint', 'Second copy of Next PDU Offset (§6)', {
    width: 16,
  }),
  markerTarget: f('tuf.marker.target', 'Next PDU at', 'uint', 'Absolute sequence number the marker points at'),
  markerSplit: f(
    'tuf.marker.split',
    'Split across segments',
    'bool',
    "The marker's octets came in two TCP segments (normal, §6)",
  ),
  markerCount: f('tuf.markers', 'Markers', 'uint', 'Markers in this record'),
} as const satisfies Record<string, FieldDef>;

export const TUF_FIELD_LIST: readonly FieldDef[] = Object.values(TUF_FIELDS);
