/**
 * A whole MPA connection carrying an upper layer's exchange (SMB Direct, RPC-over-RDMA), built from
 * RDMAP messages in capture order: each message cut into DDP segments no larger than one FPDU per
 * MSS (RFC 5041 §5; MO or TO advancing, L on the last), the segments framed as FPDUs (RFC 5044 §4,
 * markers and CRC as negotiated), each message's FPDUs sent as TCP segments by the segmentation
 * knob, the capture clock advancing by each message's delay. The startup frames carry the upper
 * layer's private data after the RFC 6581 IRD/ORD block (Rev 2) or alone (Rev 1).
 *
 * The truth is what the scenario's author declared: each expected finding names the message it is
 * reported at (the seq of the message's first FPDU, where the upper layers and the buffer ledger
 * report), or no seq. Nothing here reads the analyzer.
 */
import { readRequest as readRequestUlpdu, sendSegments, taggedSegments } from './ddp-ulpdu.js';
import type { Generated } from './knob-connection.js';
import { KnobError, type Knobs } from './knobs.js';
import { encodeFpdus, enhancedPd, patternBytes, startupFrame, type FpduSpec } from './mpa-encoder.js';
import { buildScenario, type Send } from './scenario.js';
import { endpoint, sortFindings, type TruthDirection, type TruthFinding } from './truth.js';

export type Dir = 0 | 1;
/** Direction 0 is the client (MPA Initiator), 1 the server. */
export const CLIENT = 0;
export const SERVER = 1;

interface Timed {
  /** Microseconds of capture time before the message's first segment (default 12). */
  readonly delayUs?: number;
}

/** One RDMAP message of the exchange. Dir 0 is the client (MPA Initiator), 1 the server. */
export type UlpEvent = Timed &
  (
    | { readonly op: 'send'; readonly dir: Dir; readonly payload: Uint8Array; readonly invalidate?: number }
    | {
        readonly op: 'write';
        readonly dir: Dir;
        readonly stag: number;
        readonly to: bigint;
        readonly length: number;
        /** The octets written (default: a deterministic pattern of `length` octets). */
        readonly data?: Uint8Array;
      }
    | {
        readonly op: 'read-request';
        readonly dir: Dir;
        readonly sinkStag: number;
        readonly sinkTo: bigint;
        readonly size: number;
        readonly srcStag: number;
        readonly srcTo: bigint;
      }
    /** The Read Response to the Read Request at event `request` (its Data Sink, its size unless told). */
    | {
        readonly op: 'read-response';
        readonly dir: Dir;
        readonly request: number;
        readonly length?: number;
        /** The octets read (default: a deterministic pattern of the length). */
        readonly data?: Uint8Array;
      }
  );

/**
 * One request of an upper-layer session as the generator scheduled it, by event index: the
 * message that completes the request, the RDMA operations that move its data (Writes into its
 * buffers, Read Requests of them and the Read Responses carrying them), the message that completes
 * its response (null: never answered). Names as the specification spells them.
 */
export interface ScheduledRequest {
  readonly program: string;
  readonly command: string;
  readonly request: number;
  readonly data: readonly number[];
  readonly response: number | null;
}

/** A finding the scenario expects: at the first FPDU of event `at`, or with no seq (null). */
export interface UlpExpect {
  readonly rule: string;
  /** Sender whose direction the finding is about (0 client, 1 server); null: none. */
  readonly dir: Dir | null;
  readonly at: number | null;
}

export interface UlpConnectionSpec {
  readonly serverPort: number;
  /** The client's port (default 50123): connections joined in one capture (joinConnections) differ by it. */
  readonly clientPort?: number;
  readonly rev: 1 | 2;
  /** RFC 6581 IRD/ORD of the Request (the Initiator's) and of the Reply (Rev 2 only). */
  readonly irdOrd?: readonly [{ ird: number; ord: number }, { ird: number; ord: number }];
  /** The upper layer's private data of the MPA Request and Reply (after the RFC 6581 block). */
  readonly requestPd: Uint8Array;
  readonly replyPd: Uint8Array;
  readonly events: readonly UlpEvent[];
  readonly expect: readonly UlpExpect[];
  /**
   * A Send (event index) sent as one segment whose frame the capture keeps only the first
   * SNAPLEN octets of (a snaplen cut). The frame keeps the FPDU's ULPDU_Length and DDP/RDMAP
   * header and the IP length says how many octets it carried, so the FPDU is still framed (its CRC
   * not captured, RFC 5044 §4.1 framing across the cut) and the next one found where its length
   * says; the TCP layer says once per direction that segments were cut (tcp.snaplen-cut). What the
   * upper layer could not check is the scenario's own truth.
   */
  readonly cut?: number;
  /**
   * Which FPDU of the cut Send the snaplen cuts (default 0, the Send's only FPDU). A later one
   * cuts the Send inside: its FPDUs go out one per segment, and the upper layer receives the Send
   * with the octets before the cut (nothing after a missing octet is made up).
   */
  readonly cutFpdu?: number;
  /**
   * Octets each side sends over plain TCP before the MPA Request/Reply (RFC 5046 §5.1 streaming
   * mode: the iSCSI login), in order; each entry one TCP segment.
   */
  readonly leading?: ReadonlyArray<{ readonly dir: Dir; readonly bytes: Uint8Array }>;
}

