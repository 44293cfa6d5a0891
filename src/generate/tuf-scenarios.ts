/**
 * Scenarios of ULP Framing for TCP (draft-ietf-tsvwg-tcp-ulp-frame-00; builders in tuf.ts): PDU
 * alignment mode (§5) and marker mode (§6) clean, and each tuf.* rule from the segment cuts,
 * keys, Lengths or marker values a sender or middlebox gets wrong. The truth is what each builder
 * put on the wire: findings by sender and seq (a framing PDU's first octet, a segment's, or a
 * marker's); TUF flows carry no MPA.
 */
import type { Scenario } from './scenario-table.js';
import type { Generated } from './knob-connection.js';
import { alignedStream, markerStream, ulpPdus } from './tuf.js';
import { buildScenario, type Send } from './scenario.js';
import { endpoint, sortFindings, type TruthFinding } from './truth.js';

const EP = [endpoint('10.0.0.1', 40001), endpoint('10.0.0.2', 4420)] as const;
/** The framing keys of the two sides (48 bits each). */
const KEY_C = 0x1a2b3c4d5e6f;
const KEY_S = 0x0badc0ffee11;
const SIZES_C = [100, 200, 300, 50, 700, 64, 1000, 17];
const SIZES_S = [40, 80, 120, 33, 900];
/** PDUs longer than the marker interval: every PDU start has a marker pointing at it. */
const BIG = [3000, 2500, 4100, 2200, 5000, 2100];

/** Offsets of each framing PDU's first octet in its direction's stream. */
const starts = (cut: readonly number[]): number[] => cut.map((_, i) => cut.slice(0, i).reduce((a, b) => a + b, 0));

/** A TUF capture: the sends, then the findings at offsets of the Initiator's stream (or none). */
function tuf(
  sends: Send[],
  findings: (seq0: number) => Array<[rule: string, offset: number]> = () => [],
  args: (seq0: number) => string[] = () => [],
): Generated {
  const s = buildScenario(sends);
  const at = (off: number): number => (s.dataSeq[0] + off) >>> 0;
  const f: TruthFinding[] = findings(s.dataSeq[0]).map(([rule, off]) => ({ rule, from: EP[0], seq: at(off) }));
  return {
    frames: s.frames,
    findings: sortFindings(f),
    flows: [{ client: EP[0], server: EP[1], mpa: null }],
    args: args(s.dataSeq[0]),
  };
}

function sc(name: string, summary: string, build: () => Generated): Scenario {
  return { name, summary, uses: [], build };
}

const aligned = (o: Parameters<typeof alignedStream>[2] = {}) => alignedStream(KEY_C, ulpPdus(SIZES_C, 3), o);

