#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { CaptureOpenError } from '../src/capture/read-capture.js';
import { allRules } from '../src/analysis/rules-catalog.js';
import { FILTER_FIELDS } from '../src/report/fields.js';
import { loadRulesFile, RulesFileError } from '../src/report/rules-file.js';
import { STAT_NAMES, type StatName } from '../src/report/stats.js';
import { fieldsText, rulesText } from '../src/report/text.js';
import { UsageError } from './options.js';
import { run, type FailOn } from './run.js';
import { OutputError, ReaderGone, SyncOutput, writeAllSync } from './output.js';
import { unknownOptionMessage } from './suggest.js';
import { glossaryFields, parseFieldsOptions } from './fields-output.js';
import { parseAutostop, parseRing, startLive } from './live.js';
import { BACKENDS, type BackendChoice } from '../src/capture/live/open-live.js';
import { interfacesText, listInterfaces } from '../src/capture/live/interfaces.js';
import { runPeerCli } from './peer.js';
import type { ReassemblyOptions } from '../src/tcp/reassembler.js';

const here = dirname(fileURLToPath(import.meta.url));
/** The sample shipped in captures/, analyzed when no capture is given. */
export const SAMPLE = join(here, '..', '..', 'captures', 'sample.pcap');

/** The package version, read from package.json (dist/cli/main.js -> ../../package.json). */
function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

const EPILOG = `Event lines, -V and -x follow -Y; the flow table, findings by rule and --stats always describe the whole capture.

Filters use Wireshark's language and names (iwarp_mpa.*, iwarp_ddp.*, iwarp_rdma.*), plus frame.number, tcp.stream (from 0, as in Wireshark: the Stream column of the flow table), tcp.srcport, ip.src, finding.rule, finding.severity, finding.code, finding.message: "mpa-dissect fields" lists them all. A record matches on its findings too, as a Wireshark packet on its expert infos.

With no capture argument, standard input is read when it is not a terminal (cat x.pcap | mpa-dissect); the shipped sample is analyzed only when standard input is a terminal. Captures compressed with gzip (x.pcap.gz) are read directly, from a file or standard input.

Exit status:
  0  nothing at or above --fail-on was found
  1  a finding at or above --fail-on (error by default) was found
  2  usage error (bad option, filter or rules file), unreadable capture, a capture cut off in the middle of a record (unless --allow-truncated), or an output that could not be written

Colour only on a terminal and never with NO_COLOR set; the progress bar only when stderr is a terminal and CI is unset.`;

/**
 * tshark's -z spellings for the statistics we have: `conv,tcp` is our conv table, `expert` (with
 * or without a level) our findings by rule. Other tshark statistics are named in the error.
 */
const TSHARK_STATS: ReadonlyArray<readonly [RegExp, StatName]> = [
  [/^conv,tcp$/, 'conv'],
  [/^expert(,(error|warn|note|chat|comment))?$/, 'rules'],
];

function statsList(v: readonly string[] | undefined): StatName[] {
  const out: StatName[] = [];
  const push = (n: StatName): void => {
    if (!out.includes(n)) out.push(n);
  };
  for (const value of v ?? []) {
    const whole = TSHARK_STATS.find(([re]) => re.test(value.trim()));
    if (whole) {
      push(whole[1]);
      continue;
    }
    for (const part of value.split(',')) {
      const name = part.trim();
      if (name === '') continue;
      if (!(STAT_NAMES as readonly string[]).includes(name)) {
        const shown = name.length > 40 ? `${name.slice(0, 40)}…` : name;
        throw new UsageError(`-z: unknown statistic "${shown}" (choose from ${STAT_NAMES.join(', ')}; tshark's conv,tcp and expert are accepted too)`);
      }
      push(name as StatName);
    }
  }
  return out;
}

/** An option that takes a value given none (`-w` last on the line): yargs leaves ''. */
function needValue(v: string | undefined, flag: string, what: string): string | undefined {
  if (v === '') throw new UsageError(`${flag} needs ${what}`);
  return v;
}

