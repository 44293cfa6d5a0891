/**
 * What the reassembler reports of every flow once it is done (or let go): per direction octets,
 * segments, retransmissions, gaps, MSS and how it closed.
 */
import type { Dir, Flow } from './direction.js';

export interface TcpDirectionStats {
  from: string;
  to: string;
  /**
   * Distinct payload octets seen (delivered, or still held): retransmitted copies count once; octets in
   * gaps, after the FIN, or arriving only after their range was declared a gap are not counted.
   */
  bytes: number;
  /** Every TCP segment sent in this direction (pure ACKs, SYN, FIN, RST included). */
  segments: number;
  /**
   * Segments that repeated sequence space already seen in this direction: at least one payload octet
   * already delivered or held (or lying in a range already declared a gap), or a repeated SYN or FIN.
   * Keep-alives (at most one octet just below the next expected one) are not counted.
   */
  retransmissions: number;
  /** Ranges never captured, in stream order; adjacent gaps are merged. At most MAX_GAPS entries. */
  gaps: { seq: number; length: number }[];
  /** Gaps beyond MAX_GAPS, counted but not listed. */
  gapsOmitted: number;
  mss: number | null;
  closed: 'fin' | 'rst' | null;
  /** Segments whose tail the capture's snaplen cut, and the octets cut (absent when none). */
  snaplenCut?: { segments: number; octets: number };
  /**
   * What Wireshark's relative sequence numbers of this direction count from (relative = seq minus
   * this, mod 2^32): the ISN when the SYN was seen, else one before the first octet; null when the
   * direction sent nothing.
   */
  seqRelativeBase: number | null;
}

export interface TcpFlowStats {
  id: number;
  client: string;
  server: string;
  firstFrame: number;
  lastFrame: number;
  directions: [TcpDirectionStats, TcpDirectionStats];
}

/** Gaps listed per direction in the stats; the rest are only counted. */
export const MAX_GAPS = 10000;

/** A flow's statistics (a new object: the caller may keep it). */
export function flowStats(fl: Flow): TcpFlowStats {
  return {
    id: fl.id,
    client: fl.client,
    server: fl.server,
    firstFrame: fl.firstFrame,
    lastFrame: fl.lastFrame,
    directions: [stats(fl.dirs[0]), stats(fl.dirs[1])],
  };
}

function stats(d: Dir): TcpDirectionStats {
  return {
    from: d.from,
    to: d.to,
    bytes: d.delivered + d.heldData,
    segments: d.segments,
    retransmissions: d.retransmissions,
    gaps: d.gapLog === null ? [] : d.gapLog.list.map((g) => ({ seq: g.seq, length: g.length })),
    gapsOmitted: d.gapLog === null ? 0 : d.gapLog.omitted,
    mss: d.mss,
    closed: d.closed,
    ...(d.gapLog !== null && d.gapLog.snapCuts > 0
      ? { snaplenCut: { segments: d.gapLog.snapCuts, octets: d.gapLog.snapOctets } }
      : {}),
    seqRelativeBase: d.based ? (d.baseSeq - 1) >>> 0 : null,
  };
}
