/**
 * One connection's iSER dissector (RFC 7145) with the iSCSI (RFC 7143) it carries.
 *
 * The initiator is the MPA Initiator. Each Send is one iSER message: a Hello, a HelloReply, or an
 * iSCSI control-type PDU behind the 28-octet iSER header. A SCSI Command's Read STag (RSV) is
 * advertised to the connection's buffer ledger for the target's RDMA Writes (Data-In), its Write
 * STag (WSV) for the target's RDMA Read Requests (the solicited Data-Out); the RDMAP side checks
 * every access against it. At the SCSI Response the task's entries are retired and the octets that
 * moved (RDMA plus immediate and unsolicited data) are compared with the Expected Data Transfer
 * Length less the residual. Tasks pair by ITT through the shared RequestTracker, which gives the
 * SRT collector program 'SCSI', the CDB operation's name and the connection as queue.
 */
import type { TreeNode } from '../../src/vocabulary/fields.js';
import type { LedgerEntry } from '../ddp-rdmap/buffer-ledger.js';
import { RequestTracker, type TrackedRequest } from '../ddp-rdmap/request-tracker.js';
import {
  type Dir,
  initiatorOf,
  type RdmapMessage,
  type SendMessage,
  type UlpEnvironment,
  type UlpRecord,
  type UpperLayerDissector,
} from '../ddp-rdmap/ulp-contract.js';
import {
  BHS_LEN,
  CMD_R,
  CMD_W,
  decodeBhs,
  decodeCdb,
  decodeHello,
  decodeIserHeader,
  ISER_HDR_LEN,
  ISER_VERSION,
  pduLength,
  RSP_BIDI_OVER,
  RSP_BIDI_UNDER,
  RSP_OVER,
  RSP_UNDER,
  type Bhs,
} from './decode.js';
import { type IserCm, iserCmOf, type LeadingLogin, LoginState, parseLeading } from './login.js';
import { hex32, ISER_OP, isTargetOpcode, nameOf, OP, OPCODE_NAMES } from './names.js';
import { R } from './rules.js';
import {
  helloInfo,
  helloNode,
  iscsiInfo,
  iscsiNode,
  iserHeaderNode,
  scsiOpName,
  streamingLoginNode,
  type TaskExtras,
} from './tree.js';

/** Outstanding tasks kept per connection; beyond it the oldest is forgotten (said once). */
export const MAX_TASKS = 16384;
/** Answered ITTs remembered for duplicate responses. */
const ANSWERED_KEPT = 4096;
/** Unanswered tasks listed one by one at the end; the rest are counted. */
const UNANSWERED_LISTED = 64;

interface Task extends TrackedRequest {
  readonly itt: number;
  readonly from: string;
  readonly label: string;
  readonly edtl: number;
  readonly read: boolean;
  readonly write: boolean;
  readonly readStag: number | null;
  readonly writeStag: number | null;
  readonly entries: LedgerEntry[];
  unsolicited: number;
  unsolicitedTold: boolean;
}

type At =
  | Pick<SendMessage, 'seq' | 'frames' | 'from'>
  | { seq: number | null; frames: readonly number[]; from?: string };

const PROTOCOL = 'iser';

export class IserDissector implements UpperLayerDissector {
  private readonly initiator: Dir;
  private readonly cm: IserCm | null;
  private readonly tasks: RequestTracker<number, Task>;
  private readonly answered = new Map<number, number>();
  /** Initiator STag -> ITT of the live task that advertised it (for timing of RDMA accesses). */
  private readonly byStag = new Map<number, number>();
  private readonly login = new LoginState();
  private readonly streaming: [LeadingLogin | null, LeadingLogin | null];
  private streamingShown = false;
  private hello: 'none' | 'sent' | 'answered' = 'none';
  private helloIrd: number | null = null;
  /** A control-type PDU before the HelloReply was reported (once per connection). */
  private helloOrderTold = false;
  private firstControl = true;
  /** The connection is followed from its start: unknown ITTs and STags are errors. */
  private fromStart: boolean;
  private cappedTold = false;
  private ended = false;
  private readonly skipped = new Map<string, number>();
  private firstSkipped: At | null = null;

