/**
 * What the MPA layer hands to the DDP/RDMAP layer for each framed FPDU: the ULPDU with markers
 * removed (its first octets only, enough for every DDP/RDMAP header), and where it came from.
 */

/** How many leading ULPDU octets (markers removed) MPA keeps for the layer above. */
export const ULPDU_HEADER_BYTES = 96;

export interface Ulpdu {
  flow: number;
  /** 0 = client to server, 1 = server to client. */
  dir: 0 | 1;
  /** "ADDR:PORT" of the sender. */
  from: string;
  /** Absolute TCP sequence number of the FPDU's ULPDU_Length field. */
  seq: number;
  /** ULPDU_Length. */
  length: number;
  /** The first min(length, ULPDU_HEADER_BYTES) ULPDU octets, markers removed (a copy the receiver may keep). */
  head: Uint8Array;
  /**
   * For a ULPDU longer than `head`, when the layer above asked for it (UpperLayer.bodyBytes for
   * untagged ULPDUs, taggedBytes for tagged ones): its first min(length, that bound) octets, markers
   * removed. A view valid only during the call.
   */
  body?: Uint8Array | null;
  /** Frames that carried the FPDU, ascending. */
  frames: number[];
  /** CRC verdict: 'good', 'bad' (mismatch), 'unchecked' (CRC not negotiated). */
  crc: 'good' | 'bad' | 'unchecked';
  /** True when an earlier MPA error on this half connection means a real receiver would have stopped delivering. */
  afterError: boolean;
  /**
   * Octets of the FPDU the capture did not keep (a snaplen cut MPA framed across): `head` and `body`
   * then end at the first missing octet. Absent when all were captured.
   */
  notCaptured?: number;
}

/** MPA facts the DDP/RDMAP layer needs, fixed once the startup frames are seen (or inferred). */
export interface MpaContext {
  /** Startup Rev of the exchange (0, 1, 2; null when the startup was not captured). */
  rev: number | null;
  /** Direction index (0/1) of the Initiator, null when unknown. */
  initiatorDir: 0 | 1 | null;
  /** RFC 6581 peer-to-peer mode negotiated (A bit). */
  p2p: boolean;
  /** RTR type the Responder chose (from the Reply), null when none. */
  rtr: 'send' | 'write' | 'read' | null;
  /** RFC 6581 IRD/ORD from the Request and Reply, null when not carried. */
  requestIrd: number | null;
  requestOrd: number | null;
  replyIrd: number | null;
  replyOrd: number | null;
}
