/**
 * One MPA connection built from the knobs (src/generate/knobs.ts), with its ground truth: the
 * RDMAP messages of the mix as DDP segments, FPDUs with markers and CRC as negotiated (RFC 5044
 * §4, §7.1; RFC 6581 §3), TCP segments cut by the segmentation policy, both directions
 * interleaved as request and answer, then the impairments. Every fault is placed by the seed, and
 * the truth says what an RFC-correct receiver finds, FPDU by FPDU.
 */
import {
  enhancedPd,
  encodeFpdus,
  rng,
  startupFrame,
  type EncodedFpdu,
  type FpduFault,
  type FpduSpec,
  type SenderMistakeSpec,
} from './mpa-encoder.js';
import {
  atomicRequest,
  atomicResponse,
  immediate,
  readRequest,
  send,
  sendSegments,
  taggedSegments,
  terminate,
} from './ddp-ulpdu.js';
import { buildScenario, type Send } from './scenario.js';
import type { Knobs, MessageKind } from './knobs.js';
import { KnobError } from './knobs.js';
import { endpoint, sortFindings, type TruthDirection, type TruthFinding, type TruthFlow } from './truth.js';
import type { PcapFrame } from '../report/pcap-writer.js';
import { patternBytes } from './mpa-encoder.js';

export interface Generated {
  frames: PcapFrame[];
  findings: TruthFinding[];
  flows: TruthFlow[];
  /** Analyzer options the capture is meant to be read with. */
  args: string[];
  /** Link type of the frames; default Ethernet. */
  linkType?: number;
  /** Per sender endpoint, the seq of every FPDU's ULPDU_Length field an analyzer frames, in order. */
  fpduSeqs?: Record<string, number[]>;
  /** Damage done to the finished capture file (a capture cut short, a corrupt record). */
  post?: (file: Uint8Array) => Uint8Array;
  /**
   * Upper-layer scenarios: per RDMAP message (event) the frame carrying its last octet and that
   * frame's capture time in µs, as scheduled (null when not captured): the truth latency tests read.
   */
  messageEnds?: ReadonlyArray<{ frame: number; us: number } | null>;
}

/** One FPDU to send: its ULPDU, the round (request/answer turn) it belongs to, what it carries. */
interface PlannedFpdu {
  ulpdu: Uint8Array;
  round: number;
  /** RDMAP message kind, and whether this segment is a whole message (one DDP segment). */
  kind: MessageKind | 'rtr' | 'read-response' | 'atomic-response';
  whole: boolean;
  /** The message's first DDP segment. */
  first: boolean;
  fault?: FpduFault;
}

const TERMINATE_LAYER_RDMAP = 0;

/** Messages on untagged queue 0 (RFC 5040 §5.1): their MSNs run in one sequence per direction. */
function onQn0(p: PlannedFpdu, rtr: Knobs['rtr']): boolean {
  return (
    p.kind === 'send' ||
    p.kind === 'send-se' ||
    p.kind === 'send-inv' ||
    p.kind === 'immediate' ||
    (p.kind === 'rtr' && rtr === 'send')
  );
}

/** Largest ULPDU whose FPDU (length, PAD, CRC, every marker it can hold) fits one MSS. */
function ulpduFitting(mss: number): number {
  const markers = Math.ceil(mss / 512) + 1;
  return Math.max(32, ((mss - 2 - 3 - 4 - 4 * markers) >> 2) << 2);
}

