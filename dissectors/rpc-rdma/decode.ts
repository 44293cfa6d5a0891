/**
 * RPC-over-RDMA version 1 transport header decoder (RFC 8166 §4.2, §4.3, §4.5): pure, XDR
 * big-endian, never throwing, bounded by the message.
 *
 * Layout (RFC 8166 XDR, checked against the RFC's own XDR code component):
 *   rdma_xid, rdma_vers, rdma_credit, rdma_proc            4 x uint32 (positions fixed for all versions)
 *   RDMA_MSG / RDMA_NOMSG: read list, write list, reply chunk (then, for RDMA_MSG, the RPC message)
 *   RDMA_MSGP ("not to be used"): rdma_align, rdma_thresh, then the three lists and the RPC message
 *   RDMA_DONE ("not to be used"): void
 *   RDMA_ERROR: errcode; ERR_VERS adds rdma_vers_low, rdma_vers_high
 * Read list: { 1, position, handle, length, offset(uint64) }* 0        (xdr_read_list, §4.3.1)
 * Write list: { 1, count, count x { handle, length, offset } }* 0      (xdr_write_list, §4.3.2)
 * Reply chunk: 0 | 1, count, count x segment                            (optional xdr_write_chunk, §4.3.3)
 *
 * A list that never ends, or a segment count larger than the octets left in the message, stops the
 * walk at the message end with a problem the dissector reports; octets not captured (snaplen) stop
 * it as "cut", which is not the sender's fault.
 */
import { PROC } from './names.js';

/** Fixed header length: four XDR words. */
export const FIXED_HEADER_LEN = 16;
/** Read segment in the list: discriminator + position + handle + length + offset. */
const READ_ENTRY_LEN = 24;
/** Plain segment: handle + length + offset. */
const SEGMENT_LEN = 16;
/**
 * Entries kept per list. A 64 KiB Send (the contract's payload bound) holds at most 2730 read
 * entries, so a list longer than this is hostile; the walk stops there.
 */
export const MAX_LIST_ENTRIES = 4096;

export interface RdmaSegment {
  readonly handle: number;
  readonly length: number;
  readonly offset: bigint;
  /** Offset of the segment in the Send payload. */
  readonly at: number;
}

export interface ReadSegment extends RdmaSegment {
  /** XDR position of the chunk data in the RPC message (0 = position-zero read chunk, PZRC). */
  readonly position: number;
}

export interface WriteChunk {
  /** Segment count as sent (may be larger than the segments decoded). */
  readonly count: number;
  readonly segments: readonly RdmaSegment[];
  readonly at: number;
}

/** Read segments grouped by position: one read chunk each (RFC 8166 §3.4.5). */
export interface ReadChunk {
  readonly position: number;
  readonly segments: readonly ReadSegment[];
  /** Sum of the segment lengths. */
  readonly length: number;
}

export type ProblemKind =
  /** Octets past the captured payload were needed (snaplen cut): not the sender's fault. */
  | 'cut'
  /** The header runs past the end of the message. */
  | 'overrun'
  /** A segment count claims more segments than the message has octets for. */
  | 'count'
  /** More list entries than MAX_LIST_ENTRIES. */
  | 'bound';

export interface HeaderProblem {
  readonly kind: ProblemKind;
  readonly at: number;
  readonly detail: string;
}

export interface RpcRdmaHeader {
  readonly xid: number;
  readonly vers: number;
  readonly credit: number;
  readonly proc: number;
  readonly align: number | null;
  readonly thresh: number | null;
  readonly reads: readonly ReadSegment[];
  readonly writes: readonly WriteChunk[];
  readonly reply: WriteChunk | null;
  readonly errcode: number | null;
  readonly versLow: number | null;
  readonly versHigh: number | null;
  /** True when the proc has chunk lists (MSG, NOMSG, MSGP) and vers is 1. */
  readonly hasLists: boolean;
  /** Offset after the chunk lists (where RDMA_MSG's RPC message starts); null when not reached. */
  readonly listsEnd: number | null;
  /** Why decoding stopped early, or null. */
  readonly problem: HeaderProblem | null;
}

class Reader {
  pos: number;
  problem: HeaderProblem | null = null;
  private readonly v: DataView;

  constructor(
    private readonly b: Uint8Array,
    /** Length of the whole message (captured or not). */
    private readonly total: number,
    pos: number,
  ) {
    this.v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    this.pos = pos;
  }

  /** True when `n` more octets can be read; otherwise records why not. */
  need(n: number, what: string): boolean {
    if (this.problem) return false;
    if (this.pos + n <= this.b.length) return true;
    const kind: ProblemKind = this.pos + n <= this.total ? 'cut' : 'overrun';
    this.problem = { kind, at: this.pos, detail: `${what} at offset ${this.pos} needs ${n} octets` };
    return false;
  }

  u32(): number {
    const x = this.v.getUint32(this.pos);
    this.pos += 4;
    return x;
  }

  u64(): bigint {
    const x = this.v.getBigUint64(this.pos);
    this.pos += 8;
    return x;
  }

  fail(kind: ProblemKind, detail: string): void {
    if (!this.problem) this.problem = { kind, at: this.pos, detail };
  }

  /** Octets of the message left from the current position (captured or not). */
  left(): number {
    return Math.max(0, this.total - this.pos);
  }
}

function segment(r: Reader): RdmaSegment {
  const at = r.pos;
  const handle = r.u32();
  const length = r.u32();
  return { handle, length, offset: r.u64(), at };
}

