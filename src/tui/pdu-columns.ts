/**
 * The PDU list's columns for the width it has. From 120 terminal columns up every column shows,
 * as Wireshark's packet list; below, Time is dropped and Seq narrowed to the widest number on the
 * page, so the CRC verdict, the badges and Info stay in view at 80x24. No. and Seq are as wide as
 * the widest value on the page (so a long frame range such as 138139-138145 keeps the columns in
 * line), within a bound; a range still too long is written as a page range (138139-45).
 */
import { fit, padLeft } from './lines.js';

/** Terminal width from which the list shows every column. */
export const FULL_COLUMNS_FROM = 120;

export interface PduColumns {
  readonly time: boolean;
  /** Time's width: 8 (0.000030), wider when a time on the page is (100.000000). */
  readonly timeW: number;
  readonly noW: number;
  readonly seqW: number;
}

/** Widest frame label No. takes before shortening it. */
const NO_MAX = 13;
const NO_MAX_NARROW = 9;

/** Columns for a page of rows: `frames` and `seqs` are the labels the page will show. */
export function pduColumns(
  termWidth: number,
  frames: readonly string[],
  seqs: readonly string[],
  times: readonly string[] = [],
): PduColumns {
  const full = termWidth >= FULL_COLUMNS_FROM;
  let timeW = 8;
  for (const t of times) timeW = Math.max(timeW, t.length);
  let noW = 7;
  for (const f of frames) noW = Math.max(noW, f.length);
  let seqW = full ? 10 : 3;
  for (const s of seqs) seqW = Math.max(seqW, s.length);
  return {
    time: full,
    timeW: Math.min(timeW, 17),
    noW: Math.min(noW, full ? NO_MAX : NO_MAX_NARROW),
    seqW: Math.min(seqW, 10),
  };
}

/** A PDU's frames as No. shows them: one number, a range, or a range shortened as page ranges are (138139-45). */
export function frameLabel(frames: readonly number[], w = Infinity): string {
  if (frames.length === 0) return '';
  const first = String(frames[0]);
  if (frames.length === 1) return first;
  const last = String(frames[frames.length - 1]);
  const full = `${first}-${last}`;
  if (full.length <= w) return full;
  let k = 0;
  if (last.length === first.length) while (k < last.length - 1 && first[k] === last[k]) k++;
  const short = `${first}-${last.slice(k)}`;
  return short.length <= w ? short : fit(short, w);
}

/** The header line for these columns. */
export function pduHeader(c: PduColumns): string {
  return (
    `${padLeft('No.', c.noW)} ${c.time ? `${padLeft('Time', c.timeW)} ` : ''}  ${padLeft('Seq', c.seqW)} ` +
    `${fit('Kind', 7)} ${padLeft('Len', 5)} Mk ${fit('CRC', 3)} Info`
  );
}
