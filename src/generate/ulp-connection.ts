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
   * SNAPLEN octets of (a snaplen cut). Its FPDU is lost to the analyzer, and the lower layers'
   * findings are part of the truth: the capture loss after the octets kept (TCP), the FPDU cut by
   * it and framing found again at the next FPDU of the direction (MPA), the MSN gap at the next
   * Send (DDP).
   */
  readonly cut?: number;
  /**
   * Which FPDU of the cut Send the snaplen cuts (default 0, the Send's only FPDU). A later one
   * cuts the Send inside: its FPDUs go out one per segment, MPA loses the cut one and finds framing
   * again at the next FPDU of the same Send, so the upper layer receives the Send with the octets
   * before the cut (RDMAP passes on a message whose segments did not all arrive).
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
  const cutDir = spec.cut === undefined ? null : spec.events[spec.cut]?.dir;
  const inside = spec.cutFpdu ?? 0;
  // With markers the receiver finds framing again at the FPDU the first marker after the cut points
  // to (RFC 5044 §4.3), not at the next FPDU: the truth of a cut is modelled without markers there.
  if (cutDir !== null && cutDir !== undefined && mark[cutDir])
    throw new KnobError(
      `--markers ${k.markers}: the truth of a snaplen cut is modelled without markers in the direction cut (${cutDir === 0 ? 'r2i or none' : 'i2r or none'})`,
    );
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
  const lost = whole === null ? null : { dir: whole.dir, first: whole.first + inside, last: whole.first + inside };
  if (lost && whole && spec.cut !== undefined) {
    const e = spec.events[spec.cut];
    const f = enc[lost.dir].fpdus;
    const d = lost.dir;
    const nextSend = spec.events.findIndex((x, i) => i > spec.cut! && x.dir === d && x.op === 'send');
    // A cut inside the Send needs the Send cut into enough FPDUs: the MSS decides how many.
    if (inside > 0 && whole.last - whole.first < inside + 3)
      throw new KnobError(
        `--mss ${k.mss}: the Send cut is ${whole.last - whole.first + 1} FPDU(s); the scenario cuts FPDU ${inside + 1} and MPA finds framing again on the three after it (choose a smaller MSS)`,
      );
    // MPA finds framing again on three chained FPDUs (RFC 5044 §6), so three follow the cut.
    if (
      e?.op !== 'send' ||
      (inside === 0 && whole.first !== whole.last) ||
      lost.last > whole.last ||
      nextSend < 0 ||
      f.length - 1 - lost.last < 3
    )
      throw new Error(
        `cut ${spec.cut}: a Send (one FPDU, or FPDU ${inside} of it) followed by another Send and three FPDUs of its direction`,
      );
    // The frame keeps SNAPLEN octets: the link, IP and TCP headers, then the first payload octets.
    const headers = 14 + (k.vlan !== null ? 4 : 0) + (v6 ? 40 : 20) + 20;
    const start = (seqStart[d] + f[lost.first]!.startRel) >>> 0;
    findings.push(
      { rule: 'tcp.capture-loss', from: ep[d], seq: (start + SNAPLEN - headers) >>> 0 },
      { rule: 'mpa.fpdu-truncated-by-gap', from: ep[d], seq: fpduSeq(d, lost.first) },
      { rule: 'mpa.resync', from: ep[d], seq: fpduSeq(d, lost.last + 1) },
      // A Send lost whole leaves a gap in its queue's MSNs, seen at the next Send; a segment lost
      // inside a Send, a gap in its MOs, seen at the segment after it (RFC 5041 §5.1, §5.3).
      {
        rule: 'ddp.capture-loss',
        from: ep[d],
        seq: inside === 0 ? fpduSeq(d, span[nextSend]!.first) : fpduSeq(d, lost.last + 1),
      },
    );
  }
  const isLost = (d: Dir, i: number) => lost !== null && lost.dir === d && i >= lost.first && i <= lost.last;
  const lostFpdus = (d: Dir) => (lost !== null && lost.dir === d ? lost.last - lost.first + 1 : 0);
  const endOf = (d: Dir) => (seqStart[d] + enc[d].bytes.length) >>> 0;
  if (k.close === 'fin')
    for (const d of [0, 1] as const) findings.push({ rule: 'mpa.tcp-closed-between', from: ep[d], seq: endOf(d) });
  if (k.close === 'rst') findings.push({ rule: 'mpa.tcp-closed-between', from: ep[0], seq: endOf(0) });
  const dirTruth = (d: Dir): TruthDirection => ({
    from: ep[d],
    to: ep[1 - d]!,
    markers: mark[d],
    fpdus: enc[d].fpdus.length - lostFpdus(d),
    markerCount: enc[d].fpdus.reduce((n, f, i) => n + (isLost(d, i) ? 0 : f.markers), 0),
    crcErrors: 0,
    markerErrors: 0,
  });
  return {
    frames: res.frames,
    findings: sortFindings(findings),
    flows: [{ client: ep[0], server: ep[1], mpa: { directions: [dirTruth(0), dirTruth(1)] } }],
    fpduSeqs: {
      [ep[0]]: enc[0].fpdus.flatMap((_, i) => (isLost(0, i) ? [] : [fpduSeq(0, i)])),
      [ep[1]]: enc[1].fpdus.flatMap((_, i) => (isLost(1, i) ? [] : [fpduSeq(1, i)])),
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