  constructor(private readonly env: UlpEnvironment) {
    const c = env.connection;
    this.initiator = initiatorOf(c);
    this.cm = iserCmOf(c.requestPrivateData);
    this.tasks = new RequestTracker(env.timing, MAX_TASKS);
    const target: Dir = this.initiator === 0 ? 1 : 0;
    this.streaming = [null, null];
    this.streaming[this.initiator] = parseLeading(c.leading?.[this.initiator]);
    this.streaming[target] = parseLeading(c.leading?.[target]);
    for (const d of [this.initiator, target]) {
      const s = this.streaming[d];
      if (s) for (const p of s.pdus) this.login.pdu(s.bytes, p.bhs);
    }
    this.fromStart = c.initiatorDir !== null;
    if (this.cm?.reservedSet) {
      this.report(
        R.cmReserved,
        { seq: null, frames: [] },
        `iSER CM REQ private data flags 0x${this.cm.flags.toString(16).padStart(2, '0')} or its reserved octets are not zero`,
      );
    }
    this.checkStreamingLogin();
  }

  private checkStreamingLogin(): void {
    const si = this.streaming[this.initiator];
    if (!si) return;
    // The login is no RDMAP message: the findings name its frames, with no seq.
    const at: At = { seq: null, frames: si.frames };
    if (si.cut || !this.login.done) {
      const why = si.cut
        ? `the initiator sent ${si.bytes.length}+ octets of login in streaming mode, more than the analyzer keeps`
        : this.login.failed !== null
          ? `the last Login Response has status 0x${this.login.failed.toString(16).padStart(4, '0')}`
          : 'no Login Response moved to Full Feature Phase (T=1, NSG=3) before MPA started';
      this.report(R.loginUnfinished, at, `streaming-mode iSCSI login: ${why}`);
    }
    if (!this.login.rdmaExtensions.initiator || !this.login.rdmaExtensions.target) {
      const side = !this.login.rdmaExtensions.initiator ? 'initiator' : 'target';
      this.report(R.rdmaExtensions, at, `the ${side} did not offer RDMAExtensions=Yes in the streaming-mode login`);
    }
  }

