/**
 * One connection's RPC-over-RDMA version 1 dissector (RFC 8166, RFC 8797, RFC 8267 for NFS).
 *
 * The requester is the MPA Initiator (RFC 8166 §3: the client connects). Calls are tracked by XID;
 * their chunk segments are advertised to the connection's buffer ledger (read chunks: remote read,
 * owned by the requester; write chunks and the reply chunk: remote write), which the RDMAP side
 * checks every RDMA Write, Read Request and Send with Invalidate against. At the Reply the Call's
 * entries are retired, and the octets that moved through them are compared with what the Reply
 * reports. Responder-to-requester Calls (the NFSv4.1 backchannel, sent as RDMA_MSG without
 * chunks) are paired apart and carry no chunk checks.
 *
 * The entries advertised are kept by reference: their `moved` stays right even when a Send with
 * Invalidate made the ledger drop them before this layer saw the Reply (the contract does not fix
 * which of the two runs first).
 */
import type { TreeNode } from '../../src/vocabulary/fields.js';
import type { BufferAccess, LedgerEntry } from '../ddp-rdmap/buffer-ledger.js';
import { RequestTracker, requestTiming, type TrackedRequest } from '../ddp-rdmap/request-tracker.js';
import {
  type Dir,
  initiatorOf,
  type ReadRequestMessage,
  type RdmapMessage,
  type SendMessage,
  type UlpEnvironment,
  type UlpRecord,
  type UpperLayerDissector,
  type WriteMessage,
} from '../ddp-rdmap/ulp-contract.js';
import type { RpcRdmaPrivateData } from '../ddp-rdmap/upper-layer.js';
import {
  type AdvertisedChunk,
  type AdvertisedReadChunk,
  readChunkShortfalls,
  replyChunkMismatches,
  writeLengthMismatches,
} from './checks.js';
import { decodeHeader, findXid, type RdmaSegment, readChunks, type RpcRdmaHeader, rpcXidAfterLists } from './decode.js';
import { describeCall, type CallLabel, replyStatus } from './describe.js';
import { ERR, ERRCODE_NAMES, hex32, nameOf, PROC, PROC_NAMES } from './names.js';
import { nfsStatus } from './nfs.js';
import { type CutCounts, cutSummary, DEFAULT_INLINE_SIZE, privateDataOf } from './params.js';
import { decodeRpc, type RpcDecode } from './rpc.js';
import { RPC_RULE as R } from './rules.js';
import {
  cmNode,
  dataNode,
  type HeaderExtras,
  headerNode,
  nfsCallNode,
  nfsReplyNode,
  nfsProcNode,
  rpcNode,
} from './tree.js';

const MAX_CREDIT = 65535;
const ANSWERED_KEPT = 4096;
const BACKCHANNEL_KEPT = 1024;
const UNANSWERED_LISTED = 64;

interface CallState extends TrackedRequest, CallLabel {
  /** Sender of the Call ("ADDR:PORT"): findings about the Call name its direction. */
  readonly from: string;
  readonly code: number;
  readonly xid: number;
  readonly vers: number;
  readonly reads: readonly AdvertisedReadChunk[];
  readonly writes: readonly AdvertisedChunk[];
  readonly reply: AdvertisedChunk | null;
  readonly handles: ReadonlySet<number>;
  readonly listsComplete: boolean;
}

interface Located {
  readonly xid: number;
  readonly entry: LedgerEntry;
  readonly what: string;
}

type Extras = { -readonly [K in keyof HeaderExtras]: HeaderExtras[K] };

const PROTOCOL = 'rpcordma';
const moved = (cs: readonly AdvertisedChunk[]): number =>
  cs.reduce((n, c) => n + c.entries.reduce((k, e) => k + e.moved, 0), 0);

export class RpcRdmaDissector implements UpperLayerDissector {
  private readonly requester: Dir;
  private readonly requesterPd: RpcRdmaPrivateData | null;
  private readonly responderPd: RpcRdmaPrivateData | null;
  /** The MPA startup was captured: private data (or its absence) is known. */
  private readonly startupSeen: boolean;
  private readonly calls: RequestTracker<number, CallState>;
  private readonly answered = new Map<number, true>();
  private readonly backchannel = new Map<number, CallLabel>();
  private readonly byStag = new Map<number, Located[]>();
  private readonly stagsOf = new Map<number, number[]>();
  private granted: number | null = null;
  /** False once a Reply may have been lost: outstanding Calls are then overcounted. */
  private creditsKnown = true;
  private firstCall = true;
  private fromStart = false;
  /**
   * A Send of the requester was cut before its chunk lists (or its header) ended: some STags it
   * advertised, or a whole Call, are unknown, so accesses to unseen STags and Replies to unseen
   * XIDs are no longer errors.
   */
  private blind = false;
  private cmShown = false;
  private ended = false;
  private readonly cut: CutCounts = { header: 0, lists: 0, xid: 0, rpc: 0 };

