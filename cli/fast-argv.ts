/**
 * The common command lines without yargs: `mpa-dissect [-q] [--json] [-Y FILTER] [-T fields -e F]
 * [-z STAT] [--fail-on S] [--threads N] capture.pcap [more...]` and the like. Importing yargs and
 * building its parser costs 150-250 ms of CPU (string-width's Unicode tables, Intl.Segmenter, the
 * option table), more than a small capture's whole run, so arguments made only of the options
 * below (a single-valued one at most once, a repeatable one any number of times, each spelled
 * exactly as here) and captures are taken here, into the very object yargs would have produced (a
 * test compares the two on many command lines). Anything else (help, a subcommand, `--opt=value`,
 * bundled short flags, a value that starts with "-", a number or choice yargs would reject or
 * convert differently, an option not listed) returns null and goes to yargs (cli/argv.ts), which
 * also owns every usage error.
 */
import type { CliArgs } from './argv.js';
import { DASH, FAIL_ON, OPTION_DEFAULTS } from './argv-conventions.js';
import { BACKENDS } from '../src/capture/live/backend-names.js';

/** Boolean options taken here, by spelling, with the key (and alias) yargs stores them under. */
const FLAGS: Readonly<Record<string, readonly string[]>> = {
  '-q': ['q'],
  '-V': ['V'],
  '-x': ['x'],
  '-l': ['l'],
  '-v': ['v', 'version'],
  '-D': ['D', 'list-interfaces', 'listInterfaces'],
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
  '-F': ['F'],
  '-T': ['T'],
  '-G': ['G'],
  '-t': ['t'],
  '-i': ['i', 'interface'],
  '-f': ['f'],
  '--junit': ['junit'],
  '--html': ['html'],
  '--annotate': ['annotate'],
  '--rules': ['rules'],
  '--write-filter': ['write-filter', 'writeFilter'],
};

/** Options that may be repeated (yargs' `array: true, nargs: 1`): each value appended, in order. */
const LISTS: Readonly<Record<string, readonly string[]>> = {
  '-z': ['z', 'stats'],
  '-e': ['e'],
  '-E': ['E'],
  '-o': ['o'],
  '-a': ['a', 'autostop'],
  '-b': ['b', 'ring-buffer', 'ringBuffer'],
  '--mpa': ['mpa'],
  '--tuf': ['tuf'],
  '--ulp': ['ulp'],
};

/** Number options taken here when the value is a plain decimal number (anything else: yargs). */
const NUMBERS: Readonly<Record<string, readonly string[]>> = {
  '-c': ['c'],
  '-s': ['s', 'snapshot-length', 'snapshotLength'],
  '--threads': ['threads'],
  '--jobs': ['jobs'],
  '--flow-timeout': ['flow-timeout', 'flowTimeout'],
  '--tcp-buffer-flow': ['tcp-buffer-flow', 'tcpBufferFlow'],
  '--tcp-buffer-total': ['tcp-buffer-total', 'tcpBufferTotal'],
  '--tcp-reorder-window': ['tcp-reorder-window', 'tcpReorderWindow'],
};

/** Options with a fixed set of values (yargs' `choices`): a value outside it is yargs' usage error. */
const CHOICES: Readonly<Record<string, { keys: readonly string[]; values: readonly string[] }>> = {
  '--fail-on': { keys: ['fail-on', 'failOn'], values: FAIL_ON },
  '--capture-backend': { keys: ['capture-backend', 'captureBackend'], values: BACKENDS },
};

/** Words yargs reads as subcommands, not as a capture named so (`tui` is taken when it comes first). */
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
  const captures: string[] = [];
  // `tui [capture..]` takes the main command's options; yargs names the command in `_`.
  const tui = rawArgv[0] === 'tui';
  if (tui) out['_'] = ['tui'];
  for (let i = tui ? 1 : 0; i < rawArgv.length; i++) {
    const a = rawArgv[i]!;
    const flag = FLAGS[a];
    const list = LISTS[a];
    if (flag) {
      if (seen.has(a)) return null; // repeated: yargs makes an array of it
      seen.add(a);
      for (const k of flag) out[k] = true;
      continue;
    }
    const keys = list ?? VALUES[a] ?? NUMBERS[a] ?? CHOICES[a]?.keys;
    if (keys) {
      if (!list && seen.has(a)) return null;
      seen.add(a);
      const raw = rawArgv[++i];
      if (raw === undefined || (raw.startsWith('-') && raw !== '-')) return null;
      const v = raw === '-' ? DASH : raw;
      let value: unknown = v;
      if (NUMBERS[a]) {
        if (!/^\d{1,9}(\.\d{1,9})?$/.test(raw)) return null; // yargs' number parsing owns the rest
        value = Number(raw);
      } else if (CHOICES[a] && !CHOICES[a].values.includes(raw)) return null;
      for (const k of keys) {
        if (list) {
          const prev = out[k] as string[] | undefined;
          // One array per key, as yargs gives each alias its own.
          out[k] = prev ? [...prev, v] : [v];
        } else out[k] = value;
      }
      continue;
    }
    // An option or a subcommand, or a word yargs might read as a number.
    if ((a.startsWith('-') && a !== '-') || COMMANDS.has(a) || a.trim() === '' || !Number.isNaN(Number(a))) return null;
    captures.push(a === '-' ? DASH : a);
  }
  // `[capture..]`: yargs gives the positional as an array (several captures are cli/multi.ts's; `tui` always has one).
  if (captures.length > 0 || tui) out['capture'] = captures;
  return out as CliArgs;
}