  message(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'send') return this.send(m);
    // Data of a task: the target's RDMA Writes and Read Requests, and the initiator's Read Responses
    // carrying what the target pulled (docs/latency.md: first and last data).
    const stag =
      (m.kind === 'write' || m.kind === 'read-request') && m.dir !== this.initiator
        ? m.kind === 'write'
          ? m.stag
          : m.sourceStag
        : m.kind === 'read-response' && m.dir === this.initiator && m.request !== null
          ? m.request.sourceStag
          : null;
    if (stag !== null) {
      const itt = this.byStag.get(stag);
      if (itt !== undefined) this.tasks.data(itt, m.time, m.frame);
    }
    return null;
  }

  captureLoss(dir: Dir): void {
    if (dir === this.initiator) this.fromStart = false;
  }

  private send(m: SendMessage): UlpRecord {
    const nodes: TreeNode[] = [];
    if (!this.streamingShown) {
      this.streamingShown = true;
      const s = this.streamingNode();
      if (s) nodes.push(s);
    }
    if (!m.intact && m.dir === this.initiator) {
      // A command may be unseen or cut before its STags: its ITT and buffers are unknown from here on.
      this.fromStart = false;
      this.env.ledger.strict = false;
    }
    const b = m.payload;
    if (b.length === 0) {
      if (m.length > 0) this.skip('iSER headers', m);
      return { protocol: PROTOCOL, info: `iSER (${m.length} octets, none captured)`, tree: nodes };
    }
    const op = b[0]! >> 4;
    if (op === ISER_OP.hello || op === ISER_OP.helloReply) return this.helloMessage(m, nodes);
    if (op !== ISER_OP.control) {
      this.report(
        R.opcodeUnknown,
        m,
        `iSER opcode 0x${op.toString(16)} (flags 0x${b[0]!.toString(16).padStart(2, '0')})`,
      );
      return { protocol: PROTOCOL, info: `iSER unknown opcode 0x${op.toString(16)}`, tree: nodes };
    }
    const ih = decodeIserHeader(b);
    if (!ih) {
      if (m.payloadComplete) this.report(R.headerShort, m, `${m.length}-octet Send: the iSER header needs 28`);
      else this.skip('iSER headers', m);
      return { protocol: PROTOCOL, info: `iSER (${m.length} octets)`, tree: nodes };
    }
    nodes.push(iserHeaderNode(ih));
    if ((ih.flags & 0x03) !== 0 || ih.reserved !== 0) {
      this.report(
        R.flagsReserved,
        m,
        `iSER flags 0x${ih.flags.toString(16).padStart(2, '0')}, octets 1-3 0x${ih.reserved.toString(16).padStart(6, '0')}: reserved bits set`,
      );
    }
    if (this.hello === 'sent' && m.dir === this.initiator && !this.helloOrderTold) {
      this.helloOrderTold = true;
      this.report(R.helloOrder, m, 'iSCSI control-type PDU sent before the target answered the iSER Hello');
    }
    const h = decodeBhs(b, ISER_HDR_LEN);
    if (!h) {
      if (m.payloadComplete)
        this.report(R.bhsShort, m, `${m.length}-octet Send: iSER header and BHS need ${ISER_HDR_LEN + BHS_LEN}`);
      else this.skip('iSCSI BHS', m);
      return { protocol: PROTOCOL, info: 'iSER iSCSI Control-Type PDU', tree: nodes };
    }
    // The data segment may come padded to 4 octets or not: both lengths delimit the PDU.
    const bare = ISER_HDR_LEN + BHS_LEN + h.ahsLength + h.dataLength;
    const padded = ISER_HDR_LEN + pduLength(h);
    if (m.payloadComplete && (m.length < bare || m.length > padded)) {
      this.report(
        R.pduLength,
        m,
        `TotalAHSLength ${h.ahsLength} and DataSegmentLength ${h.dataLength} make a ${bare}-octet iSER message; the Send has ${m.length}`,
      );
    } else if (!m.payloadComplete && bare > b.length) this.skip('PDU lengths', m);
    const fromTarget = m.dir !== this.initiator;
    if (fromTarget !== isTargetOpcode(h.opcode)) {
      this.report(
        R.wrongSide,
        m,
        `${nameOf(OPCODE_NAMES, h.opcode)} (0x${h.opcode.toString(16).padStart(2, '0')}) sent by the ${fromTarget ? 'target' : 'initiator'}`,
      );
    }
    if (this.firstControl && !fromTarget) {
      this.firstControl = false;
      if (
        this.env.connection.initiatorDir !== null &&
        !this.streaming[this.initiator] &&
        h.opcode !== OP.loginRequest
      ) {
        this.report(
          R.firstNotLogin,
          m,
          `the initiator's first iSCSI PDU is ${nameOf(OPCODE_NAMES, h.opcode)}, not a Login Request`,
        );
      }
      if (this.fromStart && (h.opcode === OP.loginRequest || this.streaming[this.initiator]))
        this.env.ledger.strict = true;
      else if (h.opcode !== OP.loginRequest) this.fromStart = false;
    }
    if (h.opcode === OP.loginRequest || h.opcode === OP.loginResponse) this.login.pdu(b, h);
    let x: TaskExtras = {};
    let command: string | undefined;
    switch (h.opcode) {
      case OP.scsiCommand:
        x = this.command(m, b, h, ih.wsv ? ih.writeStag : null, ih.writeBase, ih.rsv ? ih.readStag : null, ih.readBase);
        break;
      case OP.dataOut:
        command = this.dataOut(m, h);
        break;
      case OP.scsiResponse:
        ({ x, command } = this.response(m, b, h));
        break;
      case OP.dataIn:
      case OP.r2t:
        this.report(
          R.dataPdu,
          m,
          `${nameOf(OPCODE_NAMES, h.opcode)} for ITT ${hex32(h.itt)} in a Send: over iSER the target uses RDMA ${h.opcode === OP.dataIn ? 'Write' : 'Read Requests'}`,
        );
        command = this.tasks.get(h.itt)?.command;
        break;
      default:
        break;
    }
    nodes.push(iscsiNode(b, h, ISER_HDR_LEN, x));
    return { protocol: PROTOCOL, info: iscsiInfo(b, h, command ?? x.command), tree: nodes };
  }

  private helloMessage(m: SendMessage, nodes: TreeNode[]): UlpRecord {
    const h = decodeHello(m.payload);
    if (!h) {
      // Fewer than the 4 octets that hold the versions and IRD/ORD.
      if (m.payloadComplete)
        this.report(R.headerShort, m, `${m.length}-octet iSER Hello/HelloReply: 4 octets at least`);
      else this.skip('iSER Hello headers', m);
      return { protocol: PROTOCOL, info: `iSER Hello/HelloReply (${m.length} octets)`, tree: nodes };
    }
    nodes.push(helloNode(h));
    if (h.maxVer !== ISER_VERSION || h.minVer !== ISER_VERSION) {
      this.report(
        R.helloVersion,
        m,
        `${h.reply ? 'HelloReply MaxVer/CurVer' : 'Hello MaxVer/MinVer'} ${h.maxVer}/${h.minVer}; iSER is version 10`,
      );
    }
    const reservedMask = h.reply ? 0x0e : 0x0f;
    if ((h.flags & reservedMask) !== 0)
      this.report(
        R.flagsReserved,
        m,
        `${h.reply ? 'HelloReply' : 'Hello'} flags 0x${h.flags.toString(16).padStart(2, '0')}: reserved bits set`,
      );
    const fromInitiator = m.dir === this.initiator;
    if (!h.reply) {
      if (!fromInitiator) this.report(R.helloOrder, m, 'the target sent an iSER Hello; the initiator sends it');
      else if (this.hello !== 'none' || !this.firstControl)
        this.report(R.helloOrder, m, 'iSER Hello after the first message of the connection');
      else {
        this.hello = 'sent';
        this.helloIrd = h.irdOrd;
      }
    } else {
      if (fromInitiator)
        this.report(R.helloOrder, m, 'the initiator sent an iSER HelloReply; the target answers the Hello');
      else if (this.hello !== 'sent') this.report(R.helloOrder, m, 'iSER HelloReply without an outstanding Hello');
      else {
        this.hello = 'answered';
        if (this.helloIrd !== null && h.irdOrd > this.helloIrd) {
          this.report(R.helloOrd, m, `HelloReply iSER-ORD ${h.irdOrd} exceeds the Hello's iSER-IRD ${this.helloIrd}`);
        }
      }
      if (h.rej) this.report(R.helloRejected, m, 'the target rejected the iSER connection (REJ)');
    }
    return { protocol: PROTOCOL, info: helloInfo(h), tree: nodes };
  }

  private command(
    m: SendMessage,
    b: Uint8Array,
    h: Bhs,
    writeStag: number | null,
    writeBase: bigint,
    readStag: number | null,
    readBase: bigint,
  ): TaskExtras {
    const cdb = decodeCdb(b, ISER_HDR_LEN);
    if (!cdb) this.skip('SCSI CDBs', m);
    const name = cdb ? scsiOpName(cdb.opcode) : 'SCSI Command';
    const read = (h.flags & CMD_R) !== 0;
    const write = (h.flags & CMD_W) !== 0;
    const edtl = h.word20;
    const immediate = Math.min(h.dataLength, Math.max(0, m.length - ISER_HDR_LEN - BHS_LEN - h.ahsLength));
    const label = `SCSI ${name} ITT ${hex32(h.itt)}`;
    // RFC 7145 §9.2: WSV only with W and solicited data left; RSV only with R.
    const solicited = write ? edtl - immediate > 0 && (h.flags & 0x80) !== 0 : false;
    if (writeStag !== null && !write) this.report(R.stagFlags, m, `${label}: WSV set but the command has no W bit`);
    if (readStag !== null && !read) this.report(R.stagFlags, m, `${label}: RSV set but the command has no R bit`);
    if (read && edtl > 0 && readStag === null && !write)
      this.report(R.stagFlags, m, `${label}: R bit with ${edtl} octets expected but no Read STag (RSV clear)`);
    if (solicited && writeStag === null)
      this.report(
        R.stagFlags,
        m,
        `${label}: W bit with ${edtl - immediate} octets beyond the immediate data but no Write STag (WSV clear)`,
      );
    if (immediate > edtl)
      this.report(R.unsolicited, m, `${label}: ${immediate} octets of immediate data, more than the EDTL ${edtl}`);
    const task: Task = {
      program: 'SCSI',
      command: name,
      code: cdb?.opcode ?? 0,
      queue: `flow ${this.env.connection.flow}`,
      time: m.time,
      seq: m.seq,
      frames: [...m.frames],
      firstData: Number.NaN,
      lastData: Number.NaN,
      itt: h.itt,
      from: m.from,
      label,
      edtl,
      read,
      write,
      readStag,
      writeStag,
      entries: [],
      unsolicited: immediate,
      unsolicitedTold: immediate > edtl,
    };
    this.answered.delete(h.itt);
    const before = this.tasks.start(h.itt, task);
    if (before) {
      this.report(
        R.ittReused,
        m,
        `${label}: ITT already names the outstanding ${before.label} (frame ${before.frames[0] ?? '?'})`,
      );
      this.forget(before);
    }
    if (this.tasks.dropped > 0 && !this.cappedTold) {
      this.cappedTold = true;
      this.report(
        R.tasksCapped,
        m,
        `more than ${MAX_TASKS} SCSI Commands outstanding on the connection; the oldest are no longer tracked`,
      );
      this.env.ledger.strict = false;
      this.fromStart = false;
    }
    const ledger = this.env.ledger;
    const adv = (stag: number, base: bigint, length: number, access: 'remote-write' | 'remote-read'): void => {
      task.entries.push(
        ledger.advertise({
          owner: this.initiator,
          stag,
          base,
          length,
          access,
          request: h.itt,
          label,
          invalidate: false,
          seq: m.seq,
          frames: task.frames,
        }),
      );
      this.byStag.set(stag, h.itt);
    };
    // The Read STag takes the target's RDMA Writes of Data-In (EDTL octets); the Write STag its RDMA
    // Read Requests of the solicited Data-Out, at most EDTL less the immediate data (RFC 7145 §9.5).
    if (readStag !== null && read) adv(readStag, readBase, edtl, 'remote-write');
    if (writeStag !== null && write) adv(writeStag, writeBase, Math.max(0, edtl - immediate), 'remote-read');
    return { command: name };
  }

  private dataOut(m: SendMessage, h: Bhs): string | undefined {
    const t = this.tasks.get(h.itt);
    if (!t) return undefined;
    t.unsolicited += h.dataLength;
    if (t.unsolicited > t.edtl && !t.unsolicitedTold) {
      t.unsolicitedTold = true;
      this.report(
        R.unsolicited,
        m,
        `${t.label}: ${t.unsolicited} octets of immediate and unsolicited data, more than the EDTL ${t.edtl}`,
      );
    }
    return t.command;
  }

  private response(m: SendMessage, b: Uint8Array, h: Bhs): { x: TaskExtras; command?: string } {
    const t = this.tasks.finish(h.itt, m.time, m.frame);
    const inv = m.invalidateStag;
    if (inv !== null && this.cm?.sendInvalidateNotSupported) {
      this.report(
        R.invalidateNotAllowed,
        m,
        `Send with Invalidate of STag ${hex32(inv)}; the initiator's iSER CM private data says Send with Invalidate is not supported`,
      );
    }
    if (!t) {
      const answered = this.answered.get(h.itt);
      if (answered !== undefined)
        this.report(R.duplicate, m, `SCSI Response for ITT ${hex32(h.itt)}, already answered in frame ${answered}`);
      else if (this.fromStart)
        this.report(R.orphan, m, `SCSI Response for ITT ${hex32(h.itt)}, which no outstanding SCSI Command has`);
      return { x: {} };
    }
    this.answered.set(h.itt, m.frames[0] ?? 0);
    if (this.answered.size > ANSWERED_KEPT) this.answered.delete(this.answered.keys().next().value!);
    if (inv !== null && inv !== t.readStag && inv !== t.writeStag) {
      this.report(
        R.invalidateWrong,
        m,
        `Send with Invalidate of STag ${hex32(inv)} answering ${t.label}, whose STags are ${
          [t.readStag, t.writeStag]
            .filter((s) => s !== null)
            .map((s) => hex32(s!))
            .join(', ') || 'none'
        }`,
      );
    }
    this.env.ledger.retire(this.initiator, h.itt);
    this.forget(t);
    const flags = h.flags;
    if (
      ((flags & RSP_OVER) !== 0 && (flags & RSP_UNDER) !== 0) ||
      ((flags & RSP_BIDI_OVER) !== 0 && (flags & RSP_BIDI_UNDER) !== 0)
    ) {
      this.report(R.residualFlags, m, `SCSI Response for ${t.label} sets both overflow and underflow`);
    }
    const moved = t.entries.reduce((n, e) => n + e.moved, 0);
    const status = b[ISER_HDR_LEN + 3] ?? 0;
    const response = b[ISER_HDR_LEN + 2] ?? 0;
    const countable =
      t.entries.every((e) => !e.dropped) && this.fromStart && m.intact && status === 0 && response === 0;
    const total = moved + (t.write ? t.unsolicited : 0);
    if (countable) {
      const residual = h.word44;
      const expected = (flags & RSP_UNDER) !== 0 ? t.edtl - residual : t.edtl;
      if (total !== expected) {
        const why =
          (flags & RSP_UNDER) !== 0
            ? `EDTL ${t.edtl} less the residual underflow ${residual}`
            : (flags & RSP_OVER) !== 0
              ? `EDTL ${t.edtl} (residual overflow ${residual})`
              : `EDTL ${t.edtl}, no residual`;
        this.report(
          R.residual,
          m,
          `${t.label}: ${total} octets moved (${moved} by RDMA${t.write ? `, ${t.unsolicited} immediate/unsolicited` : ''}); the response says ${Math.max(0, expected)} (${why})`,
        );
      }
    }
    return {
      x: {
        requestFrame: t.frames[0] ?? 0,
        timeUs: Number.isFinite(m.time - t.time) ? Math.round((m.time - t.time) * 1e6) : 0,
        moved,
        ...(t.write ? { unsolicited: t.unsolicited } : {}),
        ...(inv !== null ? { invalidated: inv } : {}),
        command: t.command,
      },
      command: t.command,
    };
  }

  private forget(t: Task): void {
    for (const s of [t.readStag, t.writeStag]) if (s !== null && this.byStag.get(s) === t.itt) this.byStag.delete(s);
  }

  private streamingNode(): TreeNode | null {
    const target: Dir = this.initiator === 0 ? 1 : 0;
    return streamingLoginNode([this.streaming[this.initiator], this.streaming[target]], this.login.done);
  }

  end(lastTime: number): void {
    if (this.ended) return;
    this.ended = true;
    let n = 0;
    for (const t of this.tasks.outstanding()) {
      if (n++ < UNANSWERED_LISTED) {
        const age = Number.isFinite(lastTime - t.time)
          ? `; waiting ${(lastTime - t.time).toFixed(6)} s when the capture ended`
          : '';
        this.report(
          R.unanswered,
          { seq: t.seq, frames: t.frames, from: t.from },
          `${t.label} was never answered${age}`,
        );
      }
      this.env.timing({
        program: t.program,
        command: t.command,
        code: t.code,
        queue: t.queue,
        request: t.time,
        firstData: t.firstData,
        lastData: t.lastData,
        response: Number.NaN,
      });
    }
    if (n > UNANSWERED_LISTED)
      this.report(
        R.unanswered,
        { seq: null, frames: [] },
        `${n - UNANSWERED_LISTED} more SCSI Commands were never answered`,
      );
    if (!this.streaming[this.initiator] && this.login.requested && !this.login.done) {
      this.report(
        R.loginUnfinished,
        { seq: null, frames: [] },
        this.login.failed !== null
          ? `iSER-assisted login failed with status 0x${this.login.failed.toString(16).padStart(4, '0')}`
          : 'the iSER-assisted login never reached Full Feature Phase',
      );
    }
    if (this.firstSkipped) {
      const list = [...this.skipped].map(([what, k]) => `${what} (${k}×)`).join('; ');
      this.report(R.notCaptured, this.firstSkipped, `octets not captured, not checked: ${list}`);
    }
  }

  private skip(what: string, at: At): void {
    this.skipped.set(what, (this.skipped.get(what) ?? 0) + 1);
    this.firstSkipped ??= { seq: at.seq, frames: [...at.frames], ...(at.from !== undefined ? { from: at.from } : {}) };
  }

  private report(rule: string, at: At, message: string): void {
    this.env.sink.report(rule, {
      flow: this.env.connection.flow,
      from: at.from ?? null,
      frames: at.frames,
      seq: at.seq,
      message,
    });
  }
}