  constructor(private readonly env: UlpEnvironment) {
    const c = env.connection;
    this.requester = initiatorOf(c);
    this.startupSeen = c.initiatorDir !== null;
    // The MPA Request is the Initiator's (the requester's), the Reply the Responder's.
    this.requesterPd = privateDataOf(c.requestPrivateData);
    this.responderPd = privateDataOf(c.replyPrivateData);
    this.calls = new RequestTracker(env.timing);
  }

  message(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'send') return this.send(m);
    if ((m.kind === 'write' || m.kind === 'read-request') && m.dir !== this.requester) return this.data(m);
    // The requester's Read Response carries a read chunk's octets to the responder: the Call's data too.
    if (m.kind === 'read-response' && m.dir === this.requester && m.request) {
      const loc = this.chunkAt(m.request.sourceStag, m.request.sourceTo);
      if (loc) this.calls.data(loc.xid, m.time, m.frame);
    }
    return null;
  }

  end(lastTime: number): void {
    if (this.ended) return;
    this.ended = true;
    let n = 0;
    for (const c of this.calls.outstanding()) {
      if (n++ < UNANSWERED_LISTED) {
        this.report(R.unanswered, c, `${c.label} xid ${hex32(c.xid)} was never answered`);
      }
      this.env.timing(requestTiming(c, Number.NaN));
    }
    if (n > UNANSWERED_LISTED) {
      this.report(R.unanswered, { frames: [], seq: null }, `${n - UNANSWERED_LISTED} more Calls were never answered`);
    }
    const summary = cutSummary(this.cut);
    if (summary)
      this.report(R.captureCut, { frames: [], seq: null }, `Sends cut by the capture up to ${lastTime}: ${summary}`);
  }

  /** Largest Send the receiver of `dir`'s Sends accepts, or null when unknown (startup not captured). */
  private inlineLimit(dir: Dir): number | null {
    if (!this.startupSeen) return null;
    const peer = dir === this.requester ? this.responderPd : this.requesterPd;
    return peer?.receiveSize ?? DEFAULT_INLINE_SIZE;
  }

  private send(m: SendMessage): UlpRecord {
    const fromRequester = m.dir === this.requester;
    const x: Extras = {};
    const limit = this.inlineLimit(m.dir);
    if (limit !== null) {
      x.inlineLimit = limit;
      if (m.length > limit) {
        const src = (m.dir === this.requester ? this.responderPd : this.requesterPd)
          ? "the receiver's RFC 8797 Receive Size"
          : 'the 1024-octet default (no RFC 8797 private data from the receiver)';
        this.report(R.inlineExceeded, m, `${m.length}-octet Send, larger than ${limit} octets, ${src}`);
      }
    }
    const h = decodeHeader(m.payload, m.length);
    if (!h) {
      if (m.payloadComplete) this.report(R.headerShort, m, `${m.length}-octet Send: no RPC-over-RDMA fixed header`);
      else {
        this.cut.header++;
        if (fromRequester) this.goBlind();
      }
      return {
        protocol: PROTOCOL,
        info: `RPC-over-RDMA (${m.payload.length} of ${m.length} octets captured)`,
        tree: [],
      };
    }
    this.headerChecks(m, h);
    const rpc = this.rpcOf(m, h);
    const nodes: TreeNode[] = [];
    let info: string;
    const isCall = rpc?.msg ? rpc.msg.kind === 'call' : fromRequester;
    if (h.vers === 1 && h.proc === PROC.DONE) info = this.plain(h);
    else if (h.vers === 1 && h.proc === PROC.ERROR) {
      info = fromRequester ? this.backchannelReply(h) : this.reply(m, h, null, x, nodes);
    } else if (h.vers !== 1 || h.proc <= PROC.MSGP) {
      if (fromRequester === isCall) info = isCall ? this.call(m, h, rpc, x, nodes) : this.reply(m, h, rpc, x, nodes);
      else info = isCall ? this.backchannelCall(h, rpc, nodes) : this.backchannelReply(h);
    } else if (fromRequester && h.vers === 1 && h.proc > PROC.ERROR) {
      // An unknown procedure from the requester is still a message with an XID the responder answers
      // (RDMA_ERROR / ERR_CHUNK, RFC 8166 §4.5; Linux svc_rdma_send_error): tracked as a Call so
      // that answer pairs with it.
      info = this.call(m, h, null, x, nodes);
    } else info = this.plain(h);
    const tree: TreeNode[] = [headerNode(h, m.length, x), ...nodes];
    if (!this.cmShown && (this.requesterPd || this.responderPd)) {
      this.cmShown = true;
      if (this.requesterPd) tree.push(cmNode(this.requesterPd, 'Requester (MPA Request)'));
      if (this.responderPd) tree.push(cmNode(this.responderPd, 'Responder (MPA Reply)'));
    }
    return { protocol: PROTOCOL, info, tree };
  }

  private headerChecks(m: SendMessage, h: RpcRdmaHeader): void {
    const id = `xid ${hex32(h.xid)}`;
    if (h.vers !== 1) this.report(R.versionUnsupported, m, `rdma_vers ${h.vers} (${id}); only version 1 is decoded`);
    else if (h.proc === PROC.MSGP || h.proc === PROC.DONE) {
      this.report(R.procDeprecated, m, `${nameOf(PROC_NAMES, h.proc)} (${id})`);
    } else if (h.proc > PROC.ERROR) this.report(R.procUnknown, m, `rdma_proc ${h.proc} (${id})`);
    if (h.problem?.kind === 'cut') this.cut.lists++;
    else if (h.problem) this.report(R.listsMalformed, m, `${h.problem.detail} (${m.length}-octet Send, ${id})`);
    const odd = h.reads.find((s) => s.position % 4 !== 0);
    if (odd) this.report(R.positionUnaligned, m, `read segment at position ${odd.position} (${id})`);
  }

  /** The RPC message of an RDMA_MSG / RDMA_MSGP, after checking that its XID is rdma_xid. */
  private rpcOf(m: SendMessage, h: RpcRdmaHeader): RpcDecode | null {
    const at = h.vers === 1 && (h.proc === PROC.MSG || h.proc === PROC.MSGP) ? h.listsEnd : null;
    if (at === null) return null;
    const xid = rpcXidAfterLists(m.payload, h);
    if (xid === null) {
      if (!m.payloadComplete) this.cut.xid++;
      else this.report(R.rpcMalformed, m, `no RPC message after the chunk lists (they end at offset ${at})`);
      return null;
    }
    if (xid !== h.xid) {
      const found = findXid(m.payload, h.xid, at);
      const where =
        found === null ? 'rdma_xid appears nowhere after the fixed header' : `rdma_xid is at offset ${found}`;
      this.report(
        R.xidMismatch,
        m,
        `RPC XID ${hex32(xid)} at offset ${at} (after the chunk lists) differs from rdma_xid ${hex32(h.xid)}; ${where}`,
      );
      return null;
    }
    const positions = new Map(readChunks(h.reads).map((c) => [c.position, c.length] as const));
    const rpc = decodeRpc(m.payload, at, m.length, positions);
    if (rpc.malformed) this.report(R.rpcMalformed, m, `${rpc.malformed} (xid ${hex32(h.xid)})`);
    if (rpc.cut || (rpc.msg?.kind === 'call' && rpc.msg.nfs && !rpc.msg.nfs.opsComplete && !m.payloadComplete))
      this.cut.rpc++;
    return rpc;
  }

  private call(m: SendMessage, h: RpcRdmaHeader, rpc: RpcDecode | null, x: Extras, nodes: TreeNode[]): string {
    if (this.firstCall) {
      this.firstCall = false;
      // With the MPA startup captured, this is the connection's first Call: every STag the
      // responder may touch from now on is one this layer saw advertised.
      if (this.startupSeen && !this.blind) {
        this.env.ledger.strict = true;
        this.fromStart = true;
      }
    }
    if (h.problem?.kind === 'cut') this.goBlind();
    const c = rpc?.msg?.kind === 'call' ? rpc.msg : null;
    const d = describeCall(c);
    const id = `xid ${hex32(h.xid)}`;
    if (h.credit > MAX_CREDIT) this.report(R.creditImplausible, m, `Call requests ${h.credit} credits (${id})`);
    if (h.vers === 1 && h.proc === PROC.NOMSG && !h.problem && !h.reads.some((s) => s.position === 0)) {
      this.report(R.nomsgCallWithoutPzrc, m, `RDMA_NOMSG Call ${id} has no read chunk at position 0`);
    }
    const prior = this.calls.get(h.xid);
    if (prior) {
      this.report(R.xidReused, m, `Call ${id} (${d.label}) while ${prior.label} with the same XID is outstanding`);
      this.forget(h.xid);
    }
    const label = `${d.label} ${id}`;
    const advertise = (s: RdmaSegment, access: BufferAccess, what: string): LedgerEntry => {
      const e = this.env.ledger.advertise({
        owner: this.requester,
        stag: s.handle,
        base: s.offset,
        length: s.length,
        access,
        request: h.xid,
        label,
        invalidate: this.requesterPd?.remoteInvalidate ?? false,
        seq: m.seq,
        frames: m.frames,
      });
      const list = this.byStag.get(s.handle);
      const loc = { xid: h.xid, entry: e, what };
      if (list) list.push(loc);
      else this.byStag.set(s.handle, [loc]);
      const mine = this.stagsOf.get(h.xid);
      if (mine) mine.push(s.handle);
      else this.stagsOf.set(h.xid, [s.handle]);
      return e;
    };
    const reads = readChunks(h.reads).map((chunk) => ({
      chunk,
      segments: chunk.segments,
      entries: chunk.segments.map((s) => advertise(s, 'remote-read', `read chunk at position ${chunk.position}`)),
    }));
    const writes = h.writes.map((w, i) => ({
      segments: w.segments,
      entries: w.segments.map((s) => advertise(s, 'remote-write', `write chunk ${i + 1}`)),
    }));
    const reply = h.reply
      ? {
          segments: h.reply.segments,
          entries: h.reply.segments.map((s) => advertise(s, 'remote-write', 'reply chunk')),
        }
      : null;
    const handles = new Set(
      [...h.reads, ...h.writes.flatMap((w) => w.segments), ...(h.reply?.segments ?? [])].map((s) => s.handle),
    );
    this.calls.start(h.xid, {
      from: m.from,
      program: d.program,
      command: d.command,
      code: d.code,
      label: d.label,
      prog: d.prog,
      progVers: d.progVers,
      proc: d.proc,
      xid: h.xid,
      vers: h.vers,
      queue: `flow ${this.env.connection.flow}`,
      time: m.time,
      seq: m.seq,
      frames: m.frames,
      firstData: Number.NaN,
      lastData: Number.NaN,
      reads,
      writes,
      reply,
      handles,
      listsComplete: h.vers === 1 && h.problem === null,
    });
    x.outstanding = this.calls.size;
    // A grant of 0 is reported on its own (rpcordma.credit-zero); like Linux, it counts as 1 here.
    if (this.creditsKnown && this.granted !== null && this.calls.size > Math.max(1, this.granted)) {
      this.report(
        R.creditsExceeded,
        m,
        `${this.calls.size} Calls outstanding with ${id}, the responder granted ${this.granted} credits`,
      );
    }
    if (c) {
      nodes.push(rpcNode(h.listsEnd!, c));
      if (c.nfs) nodes.push(nfsCallNode(c.nfs));
      return `RPC Call ${d.label} ${id}`;
    }
    const how = h.proc === PROC.NOMSG ? ' (Call in position-zero read chunk)' : '';
    return `${this.plain(h)}${how}`;
  }

  private reply(m: SendMessage, h: RpcRdmaHeader, rpc: RpcDecode | null, x: Extras, nodes: TreeNode[]): string {
    const id = `xid ${hex32(h.xid)}`;
    if (h.credit === 0) this.report(R.creditZero, m, `Reply ${id} grants 0 credits`);
    else if (h.credit > MAX_CREDIT) this.report(R.creditImplausible, m, `Reply ${id} grants ${h.credit} credits`);
    this.granted = h.credit;
    const call = this.calls.get(h.xid);
    if (!call) {
      if (this.answered.has(h.xid)) this.report(R.duplicateReply, m, `second Reply to ${id}`);
      else if (this.fromStart) this.report(R.replyWithoutCall, m, `Reply ${id}: no Call with this XID is outstanding`);
      return this.plain(h);
    }
    const error = h.vers === 1 && h.proc === PROC.ERROR;
    if (call.vers !== 1 && !(error && h.errcode === ERR.VERS)) {
      this.report(
        R.versionNoErrVers,
        m,
        `Call ${id} of version ${call.vers} answered by ${nameOf(PROC_NAMES, h.proc)}`,
      );
    }
    if (error) {
      const range = h.versLow !== null ? ` (versions ${h.versLow}-${h.versHigh})` : '';
      this.report(R.errorReply, m, `${nameOf(ERRCODE_NAMES, h.errcode ?? -1)}${range} for ${call.label} ${id}`);
    }
    const lists = h.vers === 1 && h.hasLists && h.problem === null;
    if (lists) {
      if (h.reads.length) this.report(R.replyReadList, m, `Reply ${id} has ${h.reads.length} read segments`);
      if (h.proc === PROC.NOMSG && (!call.reply || !h.reply || h.reply.count === 0)) {
        const why = call.reply ? 'the Reply returns none' : 'the Call offered none';
        this.report(R.nomsgWithoutReplyChunk, m, `RDMA_NOMSG Reply ${id} to ${call.label}: ${why}`);
      }
      const replyLen = h.reply?.segments.reduce((n, s) => n + s.length, 0) ?? 0;
      if (h.proc !== PROC.NOMSG && replyLen > 0) {
        this.report(R.msgWithReplyChunk, m, `RDMA_MSG Reply ${id} reports ${replyLen} octets in its reply chunk`);
      }
      if (call.listsComplete) {
        for (const t of replyChunkMismatches(call.writes, call.reply, h.writes, h.reply)) {
          this.report(R.replyChunksMismatch, m, `${t} (${call.label} ${id})`);
        }
      }
    }
    const inv = m.invalidateStag;
    if (inv !== null) {
      x.invalidated = inv;
      if (this.startupSeen && !this.requesterPd?.remoteInvalidate) {
        const why = this.requesterPd
          ? 'its RFC 8797 private data does not set Remote Invalidation'
          : 'it sent no RFC 8797 private data';
        this.report(R.invalidateNotNegotiated, m, `Send with Invalidate of ${hex32(inv)} answering ${id}, but ${why}`);
      }
      if (call.listsComplete && !call.handles.has(inv)) {
        this.report(
          R.invalidateForeign,
          m,
          `Reply ${id} invalidates ${hex32(inv)}, not a handle of ${call.label}'s chunks`,
        );
      }
    }
    const live = new Set(this.env.ledger.retire(this.requester, h.xid));
    const known = (e: LedgerEntry): boolean => live.has(e) || e.stag === inv;
    this.forget(h.xid);
    if (call.listsComplete && call.vers === 1 && !error) {
      for (const t of readChunkShortfalls(call.reads, known))
        this.report(R.readIncomplete, m, `${t} (${call.label} ${id})`);
      if (lists) {
        for (const t of writeLengthMismatches(call.writes, call.reply, h.writes, h.reply, known)) {
          this.report(R.writeLength, m, `${t} (${call.label} ${id})`);
        }
      }
    }
    if (call.reads.length) x.readBytes = moved(call.reads);
    if (call.writes.length || call.reply)
      x.writtenBytes = moved(call.reply ? [...call.writes, call.reply] : call.writes);
    this.calls.finish(h.xid, m.time, m.frame);
    this.answered.delete(h.xid);
    this.answered.set(h.xid, true);
    if (this.answered.size > ANSWERED_KEPT) this.answered.delete(this.answered.keys().next().value!);
    if (Number.isFinite(m.time - call.time)) x.latencyUs = Math.max(0, Math.round((m.time - call.time) * 1e6));
    const r = rpc?.msg?.kind === 'reply' ? rpc.msg : null;
    if (r) {
      nodes.push(
        rpcNode(h.listsEnd!, r, { frame: call.frames[0], prog: call.prog, vers: call.progVers, proc: call.proc }),
      );
      const status =
        r.resultsAt !== null ? nfsStatus(m.payload, r.resultsAt, call.prog, call.progVers, call.proc) : null;
      if (status !== null) nodes.push(nfsReplyNode(call.progVers!, call.proc!, status));
      // Wireshark shows an NFS reply's procedure even when it has no status to show (NULL).
      else if (call.prog === 100003 && (call.progVers === 3 || call.progVers === 4) && call.proc !== null)
        nodes.push(nfsProcNode(call.progVers, call.proc));
      return `RPC Reply ${call.label} ${id} ${replyStatus(r)}`;
    }
    if (error) return `${this.plain(h)} ${this.errorText(h)}`;
    const how = h.proc === PROC.NOMSG ? ` (Reply to ${call.label} in reply chunk)` : '';
    return `${this.plain(h)}${how}`;
  }

  private backchannelCall(h: RpcRdmaHeader, rpc: RpcDecode | null, nodes: TreeNode[]): string {
    const c = rpc?.msg?.kind === 'call' ? rpc.msg : null;
    const d = describeCall(c);
    this.backchannel.set(h.xid, d);
    if (this.backchannel.size > BACKCHANNEL_KEPT) this.backchannel.delete(this.backchannel.keys().next().value!);
    if (c) nodes.push(rpcNode(h.listsEnd!, c));
    return `RPC Call (backchannel) ${d.label} xid ${hex32(h.xid)}`;
  }

  private backchannelReply(h: RpcRdmaHeader): string {
    const d = this.backchannel.get(h.xid);
    this.backchannel.delete(h.xid);
    const what = h.proc === PROC.ERROR ? ` ${this.errorText(h)}` : d ? ` (backchannel Reply to ${d.label})` : '';
    return `${this.plain(h)}${what}`;
  }

  /** An RDMA Write or Read Request of the responder: data phase of the Call whose chunk it hits. */
  private data(m: WriteMessage | ReadRequestMessage): UlpRecord | null {
    const stag = m.kind === 'write' ? m.stag : m.sourceStag;
    const to = m.kind === 'write' ? m.to : m.sourceTo;
    const loc = this.chunkAt(stag, to);
    if (!loc) return null;
    this.calls.data(loc.xid, m.time, m.frame);
    const call = this.calls.get(loc.xid);
    const op = m.kind === 'write' ? 'RDMA Write into' : 'RDMA Read Request of';
    return {
      protocol: PROTOCOL,
      info: `RPC-over-RDMA ${op} ${loc.what} of ${call?.label ?? 'RPC'} xid ${hex32(loc.xid)}`,
      tree: [dataNode(loc.xid, stag)],
    };
  }

  /** The chunk segment of an outstanding Call that holds (`stag`, `to`), if any. */
  private chunkAt(stag: number, to: bigint) {
    return this.byStag.get(stag)?.find((l) => to >= l.entry.base && to < l.entry.base + BigInt(l.entry.length));
  }

  /**
   * The capture lost octets of `dir`: a lost Call of the requester makes later Replies to unseen
   * XIDs and accesses to unseen chunks no error; a lost Reply of the responder leaves its Call
   * outstanding, so the count of Calls against the credits granted is no longer known.
   */
  captureLoss(dir: Dir): void {
    if (dir === this.requester) this.goBlind();
    else this.creditsKnown = false;
  }

  private goBlind(): void {
    this.blind = true;
    this.fromStart = false;
    this.env.ledger.strict = false;
  }

  /** Drops the STag index entries of a Call (answered, or replaced by a reused XID). */
  private forget(xid: number): void {
    for (const stag of this.stagsOf.get(xid) ?? []) {
      const kept = this.byStag.get(stag)?.filter((l) => l.xid !== xid) ?? [];
      if (kept.length === 0) this.byStag.delete(stag);
      else this.byStag.set(stag, kept);
    }
    this.stagsOf.delete(xid);
  }

  private plain(h: RpcRdmaHeader): string {
    return `RPC-over-RDMA ${nameOf(PROC_NAMES, h.proc)} xid ${hex32(h.xid)} credits ${h.credit}`;
  }

  private errorText(h: RpcRdmaHeader): string {
    const name = nameOf(ERRCODE_NAMES, h.errcode ?? -1);
    return h.versLow !== null ? `${name} (versions ${h.versLow}-${h.versHigh})` : name;
  }

  private report(
    rule: string,
    at: { frames: readonly number[]; seq: number | null; from?: string },
    message: string,
  ): void {
    this.env.sink.report(rule, {
      flow: this.env.connection.flow,
      from: at.from ?? null,
      frames: at.frames,
      seq: at.seq,
      message,
    });
  }
}