/** A counted array of segments (xdr_write_chunk); null when it could not be read whole. */
function writeChunk(r: Reader, what: string): WriteChunk | null {
  const at = r.pos;
  if (!r.need(4, `${what} segment count`)) return null;
  const count = r.u32();
  // A count the rest of the message cannot hold is a lie, whatever was captured (hostile input:
  // segment counts in the millions); Wireshark clamps the same way (get_write_chunk_size).
  if (count * SEGMENT_LEN > r.left()) {
    r.fail('count', `${what} claims ${count} segments, but only ${r.left()} octets of the message follow`);
    return { count, segments: [], at };
  }
  if (count > MAX_LIST_ENTRIES) {
    r.fail('bound', `${what} claims ${count} segments, more than the ${MAX_LIST_ENTRIES} decoded`);
    return { count, segments: [], at };
  }
  const segments: RdmaSegment[] = [];
  for (let i = 0; i < count; i++) {
    if (!r.need(SEGMENT_LEN, `${what} segment ${i + 1}`)) return { count, segments, at };
    segments.push(segment(r));
  }
  return { count, segments, at };
}

function readList(r: Reader, out: ReadSegment[]): boolean {
  for (;;) {
    if (!r.need(4, 'read list discriminator')) return false;
    if (r.u32() === 0) return true;
    if (out.length >= MAX_LIST_ENTRIES) {
      r.fail('bound', `read list longer than ${MAX_LIST_ENTRIES} segments`);
      return false;
    }
    if (!r.need(READ_ENTRY_LEN - 4, `read segment ${out.length + 1}`)) return false;
    const position = r.u32();
    const s = segment(r);
    out.push({ position, handle: s.handle, length: s.length, offset: s.offset, at: s.at });
  }
}

function writeList(r: Reader, out: WriteChunk[]): boolean {
  for (;;) {
    if (!r.need(4, 'write list discriminator')) return false;
    if (r.u32() === 0) return true;
    if (out.length >= MAX_LIST_ENTRIES) {
      r.fail('bound', `write list longer than ${MAX_LIST_ENTRIES} chunks`);
      return false;
    }
    const c = writeChunk(r, `write chunk ${out.length + 1}`);
    if (c) out.push(c);
    if (r.problem) return false;
  }
}

/**
 * Decodes the transport header of one Send payload. `b` holds the captured octets, `total` is the
 * message's length (b.length when nothing was cut). Null when fewer than 16 octets are present.
 */
export function decodeHeader(b: Uint8Array, total: number = b.length): RpcRdmaHeader | null {
  if (b.length < FIXED_HEADER_LEN) return null;
  const r = new Reader(b, Math.max(total, b.length), 0);
  const xid = r.u32();
  const vers = r.u32();
  const credit = r.u32();
  const proc = r.u32();
  let align: number | null = null;
  let thresh: number | null = null;
  let errcode: number | null = null;
  let versLow: number | null = null;
  let versHigh: number | null = null;
  const reads: ReadSegment[] = [];
  const writes: WriteChunk[] = [];
  let reply: WriteChunk | null = null;
  let listsEnd: number | null = null;
  // Only the fixed header's positions are fixed for all versions (RFC 8166 §4.2): the body of
  // another version is not version 1's, so it is left alone.
  const hasLists = vers === 1 && (proc === PROC.MSG || proc === PROC.NOMSG || proc === PROC.MSGP);
  if (hasLists) {
    let ok = true;
    if (proc === PROC.MSGP) {
      ok = r.need(8, 'RDMA_MSGP align and threshold');
      if (ok) {
        align = r.u32();
        thresh = r.u32();
      }
    }
    if (ok && readList(r, reads) && writeList(r, writes) && r.need(4, 'reply chunk discriminator')) {
      if (r.u32() !== 0) reply = writeChunk(r, 'reply chunk');
      if (!r.problem) listsEnd = r.pos;
    }
  } else if (vers === 1 && proc === PROC.ERROR) {
    if (r.need(4, 'RDMA_ERROR error code')) {
      errcode = r.u32();
      if (errcode === 1 && r.need(8, 'ERR_VERS version range')) {
        versLow = r.u32();
        versHigh = r.u32();
      }
    }
  }
  return {
    xid,
    vers,
    credit,
    proc,
    align,
    thresh,
    reads,
    writes,
    reply,
    errcode,
    versLow,
    versHigh,
    hasLists,
    listsEnd,
    problem: r.problem,
  };
}

/** The read list as read chunks: segments grouped by position, in order of first appearance. */
export function readChunks(reads: readonly ReadSegment[]): ReadChunk[] {
  const by = new Map<number, ReadSegment[]>();
  for (const s of reads) {
    const l = by.get(s.position);
    if (l) l.push(s);
    else by.set(s.position, [s]);
  }
  return [...by].map(([position, segments]) => ({
    position,
    segments,
    length: segments.reduce((n, s) => n + s.length, 0),
  }));
}

/** The XID of the RPC message after the chunk lists, or null when not captured or not reached. */
export function rpcXidAfterLists(b: Uint8Array, h: RpcRdmaHeader): number | null {
  if (h.listsEnd === null || h.listsEnd + 4 > b.length) return null;
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(h.listsEnd);
}

/**
 * Where rdma_xid appears as a word after the fixed header, within the first 512 octets: when the
 * RPC XID is not right after the chunk lists, this shows where the RPC message really starts
 * (the chimera-nas PR #641 symptom: offset 68 instead of 48). Null when nowhere.
 */
export function findXid(b: Uint8Array, xid: number, skip: number): number | null {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const end = Math.min(b.length - 4, FIXED_HEADER_LEN + 512);
  for (let at = FIXED_HEADER_LEN; at <= end; at += 4) if (at !== skip && v.getUint32(at) === xid) return at;
  return null;
}
