/**
 * One NVMe/RDMA connection: one queue pair (NVMe-oF RDMA transport binding). The host is the MPA
 * Initiator: its Sends are command capsules, the controller's Sends are response capsules. Commands
 * are tracked by CID; every keyed SGL is advertised to the connection's buffer ledger with the
 * access its opcode implies (data to the controller: the controller's RDMA Read Requests; data to
 * the host: its RDMA Writes) and retired at the completion, where the octets moved, the
 * invalidation and the queue's SQ head are checked.
 */
import type { TreeNode } from '../../src/vocabulary/fields.js';
import type { BufferAccess, LedgerEntry } from '../ddp-rdmap/buffer-ledger.js';
import { RequestTracker, NO_DATA, type TrackedRequest } from '../ddp-rdmap/request-tracker.js';
import {
  type Dir,
  initiatorOf,
  type RdmapMessage,
  type SendMessage,
  type UlpEnvironment,
  LazyUlpRecord,
  type UlpRecord,
  type UpperLayerDissector,
  type WriteMessage,
  type ReadRequestMessage,
  type ReadResponseMessage,
} from '../ddp-rdmap/ulp-contract.js';
import { addCntlid, associationOf, setLbaSize, type Association } from './association.js';
import {
  CATTR_DISABLE_SQ_FLOW_CONTROL,
  CONNECT_DATA_LEN,
  CQE_LEN,
  SQE_LEN,
  decodeCmReject,
  decodeCmReply,
  decodeCmRequest,
  decodeConnectData,
  decodeCqe,
  decodeSqe,
  lbaSizeOfIdentifyNs,
  type CmReject,
  type CmReply,
  type CmRequest,
  type ConnectData,
  type Sgl,
  type Sqe,
} from './decode.js';
import {
  ADMIN_OPC,
  NVM_OPC,
  OPC_FABRICS,
  commandName,
  dataDirection,
  hex4,
  statusName,
  type DataDirection,
} from './names.js';
import { type At, checkCm, checkInvalidate, checkSgl } from './capsule-checks.js';
import { NVME_RULE as R } from './rules.js';
import { cmNode, commandInfo, connectDataNode, commandNode, completionInfo, completionNode, rdmaNode } from './tree.js';

/** Octets of Identify Namespace data read for the LBA format: FLBAS and every LBA Format (up to 64, octets 128-383). */
const IDENTIFY_NS_KEEP = 512;
/** Commands tracked per queue: beyond any real NVMe/RDMA queue depth; the oldest is forgotten past it. */
export const MAX_OUTSTANDING = 16384;
/** Findings of one rule listed per connection before the rest are only counted. */
const PER_RULE_LISTED = 64;
const PROTOCOL = 'nvme-rdma';

interface Cmd extends TrackedRequest {
  readonly cid: number;
  readonly from: string;
  /** A Connect's QID, else null. */
  readonly connectQid: number | null;
  readonly fabrics: boolean;
  readonly direction: DataDirection;
  /** The keyed SGL advertised to the ledger, null when the data (if any) is in the capsule. */
  readonly keyed: Sgl | null;
  /** Its ledger entries (kept to skip the ledger's walk when they were already forgotten). */
  readonly entries: readonly LedgerEntry[];
  /** (NLB + 1) × LBA size of an NVM Read/Write when the namespace's format is known. */
  readonly expected: number | null;
  /** Identify Namespace (CNS 0) of this NSID: its data gives the LBA size. */
  readonly identifyNs: number | null;
  frame: number;
}

export class NvmeRdmaDissector implements UpperLayerDissector {
  private readonly host: Dir;
  private readonly startupSeen: boolean;
  private readonly cmReq: CmRequest | null;
  private readonly cmRep: CmReply | null;
  private readonly cmRej: CmReject | null;
  private readonly cmds: RequestTracker<number, Cmd>;
  /** Keyed SGL STag -> CID of the outstanding command it belongs to (for data timing). */
  private readonly byKey = new Map<number, number>();
  private qid: number | null = null;
  /** Zero-based SQSIZE (Connect), else the CM HSQSIZE. */
  private sqsize: number | null;
  private flowControl = true;
  /** Commands submitted and the SQ head, as absolute counts since the Connect. */
  private tail = 0;
  private head = 0;
  private commands = 0;
  /** Followed from the first command: unmatched completions are errors. */
  private followed = false;
  /** A command may have been missed (capture loss, cut capsule): unknown CIDs are no longer errors. */
  private blind = false;
  private overFull = false;
  private capTold = false;
  private cmShown = false;
  private ended = false;
  private assoc: Association | null = null;
  /** Findings per rule and octets skipped: made on the first one (most queues have none; 10,000 queues open at once). */
  private perRule: Map<string, number> | null = null;
  private skipped: Map<string, number> | null = null;
  private firstSkipped: At | null = null;

