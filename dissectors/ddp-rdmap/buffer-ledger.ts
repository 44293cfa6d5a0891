/**
 * The buffer ledger of one connection, shared by every upper layer. An upper layer reduces each
 * buffer it advertises (SMB2 Buffer Descriptor V1, RPC-over-RDMA chunk segment, iSER STag and
 * base offset, NVMe keyed SGL) to one entry: (STag, base TO, length, the access the peer may make,
 * the request it belongs to, whether invalidation was asked) and retires the entries of a request
 * when it is answered. The RDMAP side checks every RDMA Write, every RDMA Read Request's Data
 * Source and every Send with Invalidate against the live entries (ULP-NOTES 3.5, 3.6).
 *
 * The ledger knows nothing of SMB, RPC or NVMe; the upper layers know nothing of how accesses are
 * matched. Bounded: at most `maxLive` live entries and `maxRetired` remembered retired STags per
 * connection; a connection that advertises without ever retiring is told once.
 */
import type { FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import type { Dir, ReadRequestMessage, ReadResponseMessage, SendMessage, WriteMessage } from './rdmap-message.js';

/** What the peer of the advertiser may do with the buffer. */
export type BufferAccess = 'remote-write' | 'remote-read';

export interface Advertisement {
  /** Direction that advertised the buffer (its owner); accesses come from the other direction. */
  readonly owner: Dir;
  readonly stag: number;
  readonly base: bigint;
  readonly length: number;
  readonly access: BufferAccess;
  /** Key of the request the buffer belongs to, in the upper layer's terms (MessageId, XID, CID, ITT). */
  readonly request: number | bigint | string;
  /** How findings name the request: "SMB2 READ MessageId 12". */
  readonly label: string;
  /** The owner asked for the buffer to be invalidated by the response (Send with Invalidate). */
  readonly invalidate: boolean;
  /** Where it was advertised. */
  readonly seq: number;
  readonly frames: readonly number[];
  /**
   * Octets from the base the upper layer wants handed up when they are placed (a structure it
   * reads: NVMe Identify data, Connect data): the RDMA Writes into the buffer, or the owner's Read
   * Responses carrying it, then bring their first octets (WriteMessage.data,
   * ReadResponseMessage.data). Absent or 0 for the bulk, whose octets are never copied.
   */
  readonly keep?: number;
}

/** A live entry, with what moved through it. */
export interface LedgerEntry extends Advertisement {
  readonly keep: number;
  /** Octets placed into (remote write) or read from (remote read) the buffer so far. */
  moved: number;
  /** Capture time of the first and last access; NaN until one is seen. */
  firstTime: number;
  lastTime: number;
  /** A Send with Invalidate invalidated the STag: it stays listed (for retire's byte totals), unusable. */
  invalidated: boolean;
  /** What retiring it means for later accesses ('invalidated' once invalidated): the entry is its own retired record. */
  why: RetiredStag['why'];
  /** Forgotten because more than maxLive entries were live: its accesses were not counted. */
  dropped: boolean;
}

interface RetiredStag {
  readonly why: 'response' | 'invalidated';
  readonly label: string;
  readonly seq: number;
}

/** Rule ids the ledger raises (declared in rules.ts with the other DDP/RDMAP rules). */
export const LEDGER_RULE = {
  outside: 'ulp.access-outside-buffer',
  notAdvertised: 'ulp.access-not-advertised',
  wrongAccess: 'ulp.access-wrong-direction',
  afterResponse: 'ulp.access-after-response',
  afterInvalidate: 'ulp.access-after-invalidate',
  invalidateUnknown: 'ulp.invalidate-unknown-stag',
  irdExceeded: 'ulp.ird-exceeded',
  capacity: 'ulp.ledger-capacity',
} as const;

export interface LedgerOptions {
  /** Live entries kept per connection (default 4096). */
  maxLive?: number;
  /** Retired STags remembered per connection, for accesses after retirement (default 1024). */
  maxRetired?: number;
}

/** Keys (owner, STag) as one number: STags are per-node, so each side has its own namespace. */
const keyOf = (owner: Dir, stag: number): number => owner * 0x1_0000_0000 + stag;

/** The direction an entry's data travels in: the peer's RDMA Writes, or the owner's Read Responses. */
const dataDir = (e: Advertisement): Dir => (e.access === 'remote-write' ? (e.owner === 0 ? 1 : 0) : e.owner);

/** Accesses to unknown STags remembered while the ledger is not strict. */
const MAX_UNMATCHED = 64;

const hexStag = (s: number): string => `0x${s.toString(16).padStart(8, '0')}`;

export class BufferLedger {
  private readonly live = new Map<number, LedgerEntry[]>();
  /**
   * The same live entries by owner and request, in advertising order: a response retires its
   * request's entries without walking every live one (a deep queue keeps thousands live).
   */
  private readonly byRequest: [
    Map<Advertisement['request'], LedgerEntry[]>,
    Map<Advertisement['request'], LedgerEntry[]>,
  ] = [new Map(), new Map()];
  private liveCount = 0;
  /**
   * Live entries with `keep`, by the direction their data travels in (an RDMA Write into a
   * remote-write buffer comes from the peer, a remote-read buffer's data from its owner's Read
   * Responses): while non-zero MPA keeps that direction's tagged octets (UlpHandoff.taggedBytes).
   */
  private readonly keepers: [number, number] = [0, 0];
  private readonly retired = new Map<number, RetiredStag>();
  private capacityTold = false;
  /**
   * True once an upper layer has seen the connection from its start: an access to an STag never
   * advertised is then an error. A capture that joined mid-connection cannot know older buffers.
   */
  strict = false;
  /** The capture lost octets of the connection (captureLoss): unplaced accesses are kept for late advertisements. */
  private lossSeen = false;
  /** Read Requests in flight from each direction, and the IRD its peer announced (null = unknown). */
  private readonly reads: [number, number] = [0, 0];
  private readonly peerIrd: [{ ird: number; source: string } | null, { ird: number; source: string } | null] = [
    null,
    null,
  ];
  private readonly maxLive: number;
  private readonly maxRetired: number;
  /**
   * Accesses to STags not known after a capture loss (bounded, oldest forgotten). MPA holds a
   * sender's FPDUs until framing is found again, so an advertisement may reach the ledger after
   * the accesses to it: it is credited with them when it comes.
   */
  private readonly unmatched: Array<{
    owner: Dir;
    stag: number;
    to: bigint;
    len: number;
    access: BufferAccess;
    time: number;
  }> = [];

  constructor(
    private readonly flow: number,
    private readonly sink: FindingSink,
    opts: LedgerOptions = {},
  ) {
    this.maxLive = opts.maxLive ?? 4096;
    this.maxRetired = opts.maxRetired ?? 1024;
  }

  /** True while a live entry wants the data that direction `dir` places or returns (Advertisement.keep). */
  keeping(dir: Dir): boolean {
    return this.keepers[dir] > 0;
  }

  /** The most octets a live entry of `owner`'s STag wants kept (0: none). */
  keepOf(owner: Dir, stag: number): number {
    const list = this.live.get(keyOf(owner, stag));
    let n = 0;
    if (list) for (const e of list) if (e.keep > n) n = e.keep;
    return n;
  }

  /** Live entries (for tests and summaries). */
  get size(): number {
    return this.liveCount;
  }

  /** Records a buffer the owner advertised. Beyond maxLive the oldest live entry is dropped (said once). */
  advertise(a: Advertisement): LedgerEntry {
    // Written out, not spread: one shape, built once per advertised buffer (a hot path).
    const e: LedgerEntry = {
      owner: a.owner,
      stag: a.stag,
      base: a.base,
      length: a.length,
      access: a.access,
      request: a.request,
      label: a.label,
      invalidate: a.invalidate,
      seq: a.seq,
      frames: a.frames,
      keep: a.keep ?? 0,
      moved: 0,
      firstTime: Number.NaN,
      lastTime: Number.NaN,
      invalidated: false,
      why: 'response',
      dropped: false,
    };
    const k = keyOf(a.owner, a.stag);
    this.retired.delete(k);
    const list = this.live.get(k);
    if (list) list.push(e);
    else this.live.set(k, [e]);
    const idx = this.byRequest[a.owner];
    const mine = idx.get(a.request);
    if (mine) mine.push(e);
    else idx.set(a.request, [e]);
    this.liveCount++;
    if (e.keep > 0) this.keepers[dataDir(e)]++;
    if (this.unmatched.length > 0) this.creditUnmatched(e);
    if (this.liveCount > this.maxLive) this.dropOldest(a);
    return e;
  }

  /** The live entries of a request (in advertising order). */
  entriesOf(request: Advertisement['request']): LedgerEntry[] {
    return [...(this.byRequest[0].get(request) ?? []), ...(this.byRequest[1].get(request) ?? [])];
  }

  /**
   * Retires every live entry of `request` (its response was sent) and returns them, with the
   * octets that moved through each, for the upper layer's byte-total check.
   */
  retire(owner: Dir, request: Advertisement['request'], why: RetiredStag['why'] = 'response'): LedgerEntry[] {
    const idx = this.byRequest[owner];
    const out = idx.get(request);
    if (out === undefined) return [];
    idx.delete(request);
    for (const e of out) {
      const k = keyOf(owner, e.stag);
      this.unlist(k, e);
      // The entry itself is remembered (no record allocated per response) unless told otherwise.
      this.remember(k, why === 'response' || e.invalidated ? e : { why, label: e.label, seq: e.seq });
    }
    return out;
  }

  /** Takes `e` off the live list of its STag (a handful of entries at most). */
  private unlist(k: number, e: LedgerEntry): void {
    const list = this.live.get(k);
    if (!list) return;
    const i = list.indexOf(e);
    if (i < 0) return;
    list.splice(i, 1);
    this.liveCount--;
    if (e.keep > 0) this.keepers[dataDir(e)]--;
    if (list.length === 0) this.live.delete(k);
  }

  /**
   * The capture lost octets of the connection: advertisements may be unseen, or seen after the
   * accesses to them (MPA holds a sender's FPDUs until framing is found again). Unknown STags are
   * no longer errors, and accesses to them are kept for a buffer advertised late.
   */
  captureLoss(): void {
    this.strict = false;
    this.lossSeen = true;
  }

  /** Sets the IRD the peer of `dir` announced outside RFC 6581 (e.g. MS-SMBD's private-data block). */
  setPeerIrd(dir: Dir, ird: number, source: string): void {
    this.peerIrd[dir] = { ird, source };
  }

  /** An RDMA Write from `m.dir`: it must land inside a buffer the other side advertised for remote write. */
  write(m: WriteMessage): LedgerEntry | null {
    return this.access(m, m.stag, m.to, m.length, 'remote-write', 'RDMA Write');
  }

  /** An RDMA Read Request from `m.dir`: its Data Source must lie inside a buffer advertised for remote read. */
  readRequest(m: ReadRequestMessage): LedgerEntry | null {
    const d = m.dir;
    this.reads[d]++;
    const ird = this.peerIrd[d];
    if (ird && this.reads[d] > ird.ird) {
      this.report(
        LEDGER_RULE.irdExceeded,
        m,
        `${this.reads[d]} RDMA Read Requests in flight, more than the IRD ${ird.ird} the peer announced in ${ird.source}`,
      );
    }
    return this.access(m, m.sourceStag, m.sourceTo, m.readSize, 'remote-read', 'RDMA Read Request (Data Source)');
  }

  /** The last segment of a Read Response: one Read fewer in flight from the requester. */
  readResponse(m: ReadResponseMessage): void {
    const requester: Dir = m.dir === 0 ? 1 : 0;
    if (this.reads[requester] > 0) this.reads[requester]--;
  }

  /**
   * A Send with Invalidate from `m.dir` invalidates an STag of the receiver: it must be one the
   * receiver advertised. Returns the entry it invalidated (still live until its request retires),
   * or null. The STag is remembered as invalidated.
   */
  sendInvalidate(m: SendMessage): LedgerEntry | null {
    if (m.invalidateStag === null) return null;
    const owner: Dir = m.dir === 0 ? 1 : 0;
    const k = keyOf(owner, m.invalidateStag);
    const e = this.live.get(k)?.find((x) => !x.invalidated) ?? null;
    if (e) {
      // Every entry of the STag is invalidated; they stay listed until their request retires them.
      for (const x of this.live.get(k)!) {
        x.invalidated = true;
        x.why = 'invalidated';
      }
      return e;
    }
    const gone = this.retired.get(k);
    if (gone?.why === 'invalidated' || this.live.has(k)) {
      this.report(
        LEDGER_RULE.invalidateUnknown,
        m,
        `Send with Invalidate of STag ${hexStag(m.invalidateStag)}, already invalidated (${gone?.label ?? this.live.get(k)![0]!.label})`,
      );
    } else if (!gone && this.strict) {
      this.report(
        LEDGER_RULE.invalidateUnknown,
        m,
        `Send with Invalidate of STag ${hexStag(m.invalidateStag)}, which the receiver never advertised`,
      );
    }
    if (!gone && !this.live.has(k))
      this.remember(k, { why: 'invalidated', label: 'no advertised request', seq: m.seq });
    return null;
  }

  private access(
    m: WriteMessage | ReadRequestMessage,
    stag: number,
    to: bigint,
    len: number,
    want: BufferAccess,
    what: string,
  ): LedgerEntry | null {
    const owner: Dir = m.dir === 0 ? 1 : 0;
    const k = keyOf(owner, stag);
    const list = this.live.get(k);
    if (!list) {
      const gone = this.retired.get(k);
      if (gone) {
        const rule = gone.why === 'invalidated' ? LEDGER_RULE.afterInvalidate : LEDGER_RULE.afterResponse;
        const when = gone.why === 'invalidated' ? 'was invalidated' : 'was released by the response to';
        this.report(rule, m, `${what} to STag ${hexStag(stag)} after it ${when} ${gone.label}`);
      } else if (this.strict) {
        this.report(LEDGER_RULE.notAdvertised, m, `${what} to STag ${hexStag(stag)}, which the peer never advertised`);
      } else if (this.lossSeen) {
        this.unmatched.push({ owner, stag, to, len, access: want, time: m.time });
        if (this.unmatched.length > MAX_UNMATCHED) this.unmatched.shift();
      }
      return null;
    }
    const end = to + BigInt(len);
    if (list.every((e) => e.invalidated)) {
      this.report(
        LEDGER_RULE.afterInvalidate,
        m,
        `${what} to STag ${hexStag(stag)} after it was invalidated (${list[0]!.label})`,
      );
      return null;
    }
    let inside: LedgerEntry | null = null;
    for (const e of list) {
      if (e.invalidated) continue;
      if (to >= e.base && end <= e.base + BigInt(e.length)) {
        inside = e;
        break;
      }
    }
    if (!inside) {
      const e = list[0]!;
      this.report(
        LEDGER_RULE.outside,
        m,
        `${what} of ${len} octets at STag ${hexStag(stag)} TO 0x${to.toString(16)} lies outside the buffer advertised by ${e.label} (TO 0x${e.base.toString(16)}, ${e.length} octets)`,
      );
      return null;
    }
    if (inside.access !== want) {
      this.report(
        LEDGER_RULE.wrongAccess,
        m,
        `${what} to STag ${hexStag(stag)}, advertised by ${inside.label} for ${inside.access === 'remote-write' ? 'RDMA Write' : 'RDMA Read'} only`,
      );
    }
    inside.moved += len;
    if (Number.isNaN(inside.firstTime)) inside.firstTime = m.time;
    inside.lastTime = m.time;
    return inside;
  }

  /** Accesses seen before this entry's advertisement (capture loss): counted as moved through it. */
  private creditUnmatched(e: LedgerEntry): void {
    const end = e.base + BigInt(e.length);
    let kept = 0;
    for (const u of this.unmatched) {
      if (
        u.owner === e.owner &&
        u.stag === e.stag &&
        u.access === e.access &&
        u.to >= e.base &&
        u.to + BigInt(u.len) <= end
      ) {
        e.moved += u.len;
        if (Number.isNaN(e.firstTime) || u.time < e.firstTime) e.firstTime = u.time;
        if (Number.isNaN(e.lastTime) || u.time > e.lastTime) e.lastTime = u.time;
      } else this.unmatched[kept++] = u;
    }
    this.unmatched.length = kept;
  }

  private remember(k: number, r: RetiredStag): void {
    this.retired.delete(k);
    this.retired.set(k, r);
    if (this.retired.size > this.maxRetired) this.retired.delete(this.retired.keys().next().value!);
  }

  private dropOldest(a: Advertisement): void {
    // Map order is insertion order of STags: drop the first STag's oldest entry.
    for (const [k, list] of this.live) {
      const e = list.shift()!;
      e.dropped = true;
      this.liveCount--;
      if (e.keep > 0) this.keepers[dataDir(e)]--;
      if (list.length === 0) this.live.delete(k);
      const idx = this.byRequest[e.owner];
      const mine = idx.get(e.request);
      if (mine) {
        const i = mine.indexOf(e);
        if (i >= 0) mine.splice(i, 1);
        if (mine.length === 0) idx.delete(e.request);
      }
      break;
    }
    // A forgotten STag reads as never advertised: unknown STags are no longer errors on this connection.
    this.strict = false;
    if (!this.capacityTold) {
      this.capacityTold = true;
      this.report(
        LEDGER_RULE.capacity,
        a,
        `more than ${this.maxLive} advertised buffers live at once; the oldest are forgotten (accesses to them are no longer checked)`,
      );
    }
  }

  private report(rule: string, at: { seq: number; frames: readonly number[]; from?: string }, message: string): void {
    const f: FindingInput = { flow: this.flow, from: at.from ?? null, frames: at.frames, seq: at.seq, message };
    this.sink.report(rule, f);
  }
}
