/**
 * One MPA connection built from the knobs (src/generate/knobs.ts), with its ground truth: the
 * RDMAP messages of the mix as DDP segments, FPDUs with markers and CRC as negotiated (RFC 5044
 * §4, §7.1; RFC 6581 §3), TCP segments cut by the segmentation policy, both directions
 * interleaved as request and answer, then the impairments. Every fault is placed by the seed, and
 * the truth says what an RFC-correct receiver finds, FPDU by FPDU.
 *
 * As a stream (planKnobConnection): everything is decided first on lengths alone (fpdu-list.ts,
 * fpdu-stream.ts: a few bytes per FPDU and per segment), the truth included; the frames are made
 * when read, each message's payload made again from its seed when the stream reaches it, so memory
 * does not grow with --count and --size. The random draws are those of the whole-capture build, in
 * the same order, so the octets are the same.
 */
import { enhancedPd, rng, startupFrame, type FpduEncoding, type SenderMistakeSpec } from './mpa-encoder.js';
import { scenarioStream, type SendShapes } from './scenario.js';
import type { FpduList } from './fpdu-list.js';
import { planMessages } from './knob-messages.js';
import { FpduLayout, FpduStream } from './fpdu-stream.js';
import { KnobError, type Knobs } from './knobs.js';
import { endpoint, sortFindings, type TruthDirection, type TruthFinding, type TruthFlow } from './truth.js';
import type { PcapFrame } from '../report/pcap-writer.js';

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

/** A Generated whose frames are made as they are read (once): the knob-driven connection. */
export type StreamedGenerated = Omit<Generated, 'frames' | 'post'> & { frames: () => Generator<PcapFrame> };

/** Messages on untagged queue 0 (RFC 5040 §5.1): their MSNs run in one sequence per direction. */
function onQn0(l: FpduList, i: number, rtr: Knobs['rtr']): boolean {
  const kind = l.kind(i);
  return (
    kind === 'send' ||
    kind === 'send-se' ||
    kind === 'send-inv' ||
    kind === 'immediate' ||
    (kind === 'rtr' && rtr === 'send')
  );
}

/**
 * A growing array of stream offsets (segments of a large capture: millions). An offset fits 32 bits:
 * a direction carries at most 1500 messages of 1 MiB (--count, --size) with their headers.
 */
