/**
 * SMB2 over SMB Direct, per connection: requests paired with responses by MessageId (MS-SMB2
 * 3.2.5.1, 3.3.4.1), the Buffer Descriptors of READ and WRITE requests advertised to the buffer
 * ledger and retired on the response (MS-SMB2 3.2.5.11, 3.2.5.12: the client deregisters on the
 * response), the byte totals the ledger saw checked against DataRemaining / the WRITE length, and
 * the remote-invalidation contract of SMB2_CHANNEL_RDMA_V1_INVALIDATE.
 */
import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { BufferLedger, LedgerEntry } from '../ddp-rdmap/buffer-ledger.js';
import { RequestTracker, requestTiming, type TrackedRequest } from '../ddp-rdmap/request-tracker.js';
import type {
  Dir,
  ReadRequestMessage,
  ReadResponseMessage,
  RequestTiming,
  SendMessage,
  WriteMessage,
} from '../ddp-rdmap/ulp-contract.js';
import { R } from './rules.js';
import {
  CHANNEL,
  CMD,
  MESSAGE_ID_UNSOLICITED,
  SMB2_FLAG,
  STATUS,
  commandName,
  type Smb2Command,
  type Smb2Decoded,
} from './smb2.js';
import type { At, Delivered } from './transport.js';

export interface Smb2Request extends TrackedRequest {
  readonly messageId: bigint;
  readonly cmd: number;
  readonly owner: Dir;
  /** Sender of the request ("ADDR:PORT"), for findings about it. */
  readonly from: string;
  /** Channel of a READ/WRITE (null for other commands). */
  readonly channel: number | null;
  readonly entries: readonly LedgerEntry[];
  readonly tokens: ReadonlySet<number>;
  readonly invalidate: boolean;
  readonly transform: boolean;
  /** READ: Length; WRITE: the octets to read over the channel (RemainingBytes when Length is 0). */
  readonly expected: number;
  /** Every Buffer Descriptor was decoded and every RDMA access to them was captured whole. */
  complete: boolean;
  asyncId: bigint | null;
}

/** What the tree and Info need about one SMB2 command of a message. */
export interface CommandView {
  readonly cmd: Smb2Command;
  readonly request?: Smb2Request;
  readonly interim?: boolean;
  readonly notification?: boolean;
  readonly timeUs?: number;
  readonly moved?: number;
}

const MAX_ANSWERED = 4096;
const MAX_STAG_OWNERS = 8192;
const MAX_UNANSWERED_TOLD = 64;

export class Smb2State {
  private readonly tracker: RequestTracker<bigint, Smb2Request>;
  private readonly answered = new Set<bigint>();
  /** Client STag (Token) -> MessageId of the outstanding request that advertised it. */
  private readonly stagOwner = new Map<number, bigint>();
  /** STags seen in Sends with Invalidate (bounded). */
  private readonly invalidated = new Set<number>();
  private readonly timing: (t: RequestTiming) => void;

  constructor(
    private readonly flow: number,
    private readonly sink: FindingSink,
    private readonly ledger: BufferLedger,
    timing: (t: RequestTiming) => void,
    private readonly uncaptured: (what: string, at: At) => void,
  ) {
    this.timing = timing;
    this.tracker = new RequestTracker<bigint, Smb2Request>(timing);
  }

  private report(rule: string, at: At, message: string): void {
    this.sink.report(rule, { flow: this.flow, from: at.from, frames: at.frames, seq: at.seq, message });
  }

  /** A Send with Invalidate was seen (in any message). */
  noteInvalidate(stag: number): void {
    this.invalidated.add(stag);
    if (this.invalidated.size > MAX_ANSWERED) this.invalidated.delete(this.invalidated.values().next().value!);
  }

  /**
   * One reassembled SMB2 message, completed by Send `m`. `followed`: the connection was seen from
   * its start without gaps, so a response without a request is an error rather than history.
   */
  message(d: Smb2Decoded, del: Delivered, m: SendMessage, followed: boolean): CommandView[] {
    const views: CommandView[] = [];
    const answeredHere: Smb2Request[] = [];
    for (const p of d.headerProblems) this.report(R.header, m, p);
    for (const p of d.compoundProblems) this.report(R.compound, m, p);
    for (const c of d.commands) {
      if (c.bodyProblem) this.report(R.body, m, `${c.bodyProblem} (MessageId ${c.header.messageId})`);
      if ((c.header.flags & SMB2_FLAG.SERVER_TO_REDIR) === 0) views.push(this.request(c, m));
      else views.push(this.response(c, m, followed, answeredHere));
    }
    this.checkInvalidate(del.invalidateStags, answeredHere, m);
    return views;
  }

