/**
 * Contracts of the MPA layer: what it hands the layer above, what it reports, its options and
 * summaries (report-schema MpaFlow / MpaDirection). No behaviour. Imports nothing of the flow, so
 * every file of the layer can import it (the options naming MpaFlow itself are in mpa-flow.ts).
 */
import type { EndReason } from '../../src/tcp/stream.js';
import type { FramedFpdu } from './framer.js';
import type { LockBudget } from './lock-on.js';
import type { StartupRecord } from './startup.js';
import type { Ulpdu } from './ulpdu.js';

/** What the layer above MPA (DDP/RDMAP) offers; MPA knows nothing more of it. */
/** What MPA says of its directions to the layer above: octets held, not yet framed and handed on. */
export interface HeldQuery {
  /**
   * The frame of the first octet direction `dir` holds without having handed it on (hunting for
   * framing, diagnosing a break, awaiting the negotiation), or null when it holds none. Those
   * octets reach the layer above later than the peer's octets captured after them.
   */
  heldFrame(dir: 0 | 1): number | null;
}

export interface UpperLayer {
  ulpdu(u: Ulpdu): unknown;
  /** Called once when the layer is created: how to ask MPA what a direction holds back. */
  attachHeld?(q: HeldQuery): void;
  /** The direction ended; `frame` is the FIN or RST (for an abort: the RST that ended the connection). */
  end(dir: 0 | 1, reason: EndReason, frame?: number | null): void;
  noteMpaError?(dir: 0 | 1, code: number, seq: number, frames: number[]): void;
  /** Octets of this direction missing from the capture: sequence jumps above are explained by it. */
  noteCaptureGap?(dir: 0 | 1, seq: number, length: number): void;
  /**
   * Octets of each untagged ULPDU of `dir` the layer above wants whole (Ulpdu.body), 0 for none:
   * read after every FPDU, so it can drop to 0 once no upper layer is decoded on the connection.
   */
  bodyBytes?(dir: 0 | 1): number;
  /**
   * Octets of each tagged ULPDU of `dir` the layer above wants (Ulpdu.body), 0 for none: read after
   * every FPDU; non-zero only while an upper layer waits for a structure placed by RDMA (an NVMe
   * Identify, Connect data read by the controller), so the bulk is never copied.
   */
  taggedBytes?(dir: 0 | 1): number;
}

/** One framed FPDU as the MPA layer reports it (the analyzer's record; outputs format it). */
export interface FpduRecord extends FramedFpdu {
  kind: 'fpdu';
  flow: number;
  dir: 0 | 1;
  from: string;
  to: string;
  afterError: boolean;
  /** Record of the layer above for this ULPDU (DDP/RDMAP), when there is one. */
  upper: unknown;
}

export interface MpaOutputs {
  startup?(r: StartupRecord): void;
  fpdu?(r: FpduRecord): void;
}

/** `--mpa`: force MPA on a flow the heuristic cannot lock on to. */
export interface ForcedMpa {
  /** Markers per direction (0 = client to server). */
  markers: [boolean, boolean];
  crc: boolean;
  /** Absolute SeqStart per direction, when known. */
  seqStart: [number | null, number | null];
  /**
   * `start=`: MPA was enabled without startup frames (pre-standard): a zero marker leads the first
   * FPDU when markers are on, FPDUPTR counts from the FPDU's first octet (draft-00 §7.1), and octets
   * at the start that are not MPA are an enablement error (seed 002 §8).
   */
  prestandard?: boolean;
  /** `start=SEQ` without a direction: the direction whose octets hold SEQ. */
  startAny?: number | null;
}

/** The options of MpaFlow that the framing steps read (MpaFlowOptions adds the owner's callbacks). */
export interface MpaFramingOptions {
  forced?: ForcedMpa | null;
  /**
   * Octets of each untagged ULPDU kept whole for the layer above until it says how many it wants
   * (UpperLayer.bodyBytes): an upper layer is recognised from a connection's first Send. Default 0.
   */
  bodyBytes?: number;
  /** Held-bytes cap per direction while hunting or waiting for negotiation (default 256 KiB). */
  holdBytes?: number;
  /** Bytes a direction without startup frames is searched for mid-stream FPDUs (default 4 MiB). */
  huntBudget?: number;
  /** Work allowed to the FPDU boundary search per direction (lock-on.ts DEFAULT_LOCK_BUDGET). */
  lockBudget?: LockBudget;
}

