/**
 * The hand-off from DDP/RDMAP to an upper layer, one per connection: it gathers each Send's
 * payload across its DDP segments (by MO, bounded), turns each completed RDMAP message into an
 * RdmapMessage record (rdmap-message.ts), checks it against the buffer ledger (RDMA Write, Read
 * Request Data Source, Send with Invalidate), and passes it to the connection's upper layer.
 *
 * The upper layer is chosen as Wireshark's heuristic sub-dissectors are: what the pipeline decides
 * from the connection (forced by --ulp, private data, then port), else the first upper layer whose
 * first-message test accepts the connection's first Send. A connection nobody claims costs nothing
 * after that Send: bodyBytes drops to 0 and MPA stops keeping untagged octets for it.
 */
import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { Ulpdu } from '../mpa/ulpdu.js';
import { BufferLedger } from './buffer-ledger.js';
import type { TaggedPdu, UntaggedPdu } from './decode.js';
import type { OpenMsg } from './direction-state.js';
import { OP } from './fields.js';
import {
  ULP_PAYLOAD_BOUND,
  type RdmapMessage,
  type ReadResponseMessage,
  type RequestTiming,
  type SendMessage,
  type UlpConnection,
  type UlpRecord,
  type UpperLayerDissector,
  type UpperLayerSpec,
  type WriteMessage,
} from './ulp-contract.js';

/** What the pipeline decided for a connection before its first Send. */
export interface UlpSelection {
  /** The upper layer to decode, or null. */
  readonly spec: UpperLayerSpec | null;
  /** How it was chosen, shown in the flow table and report. */
  readonly basis: 'forced' | 'private-data' | 'port' | null;
  /** When spec is null: upper layers whose first-message test may still claim the connection (none: no decoding). */
  readonly candidates: readonly UpperLayerSpec[];
}

/** report-schema addition: `flows[].ulp`. */
export interface UlpFlowSummary {
  /** `--ulp` name: "smb-direct", "rpc-rdma". */
  readonly protocol: string;
  readonly name: string;
  /** How it was chosen: forced (--ulp), private-data, or heuristic (the first Send). */
  readonly basis: 'forced' | 'private-data' | 'port' | 'heuristic';
  /** RDMAP messages it decoded. */
  readonly messages: number;
}

/** Injected by the pipeline (this layer knows no upper layer by name). */
export interface UlpChooser {
  select(c: UlpConnection): UlpSelection;
  /** Every answered request's timing (service response time statistics). */
  readonly timing: (t: RequestTiming) => void;
  /** Capture time (seconds since the epoch) and number of the frame being dissected. */
  readonly clock: { now: number; frame?: number };
  /** The analysis' store for facts spanning connections (UlpEnvironment.shared). */
  readonly shared?: Map<string, unknown>;
}

const isSend = (op: number): boolean =>
  op === OP.SEND || op === OP.SEND_INVALIDATE || op === OP.SEND_SE || op === OP.SEND_SE_INVALIDATE;

/** The first octets of a tagged message an upper layer waits for, gathered by TO from its first segment's. */
interface PendingTagged {
  readonly base: bigint;
  readonly buf: Uint8Array;
  /** Octets held without a hole from `base`. */
  contig: number;
}

/** Octets of a tagged message kept for the upper layer at most (Advertisement.keep is capped to it). */
export const TAGGED_KEEP_BOUND = 4096;
const DDP_TAGGED = 14;
/** Tagged messages gathered at once per direction (a few structures in flight; the oldest forgotten). */
const MAX_TAGGED_PENDING = 8;

/** A Send spanning several DDP segments, gathered by MO. */
interface PendingSend {
  buf: Uint8Array;
  /** Payload octets captured and copied. */
  got: number;
  /** End of the octets held without a hole from MO 0: what the upper layer is given. */
  contig: number;
  /** Octets known to be missing (not captured, or past the bound). */
  missing: boolean;
}

const DDP_UNTAGGED = 18;
const EMPTY = new Uint8Array(0);
/**
 * Buffers of gathered Sends free again once the upper layer has read them, shared by the
 * connections of a thread: the next multi-segment Send reuses one (only octets written from MO 0
 * without a hole are ever shown), so a stream of them allocates nothing and idle connections hold
 * none.
 */
const SPARE: Uint8Array[] = [];
const MAX_SPARE = 16;

