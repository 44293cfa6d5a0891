/**
 * `mpa-dissect generate SCENARIO [--KNOB VALUE ...] [--seed N] -o FILE [--truth FILE]`: writes a
 * deterministic capture of a scenario (src/generate/) as pcap or pcapng, and with --truth the
 * findings and per-direction counts an RFC-correct analyzer must report (schema
 * mpa-dissect/truth/v1). `generate --list` describes every scenario and knob. Exit 0, or 2 with
 * one line on a bad option.
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import yargs from 'yargs';
import { formatOf, type CaptureFormat } from '../src/generate/capture-file.js';
import { generateStream } from '../src/generate/generate.js';
import { KNOBS, KnobError } from '../src/generate/knobs.js';
import { allScenarios } from '../src/generate/registry.js';
import { UsageError } from './options.js';
import { namesSameFile } from './output-paths.js';
import { ReaderGone } from './output.js';

/** `generate --list`: scenarios (name, what it shows, its presets), then the knobs. */
export function listText(): string {
  const lines: string[] = ['Scenarios (mpa-dissect generate NAME -o out.pcap; knobs below override the presets):', ''];
  const scenarios = allScenarios();
  const w = Math.max(...scenarios.map((s) => s.name.length));
  for (const s of scenarios) {
    lines.push(`  ${s.name.padEnd(w)}  ${s.summary}`);
    const presets = Object.entries(s.knobs ?? {}).map(([k, v]) => `--${k} ${v}`);
    if (presets.length) lines.push(`  ${''.padEnd(w)}    presets: ${presets.join(' ')}`);
    if (s.uses)
      lines.push(
        `  ${''.padEnd(w)}    reads only: ${s.uses.length ? s.uses.map((u) => `--${u}`).join(' ') : '--seed'}`,
      );
  }
  lines.push('', 'Knobs (--NAME VALUE):', '');
  for (const k of KNOBS) {
    const values =
      k.kind === 'int' ? `${k.min}..${k.max}` : `${k.kind === 'list' ? 'list of ' : ''}${k.choices!.join('|')}`;
    lines.push(`  --${k.name}  ${k.describe}`);
    lines.push(`      values: ${values}; default: ${k.default === '' ? '(none)' : k.default}`);
  }
  lines.push(
    '',
    'Other options: --seed N (default 1), -o FILE (.pcapng: pcapng; - for standard output), --format pcap|pcapng, --truth FILE (expected findings and counts as JSON)',
  );
  return lines.join('\n');
}

/** generate's option table (the knobs included): its --help, and its section of the man page (cli/man-page.ts). */
export function generateParser(argv: string[]) {
  let y = yargs(argv)
    .scriptName('mpa-dissect generate')
    .usage(
      '$0 SCENARIO [--KNOB VALUE ...] [--seed N] -o FILE [--truth FILE]\n\nWrite a deterministic MPA capture of a scenario, and its expected findings. generate --list describes every scenario and knob.',
    )
    .version(false)
    .command('$0 [scenario]', 'Write the capture of SCENARIO', (c) =>
      c.positional('scenario', { type: 'string', describe: 'scenario name (generate --list)' }),
    )
    .option('list', { type: 'boolean', describe: 'Describe every scenario and knob' })
    .option('o', {
      alias: 'output',
      type: 'string',
      describe: 'Capture file to write (.pcapng: pcapng, else pcap; - for standard output)',
    })
    .option('format', { type: 'string', describe: 'pcap or pcapng (default: by the -o extension)' })
    .option('seed', { type: 'string', describe: 'Seed of every random choice (default 1)' })
    .option('truth', {
      type: 'string',
      describe: 'Write the ground truth JSON here: findings and per-direction FPDU/marker counts',
    });
  for (const k of KNOBS) y = y.option(k.name, { type: 'string', describe: k.describe });
  return y;
}

export async function runGenerateCli(argv: string[], out: (s: string | Uint8Array) => void): Promise<number> {
  const a = await generateParser(argv)
    .strict()
    .help()
    .fail((msg, err) => {
      throw err ?? new UsageError(`generate: ${msg}`);
    })
    .parseAsync();
  if (a.list === true) {
    out(listText() + '\n');
    return 0;
  }
  const name = typeof a['scenario'] === 'string' ? a['scenario'] : '';
  if (name === '' || a._.length > 0)
    throw new UsageError(
      `generate: give one scenario name (${name === '' ? 'none given' : `extra: ${a._.slice(0, 3).join(' ')}`}; generate --list names them)`,
    );
  if (a.o === undefined || a.o === '')
    throw new UsageError('generate: -o FILE is required (the capture to write; - for standard output)');
  // The same file twice would leave only the truth JSON where the capture should be.
  if (a.truth !== undefined && a.o !== '-' && namesSameFile(a.truth, a.o))
    throw new UsageError(`generate: -o and --truth name the same file (${a.o.slice(0, 200)}): give two files`);
  let format: CaptureFormat = formatOf(a.o);
  if (a.format !== undefined) {
    if (a.format !== 'pcap' && a.format !== 'pcapng')
      throw new UsageError(`generate: --format ${JSON.stringify(a.format.slice(0, 40))} is not pcap or pcapng`);
    format = a.format;
  }
  const seedText = a.seed ?? '1';
  const seed = Number(seedText);
  if (!/^\d+$/.test(seedText) || !Number.isSafeInteger(seed))
    throw new UsageError(
      `generate: --seed ${JSON.stringify(seedText.slice(0, 40))} is not a whole number of at least 0`,
    );
  const options: Record<string, string> = {};
  for (const k of KNOBS) {
    const v = (a as Record<string, unknown>)[k.name];
    if (v === undefined) continue;
    if (Array.isArray(v)) throw new UsageError(`generate: --${k.name} given more than once`);
    options[k.name] = String(v);
  }
  let res;
  try {
    res = generateStream(name, options, seed, format);
  } catch (e) {
    if (e instanceof KnobError) throw new UsageError(`generate: ${e.message}`);
    throw e;
  }
  // A reader that went away (`| head`) is not an error: the truth is still written, exit 0.
  let readerGone = false;
  try {
    // Written as it is made: a capture of a gigabyte is never held in memory.
    if (a.o === '-') {
      try {
        res.write(out);
      } catch (e) {
        if (!(e instanceof ReaderGone || (e as NodeJS.ErrnoException).code === 'EPIPE')) throw e;
        readerGone = true;
      }
    } else {
      const fd = openSync(a.o, 'w');
      try {
        res.write((b) => {
          for (let o = 0; o < b.length; ) o += writeSync(fd, b, o, b.length - o);
        });
      } finally {
        closeSync(fd);
      }
    }
    if (a.truth !== undefined) writeFileSync(a.truth, JSON.stringify(res.truth, null, 1) + '\n');
  } catch (e) {
    throw new UsageError(`generate: cannot write: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (readerGone) throw new ReaderGone('EPIPE');
  return 0;
}
