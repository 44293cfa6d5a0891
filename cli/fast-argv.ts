/**
 * The common command lines without yargs: `mpa-dissect [-q] [--json] [-Y FILTER] capture.pcap` and
 * the like. Importing yargs costs about 80 ms, a third of a small capture's whole run, so arguments
 * made only of the options below (each at most once, spelled exactly as here) and at most one
 * capture are taken here, into the very object yargs would have produced (a test compares the two
 * on many command lines). Anything else (help, a subcommand, `--opt=value`, bundled short flags, a
 * value that starts with "-", an option not listed) returns null and goes to yargs (cli/argv.ts),
 * which also owns every usage error.
 */
import type { CliArgs } from './argv.js';
import { DASH, OPTION_DEFAULTS } from './argv-conventions.js';

/** Boolean options taken here, by spelling, with the key (and alias) yargs stores them under. */
const FLAGS: Readonly<Record<string, readonly string[]>> = {
  '-q': ['q'],
  '-V': ['V'],
  '-x': ['x'],
  '-l': ['l'],
  '--json': ['json'],
  '--ndjson': ['ndjson'],
  '--wide': ['wide'],
  '--allow-truncated': ['allow-truncated', 'allowTruncated'],
  '--checksums': ['checksums'],
  '--color': ['color'],
  '--progress': ['progress'],
};

/** String options taken here (the value is the next argument), with the keys yargs stores them under. */
const VALUES: Readonly<Record<string, readonly string[]>> = {
  '-r': ['r', 'read-file', 'readFile'],
  '-Y': ['Y', 'display-filter', 'displayFilter'],
  '-w': ['w'],
  '--junit': ['junit'],
  '--html': ['html'],
  '--rules': ['rules'],
  '--write-filter': ['write-filter', 'writeFilter'],
};

/** Words yargs reads as subcommands, not as a capture named so. */
const COMMANDS = new Set(['rules', 'fields', 'tui', 'peer', 'merge', 'generate']);

/** The parsed arguments when this command line is one of the common ones, else null (use yargs). */
export function fastArgv(rawArgv: readonly string[]): CliArgs | null {
  const out: Record<string, unknown> = {
    _: [],
    'fail-on': OPTION_DEFAULTS['fail-on'],
    failOn: OPTION_DEFAULTS['fail-on'],
    checksums: OPTION_DEFAULTS.checksums,
    'tcp-buffer-flow': OPTION_DEFAULTS['tcp-buffer-flow'],
    tcpBufferFlow: OPTION_DEFAULTS['tcp-buffer-flow'],
    'tcp-buffer-total': OPTION_DEFAULTS['tcp-buffer-total'],
    tcpBufferTotal: OPTION_DEFAULTS['tcp-buffer-total'],
    'tcp-reorder-window': OPTION_DEFAULTS['tcp-reorder-window'],
    tcpReorderWindow: OPTION_DEFAULTS['tcp-reorder-window'],
    'capture-backend': OPTION_DEFAULTS['capture-backend'],
    captureBackend: OPTION_DEFAULTS['capture-backend'],
    'flow-timeout': OPTION_DEFAULTS['flow-timeout'],
    flowTimeout: OPTION_DEFAULTS['flow-timeout'],
  };
  const seen = new Set<string>();
  let capture: string | null = null;
  for (let i = 0; i < rawArgv.length; i++) {
    const a = rawArgv[i]!;
    const flag = FLAGS[a];
    const value = VALUES[a];
    if (flag || value) {
      if (seen.has(a)) return null; // repeated: yargs makes an array of it
      seen.add(a);
      if (flag) for (const k of flag) out[k] = true;
      else {
        const v = rawArgv[++i];
        if (v === undefined || (v.startsWith('-') && v !== '-')) return null;
        for (const k of value!) out[k] = v === '-' ? DASH : v;
      }
      continue;
    }
    // A second capture, an option or a subcommand, or a word yargs might read as a number.
    if (
      capture !== null ||
      (a.startsWith('-') && a !== '-') ||
      COMMANDS.has(a) ||
      a.trim() === '' ||
      !Number.isNaN(Number(a))
    )
      return null;
    capture = a === '-' ? DASH : a;
  }
  // `[capture..]`: yargs gives the positional as an array (several captures are cli/multi.ts's).
  if (capture !== null) out['capture'] = [capture];
  return out as CliArgs;
}