export class UlpHandoff {
  private state: 'undecided' | 'active' | 'none' = 'undecided';
  private dissector: UpperLayerDissector | null = null;
  private conn: UlpConnection | null = null;
  private candidates: readonly UpperLayerSpec[] = [];
  /** The upper layer decoded, and how it was chosen (for the report). */
  spec: UpperLayerSpec | null = null;
  basis: UlpSelection['basis'] | 'heuristic' = null;
  /**
   * Made on first use (an upper layer chosen, or a capture loss): 100,000 connections that carry
   * no upper layer, or have not reached their first message, hold no ledger and its maps.
   */
  private ledgerOf: BufferLedger | null = null;
  private pending: [Map<number, PendingSend> | null, Map<number, PendingSend> | null] = [null, null];
  private tagPending: [Map<number, PendingTagged> | null, Map<number, PendingTagged> | null] = [null, null];
  /** Directions whose octets the capture lost before the upper layer was chosen. */
  private readonly lost: [boolean, boolean] = [false, false];
  /** Messages the upper layer decoded. */
  private messages = 0;

  constructor(
    private readonly flow: number,
    private readonly sink: FindingSink,
    private readonly chooser: UlpChooser,
    private readonly connection: () => UlpConnection,
  ) {}

  get ledger(): BufferLedger {
    return (this.ledgerOf ??= new BufferLedger(this.flow, this.sink));
  }

  /** True while the ledger waits for data direction `dir` places or returns (no ledger: false). */
  keeping(dir: 0 | 1): boolean {
    return this.ledgerOf?.keeping(dir) === true;
  }

  /** Octets of each untagged ULPDU MPA should keep whole: the bound while an upper layer may use them. */
  get bodyBytes(): number {
    return this.state === 'none' ? 0 : ULP_PAYLOAD_BOUND;
  }

  /** Octets of each tagged ULPDU of `dir` MPA should keep: only while a ledger entry waits for placed data. */
  taggedBytes(dir: 0 | 1): number {
    return this.state === 'active' && this.keeping(dir) ? TAGGED_KEEP_BOUND + DDP_TAGGED : 0;
  }

  /**
   * A tagged segment of `u.dir` while the ledger waits for data that direction carries: an RDMA
   * Write into a buffer whose entry has `keep`, or any Read Response (its Data Source is known
   * only at the message's end). Its payload joins the message's copy, by TO.
   */
  tagged(u: Ulpdu, p: TaggedPdu): void {
    if (this.state !== 'active') return;
    const op = p.rdmap.opcode;
    if (op === OP.WRITE) {
      if (this.ledger.keepOf(u.dir === 0 ? 1 : 0, p.stag) === 0) return;
    } else if (op !== OP.READ_RESPONSE) return;
    const map = (this.tagPending[u.dir] ??= new Map());
    let t = map.get(p.stag);
    if (!t) {
      t = { base: p.to, buf: new Uint8Array(TAGGED_KEEP_BOUND), contig: 0 };
      map.set(p.stag, t);
      if (map.size > MAX_TAGGED_PENDING) map.delete(map.keys().next().value!);
    }
    const off = p.to - t.base;
    // Only what continues the octets held from the message's first TO: a hole ends the copy.
    if (off !== BigInt(t.contig) || t.contig >= TAGGED_KEEP_BOUND) return;
    const src = u.body ?? u.head;
    const have = Math.max(0, Math.min(src.length, p.length) - DDP_TAGGED);
    const n = Math.min(have, Math.max(0, p.payloadLength), TAGGED_KEEP_BOUND - t.contig);
    t.buf.set(src.subarray(DDP_TAGGED, DDP_TAGGED + n), t.contig);
    t.contig += n;
  }

  /** The octets gathered for the tagged message of `stag` that began at `to`, if any (taken). */
  private taggedData(dir: 0 | 1, stag: number, to: bigint): Uint8Array | undefined {
    const map = this.tagPending[dir];
    const t = map?.get(stag);
    if (!t) return undefined;
    map!.delete(stag);
    return t.base === to && t.contig > 0 ? t.buf.subarray(0, t.contig) : undefined;
  }

  /** Decides once, at the first message, from what the pipeline knows of the connection. */
  private decide(): UlpHandoff['state'] {
    const c = (this.conn = this.connection());
    const sel = this.chooser.select(c);
    if (sel.spec) this.activate(sel.spec, sel.basis);
    else if (sel.candidates.length > 0) this.candidates = sel.candidates;
    else this.state = 'none';
    return this.state;
  }

