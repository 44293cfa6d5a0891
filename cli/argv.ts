/**
 * The command line as yargs parses it: every option, its help text and the usage errors. Loaded
 * only when cli/fast-argv.ts cannot take the arguments itself (help, a subcommand, an option it
 * does not know): importing yargs costs about 80 ms of start-up.
 */
import yargs from 'yargs';
import { isatty } from 'node:tty';
import { STAT_NAMES } from '../src/report/stats.js';
import { BACKENDS } from '../src/capture/live/backend-names.js';
import { ULP_PROTOS, UsageError } from './options.js';
import { unknownOptionMessage } from './suggest.js';
import { DASH, FAIL_ON, OPTION_DEFAULTS } from './argv-conventions.js';
import { TIME_FORMATS } from '../src/report/time-format.js';

export const EPILOG = `Event lines, -V and -x follow -Y; the flow table, findings by rule and --stats always describe the whole capture.

Filters use Wireshark's language and names (iwarp_mpa.*, iwarp_ddp.*, iwarp_rdma.*), plus frame.number, tcp.stream (from 0, as in Wireshark: the Stream column of the flow table), tcp.srcport, ip.src, finding.rule, finding.severity, finding.code, finding.message: "mpa-dissect fields" lists them all. A record matches on its findings too, as a Wireshark packet on its expert infos.

With no capture argument, standard input is read when it is not a terminal (cat x.pcap | mpa-dissect); the shipped sample is analyzed only when standard input is a terminal. Captures compressed with gzip (x.pcap.gz) are read directly, from a file or standard input.

Exit status:
  0  nothing at or above --fail-on was found
  1  a finding at or above --fail-on (error by default) was found
  2  usage error (bad option, filter or rules file), unreadable capture, a capture cut off in the middle of a record (unless --allow-truncated), or an output that could not be written
  Several captures (or a directory): the worst capture's status, after all of them are reported. mpa-dissect merge --help: combining --json reports.

Colour only on a terminal and never with NO_COLOR set; the progress bar only when stderr is a terminal and CI is unset.`;

/**
 * The --help examples ($0 is the command's name), declared once: test/cli/doc-examples.test.ts runs
 * every one of them, with those of the README and docs/, so none goes stale.
 */
export const HELP_EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['$0 capture.pcap', 'desk check: one line per MPA event, then a table per flow and the findings by rule'],
  ['$0 -V -Y \'iwarp_mpa.crc_status == "bad"\' capture.pcap', 'detail trees of the FPDUs whose CRC is bad'],
  [
    '$0 -x -Y \'finding.rule == "mpa.fpduptr-mismatch"\' capture.pcap',
    'octets of the FPDUs with a wrong FPDUPTR, markers marked',
  ],
  ['$0 -q --junit mpa.xml capture.pcap', 'CI gate: exit 1 on an error, JUnit file for the dashboard'],
  ['$0 -q --html report.html capture.pcap', 'A page to open from the CI artifacts: flows, findings, plots'],
  ['$0 --json --rules ci.json capture.pcap > report.json', 'CI gate with a rules file (severities, alignment minimum)'],
  [
    "$0 --mpa 'flow=port:4420,markers=both,crc=on' midstream.pcap",
    'capture started mid-stream: force MPA on port 4420',
  ],
  ['tcpdump -i eth0 -U -w - port 4420 | $0 -l -', 'live traffic on standard input, a line per event as it comes'],
  [
    "$0 -i eth0 -f 'tcp port 4420' -w run.pcap",
    'capture live (Ctrl-C ends it: tables, findings), keeping every packet in run.pcap',
  ],
  ['$0 -q -w findings.pcap capture.pcap', 'the connections behind the findings, for a colleague with Wireshark'],
  ['$0 -q -z conv -z fpdu-sizes capture.pcap', 'conversation table and FPDU size histogram, nothing else'],
  [
    '$0 -T fields -e frame.number -e iwarp_mpa.ulpdulength -E separator=, capture.pcap',
    'one CSV row per startup frame or FPDU (its findings in it), for scripts',
  ],
  ['cat capture.pcap.gz | $0', 'standard input (gzip-compressed or not) when no capture is named'],
  [
    '$0 -t ad -o tcp.relative_sequence_numbers:FALSE capture.pcap',
    "tshark's habits: date and time in the event lines, absolute TCP sequence numbers (relative by default)",
  ],
];

