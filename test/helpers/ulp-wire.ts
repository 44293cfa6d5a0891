/**
 * Feeds RdmapMessage records to an upper-layer dissector as the RDMAP side would: each RDMA Write,
 * Read Request and Send with Invalidate goes to a real BufferLedger first, then the message goes to
 * the upper layer. Findings are collected against the rule catalogs (unknown ids throw). One
 * harness for every upper layer: each test folder names its roles (call/reply, command/complete).
 */
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import { LEDGER_RULES } from '../../dissectors/ddp-rdmap/ledger-rules.js';
import type {
  Dir,
  RdmapMessage,
  RequestTiming,
  SendMessage,
  UlpConnection,
  UlpRecord,
  UpperLayerDissector,
  UpperLayerSpec,
} from '../../dissectors/ddp-rdmap/ulp-contract.js';
import type { Finding, FindingInput, FindingSink, RuleDef } from '../../src/vocabulary/findings.js';

/** Findings of an upper layer's rules and the ledger's; an id in neither throws. */
export class RuleSink implements FindingSink {
  readonly findings: Finding[] = [];
  private readonly catalog: ReadonlyMap<string, RuleDef>;
  constructor(rules: readonly RuleDef[]) {
    this.catalog = new Map([...rules, ...LEDGER_RULES].map((r) => [r.id, r]));
  }
  report(ruleId: string, f: FindingInput): void {
    const r = this.catalog.get(ruleId);
    if (!r) throw new Error(`unknown rule ${ruleId}`);
    this.findings.push({ rule: ruleId, severity: r.severity, rfcErrorCode: null, ...f, frames: [...f.frames] });
  }
  rules(): string[] {
    return this.findings.map((f) => f.rule);
  }
  of(rule: string): Finding[] {
    return this.findings.filter((f) => f.rule === rule);
  }
}

/** A connection from 10.0.0.1:40000 to the server port, with `o` over the defaults. */
export function ulpConnection(flow: number, serverPort: number, o: Partial<UlpConnection> = {}): UlpConnection {
  return {
    flow,
    initiatorDir: 0,
    ports: [40000, serverPort],
    serverPort,
    requestPrivateData: null,
    replyPrivateData: null,
    rejected: false,
    requestIrd: null,
    requestOrd: null,
    replyIrd: null,
    replyOrd: null,
    ...o,
  };
}

export interface SendOpts {
  invalidate?: number;
  /** Octets of the message actually captured (snaplen); the rest is counted, not kept. */
  captured?: number;
  /** Length of the message on the wire, when larger than the payload given. */
  length?: number;
}

export class UlpWire<S extends RuleSink = RuleSink> {
  readonly ledger: BufferLedger;
  readonly dissector: UpperLayerDissector;
  readonly records: (UlpRecord | null)[] = [];
  readonly timings: RequestTiming[] = [];
  private frame = 1;
  time = 1000;
  private seq = 1;
  private msn: [number, number] = [1, 1];
  /** Send with Invalidate to the ledger after the upper layer instead of before. */
  invalidateAfter = false;

  constructor(
    spec: UpperLayerSpec,
    readonly conn: UlpConnection,
    readonly sink: S,
    shared?: Map<string, unknown>,
  ) {
    this.ledger = new BufferLedger(conn.flow, this.sink);
    this.dissector = spec.create({
      connection: conn,
      sink: this.sink,
      ledger: this.ledger,
      timing: (t) => this.timings.push(t),
      ...(shared ? { shared } : {}),
    });
  }

  /**
   * The fields every message has, in a fresh object the builders below add theirs to with
   * Object.assign: a spread of it into a literal is many times slower (V8), and the hostile-volume
   * tests send millions of messages.
   */
  private base(dir: Dir, length: number) {
    const frame = this.frame++;
    this.time += 0.001;
    const seq = this.seq;
    this.seq += length + 10;
    return {
      flow: this.conn.flow,
      dir,
      from: dir === 0 ? '10.0.0.1:40000' : `10.0.0.2:${this.conn.serverPort}`,
      seq,
      lastSeq: seq,
      frames: [frame],
      frame,
      time: this.time,
      length,
      intact: true,
    };
  }

  sendMessage(dir: Dir, payload: Uint8Array, o: SendOpts = {}): SendMessage {
    const length = o.length ?? payload.length;
    // The payload itself when it is all captured (a view per message is not free either).
    const kept = o.captured === undefined || o.captured >= payload.length ? payload : payload.subarray(0, o.captured);
    return Object.assign(this.base(dir, length), {
      kind: 'send' as const,
      opcode: o.invalidate === undefined ? 3 : 4,
      qn: 0,
      msn: this.msn[dir]++,
      solicited: false,
      invalidateStag: o.invalidate ?? null,
      payload: kept,
      payloadComplete: kept.length === length,
      intact: kept.length === length,
    });
  }

  feed(m: RdmapMessage): UlpRecord | null {
    if (m.kind === 'write') this.ledger.write(m);
    else if (m.kind === 'read-request') this.ledger.readRequest(m);
    else if (m.kind === 'send' && !this.invalidateAfter) this.ledger.sendInvalidate(m);
    const r = this.dissector.message(m);
    if (m.kind === 'send' && this.invalidateAfter) this.ledger.sendInvalidate(m);
    this.records.push(r);
    return r;
  }

  /** A Send from the client (direction 0) or the server (1). */
  send(dir: Dir, payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.feed(this.sendMessage(dir, payload, o));
  }

  /** An RDMA Write from the server into the client's buffer (with its octets when given). */
  write(stag: number, to: bigint, length: number, data?: Uint8Array): UlpRecord | null {
    return this.feed(
      Object.assign(this.base(1, length), { kind: 'write' as const, opcode: 0, stag, to }, data ? { data } : {}),
    );
  }

  /** An RDMA Read Request from the server whose Data Source is the client's buffer. */
  readRequest(stag: number, to: bigint, readSize: number): UlpRecord | null {
    return this.feed(
      Object.assign(this.base(1, 28), {
        kind: 'read-request' as const,
        opcode: 1,
        sinkStag: 0x5000,
        sinkTo: 0n,
        sourceStag: stag,
        sourceTo: to,
        readSize,
      }),
    );
  }

  /** The client's Read Response to a Read Request of `stag` at `to` (with its first octets when given). */
  readResponse(stag: number, to: bigint, length: number, data?: Uint8Array): UlpRecord | null {
    return this.feed(
      Object.assign(
        this.base(0, length),
        {
          kind: 'read-response' as const,
          opcode: 2,
          stag: 0x5000,
          to: 0n,
          request: { sourceStag: stag, sourceTo: to, readSize: length, seq: 0, frames: [] },
        },
        data ? { data } : {},
      ),
    );
  }

  end(): void {
    this.dissector.end(this.time);
  }
}