  constructor(private readonly env: UlpEnvironment) {
    const c = env.connection;
    this.host = initiatorOf(c);
    this.startupSeen = c.initiatorDir !== null;
    this.cmReq = decodeCmRequest(c.requestPrivateData);
    this.cmRep = c.rejected ? null : decodeCmReply(c.replyPrivateData);
    this.cmRej = c.rejected ? decodeCmReject(c.replyPrivateData) : null;
    this.setQid(this.cmReq?.qid ?? null);
    this.sqsize = this.cmReq?.hsqsize ?? null;
    this.cmds = new RequestTracker(env.timing, MAX_OUTSTANDING);
    checkCm(this.report, env.connection, this.cmReq, this.cmRep, this.cmRej);
  }

  message(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'send') return m.dir === this.host ? this.command(m) : this.completion(m);
    if (m.dir !== this.host && (m.kind === 'write' || m.kind === 'read-request')) this.data(m);
    else if (m.kind === 'read-response' && m.dir === this.host) {
      // The host's Read Response carries the data the controller pulled: the command's data too
      // (docs/latency.md: first and last data), and its Connect data when that was kept.
      if (m.request !== null) this.dataOf(m.request.sourceStag, m);
      if (m.data !== undefined) return this.connectRead(m);
    }
    return null;
  }

  /** "admin queue", "I/O queue 3": kept as a string, rebuilt only when a Connect names the queue. */
  private queueLabel = 'queue ?';

  private setQid(qid: number | null): void {
    this.qid = qid;
    this.queueLabel = qid === null ? 'queue ?' : qid === 0 ? 'admin queue' : `I/O queue ${qid}`;
  }

  /**
   * The record of a capsule: its tree is built only when something reads it (-V, filters, the TUI):
   * most runs never do. The CM private data shows on the connection's first record.
   */
  private record(info: string, children: () => TreeNode[]): UlpRecord {
    let cm: TreeNode | null = null;
    if (!this.cmShown) {
      this.cmShown = true;
      cm = cmNode(this.cmReq, this.cmRep, this.cmRej);
    }
    const label = this.queueLabel;
    return new LazyUlpRecord(PROTOCOL, info, () => {
      const kids = children();
      if (cm) kids.unshift(cm);
      return [rdmaNode(label, kids)];
    });
  }

  // --- command capsules ---

  private command(m: SendMessage): UlpRecord {
    const sqe = decodeSqe(m.payload);
    if (!sqe) {
      if (m.payloadComplete || m.length < SQE_LEN)
        this.report(R.capsuleShort, m, `command capsule of ${m.length} octets; the SQE alone is 64`);
      else this.skip('command SQEs', m);
      this.loseTrack();
      return this.record(`NVMe command (${m.payload.length} of ${m.length} octets captured)`, () => []);
    }
    const first = this.commands++ === 0;
    const fabrics = sqe.opc === OPC_FABRICS;
    if (first) {
      this.followed = this.startupSeen && m.intact;
      // Every keyed SGL of the queue is advertised from its first command on: unknown keys are errors.
      if (this.followed && !this.blind) this.env.ledger.strict = true;
      if (this.startupSeen && sqe.connect === null)
        this.report(
          R.firstNotConnect,
          m,
          `first command on the queue is ${commandName(sqe.opc, sqe.fctype, this.qid === 0)}, not a Fabrics Connect`,
        );
    }
    if (sqe.connect) this.connect(m, sqe);
    const admin = this.qid === 0;
    const name = commandName(sqe.opc, sqe.fctype, admin);
    const label = `${name} CID ${sqe.cid}`;
    const dataLength = Math.max(0, m.length - SQE_LEN);
    const direction = dataDirection(sqe.opc, sqe.fctype);
    checkSgl(this.report, m, sqe, dataLength, this.qid === 0);
    const connectData = this.connectData(m, sqe);
    // CID unique among outstanding commands (NVMe Base: Command Identifier).
    const old = this.cmds.get(sqe.cid);
    if (old) {
      this.report(R.cidInUse, m, `${label}: CID ${sqe.cid} is still in use by ${old.command} in frame ${old.frame}`);
      if (old.entries.some((e) => !e.dropped)) this.env.ledger.retire(this.host, sqe.cid);
      if (old.keyed?.key != null) this.byKey.delete(old.keyed.key);
    }
    const keyed = sqe.sgl.kind === 'keyed' || sqe.sgl.kind === 'keyed-invalidate' ? sqe.sgl : null;
    const identifyNs = admin && sqe.opc === ADMIN_OPC.IDENTIFY && (sqe.cdw10 & 0xff) === 0 ? sqe.nsid : null;
    // Structures read off the data: an Identify Namespace's LBA format, Connect data the controller reads.
    const keep = identifyNs !== null ? IDENTIFY_NS_KEEP : sqe.connect ? CONNECT_DATA_LEN : 0;
    const entries = keyed && keyed.length > 0 ? this.advertise(m, sqe, keyed, direction, label, keep) : [];
    const expected = this.expectedLength(m, sqe, name, admin);
    const cmd: Cmd = {
      program: 'NVMe',
      command: name,
      code: fabrics ? 0x7f00 | (sqe.fctype ?? 0) : sqe.opc,
      queue: this.qid === null ? '?' : String(this.qid),
      time: m.time,
      seq: m.seq,
      // The hand-off gives each message its own frames array: kept as it is, not copied.
      frames: m.frames,
      firstData: NO_DATA,
      lastData: NO_DATA,
      cid: sqe.cid,
      from: m.from,
      connectQid: sqe.connect?.qid ?? null,
      fabrics,
      direction,
      keyed: keyed && keyed.length > 0 ? keyed : null,
      entries,
      expected,
      identifyNs,
      frame: m.frames[0] ?? 0,
    };
    const before = this.cmds.dropped;
    this.cmds.start(sqe.cid, cmd);
    if (this.cmds.dropped > before && !this.capTold) {
      this.capTold = true;
      this.report(
        R.outstandingCap,
        m,
        `more than ${MAX_OUTSTANDING} commands outstanding on the ${this.queueLabel}; the oldest are forgotten`,
      );
    }
    this.tail++;
    const limit = this.sqsize === null ? null : this.sqsize + 1;
    if (limit !== null && this.cmds.size > limit) {
      if (!this.overFull)
        this.report(
          R.queueFull,
          m,
          `${label}: ${this.cmds.size} commands outstanding; the queue holds SQSIZE + 1 = ${limit}`,
        );
      this.overFull = true;
    } else this.overFull = false;
    const view = {
      sqe,
      name,
      qid: this.qid,
      dataLength,
      connectData,
      outstanding: this.cmds.size,
    };
    return this.record(commandInfo(sqe, name), () => [commandNode(view)]);
  }

  /** A Connect: the queue's identity and size, checked against the CM private data. */
  private connect(m: SendMessage, sqe: Sqe): void {
    const c = sqe.connect!;
    const req = this.cmReq;
    if (req && c.qid !== req.qid)
      this.report(
        R.connectQid,
        m,
        `Connect QID ${c.qid}; the RDMA_CM_REQUEST of this connection opened QID ${req.qid}`,
      );
    if (req && c.sqsize !== req.hsqsize)
      this.report(R.connectSqsize, m, `Connect SQSIZE ${c.sqsize}; the RDMA_CM_REQUEST HSQSIZE is ${req.hsqsize}`);
    this.setQid(c.qid);
    this.sqsize = c.sqsize;
    this.flowControl = (c.cattr & CATTR_DISABLE_SQ_FLOW_CONTROL) === 0;
    // NVMe-oF: the queue is (re)created by this command; its head and tail start here.
    this.tail = 0;
    this.head = 0;
    this.assoc = associationOf(this.env.shared, m.from, this.env.connection.serverPort);
  }

  /** The Connect data when it is in the capsule; its CNTLID checked against the admin queue's. */
  private connectData(m: SendMessage, sqe: Sqe): ConnectData | null {
    if (!sqe.connect || sqe.sgl.kind !== 'in-capsule') return null;
    const off = SQE_LEN + Number(sqe.sgl.addr);
    if (sqe.sgl.addr > 0xffffn || off > m.payload.length) return null;
    const d = decodeConnectData(m.payload.subarray(off));
    if (!d) {
      if (!m.payloadComplete) this.skip('Connect data', m);
      return null;
    }
    this.checkCntlid(m, sqe.connect.qid, d);
    return d;
  }

  /** An I/O queue's Connect names the controller its admin queue's Connect returned (NVMe-oF Connect data CNTLID). */
  private checkCntlid(m: At, qid: number, d: ConnectData): void {
    const a = this.assoc;
    if (qid !== 0 && a && a.cntlids.length > 0 && !a.cntlids.includes(d.cntlid))
      this.report(
        R.connectCntlid,
        m,
        `I/O queue ${qid} Connect names controller 0x${hex4(d.cntlid)}; the admin queue's Connect returned ${a.cntlids.map((x) => `0x${hex4(x)}`).join(', ')}`,
      );
  }

  /**
   * The host's Read Response carrying a Connect's data (the controller read it through the keyed
   * SGL, as the Linux host sends the admin queue's Connect): decoded and checked as in-capsule
   * Connect data is, when the read began at the SGL's address and brought the 768 octets up to the
   * Host NQN's end (a read of part of it is not decoded).
   */
  private connectRead(m: ReadResponseMessage): UlpRecord | null {
    const src = m.request;
    const cid = src ? this.byKey.get(src.sourceStag) : undefined;
    const c = cid === undefined ? undefined : this.cmds.get(cid);
    if (!src || !c || c.connectQid === null || c.keyed === null || src.sourceTo !== c.keyed.addr) return null;
    const d = decodeConnectData(m.data!);
    if (!d) return null;
    this.checkCntlid(m, c.connectQid, d);
    return this.record(`NVMeOF Connect Data cid=${c.cid}`, () => [connectDataNode(c.cid, d)]);
  }

  private advertise(m: SendMessage, sqe: Sqe, s: Sgl, dir: DataDirection, label: string, keep: number): LedgerEntry[] {
    const ad = (access: BufferAccess): LedgerEntry =>
      this.env.ledger.advertise({
        owner: this.host,
        stag: s.key!,
        base: s.addr,
        length: s.length,
        access,
        request: sqe.cid,
        label: `NVMe ${label}`,
        invalidate: s.kind === 'keyed-invalidate',
        seq: m.seq,
        frames: m.frames,
        keep,
      });
    const out =
      dir === 'h2c'
        ? [ad('remote-read')]
        : dir === 'c2h'
          ? [ad('remote-write')]
          : [ad('remote-write'), ad('remote-read')];
    this.byKey.set(s.key!, sqe.cid);
    if (this.byKey.size > MAX_OUTSTANDING) this.byKey.delete(this.byKey.keys().next().value!);
    return out;
  }

  /** NVM Read/Write: (NLB + 1) × LBA size against the SGL length, when an Identify showed the format. */
  private expectedLength(m: SendMessage, sqe: Sqe, name: string, admin: boolean): number | null {
    if (admin || (sqe.opc !== NVM_OPC.READ && sqe.opc !== NVM_OPC.WRITE)) return null;
    const lba = this.assoc?.lbaSize.get(sqe.nsid);
    if (lba === undefined) return null;
    const expected = (sqe.nlb + 1) * lba;
    const s = sqe.sgl;
    if ((s.kind === 'keyed' || s.kind === 'keyed-invalidate' || s.kind === 'in-capsule') && s.length !== expected)
      this.report(
        R.nlbLength,
        m,
        `${name} CID ${sqe.cid}: SGL length ${s.length}; NLB ${sqe.nlb} + 1 blocks of ${lba} octets (NSID ${sqe.nsid}) are ${expected}`,
      );
    return expected;
  }

  // --- data moved by the controller ---

  /** A transfer of the command whose keyed buffer is `stag`: its data times; returns its CID. */
  private dataOf(stag: number, m: RdmapMessage): number | undefined {
    const cid = this.byKey.get(stag);
    if (cid !== undefined) this.cmds.data(cid, m.time, m.frame);
    return cid;
  }

  private data(m: WriteMessage | ReadRequestMessage): void {
    const stag = m.kind === 'write' ? m.stag : m.sourceStag;
    const cid = this.dataOf(stag, m);
    if (cid === undefined) return;
    const c = this.cmds.get(cid);
    if (m.kind === 'write' && c?.identifyNs != null && m.data && m.to === c.keyed?.addr) {
      const size = lbaSizeOfIdentifyNs(m.data);
      if (size !== null && this.assoc) setLbaSize(this.assoc, c.identifyNs, size);
    }
  }

  // --- response capsules ---

  private completion(m: SendMessage): UlpRecord {
    const cqe = m.payload.length >= CQE_LEN ? decodeCqe(m.payload) : null;
    if (m.length !== CQE_LEN && (m.payloadComplete || m.length < CQE_LEN))
      this.report(R.capsuleShort, m, `response capsule of ${m.length} octets; a CQE is 16`);
    if (!cqe) {
      if (!m.payloadComplete && m.length >= CQE_LEN) this.skip('completion CQEs', m);
      return this.record(`NVMe CQE (${m.payload.length} of ${m.length} octets)`, () => []);
    }
    if (this.qid !== null && cqe.sqid !== this.qid && !(this.flowControl === false && cqe.sqid === 0xffff))
      this.report(R.sqid, m, `CQE CID ${cqe.cid}: SQID ${cqe.sqid}; this connection is the ${this.queueLabel}`);
    const cmd = this.cmds.get(cqe.cid);
    const sname = statusName(cqe.sct, cqe.sc);
    const ok = cqe.sc === 0 && cqe.sct === 0;
    if (!cmd && this.followed && !this.blind)
      this.report(
        R.noCommand,
        m,
        `CQE CID ${cqe.cid} (${sname}) matches no outstanding command on the ${this.queueLabel}`,
      );
    this.checkSqhd(m, cqe.sqhd, cqe.cid);
    let connectCntlid: number | null = null;
    let moved: number | null = null;
    if (cmd) {
      if (!ok)
        this.report(
          R.errorStatus,
          m,
          `${cmd.command} CID ${cqe.cid}: ${sname} (SCT ${cqe.sct}, SC 0x${cqe.sc.toString(16).padStart(2, '0')}${cqe.dnr ? ', DNR' : ''})`,
        );
      checkInvalidate(this.report, m, cmd);
      moved = this.retire(m, cmd, ok);
      if (cmd.connectQid !== null && ok) {
        connectCntlid = cqe.dw0 & 0xffff;
        if (cmd.connectQid === 0 && this.assoc) addCntlid(this.assoc, connectCntlid);
      }
      this.cmds.finish(cqe.cid, m.time, m.frame);
    } else if (!ok) this.report(R.errorStatus, m, `CQE CID ${cqe.cid}: ${sname}`);
    const view = {
      cqe,
      name: cmd?.command ?? null,
      commandFrame: cmd?.frame ?? null,
      latencyUs: cmd && Number.isFinite(m.time - cmd.time) ? Math.max(0, Math.round((m.time - cmd.time) * 1e6)) : null,
      connectCntlid,
      moved,
      invalidated: m.invalidateStag,
    };
    return this.record(completionInfo(cqe, cmd?.command ?? null, cmd?.fabrics ?? false), () => [completionNode(view)]);
  }

  /**
   * SQ head: with SQ flow control it moves forward modulo SQSIZE + 1 and never past the commands
   * submitted (NVMe Base CQE SQHD; the Linux target reports (head + 1) mod size per command).
   */
  private checkSqhd(m: SendMessage, sqhd: number, cid: number): void {
    if (!this.flowControl || this.sqsize === null || !this.followed || this.blind) return;
    const q = this.sqsize + 1;
    const delta = (((sqhd - (this.head % q)) % q) + q) % q;
    if (sqhd >= q || this.head + delta > this.tail) {
      this.report(
        R.sqhd,
        m,
        `CQE CID ${cid}: SQHD ${sqhd}; the head was at ${this.head % q} and the host has submitted up to ${this.tail % q} (queue of ${q})`,
      );
      return;
    }
    this.head += delta;
  }

  /** Retires the command's keyed SGL from the ledger; octets moved checked against the SGL length. */
  private retire(m: SendMessage, cmd: Cmd, ok: boolean): number | null {
    if (!cmd.keyed) return null;
    this.byKey.delete(cmd.keyed.key!);
    // The ledger walks its live entries to retire: skipped when it already forgot this command's.
    if (cmd.entries.every((e) => e.dropped)) return null;
    const entries = this.env.ledger.retire(this.host, cmd.cid);
    if (entries.length === 0) return null;
    const moved = entries.reduce((n, e) => n + e.moved, 0);
    if (ok && !this.blind && entries.every((e) => !e.dropped) && moved !== cmd.keyed.length && cmd.direction !== 'both')
      this.report(
        R.dataLength,
        m,
        `${cmd.command} CID ${cmd.cid}: ${moved} octets moved by RDMA; the keyed SGL length is ${cmd.keyed.length}`,
      );
    return moved;
  }

  // --- bookkeeping ---

  /** Either side lost: a lost command makes its completion unknown, a lost completion leaves the SQ head unknown. */
  captureLoss(_dir: Dir): void {
    this.loseTrack();
  }

  private loseTrack(): void {
    this.blind = true;
    this.env.ledger.strict = false;
  }

  end(lastTime: number): void {
    if (this.ended) return;
    this.ended = true;
    let n = 0;
    for (const c of this.cmds.outstanding()) {
      if (n++ < PER_RULE_LISTED) {
        const age = Number.isFinite(lastTime - c.time)
          ? `; waiting ${(lastTime - c.time).toFixed(6)} s at the end`
          : '';
        this.report(
          R.neverCompleted,
          c,
          `${c.command} CID ${c.cid} on the ${this.queueLabel} was never completed${age}`,
          true,
        );
      }
      this.env.timing({
        program: c.program,
        command: c.command,
        code: c.code,
        queue: c.queue,
        request: c.time,
        firstData: c.firstData,
        lastData: c.lastData,
        response: Number.NaN,
      });
    }
    if (n > PER_RULE_LISTED)
      this.report(
        R.neverCompleted,
        { seq: null, frames: [] },
        `${n - PER_RULE_LISTED} more commands on the ${this.queueLabel} were never completed`,
        true,
      );
    for (const [rule, count] of this.perRule ?? [])
      if (count > PER_RULE_LISTED)
        this.env.sink.report(rule, {
          flow: this.env.connection.flow,
          from: null,
          frames: [],
          seq: null,
          message: `${count - PER_RULE_LISTED} more findings of this rule on the ${this.queueLabel} not listed`,
        });
    if (this.firstSkipped) {
      const list = [...(this.skipped ?? [])].map(([what, k]) => `${what} (${k}×)`).join('; ');
      this.report(R.notCaptured, this.firstSkipped, `octets not captured, not checked: ${list}`, true);
    }
  }

  private skip(what: string, at: At): void {
    this.skipped ??= new Map();
    this.skipped.set(what, (this.skipped.get(what) ?? 0) + 1);
    this.firstSkipped ??= { seq: at.seq, frames: at.frames.slice(), from: at.from ?? null };
  }

  /** Reports a finding; past PER_RULE_LISTED of one rule on this connection, counts it (said at the end). */
  private readonly report = (rule: string, at: At, message: string, always = false): void => {
    if (!always) {
      this.perRule ??= new Map();
      const k = (this.perRule.get(rule) ?? 0) + 1;
      this.perRule.set(rule, k);
      if (k > PER_RULE_LISTED) return;
    }
    const c = this.env.connection;
    this.env.sink.report(rule, { flow: c.flow, from: at.from ?? null, frames: at.frames, seq: at.seq, message });
  };
}
