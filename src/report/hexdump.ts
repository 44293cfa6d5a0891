/**
 * -x: the octets of each startup frame and FPDU, as tshark dumps bytes (offset, 16 hex octets,
 * ASCII), rebuilt from the frames that carried them (markers included: these are the wire octets,
 * like Wireshark's "Reassembled TCP" pane). Under each row, a letter marks the octets MPA
 * engineers look for: L the length field, M a marker, P PAD, C the CRC (K, F, R, L, E for the
 * key, flags, Rev, PD_Length and RFC 6581 block of a startup frame).
 */
import { fpduLayout, OCTET_CRC, OCTET_LENGTH, OCTET_MARKER, OCTET_PAD } from '../../dissectors/mpa/tree.js';
import { isFpdu, isTuf, type MpaRecord } from './events.js';
import { tufLayout, TUF_OCTET_KEY, TUF_OCTET_LENGTH, TUF_OCTET_MARKER } from '../../dissectors/tuf/tree.js';

const TUF_MARKS: Readonly<Record<number, string>> = {
  [TUF_OCTET_LENGTH]: 'L',
  [TUF_OCTET_KEY]: 'K',
  [TUF_OCTET_MARKER]: 'M',
};
import { streamBytes, type FrameStore, type StreamBytes } from './frame-store.js';
import type { Style } from './text.js';

/** Mark letters by octet class, for FPDUs (index = OCTET_*) and startup frames. */
const FPDU_MARKS: Readonly<Record<number, string>> = {
  [OCTET_LENGTH]: 'L',
  [OCTET_MARKER]: 'M',
  [OCTET_PAD]: 'P',
  [OCTET_CRC]: 'C',
};
const FPDU_LEGEND = 'L length, M marker, P pad, C CRC';
const STARTUP_LEGEND = 'K key, F flags, R Rev, L PD_Length, E IRD/ORD';

function startupMarks(n: number, enhanced: boolean): string[] {
  const m: string[] = new Array<string>(n).fill('');
  for (let i = 0; i < Math.min(16, n); i++) m[i] = 'K';
  if (n > 16) m[16] = 'F';
  if (n > 17) m[17] = 'R';
  if (n > 18) m[18] = 'L';
  if (n > 19) m[19] = 'L';
  if (enhanced) for (let i = 20; i < Math.min(24, n); i++) m[i] = 'E';
  return m;
}

function colourFor(mark: string, st: Style, crcBad: boolean): (s: string) => string {
  switch (mark) {
    case 'M':
      return st.cyan;
    case 'L':
      return st.yellow;
    case 'P':
      return st.magenta;
    case 'C':
      return crcBad ? st.red : st.green;
    case '':
      return (s) => s;
    default:
      return st.bold;
  }
}

/** Two hex digits and the ASCII column's character of each octet value, made once. */
const HEX: readonly string[] = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
const ASCII: readonly string[] = Array.from({ length: 256 }, (_, b) =>
  b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.',
);

/**
 * Rows of "offset  hex  ascii", each followed by a mark row when it holds marked octets. The mark
 * of octet i is `names[classes[i]]` (or `marks[i]` when `classes` is null): a record's octet
 * classes are used as they are, not copied into an array of letters per octet. Each row is built
 * from the tables above, and its mark row only when it has a mark: -V -x prints every octet of
 * every record, so this is the heaviest text the tool makes.
 */
function rows(
  data: StreamBytes,
  marks: ArrayLike<string> | null,
  classes: ArrayLike<number> | null,
  names: Readonly<Record<number, string>>,
  st: Style,
  crcBad: boolean,
  out: string[],
): string[] {
  const { bytes, have } = data;
  const n = bytes.length;
  const width = Math.max(4, Math.max(0, n - 1).toString(16).length);
  const markAt = (i: number): string =>
    classes !== null ? (i < classes.length ? (names[classes[i]!] ?? '') : '') : (marks![i] ?? '');
  for (let row = 0; row < n; row += 16) {
    const end = Math.min(n, row + 16);
    let hex = '';
    let ascii = '';
    let marked = false;
    for (let i = row; i < end; i++) {
      const mark = markAt(i);
      const b = bytes[i]!;
      const text = have[i] ? HEX[b]! : '??';
      if (i !== row) hex += ' ';
      if (mark) {
        marked = true;
        hex += colourFor(mark, st, crcBad)(text);
      } else hex += text;
      ascii += have[i] ? ASCII[b]! : ' ';
    }
    // A short last row: blank columns where its missing octets would be.
    for (let i = end; i < row + 16; i++) hex += '   ';
    out.push(`${row.toString(16).padStart(width, '0')}  ${hex}   ${ascii}`.trimEnd());
    if (marked) {
      let under = '';
      for (let i = row; i < row + 16; i++) {
        if (i !== row) under += ' ';
        const mark = i < end ? markAt(i) : '';
        under += mark ? `${mark} ` : '  ';
      }
      out.push(`${' '.repeat(width)}  ${under}`.trimEnd());
    }
  }
  return out;
}

/** Rows of "offset  hex  ascii", each followed by a mark row when it holds marked octets. */
export function dumpLines(data: StreamBytes, marks: readonly string[], st: Style, crcBad = false): string[] {
  return rows(data, marks, null, {}, st, crcBad, []);
}

function framesText(frames: readonly number[]): string {
  if (frames.length === 1) return `frame ${frames[0]}`;
  return `frames ${frames.join(', ')}`;
}

/** The dump of one record (header line, rows), reading its frames back from `store`. */
export function recordDump(r: MpaRecord, store: FrameStore, st: Style): string[] {
  if (isTuf(r)) {
    const data = streamBytes(store, r.frames, r.from, r.seq, r.wireSize);
    const missing = data.have.includes(0) ? ' (?? = not available)' : '';
    const what = r.mode === 'alignment' ? 'TUF framing PDU' : 'TUF PDU';
    const legend = r.mode === 'alignment' ? 'L Length, K Key' : 'M marker';
    const head = `${what} at seq ${r.seq}, ${r.wireSize} octets from ${framesText(r.frames)} [${legend}]${missing}:`;
    return rows(data, null, tufLayout(r), TUF_MARKS, st, false, [head]);
  }
  if (isFpdu(r)) {
    const startSeq = (r.seq - (r.lenOffset - r.start)) >>> 0;
    const data = streamBytes(store, r.frames, r.from, startSeq, r.wireSize);
    const missing = data.have.includes(0) ? ' (?? = not available)' : '';
    const head = `FPDU at seq ${startSeq}, ${r.wireSize} octets from ${framesText(r.frames)} [${FPDU_LEGEND}]${missing}:`;
    const crcBad = r.crcStatus === 'bad' || r.crcStatus === 'byte-swapped';
    return rows(data, null, fpduLayout(r), FPDU_MARKS, st, crcBad, [head]);
  }
  const n = 20 + r.privateData.length;
  const data = streamBytes(store, r.frames, r.from, r.seq, n);
  const missing = data.have.includes(0) ? ' (?? = not available)' : '';
  const head = `MPA ${r.kind === 'request' ? 'Request' : 'Reply'} at seq ${r.seq}, ${n} octets from ${framesText(r.frames)} [${STARTUP_LEGEND}]${missing}:`;
  return rows(data, startupMarks(n, r.enhanced && r.enhancedBlock !== null), null, {}, st, false, [head]);
}