/** Octets of a frame a snaplen-cut capture keeps (what hardware tracers keep: headers and a little data). */
export const SNAPLEN = 128;

/** Knobs a ULP scenario reads (the rest do not apply to it). */
export const ULP_KNOBS = ['segmentation', 'mss', 'markers', 'crc', 'ip', 'vlan', 'seq-wrap', 'close'] as const;

const DEFAULT_DELAY_US = 12;
/** The client's ephemeral port. */
const CLIENT_PORT = 50123;

/** Largest ULPDU whose FPDU (length, PAD, CRC and every marker it can hold) fits one MSS. */
function ulpduFitting(mss: number, markers: boolean): number {
  const room = mss - 2 - 4 - (markers ? 4 * (Math.ceil(mss / 512) + 1) : 0);
  // ULPDU_Length + 2 a multiple of 4: no PAD, and the FPDU ends on a 4-octet boundary.
  return Math.max(64, ((room + 2) & ~3) - 2);
}

export function buildUlpConnection(spec: UlpConnectionSpec, k: Knobs, seed: number): Generated {
  if (k.segmentation === 'large')
    throw new KnobError('--segmentation large: upper-layer scenarios cut FPDUs to the MSS (choose another)');
  const v6 = k.ip === 6;
  const addr: [string, string] = v6 ? ['fd00::1', 'fd00::2'] : ['10.0.0.1', '10.0.0.2'];
  const port: [number, number] = [spec.clientPort ?? CLIENT_PORT, spec.serverPort];
  const ep: [string, string] = [endpoint(addr[0], port[0]), endpoint(addr[1], port[1])];
  const mark: [boolean, boolean] = [
    k.markers === 'i2r' || k.markers === 'both',
    k.markers === 'r2i' || k.markers === 'both',
  ];
  const inside = spec.cutFpdu ?? 0;
  const room = [ulpduFitting(k.mss, mark[0]), ulpduFitting(k.mss, mark[1])] as const;

  // --- each message as DDP segments, per direction ---
  const fpdus: [FpduSpec[], FpduSpec[]] = [[], []];
  /** Per event: its direction and the index range of its FPDUs there. */
  const span: Array<{ dir: Dir; first: number; last: number }> = [];
  const msn = [
    [0, 0],
    [0, 0],
  ];
  const reads: Array<{ sinkStag: number; sinkTo: bigint; size: number } | null> = [];
  spec.events.forEach((e, i) => {
    const d = e.dir;
    const r = room[d];
    let segs: Uint8Array[];
    reads.push(null);
    switch (e.op) {
      case 'send':
        segs = sendSegments(
          ++msn[d]![0]!,
          e.payload,
          r - 18,
          e.invalidate !== undefined ? { invalidate: e.invalidate } : {},
        );
        break;
      case 'write':
        segs = taggedSegments(0x0, e.stag, e.to, e.data ?? patternBytes(e.length, seed * 7919 + i), r - 14);
        break;
      case 'read-request':
        reads[i] = { sinkStag: e.sinkStag, sinkTo: e.sinkTo, size: e.size };
        segs = [
          readRequestUlpdu({
            msn: ++msn[d]![1]!,
            sinkStag: e.sinkStag,
            sinkTo: e.sinkTo,
            size: e.size,
            srcStag: e.srcStag,
            srcTo: e.srcTo,
          }),
        ];
        break;
      case 'read-response': {
        const q = reads[e.request];
        if (!q) throw new Error(`event ${i}: event ${e.request} is no Read Request`);
        const data = e.data ?? patternBytes(e.length ?? q.size, seed * 7919 + i);
        segs = taggedSegments(0x2, q.sinkStag, q.sinkTo, data, r - 14);
        break;
      }
    }
    const first = fpdus[d].length;
    for (const u of segs) fpdus[d].push({ ulpdu: u });
    span.push({ dir: d, first, last: fpdus[d].length - 1 });
  });
  const enc = [
    encodeFpdus(fpdus[0], { markers: mark[0], crc: k.crc }),
    encodeFpdus(fpdus[1], { markers: mark[1], crc: k.crc }),
  ] as const;

  // --- startup frames: Rev 2 with the RFC 6581 block before the upper layer's private data ---
  const io = spec.irdOrd ?? [
    { ird: 16, ord: 16 },
    { ird: 16, ord: 16 },
  ];
  const pd = (side: 0 | 1, ulp: Uint8Array) => (spec.rev === 2 ? enhancedPd(io[side], ulp) : ulp);
  const request = startupFrame({
    kind: 'request',
    m: mark[1],
    c: k.crc,
    rev: spec.rev,
    enhanced: spec.rev === 2,
    pd: pd(0, spec.requestPd),
  });
  const reply = startupFrame({
    kind: 'reply',
    m: mark[0],
    c: k.crc,
    rev: spec.rev,
    enhanced: spec.rev === 2,
    pd: pd(1, spec.replyPd),
  });

  // --- TCP: each message's FPDUs as segments, cut by the segmentation knob ---
  const lead: [number, number] = [0, 0];
  const sends: Send[] = [];
  for (const l of spec.leading ?? []) {
    sends.push({ dir: l.dir, bytes: l.bytes, cut: [l.bytes.length], delayUs: 40 });
    lead[l.dir] += l.bytes.length;
  }
  sends.push({ dir: 0, bytes: request }, { dir: 1, bytes: reply, delayUs: 60 });
  spec.events.forEach((e, i) => {
    const s = span[i]!;
    const f = enc[s.dir].fpdus;
    const start = f[s.first]!.startRel;
    const end = f[s.last]!.endRel;
    const bytes = enc[s.dir].bytes.subarray(start, end);
    let cut: Send['cut'];
    if (k.segmentation === 'one-per-segment') cut = f.slice(s.first, s.last + 1).map((x) => x.endRel - x.startRel);
    else if (k.segmentation === 'packed') {
      cut = [];
      let acc = 0;
      for (const x of f.slice(s.first, s.last + 1)) {
        const n = x.endRel - x.startRel;
        if (acc > 0 && acc + n > k.mss) {
          cut.push(acc);
          acc = 0;
        }
        acc += n;
      }
      cut.push(acc);
    } else if (k.segmentation === 'random') cut = { random: 1, seed: seed * 1000003 + i, max: k.mss };
    else cut = 'mss';
    sends.push({
      dir: s.dir,
      bytes,
      cut,
      delayUs: e.delayUs ?? DEFAULT_DELAY_US,
      ...(spec.cut === i && inside === 0 ? { cut: [bytes.length], snaplen: SNAPLEN } : {}),
    });
    if (spec.cut === i && inside > 0) {
      // One segment per FPDU of the cut Send, the snaplen on the chosen FPDU's frame only.
      const last = sends.pop()!;
      for (let j = s.first; j <= s.last; j++) {
        sends.push({
          dir: s.dir,
          bytes: enc[s.dir].bytes.subarray(f[j]!.startRel, f[j]!.endRel),
          cut: [f[j]!.endRel - f[j]!.startRel],
          delayUs: j === s.first ? (last.delayUs ?? 0) : 1,
          ...(j === s.first + inside ? { snaplen: SNAPLEN } : {}),
        });
      }
    }
  });
  const isn: [number, number] = k.seqWrap
    ? [(2 ** 32 - 1 - request.length - 700) >>> 0, (2 ** 32 - 1 - reply.length - 300) >>> 0]
    : [(1_000_000 + seed * 7777) >>> 0, (3_000_000 + seed * 9999) >>> 0];
  const res = buildScenario(sends, {
    client: { addr: addr[0], port: port[0] },
    server: { addr: addr[1], port: port[1] },
    isn,
    mss: k.mss,
    close: k.close,
    ...(k.vlan !== null ? { vlan: k.vlan } : {}),
  });

  // --- the truth ---
  const seqStart: [number, number] = [
    (res.dataSeq[0] + lead[0] + request.length) >>> 0,
    (res.dataSeq[1] + lead[1] + reply.length) >>> 0,
  ];
  const fpduSeq = (d: Dir, idx: number) => (seqStart[d] + enc[d].fpdus[idx]!.lenRel) >>> 0;
  const findings: TruthFinding[] = spec.expect.map((x) => {
    if (x.at !== null && spec.events[x.at]?.dir !== x.dir)
      throw new Error(`expected ${x.rule}: event ${x.at} is not sent by direction ${x.dir}`);
    return {
      rule: x.rule,
      from: x.dir === null ? null : ep[x.dir],
      seq: x.at === null || x.dir === null ? null : fpduSeq(x.dir, span[x.at]!.first),
    };
  });
  const whole = spec.cut === undefined ? null : span[spec.cut]!;
  if (whole && spec.cut !== undefined) {
    const e = spec.events[spec.cut];
    const d = whole.dir;
    const f = enc[d].fpdus;
    if (e?.op !== 'send') throw new Error(`cut ${spec.cut}: a Send`);
    // A cut inside the Send needs the Send cut into enough FPDUs: the MSS decides how many.
    if (whole.first + inside > whole.last)
      throw new KnobError(
        `--mss ${k.mss}: the Send cut is ${whole.last - whole.first + 1} FPDU(s); the scenario cuts FPDU ${inside + 1} (choose a smaller MSS)`,
      );
    // Sent as one segment, a Send of several FPDUs would lose its second FPDU's ULPDU_Length to the cut.
    if (inside === 0 && whole.first !== whole.last)
      throw new KnobError(
        `--mss ${k.mss}${mark[d] ? ` --markers ${k.markers}` : ''}: the Send cut is ${whole.last - whole.first + 1} FPDUs; the scenario cuts a Send of one (choose a larger MSS)`,
      );
    // The frame keeps SNAPLEN octets: the link, IP and TCP headers, then the first payload octets;
    // the first octet it lost is where the TCP layer says the cut starts.
    const headers = 14 + (k.vlan !== null ? 4 : 0) + (v6 ? 40 : 20) + 20;
    const start = (seqStart[d] + f[whole.first + inside]!.startRel) >>> 0;
    findings.push({ rule: 'tcp.snaplen-cut', from: ep[d], seq: (start + SNAPLEN - headers) >>> 0 });
  }
  const endOf = (d: Dir) => (seqStart[d] + enc[d].bytes.length) >>> 0;
  if (k.close === 'fin')
    for (const d of [0, 1] as const) findings.push({ rule: 'mpa.tcp-closed-between', from: ep[d], seq: endOf(d) });
  if (k.close === 'rst') findings.push({ rule: 'mpa.tcp-closed-between', from: ep[0], seq: endOf(0) });
  const dirTruth = (d: Dir): TruthDirection => ({
    from: ep[d],
    to: ep[1 - d]!,
    markers: mark[d],
    fpdus: enc[d].fpdus.length,
    markerCount: enc[d].fpdus.reduce((n, f) => n + f.markers, 0),
    crcErrors: 0,
    markerErrors: 0,
  });
  return {
    frames: res.frames,
    findings: sortFindings(findings),
    flows: [{ client: ep[0], server: ep[1], mpa: { directions: [dirTruth(0), dirTruth(1)] } }],
    fpduSeqs: {
      [ep[0]]: enc[0].fpdus.map((_, i) => fpduSeq(0, i)),
      [ep[1]]: enc[1].fpdus.map((_, i) => fpduSeq(1, i)),
    },
    args: [],
    messageEnds: spec.events.map((_, i) => res.sendEnds[i + 2] ?? null),
  };
}

