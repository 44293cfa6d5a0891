/**
 * The bytes pane: a record's octets as on the wire (markers included), each class in its own
 * colour (L length, M marker, P PAD, C CRC; K/F/R/L/E for a startup frame, as -x marks them),
 * offsets counted from SeqStart so the 512-octet marker grid (RFC 5044 §5) is drawn where it
 * falls, then FPDUPTR and CRC expected vs seen side by side.
 */
import { fpduLayout, OCTET_CRC, OCTET_LENGTH, OCTET_MARKER, OCTET_PAD } from '../../dissectors/mpa/tree.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import type { StreamBytes } from '../report/frame-store.js';
import { isFpdu, isTuf, type MpaRecord } from '../report/events.js';
import { tufLayout, TUF_OCTET_KEY, TUF_OCTET_LENGTH, TUF_OCTET_MARKER } from '../../dissectors/tuf/tree.js';
import type { TufRecord } from '../../dissectors/tuf/types.js';
import type { Line, Span, StyleName } from './lines.js';
import { crcHex } from '../../dissectors/mpa/fields.js';

const MARKER_INTERVAL = 512;

function fpduClasses(r: FpduRecord, crcBad: boolean): (StyleName | null)[] {
  const layout = fpduLayout(r);
  return Array.from(layout, (c) =>
    c === OCTET_LENGTH
      ? 'length'
      : c === OCTET_MARKER
        ? 'marker'
        : c === OCTET_PAD
          ? 'pad'
          : c === OCTET_CRC
            ? crcBad
              ? 'crc-bad'
              : 'crc'
            : null,
  );
}

function startupClasses(r: StartupRecord, n: number): (StyleName | null)[] {
  const out: (StyleName | null)[] = new Array<StyleName | null>(n).fill(null);
  for (let i = 0; i < Math.min(16, n); i++) out[i] = 'key';
  for (let i = 16; i < Math.min(20, n); i++) out[i] = 'length';
  if (r.enhanced && r.enhancedBlock) for (let i = 20; i < Math.min(24, n); i++) out[i] = 'marker';
  return out;
}

export interface BytesView {
  readonly lines: Line[];
}

/**
 * Lines for one record. `seqStart` is the sender's absolute SeqStart when known; `highlight` the
 * wire octets [from, to) of the tree field selected; `width` the columns available.
 */
/** A TUF record's octets: L Length, K Key (alignment), M marker, offsets from its first octet. */
function tufBytesLines(
  r: TufRecord,
  data: StreamBytes | null,
  highlight: [number, number] | null,
  width: number,
  seqBase: number | null,
): Line[] {
  const out: Line[] = [];
  const n = r.wireSize;
  out.push([
    { t: `${r.mode === 'alignment' ? 'TUF framing PDU' : 'TUF PDU'} at seq ${shownSeq(r.seq, seqBase)}`, s: 'bold' },
    { t: `, ${n} octets` },
  ]);
  out.push(
    r.mode === 'alignment'
      ? [{ t: 'L Length', s: 'length' }, { t: '  ' }, { t: 'K Key', s: 'key' }]
      : [{ t: 'M marker', s: 'marker' }],
  );
  if (r.mode === 'alignment')
    out.push([
      { t: `Key 0x${r.key}  ` },
      r.keyOk ? { t: "the direction's key", s: 'good' } : { t: 'SECOND KEY', s: 'error' },
    ]);
  for (const m of r.markers) {
    const ok = m.npo === m.npo2;
    out.push([
      {
        t: `Next PDU Offset @octet ${m.offset - r.start}: ${m.npo ?? '?'} / copy ${m.npo2 ?? '?'}${m.split ? ' (split)' : ''}  `,
      },
      ok ? { t: 'ok', s: 'good' } : { t: 'COPIES DIFFER', s: 'error' },
    ]);
  }
  if (!data) {
    out.push([{ t: 'octets not available (the frames cannot be read back)', s: 'dim' }]);
    return out;
  }
  const layout = tufLayout(r);
  const cls = Array.from(layout, (c): StyleName | null =>
    c === TUF_OCTET_LENGTH ? 'length' : c === TUF_OCTET_KEY ? 'key' : c === TUF_OCTET_MARKER ? 'marker' : null,
  );
  const offW = Math.max(5, String(n).length);
  const per = width >= offW + 2 + 16 * 3 + 1 + 16 ? 16 : width >= offW + 2 + 8 * 3 + 1 + 8 ? 8 : 4;
  for (let row = 0; row < n; row += per)
    out.push(octetRow(data, cls, highlight, row, per, n, String(row).padStart(offW, ' ')));
  return out;
}

/** A sequence number as the TUI shows it: relative to its direction (Wireshark's default) when the base is known. */
function shownSeq(seq: number, base: number | null): number {
  return base === null ? seq : (seq - base) >>> 0;
}