/**
 * The main command's option table, as yargs holds it: what --help prints and what the man page
 * (cli/man-page.ts, at build time) is made from, so the two cannot disagree.
 */
export function mainParser(argv: string[]) {
  const parser = yargs(argv)
    .scriptName('mpa-dissect')
    .version(false) // our own -v/--version (tshark's -v), defined below
    .usage(
      '$0 [options] [capture | -] [more captures or directories...]\n\nAnalyze iWARP traffic: MPA startup, markers, CRC32c, FPDU framing, DDP/RDMAP.\nOne line per MPA event (startup frame, FPDU, finding), then a table per flow and the findings by rule.\nWith no capture, standard input is read (the shipped sample captures/sample.pcap when it is a terminal).',
    )
    .command(
      '$0 [capture..]',
      'Analyze a capture (pcap or pcapng; - for standard input); several captures or a directory: each analyzed as alone, on --jobs workers, then a combined summary',
      (y) =>
        y.positional('capture', {
          type: 'string',
          array: true,
          describe:
            'capture file, - for standard input, or a directory (its *.pcap, *.pcapng, *.cap files, optionally .gz)',
        }),
    )
    .command(
      'rules',
      'List every rule: id, severity, RFC reference, MPA error code, meaning (--rules FILE: the severity in force; --json)',
    )
    .command('fields', 'List every field a display filter can name (as tshark -G fields)')
    .command(
      'tui [capture..]',
      'Browse a capture in the terminal: flows, PDUs, detail tree, bytes, findings (-Y initial filter; --mpa, --rules as above; -i IFACE, -f, -s, --capture-backend to capture live)',
      (y) => y.positional('capture', { type: 'string', array: true, describe: 'capture file' }),
    )
    .command(
      'merge',
      'Combine --json reports made anywhere into one summary, findings by rule, exit status and JUnit file: mpa-dissect merge --help',
    )
    .command(
      'generate',
      'Write a deterministic MPA capture of a scenario and its expected findings: mpa-dissect generate --list',
    )
    .command(
      'peer',
      'Run an MPA endpoint over real TCP sockets (Initiator or Responder) to capture: mpa-dissect peer --help',
    )
    .option('r', {
      alias: 'read-file',
      type: 'string',
      describe: 'Read this capture (as tshark -r); the same as giving it as the argument',
    })
    .option('Y', {
      alias: 'display-filter',
      type: 'string',
      describe: 'Show only the event lines this display filter matches (Wireshark syntax)',
    })
    .option('V', {
      type: 'boolean',
      describe:
        'Print the detail tree of each startup frame and FPDU (markers, FPDUPTR expected vs seen, CRC seen vs computed, DDP/RDMAP)',
    })
    .option('x', {
      type: 'boolean',
      describe: 'Print the octets of each startup frame and FPDU, marking length, markers, PAD and CRC',
    })
    .option('q', { type: 'boolean', describe: 'Quiet: no event lines, only the summary (and --stats)' })
    .option('l', { type: 'boolean', describe: 'Flush the output after each event (for piping a live capture)' })
    .option('json', {
      type: 'boolean',
      describe: 'Print the JSON report (schema mpa-dissect/report/v1) instead of text',
    })
    .option('ndjson', {
      type: 'boolean',
      describe: 'Print one JSON object per event as it happens, then one per flow and a summary',
    })
    .option('junit', {
      type: 'string',
      describe: 'Also write a JUnit XML file: one testsuite per flow, one testcase per rule',
    })
    .option('html', {
      type: 'string',
      describe: 'Also write a self-contained HTML report: verdict, flows, findings, plots per MPA direction',
    })
    .option('fail-on', {
      choices: FAIL_ON,
      default: OPTION_DEFAULTS['fail-on'],
      describe: 'Exit 1 when a finding at or above this severity was found',
    })
    .option('rules', {
      type: 'string',
      describe: 'JSON rules file: turn rules off, change severities, set thresholds (see docs/what-it-checks.md)',
    })
    .option('z', {
      alias: 'stats',
      type: 'string',
      array: true,
      nargs: 1,
      describe: `Print statistics after the summary (as tshark -z; with -q only them): ${STAT_NAMES.join(', ')}, or tshark's conv,tcp and expert; repeat or separate with commas`,
    })
    .option('w', {
      type: 'string',
      describe:
        'Write frames as pcap (pcapng with findings as packet comments when FILE ends in .pcapng or with -F pcapng): by default those involved in findings, each with its whole connection (handshake, MPA startup, every frame since: the file shows the same findings when re-analysed); with -Y, the frames of what -Y displays (as tshark)',
    })
    .option('F', {
      type: 'string',
      describe:
        '-w file format, as tshark -F: pcapng (the findings as packet comments) or pcap; default: pcapng when the -w name ends in .pcapng, else pcap',
    })
    .option('annotate', {
      type: 'string',
      describe:
        'Also write the whole capture as pcapng with each finding as a packet comment on its frames (Wireshark: frame.comment, Expert Information > Comments)',
    })
    .option('write-filter', {
      type: 'string',
      describe: 'Display filter choosing the events whose frames -w writes (default: every finding)',
    })
    .option('mpa', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'Force MPA on a flow: flow=SEL,markers=both|none|c2s|s2c,crc=on|off,seqstart=C:S or start=SEQ|C:S (MPA enabled there without startup frames)',
    })
    .option('tuf', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'Force ULP Framing for TCP on a flow: flow=SEL,key=HEX (alignment mode) or interval=N (marker mode),start=SEQ (key and start: one value or C:S)',
    })
    .option('ulp', {
      type: 'string',
      array: true,
      nargs: 1,
      describe: `Upper layer decoded above RDMAP on a flow, as Wireshark's Decode As: flow=SEL,proto=${ULP_PROTOS.join('|')} (default: chosen from private data, then the first Send)`,
    })
    .option('checksums', {
      type: 'boolean',
      default: OPTION_DEFAULTS['checksums'],
      describe: 'Verify IPv4 and TCP checksums (off by default: capture offload makes them wrong)',
    })
    .option('tcp-buffer-flow', {
      type: 'number',
      default: OPTION_DEFAULTS['tcp-buffer-flow'],
      describe:
        'MiB of out-of-order TCP data held per flow; beyond it the oldest hole becomes a gap (finding tcp.buffer-cap)',
    })
    .option('tcp-buffer-total', {
      type: 'number',
      default: OPTION_DEFAULTS['tcp-buffer-total'],
      describe: 'MiB of out-of-order TCP data held across all flows',
    })
    .option('tcp-reorder-window', {
      type: 'number',
      default: OPTION_DEFAULTS['tcp-reorder-window'],
      describe:
        "MiB buffered beyond a hole before it is declared capture loss (FIN, RST, the peer's ACK or the end do it sooner)",
    })
    .option('i', {
      alias: 'interface',
      type: 'string',
      describe: 'Capture live on this interface (a name, "any", or a number from -D), as tshark -i',
    })
    .option('f', { type: 'string', describe: 'Capture filter (BPF, as tcpdump), with -i' })
    .option('s', {
      alias: 'snapshot-length',
      type: 'number',
      describe: 'Octets kept per packet, with -i (default 262144; the cap backend keeps at most 65535)',
    })
    .option('c', { type: 'number', describe: 'Stop after this many packets (a file or -i)' })
    .option('a', {
      alias: 'autostop',
      type: 'string',
      array: true,
      nargs: 1,
      describe: 'With -i: stop after duration:SECONDS or packets:COUNT',
    })
    .option('b', {
      alias: 'ring-buffer',
      type: 'string',
      array: true,
      nargs: 1,
      describe: 'With -i -w: a ring of files, filesize:MB,files:N (a new file every MB, the oldest deleted beyond N)',
    })
    .option('D', {
      alias: 'list-interfaces',
      type: 'boolean',
      describe: 'List the interfaces -i can capture on, and exit',
    })
    .option('capture-backend', {
      choices: BACKENDS,
      default: OPTION_DEFAULTS['capture-backend'],
      describe:
        'With -i: cap (libpcap binding, arrival timestamps), tcpdump or dumpcap (a child writing pcap; kernel timestamps); auto: cap, else tcpdump, else dumpcap',
    })
    .option('flow-timeout', {
      type: 'number',
      default: OPTION_DEFAULTS['flow-timeout'],
      describe:
        'With -i: a flow idle this many seconds is finished, reported (NDJSON flow event) and its state released',
    })
    .option('color', {
      type: 'boolean',
      describe: 'Colour the text output (default: when stdout is a terminal and NO_COLOR is unset)',
    })
    .option('progress', {
      type: 'boolean',
      describe:
        'Progress bar on stderr (default: when stderr is a terminal, CI is unset and the output is not streaming there)',
    })
    .option('jobs', {
      type: 'number',
      describe:
        'With several captures: how many are analyzed at once, each on a worker thread (default: the number of cores divided by --threads)',
    })
    .option('wide', {
      type: 'boolean',
      describe: 'Print the flow table with every column, however wide (default: fit 100 columns)',
    })
    .option('threads', {
      type: 'number',
      describe:
        'Worker threads for TCP reassembly and dissection, flows shared out by 4-tuple; the output is the same for any number (default for a capture file of 32 MiB or more: one per core beyond the first when that makes at least 2, else 1)',
    })
    .option('allow-truncated', {
      type: 'boolean',
      describe:
        'A capture cut off in the middle of a record is not an error (exit status from the findings, as for a capture stopped with Ctrl-C)',
    })
    .option('T', { type: 'string', describe: 'Output format as tshark -T: fields (with -e), or text (the default)' })
    .option('e', {
      type: 'string',
      array: true,
      nargs: 1,
      describe: 'With -T fields: a field to print (repeat; mpa-dissect -G fields lists them)',
    })
    .option('E', {
      type: 'string',
      array: true,
      nargs: 1,
      describe: 'With -T fields: separator=C, header=y|n, quote=d|s|n, occurrence=f|l|a, aggregator=C',
    })
    .option('G', {
      type: 'string',
      describe: "Glossary as tshark -G: fields, protocols or values (tab-separated, tshark's layout)",
    })
    .option('t', {
      type: 'string',
      describe: `Time column of the event lines, as tshark -t: ${TIME_FORMATS.join('|')} (default r: seconds since the first packet; a/ad local time, u/ud UTC, e epoch, d/dd delta from the previous captured/displayed)`,
    })
    .option('o', {
      type: 'string',
      array: true,
      nargs: 1,
      describe:
        'A Wireshark preference, as tshark -o: tcp.relative_sequence_numbers:TRUE|FALSE (sequence numbers relative to the SYN, the default, or absolute)',
    })
    .option('n', {
      type: 'boolean',
      describe:
        'As tshark -n: no name resolution (addresses are never resolved here; accepted for habit). -2 is accepted too',
    })
    .option('v', { alias: 'version', type: 'boolean', describe: 'Print the version and exit' })
    .example(HELP_EXAMPLES.map(([cmd, what]) => [cmd, what]))
    .epilog(EPILOG)
    .strict()
    // Our own -h/--help, written like every other output (so `--help > /dev/full` fails honestly).
    .help(false)
    .option('h', { alias: 'help', type: 'boolean', describe: 'Show help' })
    // process.stdout is not touched for a pipe: creating it makes the descriptor non-blocking.
    .wrap(isatty(1) ? Math.min(120, process.stdout.columns ?? 100) : 120);
  return parser;
}