export const TUF_SCENARIOS: readonly Scenario[] = [
  sc(
    'tuf-alignment-clean',
    'TUF PDU alignment mode (draft-ietf-tsvwg-tcp-ulp-frame-00 §5): one framing PDU per segment, a key each way, no finding',
    () => {
      const a = aligned();
      const b = alignedStream(KEY_S, ulpPdus(SIZES_S, 4));
      return tuf([
        { dir: 0, bytes: a.bytes, cut: a.cut },
        { dir: 1, bytes: b.bytes, cut: b.cut },
      ]);
    },
  ),
  sc(
    'tuf-markers-clean',
    'TUF marker mode (§6): a marker every 2048 octets from the first (zero) one, PDUs cut at the MSS, no finding',
    () => {
      const m = markerStream(ulpPdus(BIG, 5), 2048);
      return tuf([
        { dir: 0, bytes: m.bytes, cut: 'mss' },
        { dir: 1, bytes: new TextEncoder().encode('OK\r\n'), cut: 'mss' },
      ]);
    },
  ),
  sc(
    'tuf-second-key',
    "TUF alignment mode: the sixth framing PDU carries another key than the direction's (§5)",
    () => {
      const a = aligned({ keys: (i) => (i === 5 ? 0x665544332211 : KEY_C) });
      return tuf([{ dir: 0, bytes: a.bytes, cut: a.cut }], () => [['tuf.second-key', starts(a.cut)[5]!]]);
    },
  ),
  sc(
    'tuf-length-contradicted',
    "TUF alignment mode: the fourth framing PDU's Length is 10 too large, the next header comes earlier (§5)",
    () => {
      const a = aligned({ length: (i, n) => (i === 3 ? n + 10 : n) });
      return tuf([{ dir: 0, bytes: a.bytes, cut: a.cut }], () => [['tuf.length-contradicted', starts(a.cut)[3]!]]);
    },
  ),
  sc(
    'tuf-length-too-long',
    'TUF alignment mode: a framing PDU with Length 65530, above 65528 (§3), sent in MSS pieces (read with --tuf key=...,start=...)',
    () => {
      const a = alignedStream(KEY_C, ulpPdus([65530, 100], 3));
      const first = a.pdus[0]!.length;
      const cut = [...new Array<number>(Math.floor(first / 1460)).fill(1460), first % 1460, a.pdus[1]!.length];
      // The long framing PDU goes out in several segments: a sender split (§5.2) from its first one.
      return tuf(
        [{ dir: 0, bytes: a.bytes, cut }],
        () => [
          ['tuf.length-too-long', 0],
          ['tuf.sender-split', 0],
        ],
        (seq0) => ['--tuf', `key=${KEY_C.toString(16)}:,start=${seq0}:`],
      );
    },
  ),
  sc(
    'tuf-two-pdus-in-segment',
    'TUF alignment mode: the second and third framing PDUs in one segment, against §5.1',
    () => {
      const a = aligned();
      const cut = [a.cut[0]!, a.cut[1]! + a.cut[2]!, ...a.cut.slice(3)];
      return tuf([{ dir: 0, bytes: a.bytes, cut }], () => [['tuf.two-pdus-in-segment', a.cut[0]!]]);
    },
  ),
  sc(
    'tuf-middlebox',
    'TUF alignment mode re-segmented every 250 octets by a middlebox: no segment boundary on a framing PDU boundary (§5.2)',
    () => {
      const a = aligned();
      // Framing PDU ends at 108, 316, 624, 682, 1390, 1462, 2470, 2495: no multiple of 250 among them.
      return tuf([{ dir: 0, bytes: a.bytes, cut: new Array<number>(10).fill(250) }], () => [['tuf.middlebox', 0]]);
    },
  ),
  sc(
    'tuf-sender-split',
    'TUF alignment mode: the fifth framing PDU (708 octets) sent as 300 + 408, a sender exception case (§5.2)',
    () => {
      const a = aligned();
      const cut = [...a.cut.slice(0, 4), 300, 408, ...a.cut.slice(5)];
      return tuf([{ dir: 0, bytes: a.bytes, cut }], () => [['tuf.sender-split', starts(a.cut)[4]!]]);
    },
  ),
  sc(
    'tuf-marker-copies-differ',
    "TUF marker mode: the fourth marker's two copies of Next PDU Offset differ by 40 (§6)",
    () => {
      const m = markerStream(ulpPdus(BIG, 5), 2048, { npo2: (k, v) => (k === 3 ? v + 40 : v) });
      return tuf([{ dir: 0, bytes: m.bytes, cut: 'mss' }], () => [['tuf.marker-copies-differ', m.markerAt[3]!]]);
    },
  ),
  sc(
    'tuf-marker-offset-contradicted',
    'TUF marker mode: a marker inside a 9000-octet PDU points 100 octets short, inside the PDU the other markers delimit (§6)',
    () => {
      const pdus = ulpPdus([3000, 9000, 2500], 5);
      const good = markerStream(pdus, 2048);
      const inside = good.markerAt.findIndex((p) => p > good.pduStarts[1]! + 2048);
      const m = markerStream(pdus, 2048, { npo: (k, v) => (k === inside ? v - 100 : v) });
      return tuf([{ dir: 0, bytes: m.bytes, cut: 'mss' }], () => [
        ['tuf.marker-offset-contradicted', m.markerAt[inside]!],
      ]);
    },
  ),
  sc('tuf-marker-past-end', 'TUF marker mode: the last marker points 500 octets past the FIN (§6)', () => {
    const last = markerStream(ulpPdus(BIG, 5), 2048).markerAt.length - 1;
    const m = markerStream(ulpPdus(BIG, 5), 2048, { npo: (k, v) => (k === last ? v + 500 : v) });
    return tuf([{ dir: 0, bytes: m.bytes, cut: 'mss' }], () => [['tuf.marker-past-end', m.markerAt[last]!]]);
  }),
  sc(
    'tuf-markers-late-two-periods',
    'TUF marker mode enabled per direction after a plain-text exchange (§4), every 2048 octets one way and 1024 the other (§6), no finding',
    () => {
      const enc = new TextEncoder();
      const hello = enc.encode('TUF HELLO markers=2048\r\n');
      const ok = enc.encode('TUF OK markers=1024\r\n');
      const a = markerStream(ulpPdus(BIG, 5), 2048);
      const b = markerStream(ulpPdus([1500, 2600, 1100, 3000], 6), 1024);
      return tuf([
        { dir: 0, bytes: hello, cut: 'mss' },
        { dir: 1, bytes: ok, cut: 'mss' },
        { dir: 0, bytes: a.bytes, cut: 'mss' },
        { dir: 1, bytes: b.bytes, cut: 'mss' },
      ]);
    },
  ),
  sc(
    'tuf-first-marker-not-zero',
    'TUF marker mode read with --tuf interval=2048 and a start 2048 octets late: the first marker there is not zero (§6)',
    () => {
      const m = markerStream(ulpPdus([3000, 2500], 5), 2048);
      return tuf(
        [{ dir: 0, bytes: m.bytes, cut: 'mss' }],
        () => [['tuf.first-marker-not-zero', m.markerAt[1]!]],
        (seq0) => ['--tuf', `interval=2048,start=${(seq0 + m.markerAt[1]!) >>> 0}:`],
      );
    },
  ),
];
