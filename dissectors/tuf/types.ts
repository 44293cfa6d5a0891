/**
 * Records and summaries of ULP Framing for TCP (draft-ietf-tsvwg-tcp-ulp-frame-00, "TUF"): what
 * the dissector hands to the outputs. One record per framing PDU (PDU alignment mode, §5) or per
 * PDU the markers delimit (marker mode, §6).
 */

export type TufMode = 'alignment' | 'markers';

/** One framing marker (§6): the Next PDU Offset twice, counted from the end of the marker. */
export interface TufMarker {
  /** Stream offset of the marker's first octet. */
  readonly offset: number;
  /** Absolute TCP sequence number of the marker's first octet. */
  readonly seq: number;
  /** First and second copy of Next PDU Offset (null: that copy fell in octets missing from the capture). */
  readonly npo: number | null;
  readonly npo2: number | null;
  /** The two octet pairs came in different TCP segments (normal: that is why there are two copies). */
  readonly split: boolean;
  /** Absolute sequence number the marker points at (end of marker + Next PDU Offset), null when unreadable. */
  readonly targetSeq: number | null;
}

export interface TufRecord {
  readonly kind: 'tuf';
  readonly mode: TufMode;
  readonly flow: number;
  readonly dir: 0 | 1;
  readonly from: string;
  readonly to: string;
  /** Frames that carried the record's octets. */
  readonly frames: number[];
  /** Absolute sequence number of the first octet (framing header; marker mode: leading marker or PDU). */
  readonly seq: number;
  /** Stream offset of the first octet. */
  readonly start: number;
  /** Octets on the wire: 8 + Length (alignment), the PDU with its markers (marker mode). */
  readonly wireSize: number;
  /** Alignment: the Length field (ULP PDUs only, §5). Markers: PDU octets without markers. */
  readonly length: number;
  /** Alignment: the Key field as 12 hex digits; null in marker mode. */
  readonly key: string | null;
  /** Alignment: the key is the one this direction uses (false: a second key, §5). */
  readonly keyOk: boolean;
  /** Alignment: the framing PDU was exactly one TCP segment that passes the receiver's test (§5.4). */
  readonly aligned: boolean | null;
  /** Alignment: TCP segments that carried octets of this framing PDU. */
  readonly segments: number;
  /** Marker mode: markers inside the record (a leading one first). */
  readonly markers: readonly TufMarker[];
  /** Stream offset of the PDU itself (after the framing header or a leading marker). */
  readonly pduStart: number;
  /** First octets of the framed ULP data (markers removed), for the detail view. */
  readonly head: Uint8Array;
}

export interface TufDirectionSummary {
  from: string;
  to: string;
  /** Alignment: the direction's key (12 hex digits), null when none was found. */
  key: string | null;
  /** Absolute seq of the first framing header (alignment) or first marker (markers); null: not framed. */
  start: number | null;
  framingPdus: number | null;
  alignedSegments: number | null;
  unalignedSegments: number | null;
  /** Marker mode: the period in octets. */
  interval: number | null;
  markers: number | null;
  pdus: number | null;
  /** Marker mode: markers split across two TCP segments (normal, §6). */
  splitMarkers: number | null;
}

export interface TufFlowSummary {
  mode: TufMode;
  detection: 'heuristic' | 'forced';
  directions: [TufDirectionSummary, TufDirectionSummary];
}

/** `--tuf`: framing forced on a flow (alignment when a key is given, markers when an interval is). */
export interface ForcedTuf {
  mode: TufMode;
  /** Per direction (client->server, server->client): the 48-bit key, or null to learn it. */
  key: [number | null, number | null];
  interval: number | null;
  /** Per direction: absolute seq of the first framing header or first marker, or null to find it. */
  start: [number | null, number | null];
}

/** The framing header (§5): 16-bit Length, 48-bit Key. */
export const HEADER_LEN = 8;
export const MARKER_LEN = 4;
/** Largest ULP PDU set a framing PDU may carry (§3: 2^16 - 8). */
export const MAX_LENGTH = 65528;

/** 48-bit key as 12 lowercase hex digits. */
export function keyHex(k: number): string {
  return k.toString(16).padStart(12, '0');
}