/** yargs turns a lone "-" into "", so it travels as this placeholder and is turned back after parsing. */
const DASH = '\u0000-';
const undash = <T extends string | undefined>(v: T): T => (v === DASH ? '-' : v) as T;

async function main(rawArgv: string[]): Promise<number> {
  // The peer has options of its own: it parses its arguments itself.
  if (rawArgv[0] === 'peer') return runPeerCli(rawArgv.slice(1));
  const argv = rawArgv.map((a) => (a === '-' ? DASH : a));
  const parser = yargs(argv)
    .scriptName('mpa-dissect')
    .version(false) // our own -v/--version (tshark's -v), defined below
    .usage('$0 [options] [capture | -]\n\nAnalyze iWARP traffic: MPA startup, markers, CRC32c, FPDU framing, DDP/RDMAP.\nOne line per MPA event (startup frame, FPDU, finding), then a table per flow and the findings by rule.\nWith no capture, standard input is read (the shipped sample captures/sample.pcap when it is a terminal).')
    .command('$0 [capture]', 'Analyze a capture (pcap or pcapng; - for standard input)', (y) => y.positional('capture', { type: 'string', describe: 'capture file, or - for standard input' }))
    .command('rules', 'List every rule: id, severity, RFC reference, MPA error code, meaning (--rules FILE: the severity in force; --json)')
    .command('fields', 'List every field a display filter can name (as tshark -G fields)')
    .command('tui [capture]', 'Browse a capture in the terminal: flows, PDUs, detail tree, bytes, findings (-Y initial filter; --mpa, --rules as above; -i IFACE, -f, -s, --capture-backend to capture live)', (y) =>
      y.positional('capture', { type: 'string', describe: 'capture file' }),
    )
    .command('peer', 'Run an MPA endpoint over real TCP sockets (Initiator or Responder) to capture: mpa-dissect peer --help')
    .option('r', { alias: 'read-file', type: 'string', describe: 'Read this capture (as tshark -r); the same as giving it as the argument' })
    .option('Y', { alias: 'display-filter', type: 'string', describe: 'Show only the event lines this display filter matches (Wireshark syntax)' })
    .option('V', { type: 'boolean', describe: 'Print the detail tree of each startup frame and FPDU (markers, FPDUPTR expected vs seen, CRC seen vs computed, DDP/RDMAP)' })
    .option('x', { type: 'boolean', describe: 'Print the octets of each startup frame and FPDU, marking length, markers, PAD and CRC' })
    .option('q', { type: 'boolean', describe: 'Quiet: no event lines, only the summary (and --stats)' })
    .option('l', { type: 'boolean', describe: 'Flush the output after each event (for piping a live capture)' })
    .option('json', { type: 'boolean', describe: 'Print the JSON report (schema mpa-dissect/report/v1) instead of text' })
    .option('ndjson', { type: 'boolean', describe: 'Print one JSON object per event as it happens, then one per flow and a summary' })
    .option('junit', { type: 'string', describe: 'Also write a JUnit XML file: one testsuite per flow, one testcase per rule' })
    .option('fail-on', { choices: ['error', 'warning', 'never'] as const, default: 'error' as FailOn, describe: 'Exit 1 when a finding at or above this severity was found' })
    .option('rules', { type: 'string', describe: 'JSON rules file: turn rules off, change severities, set thresholds (see README)' })
    .option('z', { alias: 'stats', type: 'string', array: true, nargs: 1, describe: `Print statistics after the summary (as tshark -z; with -q only them): ${STAT_NAMES.join(', ')}, or tshark's conv,tcp and expert; repeat or separate with commas` })
    .option('w', { type: 'string', describe: 'Write frames as pcap: by default those involved in findings, plus each flow\'s MPA Request and Reply' })
    .option('write-filter', { type: 'string', describe: 'Display filter choosing the events whose frames -w writes (default: every finding)' })
    .option('mpa', { type: 'string', array: true, nargs: 1, describe: 'Force MPA on a flow: flow=SEL,markers=both|none|c2s|s2c,crc=on|off,seqstart=C:S' })
    .option('tuf', { type: 'string', array: true, nargs: 1, describe: 'Force ULP Framing for TCP on a flow: flow=SEL,key=HEX (alignment mode) or interval=N (marker mode),start=SEQ (key and start: one value or C:S)' })
    .option('checksums', { type: 'boolean', default: false, describe: 'Verify IPv4 and TCP checksums (off by default: capture offload makes them wrong)' })
    .option('tcp-buffer-flow', { type: 'number', default: 16, describe: 'MiB of out-of-order TCP data held per flow; beyond it the oldest hole becomes a gap (finding tcp.buffer-cap)' })
    .option('tcp-buffer-total', { type: 'number', default: 64, describe: 'MiB of out-of-order TCP data held across all flows' })
    .option('tcp-reorder-window', { type: 'number', default: 4, describe: 'MiB buffered beyond a hole before it is declared capture loss (FIN, RST, the peer\'s ACK or the end do it sooner)' })
    .option('i', { alias: 'interface', type: 'string', describe: 'Capture live on this interface (a name, "any", or a number from -D), as tshark -i' })
    .option('f', { type: 'string', describe: 'Capture filter (BPF, as tcpdump), with -i' })
    .option('s', { alias: 'snapshot-length', type: 'number', describe: 'Octets kept per packet, with -i (default 262144; the cap backend keeps at most 65535)' })
    .option('c', { type: 'number', describe: 'Stop after this many packets (a file or -i)' })
    .option('a', { alias: 'autostop', type: 'string', array: true, nargs: 1, describe: 'With -i: stop after duration:SECONDS or packets:COUNT' })
    .option('b', { alias: 'ring-buffer', type: 'string', array: true, nargs: 1, describe: 'With -i -w: a ring of files, filesize:MB,files:N (a new file every MB, the oldest deleted beyond N)' })
    .option('D', { alias: 'list-interfaces', type: 'boolean', describe: 'List the interfaces -i can capture on, and exit' })
    .option('capture-backend', { choices: BACKENDS, default: 'auto' as BackendChoice, describe: 'With -i: cap (libpcap binding, arrival timestamps), tcpdump or dumpcap (a child writing pcap; kernel timestamps); auto: cap, else tcpdump, else dumpcap' })
    .option('flow-timeout', { type: 'number', default: 300, describe: 'With -i: a flow idle this many seconds is finished, reported (NDJSON flow event) and its state released' })
    .option('color', { type: 'boolean', describe: 'Colour the text output (default: when stdout is a terminal and NO_COLOR is unset)' })
    .option('progress', { type: 'boolean', describe: 'Progress bar on stderr (default: when stderr is a terminal, CI is unset and the output is not streaming there)' })
    .option('wide', { type: 'boolean', describe: 'Print the flow table with every column, however wide (default: fit 100 columns)' })
    .option('allow-truncated', { type: 'boolean', describe: 'A capture cut off in the middle of a record is not an error (exit status from the findings, as for a capture stopped with Ctrl-C)' })
    .option('T', { type: 'string', describe: 'Output format as tshark -T: fields (with -e), or text (the default)' })
    .option('e', { type: 'string', array: true, nargs: 1, describe: 'With -T fields: a field to print (repeat; mpa-dissect -G fields lists them)' })
    .option('E', { type: 'string', array: true, nargs: 1, describe: 'With -T fields: separator=C, header=y|n, quote=d|s|n, occurrence=f|l|a, aggregator=C' })
    .option('G', { type: 'string', describe: 'Glossary as tshark -G: fields (tab-separated, tshark\'s layout)' })
    .option('v', { alias: 'version', type: 'boolean', describe: 'Print the version and exit' })
    .example('$0 capture.pcap', 'desk check: one line per MPA event, then a table per flow and the findings by rule')
    .example("$0 -V -Y 'iwarp_mpa.crc_status == \"bad\"' capture.pcap", 'detail trees of the FPDUs whose CRC is bad')
    .example("$0 -x -Y 'finding.rule == \"mpa.fpduptr-mismatch\"' capture.pcap", 'octets of the FPDUs with a wrong FPDUPTR, markers marked')
    .example('$0 -q --junit mpa.xml capture.pcap', 'CI gate: exit 1 on an error, JUnit file for the dashboard')
    .example('$0 --json --rules ci.json capture.pcap > report.json', 'CI gate with a rules file (severities, alignment minimum)')
    .example("$0 --mpa 'flow=port:4420,markers=both,crc=on' midstream.pcap", 'capture started mid-stream: force MPA on port 4420')
    .example('tcpdump -i eth0 -U -w - port 4420 | $0 -l -', 'live traffic on standard input, a line per event as it comes')
    .example("$0 -i eth0 -f 'tcp port 4420' -w run.pcap", 'capture live (Ctrl-C ends it: tables, findings), keeping every packet in run.pcap')
    .example('$0 -q -w findings.pcap capture.pcap', 'the frames behind the findings, for a colleague with Wireshark')
    .example('$0 -q -z conv -z fpdu-sizes capture.pcap', 'conversation table and FPDU size histogram, nothing else')
    .example("$0 -T fields -e frame.number -e iwarp_mpa.ulpdu_length -E separator=, capture.pcap", 'one CSV row per event line, for scripts')
    .example('cat capture.pcap.gz | $0', 'standard input (gzip-compressed or not) when no capture is named')
    .epilog(EPILOG)
    .strict()
    // Our own -h/--help, written like every other output (so `--help > /dev/full` fails honestly).
    .help(false)
    .option('h', { alias: 'help', type: 'boolean', describe: 'Show help' })
    // process.stdout is not touched for a pipe: creating it makes the descriptor non-blocking.
    .wrap(isatty(1) ? Math.min(120, process.stdout.columns ?? 100) : 120)
    .fail((msg, err) => {
      if (err) throw err;
      const unknown = unknownOptionMessage(msg ?? '', longOptions(), shortOptions(), rawArgv);
      throw new UsageError(unknown ?? msg);
    });
  // Option names for "did you mean", from yargs' own table so a new option is suggested too.
  // getOptions() is public yargs API but missing from @types/yargs.
  type OptionTable = { string: string[]; boolean: string[]; number: string[]; array: string[]; alias: Record<string, string[]> };
  const table = (): OptionTable => (parser as unknown as { getOptions(): OptionTable }).getOptions();
  const longOptions = (): string[] => {
    const o = table();
    return [...o.string, ...o.boolean, ...o.number, ...o.array, ...Object.values(o.alias).flat()].filter((k) => k.length > 1 && !/[A-Z]/.test(k));
  };
  const shortOptions = (): string[] => {
    const o = table();
    return [...o.string, ...o.boolean, ...o.number, ...o.array, ...Object.keys(o.alias), ...Object.values(o.alias).flat()].filter((k) => k.length === 1);
  };
  const args = await parser.parseAsync();
  if (args.h === true) {
    out.write(`${await (parser as unknown as { getHelp(): Promise<string> }).getHelp()}\n`);
    return 0;
  }
  if (args.v === true) {
    out.write(`mpa-dissect ${version()} (Node.js ${process.versions.node})\n`);
    return 0;
  }
  if (args.G !== undefined) {
    if (args.G !== '' && args.G !== 'fields') throw new UsageError(`-G: unknown glossary "${args.G.slice(0, 40)}" (choose from fields)`);
    out.write(glossaryFields(FILTER_FIELDS.values()) + '\n');
    return 0;
  }
  const cmd = args._.map(String)[0];
  if (cmd === 'rules') {
    const rules = allRules();
    const cfg = args.rules !== undefined ? loadRulesFile(args.rules) : null;
    const inForce = cfg ? (r: (typeof rules)[number]) => (cfg.overrides.disabled.has(r.id) ? 'off' : cfg.overrides.severity.get(r.id) ?? r.severity) : undefined;
    if (args.json === true) {
      const list = rules.map((r) => ({ id: r.id, severity: r.severity, ...(inForce ? { inForce: inForce(r) } : {}), ref: r.ref, rfcErrorCode: r.rfcErrorCode, summary: r.summary, explanation: r.explanation }));
      out.write(JSON.stringify(list, null, 1) + '\n');
    } else {
      out.write(rulesText(rules, inForce) + '\n');
    }
    return 0;
  }
  if (cmd === 'fields') {
    out.write(fieldsText(FILTER_FIELDS.values()) + '\n');
    return 0;
  }
  if (args.D === true) {
    const list = listInterfaces();
    if (list.length === 0) throw new UsageError('-D: no interfaces found (libpcap, tcpdump and /sys/class/net gave none)');
    out.write(interfacesText(list) + '\n');
    return 0;
  }
  const iface = undash(args.i);
  const autostop = parseAutostop(args.a ?? []);
  const ring = parseRing(args.b ?? []);
  let maxPackets: number | undefined;
  if (args.c !== undefined) {
    if (!Number.isInteger(args.c) || args.c < 1) throw new UsageError(`-c: ${args.c} is not a packet count (a whole number of at least 1)`);
    maxPackets = args.c;
  }
  if (autostop.packets !== null) maxPackets = Math.min(maxPackets ?? Infinity, autostop.packets);
  if (iface === undefined) {
    for (const [flag, given] of [['-f', args.f], ['-s', args.s], ['-a', args.a], ['-b', args.b]] as const) {
      if (given !== undefined) throw new UsageError(`${flag} is a capture option: use it with -i IFACE`);
    }
  }
  const positional = typeof args['capture'] === 'string' ? undash(args['capture']) : undefined;
  const readFile = needValue(undash(args.r), '-r', 'a capture file name (-r FILE, or - for standard input)');
  if (positional !== undefined && readFile !== undefined && positional !== readFile) {
    throw new UsageError(`two captures given (-r ${readFile} and ${positional}); give one`);
  }
  if (cmd === 'tui') {
    // Options of the batch outputs would be silently ignored by the UI: say so instead.
    const batchOnly: Array<[string, unknown]> = [
      ['-c', args.c], ['-a', args.a], ['-b', args.b], ['-w', args.w], ['--write-filter', args['write-filter']], ['--junit', args.junit],
      ['--json', args.json], ['--ndjson', args.ndjson], ['-V', args.V], ['-x', args.x], ['-q', args.q], ['-l', args.l], ['-z', args.z], ['-T', args.T],
    ];
    const given = batchOnly.filter(([, v]) => v !== undefined && v !== false).map(([flag]) => flag);
    if (given.length) throw new UsageError(`tui: ${given.join(', ')} ${given.length === 1 ? 'is an option' : 'are options'} of the batch outputs, not of the terminal UI (in the UI, w writes a pcap); run mpa-dissect without tui for ${given.length === 1 ? 'it' : 'them'}`);
  }
  if (cmd === 'tui') return tuiCommand(readFile ?? positional, args, { iface, f: args.f, s: args.s, backend: args['capture-backend'], flowTimeout: args['flow-timeout'] });
  const write = needValue(undash(args.w), '-w', 'a file name (-w FILE)');
  const junit = needValue(undash(args.junit), '--junit', 'a file name (--junit FILE)');
  needValue(undash(args.rules), '--rules', 'a rules file name (--rules FILE)');
  const fieldsFormat = parseFieldsOptions(undash(args.T), args.e ?? [], args.E ?? [], (n) => FILTER_FIELDS.get(n));
  // What a file and a live interface are analysed with alike; each branch adds its own source and output pacing.
  const common = {
    json: args.json === true,
    ndjson: args.ndjson === true,
    junit: junit ?? null,
    displayFilter: undash(args.Y) ?? null,
    verbose: args.V === true,
    hex: args.x === true,
    quiet: args.q === true,
    write: write ?? null,
    stats: statsList(args.z),
    failOn: args['fail-on'],
    rules: undash(args.rules) ?? null,
    mpa: args.mpa ?? [],
    tuf: args.tuf ?? [],
    checksums: args.checksums,
    reassembly: reassemblyOptions(args),
    wide: args.wide === true,
    allowTruncated: args['allow-truncated'] === true,
    fields: fieldsFormat,
    ...(maxPackets !== undefined ? { maxPackets } : {}),
  };
  if (iface !== undefined) {
    if (positional !== undefined || readFile !== undefined) throw new UsageError(`-i ${iface} captures live; a capture file (${readFile ?? positional}) cannot be read at the same time`);
    if (args['write-filter'] !== undefined) throw new UsageError('--write-filter chooses frames of a capture file; with -i, -w writes every captured packet');
    if (ring !== null && write === undefined) throw new UsageError('-b needs -w FILE (the name the ring files are made from)');
    if (write === '-') throw new UsageError('-w needs a file name; standard output carries the text or JSON output');
    const snaplen = args.s === undefined || args.s === 0 ? 262144 : args.s; // -s 0: the largest, as tcpdump and tshark
    if (!Number.isInteger(snaplen) || snaplen < 64 || snaplen > 262144) throw new UsageError(`-s: ${snaplen} is not a snapshot length between 64 and 262144`);
    const flowTimeout = args['flow-timeout'];
    if (!(flowTimeout > 0)) throw new UsageError(`--flow-timeout: ${flowTimeout} is not a number of seconds greater than 0`);
    const io0 = { out: (s: string) => out.write(s), err: (s: string) => errWrite(s) };
    const live = startLive(
      {
        iface,
        filter: args.f ?? '',
        snaplen,
        backend: args['capture-backend'],
        duration: autostop.duration,
        write: write ?? null,
        ring,
        flowTimeout,
        status: args.progress ?? (isatty(2) && !process.env['CI']),
      },
      io0,
    );
    return run(
      {
        ...common,
        capture: iface,
        // Live output streams: every event line goes out as it happens.
        lineBuffered: true,
        writeFilter: null,
        color: args.color ?? (isatty(1) && !process.env['NO_COLOR']),
        progress: false,
        live: live.hooks,
      },
      live.io,
    );
  }
  if (write === '-' || junit === '-') throw new UsageError(`${write === '-' ? '-w' : '--junit'} needs a file name; standard output carries the text or JSON output`);
  let capture = readFile ?? positional;
  if (capture === undefined) {
    if (!isatty(0)) {
      // `cat x.pcap | mpa-dissect`: a pipeline that forgets the "-" must not analyze the sample and pass.
      capture = '-';
    } else {
      // A terminal: nothing to read. Writing -w or --junit about the sample would only mislead.
      if (write !== undefined || junit !== undefined) {
        throw new UsageError(`no capture given (and standard input is a terminal): give one as the argument or with -r, or pipe one in`);
      }
      capture = SAMPLE;
      errWrite(`mpa-dissect: no capture given and standard input is a terminal; analyzing the shipped sample ${SAMPLE}\n`);
    }
  }
  const stdoutTty = isatty(1);
  const color = args.color ?? (stdoutTty && !process.env['NO_COLOR']);
  // A bar on a terminal that also shows the event lines would be torn by them: only when stdout is elsewhere or quiet.
  const streamingToTerminal = stdoutTty && !common.json && !common.quiet;
  const progress = args.progress ?? (isatty(2) && !process.env['CI'] && !streamingToTerminal);
  return run(
    {
      ...common,
      capture,
      lineBuffered: args.l === true,
      writeFilter: undash(args['write-filter']) ?? null,
      color,
      progress,
      implicitStdin: readFile === undefined && positional === undefined,
    },
    { out: (s) => out.write(s), err: (s) => errWrite(s) },
  );
}