  private request(c: Smb2Command, m: SendMessage): CommandView {
    const h = c.header;
    // MS-SMB2 3.3.5.16: CANCEL is never answered; it names the request to cancel.
    if (h.command === CMD.CANCEL) return { cmd: c };
    const id = h.messageId;
    // Built only when a finding or a ledger entry needs it (a MessageId is a BigInt: costly to print).
    const label = (): string => `SMB2 ${commandName(h.command)} MessageId ${id}`;
    const before = this.tracker.get(id);
    if (before) {
      this.report(R.reused, m, `${label()} reuses the MessageId of the ${before.command} request still outstanding`);
      this.ledger.retire(before.owner, id);
    }
    let channel: number | null = null;
    const entries: LedgerEntry[] = [];
    const tokens = new Set<number>();
    let invalidate = false;
    let transform = false;
    let expected = 0;
    let complete = true;
    const b = c.body;
    if (b && (b.kind === 'read-request' || b.kind === 'write-request')) {
      channel = b.channel;
      expected = b.kind === 'read-request' || b.length !== 0 ? b.length : b.remainingBytes;
      if (channel > CHANNEL.RDMA_TRANSFORM)
        this.report(R.channelUnknown, m, `${label()}: Channel 0x${channel.toString(16)}`);
      if (channel === CHANNEL.NONE && (b.channelInfoOffset !== 0 || b.channelInfoLength !== 0))
        this.report(
          R.noneInfo,
          m,
          `${label()}: Channel NONE with channel information offset ${b.channelInfoOffset}, length ${b.channelInfoLength}`,
        );
      const ci = b.channelInfo;
      if (ci) {
        if (ci.problem) this.report(R.channelInfo, m, `${label()}: ${ci.problem}`);
        if (ci.missing || ci.descriptors.length < ci.declared) complete = false;
        if (ci.missing) this.uncaptured('Buffer Descriptor lists (RDMA accesses to them are not checked)', m);
        transform = ci.transform !== null;
        invalidate = ci.effectiveChannel === CHANNEL.RDMA_V1_INVALIDATE;
        const access = b.kind === 'read-request' ? 'remote-write' : 'remote-read';
        const text = ci.descriptors.length > 0 ? label() : '';
        for (const desc of ci.descriptors) {
          entries.push(
            this.ledger.advertise({
              owner: m.dir,
              stag: desc.token,
              base: desc.offset,
              length: desc.length,
              access,
              request: id,
              label: text,
              invalidate,
              seq: m.seq,
              // The message's frames are its own (rdmap-message.ts), shared by what it advertised.
              frames: m.frames,
            }),
          );
          tokens.add(desc.token);
          this.stagOwner.delete(desc.token);
          this.stagOwner.set(desc.token, id);
          if (this.stagOwner.size > MAX_STAG_OWNERS) this.stagOwner.delete(this.stagOwner.keys().next().value!);
        }
      }
    } else if (h.command === CMD.READ || h.command === CMD.WRITE) {
      complete = false;
      if (!c.bodyProblem) this.uncaptured('READ/WRITE bodies (their Buffer Descriptors are unknown)', m);
    }
    const req: Smb2Request = {
      program: 'SMB2',
      command: commandName(h.command),
      code: h.command,
      queue: `flow ${this.flow}`,
      time: m.time,
      seq: m.seq,
      frames: m.frames,
      firstData: Number.NaN,
      lastData: Number.NaN,
      messageId: id,
      cmd: h.command,
      owner: m.dir,
      from: m.from,
      channel,
      entries,
      tokens,
      invalidate,
      transform,
      expected,
      complete,
      asyncId: null,
    };
    this.tracker.start(id, req);
    return { cmd: c, request: req };
  }

