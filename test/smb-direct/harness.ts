/** Feeds RdmapMessage records to the SMB Direct dissector with a real BufferLedger. */
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import { LEDGER_RULES } from '../../dissectors/ddp-rdmap/ledger-rules.js';
import {
  ULP_PAYLOAD_BOUND,
  type Dir,
  type RdmapMessage,
  type ReadRequestMessage,
  type ReadResponseMessage,
  type RequestTiming,
  type SendMessage,
  type UlpConnection,
  type UlpRecord,
  type UpperLayerDissector,
  type WriteMessage,
} from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { SMB_DIRECT } from '../../dissectors/smb-direct/index.js';
import type { Finding, FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import {
  dataTransfer,
  negotiateRequest,
  negotiateResponse,
  type Dt,
  type NegReq,
  type NegRsp,
} from '../../src/generate/smbd-encoder.js';

const RULES = new Map([...SMB_DIRECT.rules, ...LEDGER_RULES].map((r) => [r.id, r]));

export class CollectSink implements FindingSink {
  readonly findings: Finding[] = [];
  report(ruleId: string, f: FindingInput): void {
    const r = RULES.get(ruleId);
    if (!r) throw new Error(`unknown rule ${ruleId}`);
    this.findings.push({
      rule: ruleId,
      severity: r.severity,
      rfcErrorCode: r.rfcErrorCode,
      ...f,
      frames: [...f.frames],
    });
  }
  rules(): string[] {
    return this.findings.map((f) => f.rule);
  }
  of(rule: string): Finding[] {
    return this.findings.filter((f) => f.rule === rule);
  }
}

export const CLIENT: Dir = 0;
export const SERVER: Dir = 1;

export function connection(c: Partial<UlpConnection> = {}): UlpConnection {
  return {
    flow: 1,
    initiatorDir: 0,
    ports: [40000, 5445],
    serverPort: 5445,
    requestPrivateData: null,
    replyPrivateData: null,
    rejected: false,
    requestIrd: null,
    requestOrd: null,
    replyIrd: null,
    replyOrd: null,
    ...c,
  };
}

export interface SendOpts {
  invalidate?: number;
  /** Octets on the wire (default: the payload length). */
  length?: number;
  /** Keep only this many payload octets (a snaplen cut). */
  captured?: number;
  se?: boolean;
  /** Overwrite the payload once the call returned (it is a view valid only during the call). */
  scrub?: boolean;
}

export class Harness {
  readonly sink = new CollectSink();
  readonly ledger: BufferLedger;
  readonly timings: RequestTiming[] = [];
  readonly records: Array<UlpRecord | null> = [];
  readonly d: UpperLayerDissector;
  private frame = 1;
  private seq = [1000, 5000];
  private msn = [1, 1];
  time = 1_700_000_000;

  constructor(
    conn: Partial<UlpConnection> = {},
    /** The RDMAP side checks the ledger before (true) or after (false) the upper layer sees the message. */
    private readonly ledgerFirst = true,
  ) {
    this.ledger = new BufferLedger(1, this.sink);
    this.d = SMB_DIRECT.create({
      connection: connection(conn),
      sink: this.sink,
      ledger: this.ledger,
      timing: (t) => this.timings.push(t),
    });
  }

  private base(dir: Dir, length: number) {
    const seq = this.seq[dir]!;
    this.seq[dir] = seq + length + 24;
    this.time += 0.0001;
    const frames = [this.frame++];
    return {
      flow: 1,
      dir,
      from: dir === 0 ? '10.0.0.1:40000' : '10.0.0.2:5445',
      seq,
      lastSeq: seq,
      frames,
      time: this.time,
      length,
      intact: true,
    };
  }

  feed(m: RdmapMessage): UlpRecord | null {
    if (this.ledgerFirst) this.rdmapSide(m);
    const r = this.d.message(m);
    if (!this.ledgerFirst) this.rdmapSide(m);
    this.records.push(r);
    return r;
  }

  /** What the DDP/RDMAP analyzer does with the ledger for each message. */
  private rdmapSide(m: RdmapMessage): void {
    if (m.kind === 'write') this.ledger.write(m);
    else if (m.kind === 'read-request') this.ledger.readRequest(m);
    else if (m.kind === 'read-response') this.ledger.readResponse(m);
    else if (m.kind === 'send' && m.invalidateStag !== null) this.ledger.sendInvalidate(m);
  }

  send(dir: Dir, payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    const length = o.length ?? payload.length;
    const keep = Math.min(payload.length, ULP_PAYLOAD_BOUND, o.captured ?? Number.MAX_SAFE_INTEGER);
    const complete = keep >= length;
    const inv = o.invalidate ?? null;
    const m: SendMessage = {
      ...this.base(dir, length),
      intact: complete,
      kind: 'send',
      opcode: inv !== null ? (o.se ? 0x6 : 0x4) : o.se ? 0x5 : 0x3,
      qn: 0,
      msn: this.msn[dir]!++,
      solicited: o.se ?? false,
      invalidateStag: inv,
      payload: payload.slice(0, keep),
      payloadComplete: complete,
    };
    const r = this.feed(m);
    if (o.scrub) (m.payload as Uint8Array).fill(0xee);
    return r;
  }

  write(dir: Dir, stag: number, to: bigint | number, length: number, intact = true): void {
    const m: WriteMessage = { ...this.base(dir, length), intact, kind: 'write', opcode: 0, stag, to: BigInt(to) };
    this.feed(m);
  }

  readRequest(dir: Dir, sourceStag: number, sourceTo: bigint | number, readSize: number): ReadRequestMessage {
    const m: ReadRequestMessage = {
      ...this.base(dir, 28),
      kind: 'read-request',
      opcode: 1,
      sinkStag: 0x5000 + this.frame,
      sinkTo: 0n,
      sourceStag,
      sourceTo: BigInt(sourceTo),
      readSize,
    };
    this.feed(m);
    return m;
  }

  readResponse(dir: Dir, rr: ReadRequestMessage): void {
    const m: ReadResponseMessage = {
      ...this.base(dir, rr.readSize),
      kind: 'read-response',
      opcode: 2,
      stag: rr.sinkStag,
      to: rr.sinkTo,
      request: {
        sourceStag: rr.sourceStag,
        sourceTo: rr.sourceTo,
        readSize: rr.readSize,
        seq: rr.seq,
        frames: rr.frames,
      },
    };
    this.feed(m);
  }

  /** A Data Transfer carrying `data` (an SMB2 message) or nothing. */
  dt(dir: Dir, data: Uint8Array | null, p: Partial<Dt> = {}, o: SendOpts = {}): UlpRecord | null {
    return this.send(dir, dataTransfer({ ...p, ...(data ? { data } : {}) }), o);
  }

  /** Negotiate Request and Response. */
  negotiate(req: Partial<NegReq> = {}, rsp: Partial<NegRsp> = {}): void {
    this.send(CLIENT, negotiateRequest(req));
    this.send(SERVER, negotiateResponse(rsp));
  }

  /** Negotiation, then a Data Transfer each way so that both sides hold credits (MS-SMBD 4.1). */
  establish(req: Partial<NegReq> = {}, rsp: Partial<NegRsp> = {}): void {
    this.negotiate(req, rsp);
    this.dt(CLIENT, null, { creditsGranted: 255 });
    this.dt(SERVER, null, { creditsGranted: 1 });
  }

  end(): void {
    this.d.end(this.time + 1);
  }

  info(): string[] {
    return this.records.filter((r): r is UlpRecord => r !== null).map((r) => r.info);
  }

  last(): UlpRecord {
    const r = this.records[this.records.length - 1];
    if (!r) throw new Error('no record');
    return r;
  }
}