/** Per-direction MPA summary (report-schema MpaDirection). */
export interface MpaDirectionSummary {
  from: string;
  to: string;
  markers: boolean | null;
  seqStart: number | null;
  /** False when only SeqStart mod 512 is known (mid-stream lock-on). */
  seqStartExact: boolean;
  fpdus: number;
  ulpduBytes: number;
  crcErrors: number;
  /** FPDUs whose CRC could not be checked: octets of them cut by the capture's snaplen (absent: none). */
  crcNotCaptured?: number;
  markerErrors: number;
  markerCount: number;
  afterError: number;
  bytesSkipped: number;
  /** Rule id of the sender mistake diagnosed in this direction (the last one, if several), else null. */
  senderMistake: string | null;
  /** FPDUs framed under a diagnosed sender mistake whose framing it changed. */
  senderMistakeFpdus: number;
  alignment: { segments: number; fpduAligned: number; headerAligned: number; spanning: number };
}

export interface MpaFlowSummary {
  /** 'prestandard': MPA enabled without startup frames at a point of a captured stream (enablement.ts). */
  detection: 'startup' | 'heuristic' | 'forced' | 'prestandard';
  initiator: string | null;
  responder: string | null;
  request: StartupRecord | null;
  reply: StartupRecord | null;
  crc: boolean | null;
  rejected: boolean;
  directions: [MpaDirectionSummary, MpaDirectionSummary];
  /** RFC 5044 Appendix C outcome; present only when a Rev 0 frame took part. */
  rdmac?: RdmacInterop;
  /** Where each direction enabled MPA without startup frames; present only when one did. */
  enablement?: [EnablementPoint | null, EnablementPoint | null];
}

/**
 * The Appendix C outcome of a startup in which a Rev 0 frame took part (report-schema addition
 * `Flow.mpa.rdmac`). `markers` is the negotiated receive Marker state X/Y of the Initiator and the
 * Responder, as the figures write it.
 */
export interface RdmacInterop {
  /** Figure 15 (RDMAC and a non-permissive IETF RNIC) or 16 (RDMAC and a permissive one); null while undecided. */
  figure: 15 | 16 | null;
  initiator: 'rdmac' | 'ietf-permissive' | 'ietf-non-permissive' | 'ietf';
  responder: 'rdmac' | 'rdmac-or-ietf-permissive' | 'ietf-non-permissive';
  /** DDP/RDMAP version the outcome runs (null: the connection must close). */
  version: 0 | null;
  /** "1/1": Initiator receives markers / Responder receives markers (null when it must close). */
  markers: string | null;
  /** The combination cannot interoperate: the IETF RNIC must close the connection. */
  mustClose: boolean;
  /** Still open while the Initiator's answer to a Rev 0 Reply has not been seen. */
  decided: boolean;
}

/** Where a direction enabled MPA without startup frames (report addition `Flow.mpa.enablement[]`). */
export interface EnablementPoint {
  seq: number;
  frame: number;
  /** The first octets are a zero marker (markers on). */
  zeroMarker: boolean;
  /** The rule the direction's markers follow: counted from the FPDU's first octet (draft-00) or from ULPDU_Length (RFC 5044). */
  fpduptrRule: 'draft-00' | 'rfc5044' | null;
}

/**
 * Octets a direction sent before its MPA startup frame: an upper layer's streaming-mode phase
 * (RFC 5046 §5.1: the iSCSI login over plain TCP before the transition to MPA), kept for the layer
 * above, bounded.
 */
export interface LeadingOctets {
  /** The first octets (at most LEADING_KEEP). */
  readonly bytes: Uint8Array;
  /** Octets the direction sent before the startup frame (may exceed bytes.length). */
  readonly length: number;
  /** Absolute TCP sequence number of bytes[0]. */
  readonly seq: number;
  /** The stream's first octet was captured: bytes[0] is the connection's first octet. */
  readonly fromStart: boolean;
  /** Flattened pairs (offset in bytes, frame) where each frame's octets begin. */
  readonly frames: readonly number[];
}

/** Octets before the startup frame kept for the layer above (a login that never ends is cut here). */
export const LEADING_KEEP = 64 * 1024;