  private response(c: Smb2Command, m: SendMessage, followed: boolean, answeredHere: Smb2Request[]): CommandView {
    const h = c.header;
    const id = h.messageId;
    const label = (): string => `SMB2 ${commandName(h.command)} Response MessageId ${id}`;
    // Oplock and lease break notifications are unsolicited (MessageId 0xFFFFFFFFFFFFFFFF).
    if (h.command === CMD.OPLOCK_BREAK && id === MESSAGE_ID_UNSOLICITED) return { cmd: c, notification: true };
    // MS-SMB2 2.2.1.1: an interim response (ASYNC, STATUS_PENDING) precedes the final one.
    if ((h.flags & SMB2_FLAG.ASYNC_COMMAND) !== 0 && h.status === STATUS.PENDING) {
      const r = this.tracker.get(id);
      if (r) r.asyncId = h.asyncId;
      else if (followed) this.report(R.orphan, m, `${label()} (interim): no outstanding request has this MessageId`);
      return r ? { cmd: c, request: r, interim: true } : { cmd: c, interim: true };
    }
    const r = this.tracker.finish(id, m.time, m.frame);
    if (!r) {
      if (this.answered.has(id)) this.report(R.duplicate, m, `${label()} answers a request already answered`);
      else if (followed) this.report(R.orphan, m, `${label()}: no outstanding request has this MessageId`);
      return { cmd: c };
    }
    this.answered.add(id);
    if (this.answered.size > MAX_ANSWERED) this.answered.delete(this.answered.values().next().value!);
    answeredHere.push(r);
    const timeUs = Number.isFinite(m.time - r.time) ? Math.max(0, Math.round((m.time - r.time) * 1e6)) : undefined;
    if (r.entries.length === 0) return { cmd: c, request: r, ...(timeUs !== undefined ? { timeUs } : {}) };
    const retired = new Set(this.ledger.retire(r.owner, id));
    for (const t of r.tokens) if (this.stagOwner.get(t) === id) this.stagOwner.delete(t);
    let moved = 0;
    let accounted = true;
    for (const e of r.entries) {
      moved += e.moved;
      // An entry neither retired nor invalidated was dropped by the ledger at capacity: its count is partial.
      if (!retired.has(e) && !this.invalidated.has(e.stag)) accounted = false;
    }
    const checkable = r.complete && accounted && !r.transform && h.status === STATUS.SUCCESS;
    if (!r.complete) this.uncaptured('RDMA byte totals of READ/WRITE requests', m);
    const b = c.body;
    if (checkable && b?.kind === 'read-response' && moved !== b.dataRemaining) {
      this.report(
        R.readRemaining,
        m,
        `${label()}: DataRemaining ${b.dataRemaining}, but the RDMA Writes into its Buffer Descriptors moved ${moved} octets`,
      );
    }
    if (checkable && b?.kind === 'write-response' && moved !== r.expected) {
      this.report(
        R.writeLength,
        m,
        `${label()}: the request wrote ${r.expected} octets over the channel, but the RDMA Read Requests read ${moved} (Count ${b.count})`,
      );
    }
    return { cmd: c, request: r, moved, ...(timeUs !== undefined ? { timeUs } : {}) };
  }

  /** The Sends with Invalidate of one response message against the requests it answered. */
  private checkInvalidate(invs: readonly number[], answeredHere: readonly Smb2Request[], at: At): void {
    for (const r of answeredHere) {
      if (r.invalidate && !invs.some((s) => r.tokens.has(s)))
        this.report(
          R.invMissing,
          at,
          `SMB2 ${r.command} MessageId ${r.messageId} asked for RDMA_V1_INVALIDATE; the response was not a Send with Invalidate of its Token`,
        );
    }
    for (const s of invs) {
      const hex = `0x${s.toString(16).padStart(8, '0')}`;
      const own = answeredHere.find((r) => r.tokens.has(s));
      if (own) {
        if (!own.invalidate)
          this.report(
            R.invNotAsked,
            at,
            `Send with Invalidate of STag ${hex} answers SMB2 ${own.command} MessageId ${own.messageId}, whose Channel was not RDMA_V1_INVALIDATE`,
          );
        continue;
      }
      const other = this.stagOwner.get(s);
      const r = other !== undefined ? this.tracker.get(other) : undefined;
      if (r)
        this.report(
          R.invWrong,
          at,
          `Send with Invalidate of STag ${hex}, the buffer of SMB2 ${r.command} MessageId ${r.messageId}, which is still outstanding`,
        );
    }
  }

  /** An RDMA access of the server: request timing, and whether its length is trustworthy. */
  access(m: WriteMessage | ReadRequestMessage | ReadResponseMessage): void {
    const stag = m.kind === 'write' ? m.stag : m.kind === 'read-request' ? m.sourceStag : m.request?.sourceStag;
    if (stag === undefined) return;
    const id = this.stagOwner.get(stag);
    if (id === undefined) return;
    const r = this.tracker.get(id);
    // Writes and Read Requests come from the server; the Read Response carries the client's data back.
    if (!r || (m.kind !== 'read-response') === (r.owner === m.dir)) return;
    this.tracker.data(id, m.time, m.frame);
    if (m.kind !== 'read-response' && !m.intact) r.complete = false;
  }

  /** The capture ended: requests never answered. */
  end(lastTime: number): void {
    let n = 0;
    let first: Smb2Request | null = null;
    for (const r of this.tracker.outstanding()) {
      this.timing(requestTiming(r, Number.NaN));
      n++;
      if (n <= MAX_UNANSWERED_TOLD) {
        const age = Number.isFinite(lastTime - r.time) ? ` (${(lastTime - r.time).toFixed(6)} s before the end)` : '';
        this.report(R.unanswered, r, `SMB2 ${r.command} MessageId ${r.messageId} never answered${age}`);
      } else first ??= r;
    }
    if (first) this.report(R.unanswered, first, `${n - MAX_UNANSWERED_TOLD} more SMB2 requests never answered`);
  }
}
