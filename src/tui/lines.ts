/**
 * What a pane shows, independent of the terminal library: lines of styled spans. The blessed
 * layer maps each style to its colours; tests read the text and the styles directly.
 */
export type StyleName =
  | 'error'
  | 'warning'
  | 'info'
  | 'dim'
  | 'bold'
  | 'head'
  /** Octet classes of the bytes pane (as -x marks them). */
  | 'length'
  | 'marker'
  | 'pad'
  | 'crc'
  | 'crc-bad'
  | 'key'
  /** Octets of the tree field selected. */
  | 'field'
  | 'good';

export interface Span {
  readonly t: string;
  readonly s?: StyleName;
}

export type Line = Span[];

export const plain = (t: string): Line => [{ t }];
export const styled = (t: string, s: StyleName): Line => [{ t, s }];

export function lineText(l: Line): string {
  return l.map((x) => x.t).join('');
}

/** Cuts or pads a string to exactly `w` columns (one column per code point). */
export function fit(s: string, w: number): string {
  const cps = Array.from(s);
  if (cps.length > w) return w <= 1 ? cps.slice(0, w).join('') : cps.slice(0, w - 1).join('') + '…';
  return s + ' '.repeat(w - cps.length);
}

export function padLeft(s: string, w: number): string {
  const n = Array.from(s).length;
  return n >= w ? s : ' '.repeat(w - n) + s;
}

/** Cuts a line to `w` columns; a cut line ends in "…" so it is seen to go on. */
export function clip(l: Line, w: number): Line {
  let total = 0;
  for (const s of l) total += Array.from(s.t).length;
  if (total <= w) return l;
  const out: Span[] = [];
  let left = Math.max(0, w - 1);
  for (const s of l) {
    if (left <= 0) break;
    const cps = Array.from(s.t);
    if (cps.length <= left) {
      out.push(s);
      left -= cps.length;
    } else {
      out.push({ ...s, t: cps.slice(0, left).join('') });
      left = 0;
    }
  }
  if (w > 0) out.push({ t: '…', s: 'dim' });
  return out;
}

/** "1 flow", "2 flows": a count and its noun, singular for one. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