/**
 * Connections built one after the other into one capture (an NVMe host's admin queue, then an I/O
 * queue whose checks need what the admin queue showed): each part's frames follow the previous
 * part's last one by a millisecond, the truths are joined. The parts must differ in their client
 * port (UlpConnectionSpec.clientPort). Per-message ends (latency truth) are not carried.
 */
export function joinConnections(parts: readonly Generated[]): Generated {
  const frames: Generated['frames'] = [];
  const fpduSeqs: Record<string, number[]> = {};
  const byOffset: Record<string, Array<[number, number]>> = {};
  let lastNs = 0n;
  for (const g of parts) {
    const first = g.frames[0];
    const firstNs = first ? BigInt(first.tsSec) * 1_000_000_000n + BigInt(first.tsNsec) : 0n;
    const shift = frames.length === 0 || firstNs > lastNs ? 0n : lastNs - firstNs + 1_000_000n;
    for (const f of g.frames) {
      const ns = BigInt(f.tsSec) * 1_000_000_000n + BigInt(f.tsNsec) + shift;
      frames.push({ ...f, tsSec: Number(ns / 1_000_000_000n), tsNsec: Number(ns % 1_000_000_000n) });
      lastNs = ns;
    }
    for (const [ep, seqs] of Object.entries(g.fpduSeqs ?? {})) {
      const first = seqs[0] ?? 0;
      for (const seq of seqs) (byOffset[ep] ??= []).push([(seq - first) >>> 0, seq]);
    }
  }
  // The server's endpoint is the same on every part: an analyzer lists a sender's FPDUs in stream
  // order, and the parts' streams start alike (same ISNs and startup frames), so its FPDUs are listed
  // by their offset from the part's first one, the earlier part first on a tie (a stable sort).
  for (const [ep, list] of Object.entries(byOffset)) fpduSeqs[ep] = list.sort((a, b) => a[0] - b[0]).map((x) => x[1]);
  return {
    frames,
    findings: sortFindings(parts.flatMap((g) => g.findings)),
    flows: parts.flatMap((g) => g.flows),
    args: parts[0]?.args ?? [],
    fpduSeqs,
  };
}