  private activate(spec: UpperLayerSpec, basis: UlpHandoff['basis']): void {
    this.spec = spec;
    this.basis = basis;
    this.state = 'active';
    this.dissector = spec.create({
      connection: this.conn!,
      sink: this.sink,
      ledger: this.ledger,
      timing: this.chooser.timing,
      ...(this.chooser.shared ? { shared: this.chooser.shared } : {}),
    });
    for (const d of [0, 1] as const) if (this.lost[d]) this.dissector.captureLoss?.(d);
  }

  /** An untagged segment of a Send that is not the whole message: its payload joins the pending copy. */
  segment(u: Ulpdu, p: UntaggedPdu): void {
    if (this.state === 'none' || p.qn !== 0 || !isSend(p.rdmap.opcode)) return;
    if (p.ddp.l && p.mo === 0) return; // the whole message: read in place at its end
    const map = (this.pending[u.dir] ??= new Map());
    let ps = map.get(p.msn);
    if (!ps) {
      ps = { buf: SPARE.pop() ?? EMPTY, got: 0, contig: 0, missing: p.mo !== 0 };
      map.set(p.msn, ps);
      if (map.size > 64) map.delete(map.keys().next().value!); // bounded like DDP's open messages
    }
    const src = u.body ?? u.head;
    const have = Math.max(0, Math.min(src.length, p.length) - DDP_UNTAGGED);
    const len = Math.max(0, p.payloadLength);
    if (have < len) ps.missing = true;
    if (p.mo >= ULP_PAYLOAD_BOUND) {
      ps.missing = true;
      return;
    }
    const n = Math.min(have, ULP_PAYLOAD_BOUND - p.mo);
    if (n < have || p.mo + len > ULP_PAYLOAD_BOUND) ps.missing = true;
    const end = p.mo + n;
    if (end > ps.buf.length) {
      const b = new Uint8Array(Math.min(ULP_PAYLOAD_BOUND, Math.max(end, 2 * ps.buf.length)));
      b.set(ps.buf);
      ps.buf = b;
    }
    ps.buf.set(src.subarray(DDP_UNTAGGED, DDP_UNTAGGED + n), p.mo);
    ps.got += n;
    // A segment lost before this one (a snaplen cut, capture loss) leaves a hole: the payload the
    // upper layer sees ends at it, never with the hole's octets made up.
    if (p.mo === ps.contig) ps.contig = end;
    else if (p.mo > ps.contig) ps.missing = true;
  }

  /** Message `m` ended with segment `p`: the upper layer sees it; returns its record, if any. */
  message(u: Ulpdu, m: OpenMsg, p: TaggedPdu | UntaggedPdu, complete: boolean): UlpRecord | null {
    if (this.state === 'none') return null;
    if (this.conn === null && this.decide() === 'none') return null;
    const rm = this.record(u, m, p, complete);
    if (rm === null) return null;
    if (this.state === 'undecided') {
      if (rm.kind !== 'send') return null;
      const spec = this.candidates.find((s) => s.firstMessage(rm, this.conn!)) ?? null;
      if (!spec) {
        // Nobody claims the first Send: the connection carries nothing decoded above RDMAP.
        this.state = 'none';
        this.pending = [null, null];
        return null;
      }
      this.activate(spec, 'heuristic');
    }
    switch (rm.kind) {
      case 'write':
        this.ledger.write(rm);
        break;
      case 'read-request':
        this.ledger.readRequest(rm);
        break;
      case 'read-response':
        this.ledger.readResponse(rm);
        break;
      case 'send':
        if (rm.invalidateStag !== null) this.ledger.sendInvalidate(rm);
        break;
    }
    const rec = this.dissector!.message(rm);
    if (rec) this.messages++;
    return rec;
  }

  /** What the report says of the connection's upper layer (null: none decoded). */
  summary(): UlpFlowSummary | null {
    if (!this.spec) return null;
    return { protocol: this.spec.id, name: this.spec.name, basis: this.basis ?? 'heuristic', messages: this.messages };
  }

  /**
   * The capture lost octets of direction `dir`: what the upper layer has not seen is no longer an
   * error (the ledger stops being strict, the upper layer is told, now or when it is chosen).
   */
  captureGap(dir: 0 | 1): void {
    if (this.state === 'none') return;
    this.ledger.captureLoss();
    this.lost[dir] = true;
    this.dissector?.captureLoss?.(dir);
  }