class Offsets {
  a = new Uint32Array(256);
  length = 0;
  push(v: number): void {
    if (v !== v >>> 0) throw new Error(`generator: stream offset ${v} past 32 bits`);
    if (this.length === this.a.length) {
      const b = new Uint32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
}

/** The knob-driven connection with its frames as a stream (generate writes them as they come). */
export function planKnobConnection(k: Knobs, seed: number): StreamedGenerated {
  const r = rng(seed * 2654435761 + 12345);
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
  const { i2r, r2i, rtr, lengthMistake } = planMessages(k, r, impair, mark, midStream);
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
  const encoding = (dir: 0 | 1): FpduEncoding => ({
    markers: mark[dir],
    crc: k.crc,
    ...(dir === 0 && Object.keys(mistake).length ? { mistake } : {}),
  });
  // Where each FPDU falls: the one-FPDU faults below change octets, never a length or a marker's place.
  const enc0 = new FpduLayout(i2r, encoding(0));
  const enc1 = new FpduLayout(r2i, encoding(1));
  const findings: TruthFinding[] = [];
  const fpduFault = (['bad-crc', 'bad-fpduptr', 'pad-nonzero'] as const).filter((x) => impair.has(x));
  let target = -1;
  if (fpduFault.length > 0) {
    const eligible: number[] = [];
    for (let i = 0; i < enc0.length; i++) {
      if (impair.has('bad-fpduptr') && enc0.markers(i) === 0) continue;
      if (impair.has('pad-nonzero') && (2 + i2r.ulpduLength(i)) % 4 === 0) continue;
      // A corrupted FPDU is left out by the receiver: keep what that does to DDP to a gap in one
      // queue's MSNs (a whole single-segment Send), never a message cut short.
      if (impair.has('bad-crc') && !(i2r.whole(i) && onQn0(i2r, i, rtr))) continue;
      if (i2r.kind(i) !== 'rtr') eligible.push(i);
    }
    if (eligible.length === 0)
      throw new KnobError(
        `--impair ${fpduFault.join(',')}: no Initiator FPDU can carry it (more --count, another --messages mix, or other --seed)`,
      );
    target = k.at >= 0 ? k.at : eligible[Math.floor(eligible.length / 2)]!;
    if (!eligible.includes(target))
      throw new KnobError(
        `--at ${k.at}: that FPDU cannot carry ${fpduFault.join(',')} (eligible: ${eligible.slice(0, 10).join(', ')}${eligible.length > 10 ? ', ...' : ''})`,
      );
    i2r.faults.set(target, {
      ...(impair.has('bad-crc') ? { badCrc: true } : {}),
      ...(impair.has('bad-fpduptr') ? { fpduptrDelta: 8 } : {}),
      ...(impair.has('pad-nonzero') ? { padByte: 0xa5 } : {}),
    });
  }
  const enc = [enc0, enc1] as const;
  const planned = [i2r, r2i] as const;

  // --- TCP segments per direction, each sent in a round ---
  /**
   * The segments ("pieces") of both directions, the Initiator's first: each one's end (its start is
   * the end of the one before in its direction).
   */
  const ends = new Offsets();
  /** Index of each direction's first piece. */
  const firstPiece: [number, number] = [0, 0];
  for (const dir of [0, 1] as const) {
    firstPiece[dir] = ends.length;
    const e = enc[dir];
    const n = e.bytes;
    let prev = 0;
    // The Responder's early Send is a segment of its own, sent first: one more cut, in its place.
    let extra = dir === 1 && impair.has('responder-first') && e.length ? e.endRel(0) : -1;
    const cut = (c: number) => {
      if (extra >= 0 && extra <= c) {
        if (extra > prev) ends.push((prev = extra));
        extra = -1;
      }
      if (c > prev) ends.push((prev = c));
    };
    if (k.segmentation === 'one-per-segment') for (let i = 0; i < e.length; i++) cut(e.endRel(i));
    else if (k.segmentation === 'packed') {
      let segStart = 0;
      for (let i = 0; i < e.length; i++) {
        if (e.endRel(i) - segStart > k.mss && e.startRel(i) > segStart) {
          cut(e.startRel(i));
          segStart = e.startRel(i);
        }
      }
      cut(n);
    } else if (k.segmentation === 'random') {
      for (let off = 0; off < n; ) {
        off = Math.min(n, off + 1 + Math.floor(r() * k.mss));
        cut(off);
      }
    } else for (let off = k.mss; off < n + k.mss; off += k.mss) cut(Math.min(off, n));
    if (extra > prev) ends.push(extra);
  }
  const pieceCount = ends.length;
  const pEnd = ends.a;
  const pDir = (p: number): 0 | 1 => (p < firstPiece[1] ? 0 : 1);
  const pStart = (p: number) => (p === firstPiece[pDir(p)] ? 0 : pEnd[p - 1]!);
  // The round of an octet: that of the FPDU it belongs to. An Initiator segment goes out in its
  // first octet's round (requests early), a Responder segment in its last octet's (answers late),
  // so no answer precedes its request and no Responder FPDU the Initiator's first. Asked for in
  // each direction's order, so the search for the FPDU goes on from the last one found.
  const roundOf = ([0, 1] as const).map((dir) => {
    const e = enc[dir];
    let lo = 0;
    return (p: number) => {
      const rel = dir === 0 ? pStart(p) : pEnd[p]! - 1;
      while (lo < e.length - 1 && e.endRel(lo) <= rel) lo++;
      return lo < planned[dir].length ? planned[dir].round(lo) : 0;
    };
  });
  // Capture order: by round; in a round the Initiator's request before the Responder's answer
  // (each direction's rounds only grow, so this merges the two in order).
  const order = new Uint32Array(pieceCount);
  {
    let a = 0;
    let b = firstPiece[1];
    let ra = a < firstPiece[1] ? roundOf[0]!(a) : 0;
    let rb = b < pieceCount ? roundOf[1]!(b) : 0;
    let last = -Infinity;
    for (let o = 0; o < pieceCount; o++) {
      const takeA = a < firstPiece[1] && (b >= pieceCount || ra <= rb);
      const round = takeA ? ra : rb;
      if (round < last) throw new Error('generator: segments out of round order');
      last = round;
      if (takeA) {
        order[o] = a++;
        if (a < firstPiece[1]) ra = roundOf[0]!(a);
      } else {
        order[o] = b++;
        if (b < pieceCount) rb = roundOf[1]!(b);
      }
    }
  }

  // Mid-stream: the Initiator's capture starts at the first segment boundary that begins a message
  // after its second FPDU; the Responder's at the first message of that round or later, so every
  // answer captured has its request captured too, and the Initiator is seen first.
  const firstKept: [number, number] = midStream ? [enc0.bytes, enc1.bytes] : [0, 0];
  if (midStream) {
    const startsMessage = (dir: 0 | 1, rel: number, ok: (i: number) => boolean) => {
      const i = enc[dir].fpduStartingAt(rel);
      return i >= 0 && planned[dir].first(i) && ok(i);
    };
    // No request among the first FPDUs (held until framing is found, they would reach DDP after their answers).
    const noRequest = (i: number) => {
      for (let j = i; j < Math.min(i + 4, i2r.length); j++)
        if (i2r.kind(j) === 'read' || i2r.kind(j) === 'atomic') return false;
      return true;
    };
    let b0 = -1;
    for (let p = firstPiece[0]; p < firstPiece[1] && b0 < 0; p++)
      if (startsMessage(0, pStart(p), (i) => i >= 2 && noRequest(i))) b0 = p;
    if (b0 < 0)
      throw new KnobError(
        '--start mid-stream: no message boundary to start the capture at (more --count, or another --seed)',
      );
    firstKept[0] = pStart(b0);
    const round = i2r.round(enc0.fpduStartingAt(firstKept[0]));
    for (let p = firstPiece[1]; p < pieceCount; p++)
      if (startsMessage(1, pStart(p), (i) => r2i.round(i) >= round)) {
        firstKept[1] = pStart(p);
        break;
      }
  }
  /** FPDUs from the first one captured on (mid-stream: those after the capture starts). */
  const firstCaptured = [0, 1].map((d) => {
    let i = 0;
    while (i < enc[d]!.length && enc[d]!.startRel(i) < firstKept[d]!) i++;
    return i;
  });
  if (midStream) {
    // Mid-stream framing is found on a few chained FPDUs (RFC 5044 §6): each direction needs three.
    const kept = [0, 1].map((d) => enc[d]!.length - firstCaptured[d]!);
    if (kept[0]! < 3 || kept[1]! < 3)
      throw new KnobError(
        '--start mid-stream: fewer than three FPDUs after the capture starts (more --count, or another --seed)',
      );
  }
  // The sends: the startup frames, then the pieces in capture order.
  const startupFrames = midStream ? 0 : 2;
  const dataFrames = startupFrames + pieceCount;
  const dirOf = (i: number): 0 | 1 => (i < startupFrames ? (i as 0 | 1) : pDir(order[i - startupFrames]!));
  /** Stream offset (relative to SeqStart) of each send's first octet; -1 for startup frames. */
  const relOf = (i: number) => (i < startupFrames ? -1 : pStart(order[i - startupFrames]!));
  const lengthOf = (i: number) =>
    i < startupFrames
      ? (i === 0 ? request : reply).length
      : pEnd[order[i - startupFrames]!]! - pStart(order[i - startupFrames]!);
  const isn: [number, number] = k.seqWrap
    ? [(2 ** 32 - 1 - request.length - 700) >>> 0, (2 ** 32 - 1 - reply.length - 300) >>> 0]
    : [1000 + Math.floor(r() * 1e6), 900000 + Math.floor(r() * 1e6)];

  // Impairments on the captured segments (data frame indexes in emission order).
  const skipped = (i: number) => midStream && relOf(i) < firstKept[dirOf(i)];
  // Loss: one Initiator segment after the startup that holds whole FPDUs only (so what is lost is clear).
  let lost = -1;
  if (impair.has('loss')) {
    const candidates: number[] = [];
    // A gap shows only after captured FPDUs.
    const firstIdx0 = firstCaptured[0]! < enc0.length ? firstCaptured[0]! : 0;
    for (let i = startupFrames; i < dataFrames; i++) {
      if (dirOf(i) !== 0 || skipped(i)) continue;
      const rel = relOf(i);
      const len = lengthOf(i);
      const a = enc0.fpduAt(rel);
      const b = enc0.fpduAt(rel + len - 1);
      // Only whole Writes and whole QN 0 messages: what their loss does to DDP is one MSN gap at most.
      let plain = true;
      for (let j = a; j <= b && plain; j++) plain = i2r.whole(j) && (i2r.kind(j) === 'write' || onQn0(i2r, j, rtr));
      if (
        // Mid-stream, framing is found on three chained FPDUs (as below): they come before the loss.
        a >= firstIdx0 + (midStream ? 3 : 1) &&
        plain &&
        enc0.startRel(a) === rel &&
        enc0.endRel(b) === rel + len &&
        b < enc0.length - 1
      )
        candidates.push(i);
    }
    if (candidates.length === 0)
      throw new KnobError(
        '--impair loss: no Initiator segment holds whole FPDUs between others (more --count, or --segmentation one-per-segment)',
      );
    lost = candidates[Math.floor(r() * candidates.length)]!;
  }
  const reorder = impair.has('reorder');
  const duplicate = impair.has('duplicate');
  const overlap = impair.has('overlap');
  // A piece is one segment; a startup frame is cut by the MSS.
  const shapes: SendShapes = {
    length: dataFrames,
    at: (i) =>
      i < startupFrames
        ? { dir: dirOf(i), length: lengthOf(i) }
        : { dir: dirOf(i), length: lengthOf(i), cut: [lengthOf(i)] },
  };
  const seenDir = [false, false];
  const res = scenarioStream(shapes, {
    client: { addr: addr[0], port: port[0] },
    server: { addr: addr[1], port: port[1] },
    isn,
    mss: k.mss,
    noHandshake: midStream,
    close: k.close,
    ...(k.vlan !== null ? { vlan: k.vlan } : {}),
    drop: (i) => (i < dataFrames && skipped(i)) || i === lost,
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
  const seqOf = (dir: 0 | 1, i: number) => (seqStart[dir] + enc[dir].lenRel(i)) >>> 0;
  const find = (rule: string, dir: 0 | 1 | null, seq: number | null) =>
    findings.push({ rule, from: dir === null ? null : ep[dir], seq });
  // The FPDUs of the lost segment (Initiator's), by index: a run [lostFirst, lostLast].
  let lostFirst = -1;
  let lostLast = -2;
  if (lost >= 0) {
    const rel = relOf(lost);
    const end = rel + lengthOf(lost);
    for (let i = 0; i < enc0.length; i++)
      if (enc0.startRel(i) >= rel && enc0.endRel(i) <= end) {
        if (lostFirst < 0) lostFirst = i;
        lostLast = i;
      }
  }
  const isLost = (i: number) => i >= lostFirst && i <= lostLast;
  /** The FPDUs an analyzer counts, by index: captured and not lost (a few numbers, not a list). */
  const counted = (dir: 0 | 1, each: (i: number) => void) => {
    for (let i = firstCaptured[dir]!; i < enc[dir].length; i++) if (!(dir === 0 && isLost(i))) each(i);
  };
  const firstCounted = (dir: 0 | 1) => {
    let i = firstCaptured[dir]!;
    while (i < enc[dir].length && dir === 0 && isLost(i)) i++;
    return i < enc[dir].length ? i : -1;
  };
  const markersCounted = (dir: 0 | 1) => {
    let n = 0;
    counted(dir, (i) => {
      n += enc[dir].markers(i);
    });
    return n;
  };
  // A marker in front of the first captured FPDU's length field (RFC 5044 §4.3: one at SeqStart +
  // 512k that falls between FPDUs belongs to the next) shows when a CRC covers it, or when other
  // markers put the grid there. Alone and without CRC, its four octets cannot be told from the CRC
  // field of the FPDU before, whose content is then anything (§7.1.1: "the CRC field MUST be
  // considered valid for FPDU checking regardless of its contents").
  const leadingUnseen = (dir: 0 | 1) => {
    const c0 = firstCounted(dir);
    if (!midStream || k.crc || c0 < 0 || enc[dir].lenRel(c0) === enc[dir].startRel(c0)) return 0;
    return markersCounted(dir) === 1 ? 1 : 0;
  };
  // Framing is found where the first captured FPDU begins (a marker in front of its length field
  // included, when it shows).
  if (midStream)
    for (const dir of [0, 1] as const) {
      const c0 = firstCounted(dir);
      if (c0 >= 0)
        find(
          'mpa.mid-stream',
          dir,
          (seqStart[dir] + (leadingUnseen(dir) ? enc[dir].lenRel(c0) : enc[dir].startRel(c0))) >>> 0,
        );
    }
  if (lostFirst >= 0) {
    const gapSeq = (seqStart[0] + relOf(lost)) >>> 0;
    const last = lostLast;
    find('tcp.capture-loss', 0, gapSeq);
    find('mpa.fpdu-truncated-by-gap', 0, gapSeq);
    find('mpa.resync', 0, seqOf(0, last + 1));
    // A lost QN 0 message shows as an MSN gap at the next one, explained by the capture loss.
    let qn0Lost = false;
    for (let i = lostFirst; i <= lostLast; i++) qn0Lost ||= onQn0(i2r, i, rtr);
    if (qn0Lost) {
      const later = nextOnQn0(i2r, last, rtr);
      if (later >= 0) find('ddp.capture-loss', 0, seqOf(0, later));
    }
  }
  if (lengthMistake && !midStream) {
    const L = i2r.ulpduLength(0);
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
    find(rule, 0, seqOf(0, 0));
    find('mpa.framing-lost', 0, (seqStart[0] + enc0.lenRel(0) + rfcEnd) >>> 0);
  }
  if (impair.has('marker-origin') && !midStream && enc0.length) {
    // No marker at SeqStart where RFC 5044 §4.3 puts one: the length field is read 4 octets early.
    find('mpa.marker-phase', 0, seqOf(0, 0));
    find('mpa.framing-lost', 0, (seqOf(0, 0) + 4) >>> 0);
  }
  if (impair.has('bad-key')) find('mpa.bad-key', 0, res.dataSeq[0]);
  if (impair.has('pd-too-long')) find('mpa.pd-length-too-long', 0, res.dataSeq[0]);
  if (impair.has('initiator-initiator')) {
    find('mpa.initiator-initiator', 1, res.dataSeq[1]);
    // Neither side saw a Reply, so each side's FPDUs come before one.
    for (const dir of [0, 1] as const) if (enc[dir].length) find('mpa.initiator-before-reply', dir, seqOf(dir, 0));
    // No Reply, so no peer-to-peer mode: a zero-length Write or Read first looks like an RTR without it
    // (a zero-length Send is an ordinary empty message).
    if ((rtr === 'write' || rtr === 'read') && enc0.length) find('rdmap.rtr-without-p2p', 0, seqOf(0, 0));
  }
  if (impair.has('responder-first')) find('mpa.responder-first', 1, seqOf(1, 0));
  // A fault in an FPDU the capture does not hold (sent before a mid-stream capture began, or lost) shows nothing.
  const faultSeen = target >= 0 && target >= firstCaptured[0]! && !(lostFirst >= 0 && isLost(target));
  // Captured mid-stream, a wrong marker that is the only one the Initiator's octets hold says
  // nothing the capture can check: its FPDUPTR leads nowhere, and since the CRC covers markers (RFC
  // 5044 §4.1), taking any other four octets of its FPDU out as the marker verifies alike. No truth
  // can say where it was, so such a capture is not made.
  if (midStream && faultSeen && impair.has('bad-fpduptr') && markersCounted(0) - leadingUnseen(0) === 1)
    throw new KnobError(
      '--impair bad-fpduptr: captured mid-stream, the wrong marker would be the only one from the Initiator, and where it sits cannot be told from the capture (more --count, a larger --size, or another --seed)',
    );
  if (faultSeen) {
    if (impair.has('bad-crc')) {
      find('mpa.crc-mismatch', 0, seqOf(0, target));
      // The receiver leaves the FPDU out: the next Send on QN 0 shows an MSN gap that loss explains.
      // Only once a Send on QN 0 was captured before it: a capture that starts mid-stream knows no
      // MSN to expect until it has seen one (RFC 5040 §5: MSNs start at 1 when the stream starts).
      const later = nextOnQn0(i2r, target, rtr);
      const msnKnown = !midStream || qn0Between(i2r, firstCaptured[0]!, target, rtr);
      if (later >= 0 && msnKnown) find('ddp.after-crc-discard', 0, seqOf(0, later));
    }
    if (impair.has('bad-fpduptr') && !impair.has('bad-crc')) find('mpa.fpduptr-mismatch', 0, seqOf(0, target));
    if (impair.has('pad-nonzero')) find('mpa.pad-not-zero', 0, seqOf(0, target));
    if ((impair.has('bad-crc') || impair.has('bad-fpduptr')) && target + 1 < enc0.length)
      find('mpa.after-error', 0, seqOf(0, target + 1));
  }
  // The EMSS is the MSS the receiver's SYN announced; only the first oversized FPDU per direction is listed.
  if (!midStream) {
    for (const dir of [0, 1] as const) {
      let big = -1;
      counted(dir, (i) => {
        if (big < 0 && enc[dir].endRel(i) - enc[dir].startRel(i) > k.mss) big = i;
      });
      if (big >= 0) find('mpa.fpdu-exceeds-emss', dir, seqOf(dir, big));
    }
  }
  let term = -1;
  for (let i = 0; i < i2r.length && term < 0; i++) if (i2r.kind(i) === 'terminate') term = i;
  if (term >= 0) find('rdmap.terminate', 0, seqOf(0, term));
  if (k.close === 'fin') {
    for (const dir of [0, 1] as const) find('mpa.tcp-closed-between', dir, (seqStart[dir] + enc[dir].bytes) >>> 0);
  }
  if (k.close === 'rst') find('mpa.tcp-closed-between', 0, (seqStart[0] + enc0.bytes) >>> 0);
  const fpduCounts = [0, 0];
  for (const dir of [0, 1] as const)
    counted(dir, () => {
      fpduCounts[dir]++;
    });
  const markersIn = (dir: 0 | 1) => markersCounted(dir) - leadingUnseen(dir);
  // Markers are on where negotiated (RFC 5044 §7.1.1); captured mid-stream, with no startup frame,
  // only a marker in the captured FPDUs shows them: where none of the slots every 512 octets from
  // SeqStart (§4.3) falls in the octets captured, the capture shows FPDUs without markers.
  const markersSeen = (dir: 0 | 1) => mark[dir] && (!midStream || markersIn(dir) > 0);
  // Every FPDU's seq is a list as long as the capture has FPDUs: made when asked for (generate asks
  // after the frames are written), so it is not held while they are.
  let seqs: Record<string, number[]> | null = null;
  const fpduSeqs = () => {
    if (!seqs) {
      const list = (dir: 0 | 1) => {
        const out: number[] = [];
        counted(dir, (i) => out.push(seqOf(dir, i)));
        return out;
      };
      seqs = { [ep[0]]: list(0), [ep[1]]: list(1) };
    }
    return seqs;
  };
  const dirTruth = (dir: 0 | 1): TruthDirection => ({
    from: ep[dir],
    to: ep[1 - dir]!,
    markers: markersSeen(dir),
    fpdus: fpduCounts[dir]!,
    markerCount: markersIn(dir),
    crcErrors: faultSeen && dir === 0 && impair.has('bad-crc') ? 1 : 0,
    markerErrors: faultSeen && dir === 0 && impair.has('bad-fpduptr') && !impair.has('bad-crc') ? 1 : 0,
  });
  const streams = [new FpduStream(i2r, enc0, encoding(0)), new FpduStream(r2i, enc1, encoding(1))] as const;
  return {
    // Each send's octets in send order: the startup frames, then each piece from its direction's stream.
    frames: () =>
      res.frames((i) => {
        if (i < startupFrames) return i === 0 ? request : reply;
        const p = order[i - startupFrames]!;
        return streams[pDir(p)].take(pStart(p), pEnd[p]!);
      }),
    findings: sortFindings(findings),
    flows: [{ client: ep[0], server: ep[1], mpa: { directions: [dirTruth(0), dirTruth(1)] } }],
    get fpduSeqs() {
      return fpduSeqs();
    },
    args: [],
  };
}

/** The first message on QN 0 after FPDU `after`, or -1. */
function nextOnQn0(l: FpduList, after: number, rtr: Knobs['rtr']): number {
  for (let i = after + 1; i < l.length; i++) if (onQn0(l, i, rtr)) return i;
  return -1;
}

/** Whether an FPDU of a message on QN 0 lies in [from, to). */
function qn0Between(l: FpduList, from: number, to: number, rtr: Knobs['rtr']): boolean {
  for (let i = from; i < to; i++) if (onQn0(l, i, rtr)) return true;
  return false;
}

/** The knob-driven connection with its frames made at once (scenarios that edit frames, tests). */
export function buildKnobConnection(k: Knobs, seed: number): Generated {
  const g = planKnobConnection(k, seed);
  return { ...g, frames: [...g.frames()] };
}