export function bytesLines(
  r: MpaRecord,
  data: StreamBytes | null,
  seqStart: number | null,
  highlight: [number, number] | null,
  width: number,
  /** The direction's relative base (FlowRow.seqBase), null: absolute numbers. */
  seqBase: number | null = null,
): Line[] {
  if (isTuf(r)) return tufBytesLines(r, data, highlight, width, seqBase);
  const out: Line[] = [];
  const fp = isFpdu(r);
  const startSeq = fp ? (r.seq - (r.lenOffset - r.start)) >>> 0 : r.seq;
  const n = fp ? r.wireSize : 20 + r.privateData.length;
  const crcBad = fp && (r.crcStatus === 'bad' || r.crcStatus === 'byte-swapped');
  // SeqStart-relative offsets: markers sit at multiples of 512 (RFC 5044 §5); without SeqStart, the FPDU's own.
  const base = seqStart !== null ? (startSeq - seqStart) | 0 : null;
  const rel = (k: number): number => (base !== null ? base + k : k);
  out.push([
    {
      t: `${fp ? 'FPDU' : `MPA ${r.kind === 'request' ? 'Request' : 'Reply'}`} at seq ${shownSeq(startSeq, seqBase)}`,
      s: 'bold',
    },
    { t: `, ${n} octets${base !== null ? `, SeqStart+${base}` : ' (SeqStart unknown: offsets from the FPDU)'}` },
  ]);
  if (fp) {
    out.push([
      { t: 'L length', s: 'length' },
      { t: '  ' },
      { t: 'M marker', s: 'marker' },
      { t: '  ' },
      { t: 'P pad', s: 'pad' },
      { t: '  ' },
      { t: 'C CRC', s: crcBad ? 'crc-bad' : 'crc' },
    ]);
  } else {
    out.push([
      { t: 'K key', s: 'key' },
      { t: '  ' },
      { t: 'flags, Rev, PD_Length', s: 'length' },
      { t: '  ' },
      { t: 'E RFC 6581 IRD/ORD', s: 'marker' },
    ]);
  }
  if (fp) {
    for (const m of r.markers) {
      const ok = (m.fpduptr & ~3) === m.expected;
      const at = m.offset - r.start;
      out.push([
        { t: `FPDUPTR @${base !== null ? `+${rel(at)}` : `octet ${at}`}: seen ${m.fpduptr}, expected ${m.expected}  ` },
        ok ? { t: 'ok', s: 'good' } : { t: 'MISMATCH', s: 'error' },
      ]);
    }
    const crcText: Span =
      r.crcStatus === 'unchecked'
        ? { t: 'not checked (CRC off)', s: 'dim' }
        : r.crcStatus === 'not-captured'
          ? { t: 'not checked (not captured)', s: 'dim' }
          : r.crcStatus === 'good'
            ? { t: 'ok', s: 'good' }
            : r.crcStatus === 'byte-swapped'
              ? { t: 'BYTE-SWAPPED', s: 'error' }
              : { t: 'BAD', s: 'error' };
    out.push([{ t: `CRC seen ${crcHex(r.crcWire)}, expected ${crcHex(r.crcComputed)}  ` }, crcText]);
    if (r.pad > 0)
      out.push([
        { t: `PAD ${r.pad} octet${r.pad === 1 ? '' : 's'}: ` },
        r.padNonZero ? { t: 'NOT ZERO', s: 'warning' } : { t: 'zero', s: 'good' },
      ]);
  }
  if (!data) {
    out.push([{ t: 'octets not available (the frames cannot be read back)', s: 'dim' }]);
  } else {
    const cls = fp ? fpduClasses(r, crcBad) : startupClasses(r, n);
    const offW = Math.max(5, String(rel(n)).length);
    const per = width >= offW + 2 + 16 * 3 + 1 + 16 ? 16 : width >= offW + 2 + 8 * 3 + 1 + 8 ? 8 : 4;
    for (let row = 0; row < n; row += per) {
      // A grid line where a 512-octet marker boundary falls inside this row.
      if (fp && base !== null) {
        for (let k = row; k < Math.min(n, row + per); k++) {
          const o = rel(k);
          if (o % MARKER_INTERVAL === 0) {
            out.push([
              {
                t: `${'─'.repeat(offW)}─ marker boundary SeqStart+${o} (${o / MARKER_INTERVAL}×512) ─────`,
                s: 'marker',
              },
            ]);
          }
        }
      }
      out.push(octetRow(data, cls, highlight, row, per, n, String(rel(row)).padStart(offW, ' ')));
    }
  }
  return out;
}

/** One row of octets: offset label, hex in each octet's class colour (the selected field lit), ASCII. */
function octetRow(
  data: StreamBytes,
  cls: readonly (StyleName | null)[],
  highlight: [number, number] | null,
  row: number,
  per: number,
  n: number,
  label: string,
): Line {
  const spans: Span[] = [{ t: label + '  ', s: 'dim' }];
  let ascii = '';
  for (let k = row; k < row + per; k++) {
    if (k >= n) {
      spans.push({ t: '   ' });
      continue;
    }
    const have = data.have[k] === 1;
    const b = data.bytes[k]!;
    const t = have ? b.toString(16).padStart(2, '0') : '??';
    const lit = highlight !== null && k >= highlight[0] && k < highlight[1];
    const c = lit ? 'field' : (cls[k] ?? null);
    spans.push(c ? { t, s: c } : { t });
    spans.push({ t: ' ' });
    ascii += !have ? ' ' : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
  }
  spans.push({ t: ` ${ascii}`, s: 'dim' });
  return spans;
}

/**
 * Wire octets [from, to) of a tree field. MPA fields count from the FPDU's first octet; DDP/RDMAP
 * fields count from the ULPDU's first octet with markers removed, so they are mapped back.
 */
export function fieldSpan(r: MpaRecord, mpaField: boolean, offset: number, length: number): [number, number] | null {
  if (!isFpdu(r) || mpaField) return [offset, offset + Math.max(1, length)];
  const layout = fpduLayout(r);
  let k = 0;
  let from = -1;
  let to = -1;
  for (let w = r.lenOffset - r.start + 2; w < layout.length; w++) {
    if (layout[w] === OCTET_MARKER) continue;
    if (k === offset) from = w;
    if (k === offset + Math.max(1, length) - 1) {
      to = w + 1;
      break;
    }
    k++;
  }
  return from >= 0 && to > from ? [from, to] : null;
}
