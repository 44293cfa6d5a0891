/**
 * What the two parsers of the command line, yargs (cli/argv.ts) and the fast path
 * (cli/fast-argv.ts), agree on so that both give the same object: the defaults of the options that
 * have one, and how a lone "-" travels through them.
 */

/** yargs turns a lone "-" into "", so it travels as this placeholder and is turned back after parsing. */
export const DASH = '\u0000-';

/** The values of --fail-on, least to most lenient (merge's --fail-on takes the same). */
export const FAIL_ON = ['error', 'warning', 'never'] as const;

/** Defaults of the options that have one: declared once, for yargs (cli/argv.ts) and for the fast path. */
export const OPTION_DEFAULTS = {
  'fail-on': 'error' as (typeof FAIL_ON)[number],
  checksums: false,
  'tcp-buffer-flow': 16,
  'tcp-buffer-total': 64,
  'tcp-reorder-window': 4,
  'capture-backend': 'auto' as 'auto' | 'cap' | 'tcpdump' | 'dumpcap',
  'flow-timeout': 300,
};

/** Flags that take no value: a "-2" or "-n" after one of them is an option, not its value. */
const NO_VALUE =
  /^(-[qVxlDvhn2]+|--(json|ndjson|wide|allow-truncated|(no-)?checksums|(no-)?color|(no-)?progress|help|version|list-interfaces))$/;

/**
 * tshark's reflexes that mean nothing here, taken out before parsing (so the fast path still
 * applies): -2 (two-pass analysis: every record is already settled before it is shown) and -n (no
 * name resolution: addresses are never resolved). yargs would read "-2" as a negative number, a
 * capture. Not when it is the value of the option before it (-Y -2 is a filter).
 */
export function dropNoOpFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      for (let j = i; j < argv.length; j++) out.push(argv[j]!);
      break;
    }
    const prev = i > 0 ? argv[i - 1]! : '';
    const prevTakesValue = prev.startsWith('-') && prev !== '-' && !prev.includes('=') && !NO_VALUE.test(prev);
    if ((a === '-2' || a === '-n') && !prevTakesValue) continue;
    out.push(a);
  }
  return out;
}
