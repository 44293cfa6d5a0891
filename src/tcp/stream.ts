/**
 * The stream-consumer contract: what a protocol dissector sees of one TCP direction.
 * The reassembler knows nothing of what the stream carries (cf. gopacket's reassembly).
 */

/** In-order bytes of one direction, from one frame. */
export interface StreamChunk {
  /** Offset of data[0] in this direction's byte stream (0 = first payload octet, ISN+1). */
  offset: number;
  /** Absolute TCP sequence number of data[0] (mod 2^32). */
  seq: number;
  /** The bytes (zero-copy view, valid only during the call). */
  data: Uint8Array;
  /** Frame that carried these bytes. */
  frame: number;
  /** True when this chunk starts where the carrying segment's payload starts (not trimmed). */
  segmentStart: boolean;
  /** True when this chunk ends where the carrying segment's payload ends. */
  segmentEnd: boolean;
}

export type EndReason = 'fin' | 'rst' | 'eof';

export interface DirectionConsumer {
  data(chunk: StreamChunk): void;
  /**
   * Bytes [seq, seq+length) will never arrive (capture loss or a buffer cap). `cut`: they are the tail
   * of a segment the capture's snaplen cut (sent, and exactly this many: the stream goes on right
   * after them), already summarized by the TCP layer (tcp.snaplen-cut).
   */
  gap(offset: number, seq: number, length: number, cut?: boolean): void;
  /** The direction ended: FIN or RST (frame given) or end of capture. */
  end(reason: EndReason, frame: number | null): void;
}

/** Per-direction facts a consumer may need (the MPA layer needs the EMSS). */
export interface DirectionInfo {
  /** "ADDR:PORT" of the sender. */
  from: string;
  to: string;
  /** MSS option from this sender's SYN, if seen. */
  mss: number | null;
  /** Absolute sequence number of stream offset 0. */
  baseSeq: number;
  /** This direction's SYN was seen: stream offset 0 is the first octet the sender ever sent. */
  synSeen?: boolean;
}

/** What the reassembler tells a consumer about the flow it serves. */
export interface FlowHandle {
  readonly id: number;
  readonly client: string;
  readonly server: string;
  /** Facts about one direction; baseSeq is meaningful once the direction carried a SYN or data. */
  info(dir: 0 | 1): DirectionInfo;
  /**
   * The same facts as a live view, without allocating (optional). Once the direction has delivered
   * data they no longer change, so a consumer may keep the view instead of a copy of info(): with
   * 100,000 open flows the copies cost 13 MB.
   */
  view?(dir: 0 | 1): DirectionInfo;
  /** Frame of the first RST seen in either direction, else null (a RST aborts both directions, RFC 9293 §3.5.3). */
  readonly resetFrame?: number | null;
}

export interface FlowConsumer {
  /** dir 0 = client to server, 1 = server to client. */
  readonly directions: readonly [DirectionConsumer, DirectionConsumer];
}