/** `tui [capture]`: the terminal UI (cli/tui.ts), loaded only when asked for. */
async function tuiCommand(
  capture: string | undefined,
  args: { Y?: string | undefined; rules?: string | undefined; mpa?: string[] | undefined; tuf?: string[] | undefined; checksums: boolean; 'tcp-buffer-flow': number; 'tcp-buffer-total': number; 'tcp-reorder-window': number },
  live: { iface: string | undefined; f?: string | undefined; s?: number | undefined; backend: BackendChoice; flowTimeout: number },
): Promise<number> {
  const iface = live.iface;
  if (iface !== undefined && capture !== undefined) throw new UsageError(`tui -i ${iface} captures live; a capture file (${capture}) cannot be read at the same time`);
  if (capture === undefined && iface === undefined) throw new UsageError('tui: give a capture file (mpa-dissect tui capture.pcap), or -i IFACE to capture live');
  // -s and --flow-timeout as for the CLI's -i.
  const snaplen = live.s === undefined || live.s === 0 ? 262144 : live.s;
  if (iface !== undefined && (!Number.isInteger(snaplen) || snaplen < 64 || snaplen > 262144)) throw new UsageError(`-s: ${snaplen} is not a snapshot length between 64 and 262144`);
  if (iface !== undefined && !(live.flowTimeout > 0)) throw new UsageError(`--flow-timeout: ${live.flowTimeout} is not a number of seconds greater than 0`);
  const { runTui } = await import('./tui.js');
  const code = await runTui({
    capture: capture ?? iface ?? '',
    ...(iface !== undefined ? { live: { iface, filter: live.f ?? '', snaplen, backend: live.backend, flowTimeout: live.flowTimeout } } : {}),
    displayFilter: undash(args.Y) ?? null,
    rules: undash(args.rules) ?? null,
    mpa: args.mpa ?? [],
    tuf: args.tuf ?? [],
    checksums: args.checksums,
    reassembly: reassemblyOptions(args),
  });
  // The capture may still be being read in the background: quitting does not wait for it.
  process.exit(code);
}

