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

/**
 * How an option takes its value: none (a flag), the next argument as it is, appended to a list
 * (yargs' `array: true, nargs: 1`: the option may repeat), as a plain decimal number (anything
 * else is yargs' to convert or refuse), or one of a fixed set (yargs' `choices`).
 */
type Take = 'flag' | 'value' | 'list' | 'number' | readonly string[];

/**
 * The options taken here, by spelling: how each takes its value and the names yargs stores it
 * under (the option, its aliases; a hyphenated name also in camelCase, as yargs adds it).
 */
const OPTIONS: Readonly<Record<string, { take: Take; keys: readonly string[] }>> = Object.fromEntries(
  (
    [
      ['-q', 'flag', 'q'],
      ['-V', 'flag', 'V'],
      ['-x', 'flag', 'x'],
      ['-l', 'flag', 'l'],
      ['-v', 'flag', 'v', 'version'],
      ['-D', 'flag', 'D', 'list-interfaces'],
      ['--json', 'flag', 'json'],
      ['--ndjson', 'flag', 'ndjson'],
      ['--wide', 'flag', 'wide'],
      ['--allow-truncated', 'flag', 'allow-truncated'],
      ['--checksums', 'flag', 'checksums'],
      ['--color', 'flag', 'color'],
      ['--progress', 'flag', 'progress'],
      ['-r', 'value', 'r', 'read-file'],
      ['-Y', 'value', 'Y', 'display-filter'],
      ['-w', 'value', 'w'],
      ['-F', 'value', 'F'],
      ['-T', 'value', 'T'],
      ['-G', 'value', 'G'],
      ['-t', 'value', 't'],
      ['-i', 'value', 'i', 'interface'],
      ['-f', 'value', 'f'],
      ['--junit', 'value', 'junit'],
      ['--html', 'value', 'html'],
      ['--annotate', 'value', 'annotate'],
      ['--rules', 'value', 'rules'],
      ['--write-filter', 'value', 'write-filter'],
      ['-z', 'list', 'z', 'stats'],
      ['-e', 'list', 'e'],
      ['-E', 'list', 'E'],
      ['-o', 'list', 'o'],
      ['-a', 'list', 'a', 'autostop'],
      ['-b', 'list', 'b', 'ring-buffer'],
      ['--mpa', 'list', 'mpa'],
      ['--tuf', 'list', 'tuf'],
      ['--ulp', 'list', 'ulp'],
      ['-c', 'number', 'c'],
      ['-s', 'number', 's', 'snapshot-length'],
      ['--threads', 'number', 'threads'],
      ['--jobs', 'number', 'jobs'],
      ['--flow-timeout', 'number', 'flow-timeout'],
      ['--tcp-buffer-flow', 'number', 'tcp-buffer-flow'],
      ['--tcp-buffer-total', 'number', 'tcp-buffer-total'],
      ['--tcp-reorder-window', 'number', 'tcp-reorder-window'],
      ['--fail-on', FAIL_ON, 'fail-on'],
      ['--capture-backend', BACKENDS, 'capture-backend'],
    ] as ReadonlyArray<readonly [string, Take, ...string[]]>
  ).map(([spelling, take, ...names]) => [spelling, { take, keys: withCamelCase(names) }]),
);

/** Each name, and after a hyphenated one its camelCase form (yargs stores both). */
function withCamelCase(names: readonly string[]): string[] {
  return names.flatMap((n) => (n.includes('-') ? [n, n.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] : [n]));
}

/** Words yargs reads as subcommands, not as a capture named so (`tui` is taken when it comes first). */
const COMMANDS = new Set(['rules', 'fields', 'tui', 'peer', 'merge', 'generate']);

/** The parsed arguments when this command line is one of the common ones, else null (use yargs). */
export function fastArgv(rawArgv: readonly string[]): CliArgs | null {
  const out: Record<string, unknown> = { _: [] };
  for (const [name, v] of Object.entries(OPTION_DEFAULTS)) for (const k of withCamelCase([name])) out[k] = v;
  const seen = new Set<string>();
  const captures: string[] = [];
  // `tui [capture..]` takes the main command's options; yargs names the command in `_`.
  const tui = rawArgv[0] === 'tui';
  if (tui) out['_'] = ['tui'];
  for (let i = tui ? 1 : 0; i < rawArgv.length; i++) {
    const a = rawArgv[i]!;
    const opt = OPTIONS[a];
    if (opt) {
      const { take, keys } = opt;
      if (take !== 'list' && seen.has(a)) return null; // repeated: yargs makes an array of it
      seen.add(a);
      if (take === 'flag') {
        for (const k of keys) out[k] = true;
        continue;
      }
      const raw = rawArgv[++i];
      if (raw === undefined || (raw.startsWith('-') && raw !== '-')) return null;
      const v = raw === '-' ? DASH : raw;
      if (take === 'list') {
        // One array per key, as yargs gives each alias its own.
        for (const k of keys) {
          const l = out[k] as string[] | undefined;
          if (l) l.push(v);
          else out[k] = [v];
        }
        continue;
      }
      if (take === 'number' && !/^\d{1,9}(\.\d{1,9})?$/.test(raw)) return null; // yargs' number parsing owns the rest
      if (typeof take !== 'string' && !take.includes(raw)) return null;
      for (const k of keys) out[k] = take === 'number' ? Number(raw) : v;
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
