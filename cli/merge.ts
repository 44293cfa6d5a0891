/**
 * `mpa-dissect merge REPORT... [--json] [--junit FILE] [--fail-on ...] [--allow-truncated]`:
 * combines `--json` reports made anywhere (CI matrix jobs, Kubernetes Jobs, `parallel` over ssh)
 * into the combined summary a multi-capture run prints for the same captures (same digests, same
 * combine(): src/report/capture-digest.ts, src/report/combined-summary.ts), one findings-by-rule
 * table, one exit status and, with --junit, one JUnit file.
 *
 * A report that cannot be used (not JSON, cut off, not ours, another schema version) is named on
 * one line of standard error and left out; the others are merged and the exit status is 2.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isatty } from 'node:tty';
import yargs from 'yargs';
import { digestOf, type CaptureDigest } from '../src/report/capture-digest.js';
import {
  combine,
  digestJUnit,
  combinedJsonElement,
  combinedJsonElementStart,
  combinedJsonHead,
  combinedJsonTail,
  combinedText,
} from '../src/report/combined-summary.js';
import { buildJUnitCaptures, type JUnitOptions } from '../src/report/junit.js';
import { parseReports, ReportInputError, toolVersion } from '../src/report/read-report.js';
import { makeStyle } from '../src/report/text.js';
import { isDirectory, listDirectory, skippedParts } from './capture-list.js';
import { UsageError } from './options.js';
import { writeFileOrFail, writeReason, type RunIo } from './output.js';
import { printable } from '../src/report/printable.js';
import { FAIL_ON, OPTION_DEFAULTS } from './argv-conventions.js';

const USAGE = `mpa-dissect merge [options] REPORT...

Combine --json reports (mpa-dissect --json capture > report.json, made anywhere) into one summary:
a row per capture with its verdict, the findings by rule over all of them, one exit status (the
worst capture's: 2 for a capture truncated or unreadable, 1 for a finding at or above --fail-on,
else 0) and with --junit one JUnit file. A REPORT may be a combined document (what --json prints
for several captures, or merge --json), a directory (its *.json files, by name) or - (standard input).
A report that is no report (empty, not JSON, cut off, another program's or schema version's) is
named on one line of standard error and left out; the others are merged, and the exit status is 2.`;

/**
 * Largest report read: merge holds one whole report (and its parsed document) at a time, and a
 * report of 100,000 connections is tens of MB. Past this, `/dev/zero` or a runaway file is refused
 * instead of growing without bound.
 */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

const readBuffer = Buffer.allocUnsafe(1 << 20);

/**
 * A report's text, read in chunks up to MAX_REPORT_BYTES ('-': standard input). `regular`: the
 * directory walk found it a regular file, whose short read is its end (no second read for each of
 * thousands of small reports); a name given may be a pipe, read to its end.
 */
function readReport(name: string, regular = false): string {
  const fd = name === '-' ? 0 : openSync(name, 'r');
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    const tooLarge = () =>
      new ReportInputError(
        `${name}: larger than ${MAX_REPORT_BYTES >> 20} MiB: not read (merge holds a whole report in memory; a report mpa-dissect writes is far smaller)`,
      );
    if (fd !== 0 && !regular) {
      // A large regular file is read into one buffer of its size: no megabyte chunks copied and
      // joined (a report of 150,000 findings is 30 MB). What it grew by meanwhile is read below.
      const st = fstatSync(fd);
      if (st.isFile() && st.size > readBuffer.length) {
        if (st.size > MAX_REPORT_BYTES) throw tooLarge();
        const whole = Buffer.allocUnsafe(st.size);
        let n = 0;
        while (n < whole.length) {
          const got = readSync(fd, whole, n, whole.length - n, null);
          if (got === 0) break;
          n += got;
        }
        chunks.push(n === whole.length ? whole : whole.subarray(0, n));
        total = n;
      }
    }
    // One read buffer for every report: a directory holds thousands of small reports, and a fresh
    // megabyte for each read is most of merge's time (allocation and garbage collection).
    const b = readBuffer;
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, b, 0, b.length, null);
      } catch (e) {
        // Standard input that is a non-blocking pipe or terminal with nothing yet: wait and retry.
        if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        throw e;
      }
      if (n === 0) break;
      total += n;
      if (total > MAX_REPORT_BYTES) throw tooLarge();
      if (regular && n < b.length) {
        // The whole of a small report in one read: decoded from the read buffer, not copied twice first.
        if (chunks.length === 0) return b.toString('utf8', 0, n);
        chunks.push(Buffer.from(b.subarray(0, n)));
        break;
      }
      chunks.push(Buffer.from(b.subarray(0, n)));
    }
    return (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)).toString('utf8');
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

/** Reports named by the arguments: a directory stands for its *.json files (regular files only), sorted by name. */
function reportFiles(args: readonly string[], note: (line: string) => void): Array<{ name: string; regular: boolean }> {
  const out: Array<{ name: string; regular: boolean }> = [];
  for (const a of args) {
    if (!isDirectory(a)) {
      out.push({ name: a, regular: false });
      continue;
    }
    const l = listDirectory(a, /\.json$/);
    if (l.found.length === 0) throw new UsageError(`merge: ${a}: is a directory holding no *.json reports`);
    // Other files are expected beside reports (captures, logs): only what cannot be read is worth a note.
    const parts = skippedParts({ ...l, skipped: [], subdirs: 0 }, 'a report');
    if (parts.length) note(`mpa-dissect: merge: ${printable(a)}: ${parts.join('; ')}\n`);
    for (const f of l.found) out.push({ name: f, regular: true }); // a loop: 125,000+ files overflow a spread's stack
  }
  return out;
}

