/** "Did you mean" for unknown options: the nearest known option by edit distance (as git does). */

/** Levenshtein distance, giving up (returning max+1) beyond `max`: names are short, so this is cheap. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest of `known` to `word` (a transposition or two typos away at most), or null. */
export function nearest(word: string, known: readonly string[]): string | null {
  // Bound the work on hostile input: an option name longer than any real one is compared by prefix only.
  const w = word.slice(0, 64);
  let best: string | null = null;
  let bestD = Infinity;
  const max = w.length <= 3 ? 1 : 2;
  for (const k of known) {
    const d = editDistance(w, k, max);
    if (d <= max && d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

/**
 * yargs' strict-mode message "Unknown argument(s): a, b" turned into ours, with a suggestion per
 * unknown option. Returns null for any other message.
 */
export function unknownOptionMessage(
  msg: string,
  longNames: readonly string[],
  shortNames: readonly string[],
  argv: readonly string[] = [],
): string | null {
  const m = /^Unknown arguments?: (.*)$/s.exec(msg);
  if (!m) return null;
  const parts = m[1]!
    .split(', ')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const out: string[] = [];
  for (const p of parts) {
    const shown = p.length > 60 ? `${p.slice(0, 60)}…` : p;
    // yargs names extra positional arguments the same way: a word given without a dash is one.
    if (
      argv.includes(p) &&
      !argv.some(
        (a) => a === `--${p}` || a.startsWith(`--${p}=`) || (p.length === 1 && /^-[^-]/.test(a) && a.includes(p)),
      )
    ) {
      out.push(`unexpected argument "${shown}"`);
      continue;
    }
    const flag = p.length === 1 ? `-${shown}` : p.startsWith('-') ? shown : `--${shown}`;
    const near = p.length === 1 ? null : nearest(p.replace(/^-+/, ''), longNames);
    const nearShort =
      p.length === 1
        ? nearest(
            p,
            shortNames.filter((s) => s.toLowerCase() === p.toLowerCase() && s !== p),
          )
        : null;
    const hint =
      near !== null ? `; did you mean --${near}?` : nearShort !== null ? `; did you mean -${nearShort}?` : '';
    out.push(`unknown option ${flag}${hint}`);
  }
  return `${out.join('; ')} (mpa-dissect --help lists the options)`;
}