export function buildKnobConnection(k: Knobs, seed: number): Generated {
  const r = rng(seed * 2654435761 + 12345);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const impair = new Set(k.impair);
  const v6 = k.ip === 6;
  const addr: [string, string] = v6 ? ['fd00::1', 'fd00::2'] : ['10.0.0.1', '10.0.0.2'];
  const port: [number, number] = [40001, 4420];
  const ep: [string, string] = [endpoint(addr[0], port[0]), endpoint(addr[1], port[1])];
  const mark: [boolean, boolean] = [
    k.markers === 'i2r' || k.markers === 'both',
    k.markers === 'r2i' || k.markers === 'both',
  ];
  const midStream = k.start === 'mid-stream';
  if (impair.has('bad-crc') && !k.crc) throw new KnobError('--impair bad-crc: needs --crc on');
  if (impair.has('bad-fpduptr') && !mark[0])
    throw new KnobError('--impair bad-fpduptr: needs markers from the Initiator (--markers i2r or both)');
  if (impair.has('marker-origin') && !mark[0])
    throw new KnobError('--impair marker-origin: needs markers from the Initiator (--markers i2r or both)');
  const startupFaults = (['bad-key', 'pd-too-long', 'initiator-initiator'] as const).filter((x) => impair.has(x));
  if (midStream && (startupFaults.length || impair.has('responder-first')))
    throw new KnobError(
      `--impair ${startupFaults[0] ?? 'responder-first'}: needs the startup in the capture (--start startup)`,
    );

  // --- the RDMAP messages of each direction, as DDP segments, in rounds ---
  const room = k.segmentation === 'large' ? k.maxUlpdu : Math.min(k.maxUlpdu, ulpduFitting(k.mss));
  const i2r: PlannedFpdu[] = [];
  const r2i: PlannedFpdu[] = [];
  const msn = [
    [0, 0, 0, 0],
    [0, 0, 0, 0],
  ] as number[][];
  const nextMsn = (dir: 0 | 1, qn: number) => ++msn[dir]![qn]!;
  // The Initiator's first message is never empty: a zero-length Send or Write first is an RTR
  // (RFC 6581), which without peer-to-peer mode is a finding of its own.
  const size = () => Math.max(i2r.length === 0 ? 1 : 0, Math.floor(r() * (k.size + 1)));
  const bytes = (n: number) => patternBytes(n, Math.floor(r() * 1e9));
  const rtr = k.rev === 2 ? k.rtr : 'none';
  // The Responder speaks before the Initiator's first FPDU (RFC 5044 §7.1.2 rule 4): a Send, first of all.
  if (impair.has('responder-first'))
    r2i.push({ ulpdu: send(nextMsn(1, 0), bytes(16)), round: -1, kind: 'send', whole: true, first: true });
  if (rtr === 'send') i2r.push({ ulpdu: send(nextMsn(0, 0)), round: 0, kind: 'rtr', whole: true, first: true });
  if (rtr === 'write')
    i2r.push({
      ulpdu: taggedSegments(0x0, 0, 0, new Uint8Array(0), 1)[0]!,
      round: 0,
      kind: 'rtr',
      whole: true,
      first: true,
    });
  if (rtr === 'read') {
    i2r.push({
      ulpdu: readRequest({ msn: nextMsn(0, 1), sinkStag: 0, sinkTo: 0, size: 0, srcStag: 0, srcTo: 0 }),
      round: 0,
      kind: 'rtr',
      whole: true,
      first: true,
    });
    r2i.push({
      ulpdu: taggedSegments(0x2, 0, 0, new Uint8Array(0), 1)[0]!,
      round: 0,
      kind: 'rtr',
      whole: true,
      first: true,
    });
  }
  // A sender mistake shows from the first FPDU on when its ULPDU_Length is 265 (or 769): (2+L) mod 4 = 3,
  // so every PAD rule and length miscount gives another FPDU size than RFC 5044 §4.2.
  const lengthMistake = (
    ['wrong-pad', 'no-pad', 'length-counts-header', 'length-counts-crc', 'length-le'] as const
  ).find((x) => impair.has(x));
  if (midStream && lengthMistake)
    throw new KnobError(
      `--impair ${lengthMistake}: a sender mistake is diagnosed from the startup on (--start startup)`,
    );
  if (lengthMistake && mark[0])
    throw new KnobError(
      `--impair ${lengthMistake}: the truth of a length mistake is modelled without markers from the Initiator (--markers none or r2i)`,
    );
  if (lengthMistake) {
    if (rtr !== 'none')
      throw new KnobError(
        `--impair ${lengthMistake}: modelled on the Initiator's first FPDU, which an RTR would be (--rtr none)`,
      );
    if (k.messages.some((m) => m === 'read' || m === 'atomic'))
      throw new KnobError(
        `--impair ${lengthMistake}: needs a --messages mix without read and atomic (requests held while framing is diagnosed reach DDP after their answers)`,
      );
    // Little-endian: 769 = 0x0301 read as 0x0103 = 259, an end inside the FPDU itself.
    const L = lengthMistake === 'length-le' ? 769 : 265;
    i2r.push({ ulpdu: send(nextMsn(0, 0), bytes(L - 18)), round: 0, kind: 'send', whole: true, first: true });
  }
  const own = k.messages.filter((m) => m !== 'read' && m !== 'atomic' && m !== 'terminate');
  const mix = k.messages.filter((m) => m !== 'terminate');
  const responderOwn: Array<{ round: number; kind: MessageKind }> = [];
  const rounds = k.count;
  for (let i = 0; i < Math.ceil(k.count / 2) && own.length > 0; i++)
    responderOwn.push({ round: 1 + Math.floor(r() * Math.max(1, rounds)), kind: pick(own) });
  responderOwn.sort((a, b) => a.round - b.round);
  /** A message's DDP segments, in order. */
  const addSegments = (list: PlannedFpdu[], segs: Uint8Array[], round: number, kind: PlannedFpdu['kind']) => {
    segs.forEach((u, i) => {
      list.push({ ulpdu: u, round, kind, whole: segs.length === 1, first: i === 0 });
    });
  };
  const message = (dir: 0 | 1, list: PlannedFpdu[], kind: MessageKind, round: number, idx: number) => {
    switch (kind) {
      case 'send':
      case 'send-se':
      case 'send-inv': {
        const o = kind === 'send-se' ? { se: true } : kind === 'send-inv' ? { invalidate: 0x5000 + idx } : {};
        addSegments(list, sendSegments(nextMsn(dir, 0), bytes(size()), Math.max(1, room - 18), o), round, kind);
        return;
      }
      case 'immediate':
        addSegments(list, [immediate({ msn: nextMsn(dir, 0), data: BigInt(idx) * 0x1000001n })], round, kind);
        return;
      case 'write':
        addSegments(
          list,
          taggedSegments(0x0, 0x100 + idx, BigInt(idx) << 20n, bytes(size()), Math.max(1, room - 14)),
          round,
          kind,
        );
        return;
      case 'read': {
        const n = Math.max(1, size());
        const sinkStag = 0x2000 + idx;
        const sinkTo = BigInt(idx) << 24n;
        list.push({
          ulpdu: readRequest({ msn: nextMsn(dir, 1), sinkStag, sinkTo, size: n, srcStag: 0x3000 + idx, srcTo: 0n }),
          round,
          kind,
          whole: true,
          first: true,
        });
        addSegments(
          r2i,
          taggedSegments(0x2, sinkStag, sinkTo, bytes(n), Math.max(1, room - 14)),
          round,
          'read-response',
        );
        return;
      }
      case 'atomic':
        list.push({
          ulpdu: atomicRequest({
            msn: nextMsn(dir, 1),
            atomicOpcode: 0,
            requestId: idx + 1,
            remoteStag: 0x4000 + idx,
            remoteTo: BigInt(idx) * 8n,
            data: 1n,
          }),
          round,
          kind,
          whole: true,
          first: true,
        });
        r2i.push({
          ulpdu: atomicResponse({ msn: nextMsn(1, 3), originalRequestId: idx + 1, value: BigInt(idx) }),
          round,
          kind: 'atomic-response',
          whole: true,
          first: true,
        });
        return;
      case 'terminate':
        list.push({
          ulpdu: terminate({ layer: TERMINATE_LAYER_RDMAP, etype: 2, code: 0xff }),
          round,
          kind,
          whole: true,
          first: true,
        });
        return;
    }
  };
  let ro = 0;
  for (let i = 0; i < rounds; i++) {
    const round = i + 1;
    if (mix.length > 0) message(0, i2r, pick(mix), round, i);
    // The Responder's own messages of this round follow its answers.
    while (ro < responderOwn.length && responderOwn[ro]!.round <= round)
      message(1, r2i, responderOwn[ro++]!.kind, round, 1000 + ro);
  }
  while (ro < responderOwn.length) message(1, r2i, responderOwn[ro++]!.kind, rounds + 1, 1000 + ro);
  if (k.messages.includes('terminate')) message(0, i2r, 'terminate', rounds + 2, rounds);
  // --- startup frames (RFC 5044 §7.1.1, RFC 6581 §3) ---
  const p2p = rtr !== 'none';
  const rtrFlags = { send: rtr === 'send', write: rtr === 'write', read: rtr === 'read' };
  const pd = k.rev === 2 ? enhancedPd({ ird: 16383, ord: 16383, p2p, ...rtrFlags }) : new Uint8Array(0);
  const reqSpec = { m: mark[1], c: k.crc, rev: k.rev, enhanced: k.rev === 2, pd };
  const repSpec = { m: mark[0], c: k.crc, rev: k.rev, enhanced: k.rev === 2, pd };
  // PD_Length above 512 (RFC 5044 §7.1.1), with that much Private Data really sent.
  const longPd = impair.has('pd-too-long')
    ? Uint8Array.from({ length: 600 }, (_, i) => (i < pd.length ? pd[i]! : 0x50))
    : pd;
  let request = startupFrame({
    kind: 'request',
    ...reqSpec,
    pd: longPd,
    ...(impair.has('bad-key') ? { key: 'MPA ID Req Fraxx' } : {}),
  });
  let reply = startupFrame({ kind: impair.has('initiator-initiator') ? 'request' : 'reply', ...repSpec });
  if (midStream) {
    request = new Uint8Array(0);
    reply = new Uint8Array(0);
  }

  // --- FPDUs: the Initiator's sender mistake, the one-FPDU faults ---
  const mistake: SenderMistakeSpec = {};
  if (impair.has('wrong-pad')) mistake.pad = 'len-plus-2';
  if (impair.has('no-pad')) mistake.pad = 'none';
  if (impair.has('length-counts-header')) mistake.lengthCounts = 'length-field';
  if (impair.has('length-counts-crc')) mistake.lengthCounts = 'crc';
  if (impair.has('length-le')) mistake.lengthLittleEndian = true;
  if (impair.has('marker-origin')) mistake.markerOrigin = -request.length;
  const encode = (list: PlannedFpdu[], dir: 0 | 1) =>
    encodeFpdus(
      list.map((f): FpduSpec => ({ ulpdu: f.ulpdu, ...(f.fault ? { fault: f.fault } : {}) })),
      { markers: mark[dir], crc: k.crc, ...(dir === 0 && Object.keys(mistake).length ? { mistake } : {}) },
    );
  let enc0 = encode(i2r, 0);
  const findings: TruthFinding[] = [];
  const fpduFault = (['bad-crc', 'bad-fpduptr', 'pad-nonzero'] as const).filter((x) => impair.has(x));
  let target = -1;
  if (fpduFault.length > 0) {
    const eligible = enc0.fpdus
      .map((f, i) => ({ f, i }))
      .filter(({ f, i }) => {
        const p = i2r[i]!;
        if (impair.has('bad-fpduptr') && f.markers === 0) return false;
        if (impair.has('pad-nonzero') && (2 + f.ulpduLength) % 4 === 0) return false;
        // A corrupted FPDU is left out by the receiver: keep what that does to DDP to a gap in one
        // queue's MSNs (a whole single-segment Send), never a message cut short.
        if (impair.has('bad-crc') && !(p.whole && onQn0(p, rtr))) return false;
        return p.kind !== 'rtr';
      })
      .map(({ i }) => i);
    if (eligible.length === 0)
      throw new KnobError(
        `--impair ${fpduFault.join(',')}: no Initiator FPDU can carry it (more --count, another --messages mix, or other --seed)`,
      );
    target = k.at >= 0 ? k.at : eligible[Math.floor(eligible.length / 2)]!;
    if (!eligible.includes(target))
      throw new KnobError(
        `--at ${k.at}: that FPDU cannot carry ${fpduFault.join(',')} (eligible: ${eligible.slice(0, 10).join(', ')}${eligible.length > 10 ? ', ...' : ''})`,
      );
    i2r[target]!.fault = {
      ...(impair.has('bad-crc') ? { badCrc: true } : {}),
      ...(impair.has('bad-fpduptr') ? { fpduptrDelta: 8 } : {}),
      ...(impair.has('pad-nonzero') ? { padByte: 0xa5 } : {}),
    };
    enc0 = encode(i2r, 0);
  }
  const enc1 = encode(r2i, 1);
  const enc = [enc0, enc1] as const;
  const planned = [i2r, r2i] as const;

  // --- TCP segments per direction, each tagged with the round it is sent in ---
  interface Piece {
    dir: 0 | 1;
    start: number;
    end: number;
    round: number;
  }
  const pieces: Piece[] = [];
  for (const dir of [0, 1] as const) {
    const e = enc[dir];
    const n = e.bytes.length;
    const cuts: number[] = [];
    const fp = e.fpdus;
    if (k.segmentation === 'one-per-segment') for (const f of fp) cuts.push(f.endRel);
    else if (k.segmentation === 'packed') {
      let segStart = 0;
      for (const f of fp) {
        if (f.endRel - segStart > k.mss && f.startRel > segStart) {
          cuts.push(f.startRel);
          segStart = f.startRel;
        }
      }
      cuts.push(n);
    } else if (k.segmentation === 'random') {
      for (let off = 0; off < n; ) {
        off = Math.min(n, off + 1 + Math.floor(r() * k.mss));
        cuts.push(off);
      }
    } else for (let off = k.mss; off < n + k.mss; off += k.mss) cuts.push(Math.min(off, n));
    // The Responder's early Send is a segment of its own, sent first.
    if (dir === 1 && impair.has('responder-first') && fp[0]) {
      cuts.push(fp[0].endRel);
      cuts.sort((x, y) => x - y);
    }
    // The round of an octet: that of the FPDU it belongs to. An Initiator segment goes out in its
    // first octet's round (requests early), a Responder segment in its last octet's (answers late),
    // so no answer precedes its request and no Responder FPDU the Initiator's first.
    const roundAt = (rel: number) => {
      let lo = 0;
      while (lo < fp.length - 1 && fp[lo]!.endRel <= rel) lo++;
      return planned[dir][lo]?.round ?? 0;
    };
    let prev = 0;
    for (const c of cuts) {
      if (c <= prev) continue;
      pieces.push({ dir, start: prev, end: c, round: roundAt(dir === 0 ? prev : c - 1) });
      prev = c;
    }
  }
  // Capture order: by round; in a round the Initiator's request before the Responder's answer.
  const order = pieces
    .map((p, i) => ({ p, i }))
    .sort((a, b) => a.p.round - b.p.round || a.p.dir - b.p.dir || a.i - b.i)
    .map((x) => x.p);

  // Mid-stream: the Initiator's capture starts at the first segment boundary that begins a message
  // after its second FPDU; the Responder's at the first message of that round or later, so every
  // answer captured has its request captured too, and the Initiator is seen first.
  const firstKept: [number, number] = midStream ? [enc0.bytes.length, enc1.bytes.length] : [0, 0];
  if (midStream) {
    const startsMessage = (dir: 0 | 1, rel: number, ok: (i: number) => boolean) => {
      const i = enc[dir].fpdus.findIndex((f) => f.startRel === rel);
      return i >= 0 && planned[dir][i]!.first && ok(i);
    };
    // No request among the first FPDUs (held until framing is found, they would reach DDP after their answers).
    const b0 = pieces.find(
      (p) =>
        p.dir === 0 &&
        startsMessage(
          0,
          p.start,
          (i) => i >= 2 && i2r.slice(i, i + 4).every((x) => x.kind !== 'read' && x.kind !== 'atomic'),
        ),
    );
    if (!b0)
      throw new KnobError(
        '--start mid-stream: no message boundary to start the capture at (more --count, or another --seed)',
      );
    {
      firstKept[0] = b0.start;
      const round = i2r[enc0.fpdus.findIndex((f) => f.startRel === b0.start)]!.round;
      const b1 = pieces.find((p) => p.dir === 1 && startsMessage(1, p.start, (i) => r2i[i]!.round >= round));
      if (b1) firstKept[1] = b1.start;
    }
  }
  if (midStream) {
    // Mid-stream framing is found on a few chained FPDUs (RFC 5044 §6): each direction needs three.
    const kept = [0, 1].map((d) => enc[d]!.fpdus.filter((f) => f.startRel >= firstKept[d]!).length);
    if (kept[0]! < 3 || kept[1]! < 3)
      throw new KnobError(
        '--start mid-stream: fewer than three FPDUs after the capture starts (more --count, or another --seed)',
      );
  }
  const sends: Send[] = [];
  /** Stream offset (relative to SeqStart) of each send's first octet; -1 for startup frames. */
  const relOf: number[] = [];
  if (!midStream) {
    sends.push({ dir: 0, bytes: request }, { dir: 1, bytes: reply });
    relOf.push(-1, -1);
  }
  for (const p of order) {
    sends.push({ dir: p.dir, bytes: enc[p.dir].bytes.subarray(p.start, p.end), cut: [p.end - p.start] });
    relOf.push(p.start);
  }
  const isn: [number, number] = k.seqWrap
    ? [(2 ** 32 - 1 - request.length - 700) >>> 0, (2 ** 32 - 1 - reply.length - 300) >>> 0]
    : [1000 + Math.floor(r() * 1e6), 900000 + Math.floor(r() * 1e6)];

  // Impairments on the captured segments (data frame indexes in emission order).
  const dataFrames = sends.length;
  const startupFrames = midStream ? 0 : 2;
  const skipped = (i: number) => midStream && relOf[i]! < firstKept[sends[i]!.dir];
  const fpduOf = (dir: 0 | 1, rel: number) => enc[dir].fpdus.findIndex((f) => f.startRel <= rel && rel < f.endRel);
  // Loss: one Initiator segment after the startup that holds whole FPDUs only (so what is lost is clear).
  let lost = -1;
  if (impair.has('loss')) {
    const candidates: number[] = [];
    // A gap shows only after captured FPDUs.
    const firstIdx0 = Math.max(
      0,
      enc0.fpdus.findIndex((f) => f.startRel >= firstKept[0]),
    );
    for (let i = startupFrames; i < dataFrames; i++) {
      const s = sends[i]!;
      if (s.dir !== 0 || skipped(i)) continue;
      const rel = relOf[i]!;
      const a = fpduOf(0, rel);
      const b = fpduOf(0, rel + s.bytes.length - 1);
      // Only whole Writes and whole QN 0 messages: what their loss does to DDP is one MSN gap at most.
      const plain = i2r.slice(a, b + 1).every((p) => p.whole && (p.kind === 'write' || onQn0(p, rtr)));
      if (
        // Mid-stream, framing is found on three chained FPDUs (as below): they come before the loss.
        a >= firstIdx0 + (midStream ? 3 : 1) &&
        plain &&
        enc0.fpdus[a]!.startRel === rel &&
        enc0.fpdus[b]!.endRel === rel + s.bytes.length &&
        b < enc0.fpdus.length - 1
      )
        candidates.push(i);
    }
    if (candidates.length === 0)
      throw new KnobError(
        '--impair loss: no Initiator segment holds whole FPDUs between others (more --count, or --segmentation one-per-segment)',
      );
    lost = candidates[Math.floor(r() * candidates.length)]!;
  }
  const dropIdx = new Set<number>();
  for (let i = 0; i < dataFrames; i++) if (skipped(i)) dropIdx.add(i);
  if (lost >= 0) dropIdx.add(lost);
  const reorder = impair.has('reorder');
  const duplicate = impair.has('duplicate');
  const overlap = impair.has('overlap');
  const seenDir = [false, false];
  const res = buildScenario(sends, {
    client: { addr: addr[0], port: port[0] },
    server: { addr: addr[1], port: port[1] },
    isn,
    mss: k.mss,
    noHandshake: midStream,
    close: k.close,
    ...(k.vlan !== null ? { vlan: k.vlan } : {}),
    drop: (i) => dropIdx.has(i),
    // Within a direction only, after the startup: reordering across directions changes what came first.
    // Mid-stream, a direction's capture starts at its first captured segment: one sent before it
    // but captured after it shows octets before the start (there is no SYN to place them).
    swapWithNext: reorder
      ? (i, a, b) => {
          const first = !seenDir[a];
          seenDir[a] = true;
          return i >= startupFrames && a === b && !(midStream && first) && r() < 0.3;
        }
      : () => false,
    duplicate: duplicate ? (i) => i >= startupFrames && r() < 0.2 : () => false,
    overlap: overlap ? (i) => i >= startupFrames && r() < 0.3 : () => false,
  });

  // --- the truth ---
  const seqStart: [number, number] = [(res.dataSeq[0] + request.length) >>> 0, (res.dataSeq[1] + reply.length) >>> 0];
  const seqOf = (dir: 0 | 1, f: EncodedFpdu) => (seqStart[dir] + f.lenRel) >>> 0;
  const find = (rule: string, dir: 0 | 1 | null, seq: number | null) =>
    findings.push({ rule, from: dir === null ? null : ep[dir], seq });
  // The FPDUs of the lost segment (Initiator's), by index.
  const lostFpdus: number[] = [];
  if (lost >= 0) {
    const rel = relOf[lost]!;
    const end = rel + sends[lost]!.bytes.length;
    enc0.fpdus.forEach((f, i) => {
      if (f.startRel >= rel && f.endRel <= end) lostFpdus.push(i);
    });
  }
  const counted: [EncodedFpdu[], EncodedFpdu[]] = [
    enc0.fpdus.filter((f, i) => f.startRel >= firstKept[0] && !lostFpdus.includes(i)),
    enc1.fpdus.filter((f) => f.startRel >= firstKept[1]),
  ];
  // A marker in front of the first captured FPDU's length field (RFC 5044 §4.3: one at SeqStart +
  // 512k that falls between FPDUs belongs to the next) shows when a CRC covers it, or when other
  // markers put the grid there. Alone and without CRC, its four octets cannot be told from the CRC
  // field of the FPDU before, whose content is then anything (§7.1.1: "the CRC field MUST be
  // considered valid for FPDU checking regardless of its contents").
  const leadingUnseen = (dir: 0 | 1) => {
    const c = counted[dir];
    if (!midStream || k.crc || c.length === 0 || c[0]!.lenRel === c[0]!.startRel) return 0;
    return c.reduce((n, f) => n + f.markers, 0) === 1 ? 1 : 0;
  };
  // Framing is found where the first captured FPDU begins (a marker in front of its length field
  // included, when it shows).
  if (midStream)
    for (const dir of [0, 1] as const)
      if (counted[dir].length) {
        const f0 = counted[dir][0]!;
        find('mpa.mid-stream', dir, (seqStart[dir] + (leadingUnseen(dir) ? f0.lenRel : f0.startRel)) >>> 0);
      }
  if (lostFpdus.length) {
    const gapSeq = (seqStart[0] + relOf[lost]!) >>> 0;
    const last = lostFpdus[lostFpdus.length - 1]!;
    find('tcp.capture-loss', 0, gapSeq);
    find('mpa.fpdu-truncated-by-gap', 0, gapSeq);
    find('mpa.resync', 0, seqOf(0, enc0.fpdus[last + 1]!));
    // A lost QN 0 message shows as an MSN gap at the next one, explained by the capture loss.
    if (lostFpdus.some((i) => onQn0(i2r[i]!, rtr))) {
      const later = i2r.findIndex((p, i) => i > last && onQn0(p, rtr));
      if (later >= 0) find('ddp.capture-loss', 0, seqOf(0, enc0.fpdus[later]!));
    }
  }
  if (lengthMistake && !midStream) {
    const f0 = enc0.fpdus[0]!;
    const L = f0.ulpduLength;
    const field = impair.has('length-counts-header')
      ? L + 2
      : impair.has('length-counts-crc')
        ? L + 4
        : impair.has('length-le')
          ? ((L & 0xff) << 8) | (L >> 8)
          : L;
    // Where an RFC receiver expects the second FPDU: after the first one framed by RFC 5044 §4.2.
    const rfcEnd = 2 + field + ((4 - ((2 + field) % 4)) % 4) + 4;
    const rule = {
      'wrong-pad': 'mpa.pad-miscomputed',
      'no-pad': 'mpa.pad-omitted',
      'length-counts-header': 'mpa.ulpdu-length-counts-header',
      'length-counts-crc': 'mpa.ulpdu-length-counts-crc',
      'length-le': 'mpa.ulpdu-length-byte-order',
    }[lengthMistake];
    // The first FPDU framed as the sender laid it out is whole and its CRC verifies: the mistake is
    // reported, not a CRC error (which is only how RFC framing reads its misplaced CRC field).
    find(rule, 0, seqOf(0, f0));
    find('mpa.framing-lost', 0, (seqStart[0] + f0.lenRel + rfcEnd) >>> 0);
  }
  if (impair.has('marker-origin') && !midStream && enc0.fpdus.length) {
    // No marker at SeqStart where RFC 5044 §4.3 puts one: the length field is read 4 octets early.
    find('mpa.marker-phase', 0, seqOf(0, enc0.fpdus[0]!));
    find('mpa.framing-lost', 0, (seqOf(0, enc0.fpdus[0]!) + 4) >>> 0);
  }
  if (impair.has('bad-key')) find('mpa.bad-key', 0, res.dataSeq[0]);
  if (impair.has('pd-too-long')) find('mpa.pd-length-too-long', 0, res.dataSeq[0]);
  if (impair.has('initiator-initiator')) {
    find('mpa.initiator-initiator', 1, res.dataSeq[1]);
    // Neither side saw a Reply, so each side's FPDUs come before one.
    for (const dir of [0, 1] as const)
      if (enc[dir].fpdus.length) find('mpa.initiator-before-reply', dir, seqOf(dir, enc[dir].fpdus[0]!));
    // No Reply, so no peer-to-peer mode: a zero-length Write or Read first looks like an RTR without it
    // (a zero-length Send is an ordinary empty message).
    if ((rtr === 'write' || rtr === 'read') && enc0.fpdus.length)
      find('rdmap.rtr-without-p2p', 0, seqOf(0, enc0.fpdus[0]!));
  }
  if (impair.has('responder-first')) find('mpa.responder-first', 1, seqOf(1, enc1.fpdus[0]!));
  // A fault in an FPDU the capture does not hold (sent before a mid-stream capture began, or lost) shows nothing.
  const faultSeen = target >= 0 && enc0.fpdus[target]!.startRel >= firstKept[0] && !lostFpdus.includes(target);
  if (faultSeen) {
    const f = enc0.fpdus[target]!;
    const next = enc0.fpdus[target + 1];
    if (impair.has('bad-crc')) {
      find('mpa.crc-mismatch', 0, seqOf(0, f));
      // The receiver leaves the FPDU out: the next Send on QN 0 shows an MSN gap that loss explains.
      const later = i2r.findIndex((p, i) => i > target && onQn0(p, rtr));
      if (later >= 0) find('ddp.after-crc-discard', 0, seqOf(0, enc0.fpdus[later]!));
    }
    if (impair.has('bad-fpduptr') && !impair.has('bad-crc')) find('mpa.fpduptr-mismatch', 0, seqOf(0, f));
    if (impair.has('pad-nonzero')) find('mpa.pad-not-zero', 0, seqOf(0, f));
    if ((impair.has('bad-crc') || impair.has('bad-fpduptr')) && next) find('mpa.after-error', 0, seqOf(0, next));
  }
  // The EMSS is the MSS the receiver's SYN announced; only the first oversized FPDU per direction is listed.
  if (!midStream) {
    for (const dir of [0, 1] as const) {
      const big = counted[dir].find((f) => f.endRel - f.startRel > k.mss);
      if (big) find('mpa.fpdu-exceeds-emss', dir, seqOf(dir, big));
    }
  }
  const term = i2r.findIndex((p) => p.kind === 'terminate');
  if (term >= 0) find('rdmap.terminate', 0, seqOf(0, enc0.fpdus[term]!));
  if (k.close === 'fin') {
    for (const dir of [0, 1] as const)
      find('mpa.tcp-closed-between', dir, (seqStart[dir] + enc[dir].bytes.length) >>> 0);
  }
  if (k.close === 'rst') find('mpa.tcp-closed-between', 0, (seqStart[0] + enc0.bytes.length) >>> 0);
  const markersIn = (dir: 0 | 1) => counted[dir].reduce((n, f) => n + f.markers, 0) - leadingUnseen(dir);
  // Markers are on where negotiated (RFC 5044 §7.1.1); captured mid-stream, with no startup frame,
  // only a marker in the captured FPDUs shows them: where none of the slots every 512 octets from
  // SeqStart (§4.3) falls in the octets captured, the capture shows FPDUs without markers.
  const markersSeen = (dir: 0 | 1) => mark[dir] && (!midStream || markersIn(dir) > 0);
  const dirTruth = (dir: 0 | 1): TruthDirection => ({
    from: ep[dir],
    to: ep[1 - dir]!,
    markers: markersSeen(dir),
    fpdus: counted[dir].length,
    markerCount: markersIn(dir),
    crcErrors: faultSeen && dir === 0 && impair.has('bad-crc') ? 1 : 0,
    markerErrors: faultSeen && dir === 0 && impair.has('bad-fpduptr') && !impair.has('bad-crc') ? 1 : 0,
  });
  return {
    frames: res.frames,
    findings: sortFindings(findings),
    flows: [{ client: ep[0], server: ep[1], mpa: { directions: [dirTruth(0), dirTruth(1)] } }],
    fpduSeqs: { [ep[0]]: counted[0].map((f) => seqOf(0, f)), [ep[1]]: counted[1].map((f) => seqOf(1, f)) },
    args: [],
  };
}