/** The TCP reassembly limits from their MiB options (each checked by mib()). */
function reassemblyOptions(args: { 'tcp-buffer-flow': number; 'tcp-buffer-total': number; 'tcp-reorder-window': number }): ReassemblyOptions {
  return {
    maxBufferedPerFlow: mib(args['tcp-buffer-flow'], '--tcp-buffer-flow'),
    maxBufferedTotal: mib(args['tcp-buffer-total'], '--tcp-buffer-total'),
    reorderWindow: mib(args['tcp-reorder-window'], '--tcp-reorder-window'),
  };
}

/** A size option given in MiB, checked (a usage error names the option). */
function mib(v: number, flag: string): number {
  if (!Number.isFinite(v) || v <= 0 || v > 65536) throw new UsageError(`${flag}: ${v} is not a size in MiB between 0 and 65536`);
  return Math.round(v * 1024 * 1024);
}

/** Standard output, written synchronously so a slow reader holds the analysis back (cli/output.ts). */
const out = new SyncOutput(1, 'standard output');

/** Standard error, synchronously too; when even it cannot be written there is nowhere left to say so. */
function errWrite(s: string): void {
  try {
    writeAllSync(2, Buffer.from(s, 'utf8'));
  } catch {
    // the exit status still tells
  }
}

main(hideBin(process.argv)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A reader that went away (| head) is not an error worth a line.
    if (err instanceof ReaderGone) {
      process.exitCode = 0;
      return;
    }
    const known = err instanceof UsageError || err instanceof CaptureOpenError || err instanceof RulesFileError || err instanceof OutputError;
    const msg = known ? err.message : err instanceof Error ? err.message : String(err);
    errWrite(`mpa-dissect: ${msg}\n`);
    if (process.env['MPA_DISSECT_DEBUG'] && err instanceof Error) errWrite(`${err.stack}\n`);
    process.exitCode = 2;
  },
);