  /** The connection ended: the upper layer reports what was never answered. */
  end(): void {
    this.dissector?.end(this.chooser.clock.now);
    this.dissector = null;
    this.pending = [null, null];
    this.tagPending = [null, null];
  }

  private record(u: Ulpdu, m: OpenMsg, p: TaggedPdu | UntaggedPdu, complete: boolean): RdmapMessage | null {
    // Each kind's object written out whole (no spread of a shared base): one shape per kind, built
    // once per message on the bulk path.
    const flow = this.flow;
    const dir = u.dir;
    const from = u.from;
    const opcode = m.opcode;
    const seq = m.firstSeq;
    const lastSeq = m.lastSeq;
    const frames = m.frames.slice();
    const time = this.chooser.clock.now;
    const frame = this.chooser.clock.frame ?? m.frames[m.frames.length - 1] ?? 0;
    const length = m.length;
    const intact = complete && m.startSeen && u.crc !== 'bad';
    if (p.kind === 'untagged') {
      if (isSend(opcode)) {
        const { payload, whole } = this.payloadOf(u, p, m);
        const out: SendMessage = {
          flow,
          dir,
          from,
          opcode,
          seq,
          lastSeq,
          frames,
          time,
          frame,
          length,
          intact,
          kind: 'send',
          qn: p.qn,
          msn: p.msn,
          solicited: opcode === OP.SEND_SE || opcode === OP.SEND_SE_INVALIDATE,
          invalidateStag: p.invalidateStag,
          payload,
          payloadComplete: whole && intact,
        };
        return out;
      }
      if (p.body.type === 'read-request') {
        const rr = p.body.rr;
        return {
          flow,
          dir,
          from,
          opcode,
          seq,
          lastSeq,
          frames,
          time,
          frame,
          length,
          intact,
          kind: 'read-request',
          sinkStag: rr.sinkStag,
          sinkTo: rr.sinkTo,
          sourceStag: rr.srcStag,
          sourceTo: rr.srcTo,
          readSize: rr.size,
        };
      }
      const kind = opcode === OP.TERMINATE ? 'terminate' : 'other';
      return { flow, dir, from, opcode, seq, lastSeq, frames, time, length, intact, kind };
    }
    if (opcode === OP.WRITE) {
      const stag = m.stag ?? p.stag;
      const to = m.firstTo ?? p.to;
      const data = this.tagPending[dir] === null ? undefined : this.taggedData(dir, stag, to);
      const w: WriteMessage = {
        flow,
        dir,
        from,
        opcode,
        seq,
        lastSeq,
        frames,
        time,
        frame,
        length,
        intact,
        kind: 'write',
        stag,
        to,
      };
      return data ? { ...w, data } : w;
    }
    if (opcode === OP.READ_RESPONSE) {
      const r = m.read;
      const stag = m.stag ?? p.stag;
      const to = m.firstTo ?? p.to;
      const data = this.tagPending[dir] === null ? undefined : this.taggedData(dir, stag, to);
      const rr: ReadResponseMessage = {
        flow,
        dir,
        from,
        opcode,
        seq,
        lastSeq,
        frames,
        time,
        frame,
        length,
        intact,
        kind: 'read-response',
        stag,
        to,
        request: r
          ? { sourceStag: r.wire.srcStag, sourceTo: r.wire.srcTo, readSize: r.size, seq: r.seq, frames: r.frames }
          : null,
      };
      return data ? { ...rr, data } : rr;
    }
    return { flow, dir, from, opcode, seq, lastSeq, frames, time, length, intact, kind: 'other' };
  }

  /** The Send's payload: in place for a one-segment message, else the pending copy. */
  private payloadOf(u: Ulpdu, p: UntaggedPdu, m: OpenMsg): { payload: Uint8Array; whole: boolean } {
    const ps = this.pending[u.dir]?.get(p.msn);
    if (ps) {
      this.pending[u.dir]!.delete(p.msn);
      if (ps.buf.length > 0 && SPARE.length < MAX_SPARE) SPARE.push(ps.buf);
      const n = Math.min(ps.contig, ps.buf.length, m.length);
      return { payload: ps.buf.subarray(0, n), whole: !ps.missing && ps.got === m.length };
    }
    const src = u.body ?? u.head;
    const have = Math.max(0, Math.min(src.length, p.length) - DDP_UNTAGGED);
    const len = Math.max(0, p.payloadLength);
    return { payload: src.subarray(DDP_UNTAGGED, DDP_UNTAGGED + Math.min(have, len)), whole: have >= len };
  }
}
