/**
 * Feeds RdmapMessage records to the iSER dissector as the RDMAP side would: RDMA Writes, Read
 * Requests and Sends with Invalidate go to a real BufferLedger first, then to the upper layer.
 * Findings are collected against the rule catalogs (unknown ids throw).
 */
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import { LEDGER_RULES } from '../../dissectors/ddp-rdmap/ledger-rules.js';
import type {
  Dir,
  LeadingOctets,
  RdmapMessage,
  RequestTiming,
  SendMessage,
  UlpConnection,
  UlpRecord,
  UpperLayerDissector,
} from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { ISER } from '../../dissectors/iser/index.js';
import type { Finding, FindingInput, FindingSink } from '../../src/vocabulary/findings.js';

const RULES = new Map([...ISER.rules, ...LEDGER_RULES].map((r) => [r.id, r]));

export class CollectSink implements FindingSink {
  readonly findings: Finding[] = [];
  report(ruleId: string, f: FindingInput): void {
    const r = RULES.get(ruleId);
    if (!r) throw new Error(`unknown rule ${ruleId}`);
    this.findings.push({ rule: ruleId, severity: r.severity, rfcErrorCode: null, ...f, frames: [...f.frames] });
  }
  rules(): string[] {
    return this.findings.map((f) => f.rule);
  }
}

export function connection(o: Partial<UlpConnection> = {}): UlpConnection {
  return {
    flow: 3,
    initiatorDir: 0,
    ports: [40000, 3260],
    serverPort: 3260,
    requestPrivateData: new Uint8Array(4),
    replyPrivateData: null,
    rejected: false,
    requestIrd: null,
    requestOrd: null,
    replyIrd: null,
    replyOrd: null,
    ...o,
  };
}

/** Leading octets as MPA keeps them: from the stream's start, one frame. */
export function leading(bytes: Uint8Array, length = bytes.length): LeadingOctets {
  return { bytes, length, seq: 100, fromStart: true, frames: [0, 4] };
}

export class Wire {
  readonly sink = new CollectSink();
  readonly ledger: BufferLedger;
  readonly dissector: UpperLayerDissector;
  readonly records: (UlpRecord | null)[] = [];
  readonly timings: RequestTiming[] = [];
  private frame = 1;
  time = 1000;
  private seq = 1;
  private msn: [number, number] = [1, 1];

  constructor(readonly conn: UlpConnection = connection()) {
    this.ledger = new BufferLedger(conn.flow, this.sink);
    this.dissector = ISER.create({
      connection: conn,
      sink: this.sink,
      ledger: this.ledger,
      timing: (t) => this.timings.push(t),
    });
  }

  private base(dir: Dir, length: number) {
    const frame = this.frame++;
    this.time += 0.001;
    const seq = this.seq;
    this.seq += length + 10;
    return {
      flow: this.conn.flow,
      dir,
      from: dir === 0 ? '10.0.0.1:40000' : '10.0.0.2:3260',
      seq,
      lastSeq: seq,
      frames: [frame],
      time: this.time,
      length,
      intact: true,
    };
  }

  sendMessage(dir: Dir, payload: Uint8Array, o: { invalidate?: number; captured?: number } = {}): SendMessage {
    const kept = payload.subarray(0, o.captured ?? payload.length);
    return {
      ...this.base(dir, payload.length),
      kind: 'send',
      opcode: o.invalidate === undefined ? 3 : 4,
      qn: 0,
      msn: this.msn[dir]++,
      solicited: false,
      invalidateStag: o.invalidate ?? null,
      payload: kept,
      payloadComplete: kept.length === payload.length,
      intact: kept.length === payload.length,
    };
  }

  feed(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'write') this.ledger.write(m);
    else if (m.kind === 'read-request') this.ledger.readRequest(m);
    else if (m.kind === 'send') this.ledger.sendInvalidate(m);
    const r = this.dissector.message(m);
    this.records.push(r);
    return r;
  }

  initiator(payload: Uint8Array, o: { invalidate?: number; captured?: number } = {}): UlpRecord | null {
    return this.feed(this.sendMessage(0, payload, o));
  }
  target(payload: Uint8Array, o: { invalidate?: number; captured?: number } = {}): UlpRecord | null {
    return this.feed(this.sendMessage(1, payload, o));
  }
  write(stag: number, to: bigint, length: number): void {
    this.feed({ ...this.base(1, length), kind: 'write', opcode: 0, stag, to });
  }
  readRequest(stag: number, to: bigint, readSize: number): void {
    this.feed({
      ...this.base(1, 28),
      kind: 'read-request',
      opcode: 1,
      sinkStag: 0x5000,
      sinkTo: 0n,
      sourceStag: stag,
      sourceTo: to,
      readSize,
    });
  }
  end(): void {
    this.dissector.end(this.time);
  }
}