/** Parses the arguments (with the subcommand names and positional capture); `help()` is the --help text. */
export async function parseArgv(rawArgv: string[]) {
  const argv = rawArgv.map((a) => (a === '-' ? DASH : a));
  const parser = mainParser(argv).fail((msg, err) => {
    if (err) throw err;
    const unknown = unknownOptionMessage(msg ?? '', longOptions(), shortOptions(), rawArgv);
    // One line: yargs words a bad choice over three ("Invalid values:\n  Argument: ...").
    throw new UsageError(unknown ?? (msg ?? '').replace(/:?\s*\n\s*/g, ': '));
  });
  // Option names for "did you mean", from yargs' own table so a new option is suggested too.
  // getOptions() is public yargs API but missing from @types/yargs.
  type OptionTable = {
    string: string[];
    boolean: string[];
    number: string[];
    array: string[];
    alias: Record<string, string[]>;
  };
  const table = (): OptionTable => (parser as unknown as { getOptions(): OptionTable }).getOptions();
  const longOptions = (): string[] => {
    const o = table();
    return [...o.string, ...o.boolean, ...o.number, ...o.array, ...Object.values(o.alias).flat()].filter(
      (k) => k.length > 1 && !/[A-Z]/.test(k),
    );
  };
  const shortOptions = (): string[] => {
    const o = table();
    return [
      ...o.string,
      ...o.boolean,
      ...o.number,
      ...o.array,
      ...Object.keys(o.alias),
      ...Object.values(o.alias).flat(),
    ].filter((k) => k.length === 1);
  };
  const args = await parser.parseAsync();
  return { args, help: () => (parser as unknown as { getHelp(): Promise<string> }).getHelp() };
}

export type CliArgs = Awaited<ReturnType<typeof parseArgv>>['args'];
