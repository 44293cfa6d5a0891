/**
 * The order of rule identifiers in the findings-by-rule tables: `a.localeCompare(b)`, as before,
 * without waking ICU's collator for the identifiers the catalog has. The first localeCompare of a
 * process loads the collation data: a few milliseconds of every run's start-up, for a table of a
 * dozen lines.
 *
 * Rule identifiers are lower-case letters, digits, `_`, `-` and `.`. In the root collation (what
 * `en` and the C/POSIX locale use) each of these characters has its own primary weight and none is
 * ignorable or part of a contraction, so two such strings compare as their characters' weights in
 * turn: `_` < `-` < `.` < digits < letters, a prefix first. Any other character, or another locale
 * (whose tailoring may reorder letters: Danish `aa`, Lithuanian `y`), goes to localeCompare itself.
 */

/** Weight of each character of the identifier alphabet, root collation order; 0 for the rest. */
const WEIGHT = new Uint8Array(128);
{
  let w = 1;
  for (const c of '_-.0123456789abcdefghijklmnopqrstuvwxyz') WEIGHT[c.charCodeAt(0)] = w++;
}

/**
 * ICU reads the default locale from LC_ALL, then LC_MESSAGES, then LANG; V8 treats C and POSIX as
 * en-US. Read once, at the first comparison.
 */
let plainLocale: boolean | undefined;
function isPlainLocale(): boolean {
  if (plainLocale === undefined) {
    const env = process.env;
    const name = env['LC_ALL'] || env['LC_MESSAGES'] || env['LANG'] || '';
    plainLocale = /^(|C|POSIX|en)([._@-].*)?$/i.test(name);
  }
  return plainLocale;
}

/** Weights of `s` compared with `t`'s, or NaN when either has a character outside the alphabet. */
function byWeight(s: string, t: string): number {
  const n = Math.min(s.length, t.length);
  for (let i = 0; i < n; i++) {
    const a = s.charCodeAt(i);
    const b = t.charCodeAt(i);
    const wa = a < 128 ? (WEIGHT[a] as number) : 0;
    const wb = b < 128 ? (WEIGHT[b] as number) : 0;
    if (wa === 0 || wb === 0) return Number.NaN;
    if (wa !== wb) return wa - wb;
  }
  for (let i = n; i < s.length; i++) {
    const a = s.charCodeAt(i);
    if (a >= 128 || WEIGHT[a] === 0) return Number.NaN;
  }
  for (let i = n; i < t.length; i++) {
    const b = t.charCodeAt(i);
    if (b >= 128 || WEIGHT[b] === 0) return Number.NaN;
  }
  return s.length - t.length;
}

/** `a.localeCompare(b)`'s sign (negative, zero, positive), cheaply for rule identifiers. */
export function compareRuleIds(a: string, b: string): number {
  if (isPlainLocale()) {
    const d = byWeight(a, b);
    if (!Number.isNaN(d)) return d;
  }
  return a.localeCompare(b);
}