/** merge's option table: its --help, and its section of the man page (cli/man-page.ts). */
export function mergeParser(argv: string[]) {
  const parser = yargs(argv)
    .scriptName('mpa-dissect merge')
    .usage(USAGE)
    .version(false)
    .help(false)
    .option('h', { alias: 'help', type: 'boolean', describe: 'Show help' })
    .option('json', {
      type: 'boolean',
      describe:
        'Print the combined document (schema mpa-dissect/reports/v1: the reports and the combined summary) instead of text',
    })
    .option('junit', {
      type: 'string',
      describe: "Also write one JUnit XML file: a testsuite per capture and per capture's flow, a testcase per rule",
    })
    .option('fail-on', {
      choices: FAIL_ON,
      default: OPTION_DEFAULTS['fail-on'],
      describe: 'A capture with a finding at or above this severity makes the exit status 1',
    })
    .option('allow-truncated', {
      type: 'boolean',
      describe: 'A capture cut off mid-record is judged by its findings, not exit 2',
    })
    .option('color', {
      type: 'boolean',
      describe: 'Colour the text output (default: when stdout is a terminal and NO_COLOR is unset)',
    })
    .example('$0 reports/*.json', 'the combined summary of reports made by CI jobs; exit 2, 1 or 0')
    .example('$0 --junit mpa.xml --json reports/ > combined.json', 'one JUnit file and one combined document')
    .strictOptions()
    .wrap(120);
  return parser;
}

export async function runMergeCli(argv: string[], io: RunIo): Promise<number> {
  const parser = mergeParser(argv).fail((msg, err) => {
    if (err) throw err;
    throw new UsageError(`merge: ${msg}`);
  });
  const args = await parser.parseAsync();
  if (args.h === true) {
    io.out(`${await (parser as unknown as { getHelp(): Promise<string> }).getHelp()}\n`);
    return 0;
  }
  const names = args._.map(String);
  if (names.filter((n) => n === '-').length > 1)
    throw new UsageError('merge: -: standard input can be read once; it is named twice');
  if (names.length === 0)
    throw new UsageError('merge: give the --json reports to merge (mpa-dissect merge reports/*.json)');
  const junitPath = args.junit;
  if (junitPath === '') throw new UsageError('--junit needs a file name (--junit FILE)');
  const failOn = args['fail-on'];
  const st = makeStyle(args.color ?? (isatty(1) && !process.env['NO_COLOR']));
  const withJUnit = junitPath !== undefined;

  const digests: CaptureDigest[] = [];
  const junit: JUnitOptions[] = [];
  const versions = new Map<string, string[]>();
  const inputErrors: string[] = [];
  if (args.json === true) io.out(combinedJsonHead());
  for (const { name, regular } of reportFiles(names, io.err)) {
    let docs;
    try {
      let text: string;
      try {
        // '-': a report on standard input (ssh host mpa-dissect --json x.pcap | mpa-dissect merge - ...).
        text = readReport(name, regular);
      } catch (e) {
        if (e instanceof ReportInputError) throw e;
        throw new ReportInputError(`${name}: cannot read: ${writeReason(e)}`);
      }
      docs = parseReports(text, name);
    } catch (e) {
      if (!(e instanceof ReportInputError)) throw e;
      io.err(`mpa-dissect: merge: ${printable(e.message)}\n`);
      inputErrors.push(e.message);
      continue;
    }
    for (const doc of docs) {
      const v = toolVersion(doc);
      // Appended in place: a copy per report is quadratic over 100,000 reports.
      const seen = versions.get(v);
      if (seen) seen.push(name);
      else versions.set(v, [name]);
      const d = digestOf(doc, withJUnit);
      if (args.json === true) io.out(combinedJsonElementStart(digests.length) + combinedJsonElement(doc));
      digests.push(d);
      if (withJUnit) junit.push(digestJUnit(d, failOn));
    }
  }
  if (versions.size > 1) {
    const list = [...versions]
      // Both come from the input (a report's tool.version, a file name): shown escaped, never obeyed.
      .map(([v, files]) => `${printable(v)}: ${files.length === 1 ? printable(files[0]!) : `${files.length} reports`}`)
      .join(', ');
    io.err(
      `mpa-dissect: merge: the reports come from different versions of mpa-dissect (${list}); merged as ${'mpa-dissect/report/v1'} documents\n`,
    );
  }
  const summary = combine(digests, failOn, args['allow-truncated'] === true, inputErrors);
  if (args.json === true) io.out(combinedJsonTail(summary, digests.length > 0));
  else io.out(`${combinedText(summary, st)}\n`);
  if (junitPath !== undefined) writeFileOrFail(junitPath, '--junit', buildJUnitCaptures(junit));
  return summary.exit;
}
