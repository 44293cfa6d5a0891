#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { analyze, type AnalysisResult } from '../src/analysis/pipeline.js';
import { CaptureOpenError } from '../src/capture/read-capture.js';
import { defaultUpper } from '../src/analysis/upper.js';
import { buildReport } from '../src/report/json-report.js';
import { findingLine, fpduLine, makeStyle, rulesText, startupLine, summaryText } from '../src/report/text.js';
import { SEVERITY_RANK } from '../src/analysis/findings.js';
import { parseForcedMpa, UsageError } from './options.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The sample shipped in captures/, analyzed when no capture is given. */
export const SAMPLE = join(here, '..', '..', 'captures', 'sample.pcap');

type FailOn = 'error' | 'warning' | 'never';

function failed(r: AnalysisResult, failOn: FailOn): boolean {
  if (failOn === 'never') return false;
  const min = SEVERITY_RANK[failOn];
  return (Object.keys(r.findings.bySeverity) as Array<keyof typeof SEVERITY_RANK>).some((s) => SEVERITY_RANK[s] >= min && r.findings.bySeverity[s] > 0);
}

async function main(argv: string[]): Promise<number> {
  const parser = yargs(argv)
    .scriptName('mpa-dissect')
    .usage('$0 [options] [capture | -]\n\nAnalyze iWARP traffic: MPA startup, markers, CRC32c, FPDU framing, DDP/RDMAP.\nWith no capture, the shipped sample captures/sample.pcap is analyzed.')
    .command('rules', 'List every rule: id, severity, RFC reference, MPA error code, meaning')
    .command('$0 [capture]', 'Analyze a capture (pcap or pcapng; - for standard input)', (y) => y.positional('capture', { type: 'string', describe: 'capture file, or - for standard input' }))
    .option('json', { type: 'boolean', describe: 'Print the JSON report (schema mpa-dissect/report/v1)' })
    .option('mpa', { type: 'string', array: true, describe: 'Force MPA on a flow: flow=SEL,markers=both|none|c2s|s2c,crc=on|off,seqstart=C:S' })
    .option('fail-on', { choices: ['error', 'warning', 'never'] as const, default: 'error' as FailOn, describe: 'Exit 1 when a finding at or above this severity was found' })
    .option('checksums', { type: 'boolean', default: false, describe: 'Verify IPv4 and TCP checksums (off by default: capture offload makes them wrong)' })
    .option('color', { type: 'boolean', describe: 'Colour the text output (default: when stdout is a terminal and NO_COLOR is unset)' })
    .example('$0 capture.pcap', 'desk check: one line per MPA event, then a summary per flow')
    .example('$0 --json capture.pcap > report.json', 'CI gate: exit 1 when an error was found')
    .example("$0 --mpa 'flow=port:4420,markers=both,crc=on' midstream.pcap", 'a capture that starts mid-stream, forcing MPA on port 4420')
    .example('tcpdump -i eth0 -w - port 4420 | $0 -', 'live traffic through standard input')
    .epilog('Exit status: 0 nothing at or above --fail-on found, 1 something was, 2 usage error or unreadable input.')
    .strict()
    .help()
    .version('0.1.0')
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
    });
  const args = await parser.parseAsync();
  if (args._.map(String)[0] === 'rules') {
    process.stdout.write(rulesText() + '\n');
    return 0;
  }
  let path = typeof args['capture'] === 'string' ? args['capture'] : undefined;
  const color = args.color ?? (process.stdout.isTTY === true && !process.env['NO_COLOR']);
  const st = makeStyle(color);
  if (path === undefined) {
    path = SAMPLE;
    process.stderr.write(`mpa-dissect: no capture given; analyzing the shipped sample ${SAMPLE}\n`);
  }
  const forced = (args.mpa ?? []).map(parseForcedMpa);
  const json = args.json === true;
  const lines: string[] = [];
  const out = (s: string) => {
    lines.push(s);
    if (lines.length >= 256) flush();
  };
  const flush = () => {
    if (lines.length) process.stdout.write(lines.join('\n') + '\n');
    lines.length = 0;
  };
  const pending: string[] = [];
  const flushPending = () => {
    for (const l of pending) out(l);
    pending.length = 0;
  };
  const r = await analyze(path, {
    forced,
    upper: defaultUpper,
    decoder: { checksums: args.checksums },
    ...(json
      ? {}
      : {
          // A record's findings are raised while it is dissected; print them under its line.
          onStartup: (s) => {
            out(startupLine(s));
            flushPending();
          },
          onFpdu: (f) => {
            out(fpduLine(f, defaultUpper?.summarize?.(f.upper) ?? null));
            flushPending();
          },
          onFinding: (f) => pending.push(findingLine(f, st)),
        }),
  });
  if (json) {
    process.stdout.write(JSON.stringify(buildReport(r), null, 1) + '\n');
  } else {
    flushPending();
    flush();
    process.stdout.write('\n' + summaryText(r, st) + '\n');
  }
  if (r.capture.error) {
    const e = r.capture.error;
    process.stderr.write(`mpa-dissect: ${e.file}: offset ${e.offset}, frame ${e.frame}: ${e.message}\n`);
    if (r.capture.packets === 0) return 2;
  }
  return failed(r, args['fail-on']) ? 1 : 0;
}

main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const msg = err instanceof UsageError || err instanceof CaptureOpenError ? err.message : err instanceof Error ? err.message : String(err);
    process.stderr.write(`mpa-dissect: ${msg}\n`);
    if (process.env['MPA_DISSECT_DEBUG'] && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    process.exitCode = 2;
  },
);
