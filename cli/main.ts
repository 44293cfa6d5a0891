#!/usr/bin/env node
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { isatty } from 'node:tty';
import { CaptureOpenError } from '../src/capture/read-capture.js';
import { RulesFileError } from '../src/report/rules-file.js';
import { STAT_NAMES, type StatName } from '../src/report/stats.js';
import { fieldsText, rulesText } from '../src/report/text.js';
import { printable, printableLines } from '../src/report/printable.js';
import { parseForcedMpa, parseForcedTuf, parseUlp, UsageError } from './options.js';
import { checkForcedOverlap } from './forced-checks.js';
import { checkCombinations, compileOption, run, type RunOptions, type SrtRequest } from './run.js';
import { OutputError, ReaderGone, SyncOutput, writeAllSync, writeReason } from './output.js';
import { expandCaptures, isDirectory } from './capture-list.js';
import { boundWorkers } from './worker-limits.js';
import { ulpAllOff } from '../src/analysis/ulp-registry.js';
import { fastArgv } from './fast-argv.js';
import { DASH, dropNoOpFlags } from './argv-conventions.js';
import { parsePreferences, parseTimeFormat } from './tshark-options.js';
import type { CliArgs } from './argv.js';
import { glossaryFields, glossaryProtocols, glossaryValues, parseFieldsOptions } from './fields-output.js';
import type { BackendChoice } from '../src/capture/live/backend-names.js';
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

/**
 * tshark's -z spellings for the statistics we have: `conv,tcp` is our conv table, `expert` (with
 * or without a level) our findings by rule. Other tshark statistics are named in the error.
 */
const TSHARK_STATS: ReadonlyArray<readonly [RegExp, StatName]> = [
  [/^conv,tcp$/, 'conv'],
  [/^expert(,(error|warn|note|chat|comment))?$/, 'rules'],
];

/** tshark's service response time statistics: `-z smb2,srt`, `-z nvme,srt`, `-z scsi,srt[,0]` and `-z rpc,srt,PROGRAM,VERSION`. */
function srtList(v: readonly string[] | undefined): SrtRequest[] {
  const out: SrtRequest[] = [];
  for (const value of v ?? []) {
    const z = value.trim();
    if (/^smb2,srt(,.*)?$/.test(z)) out.push({ kind: 'smb2' });
    else if (/^nvme,srt(,.*)?$/.test(z)) out.push({ kind: 'nvme' });
    // tshark's is scsi,srt,CMDSET (0: SBC, the block commands iSER serves); plain scsi,srt is the same.
    else if (/^scsi,srt(,0)?$/.test(z)) out.push({ kind: 'scsi' });
    else if (/^scsi,srt,/.test(z))
      throw new UsageError(`-z ${z.slice(0, 60)}: only command set 0 (SBC) is kept: give scsi,srt or scsi,srt,0`);
    else if (/^rpc,srt(,|$)/.test(z)) {
      const m = /^rpc,srt,(\d{1,10}),(\d{1,10})(,.*)?$/.exec(z);
      if (!m)
        throw new UsageError(`-z ${z.slice(0, 60)}: give rpc,srt,PROGRAM,VERSION (e.g. rpc,srt,100003,3 for NFSv3)`);
      out.push({ kind: 'rpc', program: Number(m[1]), version: Number(m[2]) });
    }
  }
  return out;
}

function statsList(v: readonly string[] | undefined): StatName[] {
  const out: StatName[] = [];
  const push = (n: StatName): void => {
    if (!out.includes(n)) out.push(n);
  };
  for (const value of v ?? []) {
    if (/^(smb2|nvme|rpc|scsi),srt(,|$)/.test(value.trim())) continue; // srtList's
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
        throw new UsageError(
          `-z: unknown statistic "${shown}" (choose from ${STAT_NAMES.join(', ')}; tshark's conv,tcp and expert are accepted too)`,
        );
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

const undash = <T extends string | undefined>(v: T): T => (v === DASH ? '-' : v) as T;

async function main(rawArgv: string[]): Promise<number> {
  // The peer has options of its own: it parses its arguments itself.
  if (rawArgv[0] === 'peer') return (await import('./peer.js')).runPeerCli(rawArgv.slice(1));
  // So has the generator: its options come from the knob table (src/generate/knobs.ts).
  if (rawArgv[0] === 'generate') {
    const { runGenerateCli } = await import('./generate.js');
    return runGenerateCli(rawArgv.slice(1), (s) => (typeof s === 'string' ? out.write(s) : writeAllSync(1, s)));
  }
  // merge reads reports, not captures: it has options of its own too.
  if (rawArgv[0] === 'merge') {
    const { runMergeCli } = await import('./merge.js');
    return runMergeCli(rawArgv.slice(1), { out: (s) => out.write(s), err: (s) => errWrite(s) });
  }
  // tui has its own help: the options it takes and its keys (the batch options are not its own).
  if (rawArgv[0] === 'tui') {
    const end = rawArgv.indexOf('--');
    const own = end < 0 ? rawArgv : rawArgv.slice(0, end);
    if (own.includes('--help') || own.includes('-h')) {
      out.write((await import('./tui-help.js')).tuiHelp());
      return 0;
    }
  }
  rawArgv = dropNoOpFlags(rawArgv);
  const fast = fastArgv(rawArgv);
  const parsed = fast === null ? await (await import('./argv.js')).parseArgv(rawArgv) : null;
  const args: CliArgs = fast ?? parsed!.args;
  if (args.h === true) {
    out.write(`${await parsed!.help()}\n`);
    return 0;
  }
  if (args.v === true) {
    out.write(`mpa-dissect ${version()} (Node.js ${process.versions.node})\n`);
    return 0;
  }
  if (args.G !== undefined) {
    const { FILTER_FIELDS } = await import('../src/report/fields.js');
    if (args.G === '' || args.G === 'fields') out.write(glossaryFields(FILTER_FIELDS.values()) + '\n');
    else if (args.G === 'protocols') out.write(glossaryProtocols(FILTER_FIELDS.values()) + '\n');
    else if (args.G === 'values') out.write(glossaryValues(FILTER_FIELDS.values()) + '\n');
    else throw new UsageError(`-G: unknown glossary "${args.G.slice(0, 40)}" (choose from fields, protocols, values)`);
    return 0;
  }
  const cmd = args._.map(String)[0];
  if (cmd === 'rules') {
    const rules = (await import('../src/analysis/rules-catalog.js')).allRules();
    const cfg =
      args.rules !== undefined ? (await import('../src/report/rules-file.js')).loadRulesFile(args.rules) : null;
    const inForce = cfg
      ? (r: (typeof rules)[number]) =>
          cfg.overrides.disabled.has(r.id) ? 'off' : (cfg.overrides.severity.get(r.id) ?? r.severity)
      : undefined;
    if (args.json === true) {
      const list = rules.map((r) => ({
        id: r.id,
        severity: r.severity,
        ...(inForce ? { inForce: inForce(r) } : {}),
        ref: r.ref,
        rfcErrorCode: r.rfcErrorCode,
        summary: r.summary,
        explanation: r.explanation,
      }));
      out.write(JSON.stringify(list, null, 1) + '\n');
    } else {
      out.write(rulesText(rules, inForce) + '\n');
    }
    return 0;
  }
  if (cmd === 'fields') {
    out.write(fieldsText((await import('../src/report/fields.js')).FILTER_FIELDS.values()) + '\n');
    return 0;
  }
  if (args.D === true) {
    const { interfacesText, listInterfaces } = await import('../src/capture/live/interfaces.js');
    const list = listInterfaces();
    if (list.length === 0)
      throw new UsageError('-D: no interfaces found (libpcap, tcpdump and /sys/class/net gave none)');
    out.write(interfacesText(list) + '\n');
    return 0;
  }
  const iface = undash(args.i);
  // Live capture's module is loaded only for its options (-i, -a, -b): most runs read a file.
  const live = iface !== undefined || args.a !== undefined || args.b !== undefined ? await import('./live.js') : null;
  const autostop = live ? live.parseAutostop(args.a ?? []) : { duration: null, packets: null };
  const ring = live ? live.parseRing(args.b ?? []) : null;
  let maxPackets: number | undefined;
  if (args.c !== undefined) {
    if (!Number.isInteger(args.c) || args.c < 1)
      throw new UsageError(`-c: ${args.c} is not a packet count (a whole number of at least 1)`);
    maxPackets = args.c;
  }
  let threads: number | undefined;
  if (args.threads !== undefined) {
    if (!Number.isInteger(args.threads) || args.threads < 1 || args.threads > 64)
      throw new UsageError(
        `--threads: ${Number.isNaN(args.threads) ? 'not a number' : `${args.threads} is not a number of threads`}: give a whole number of threads from 1 to 64`,
      );
    if (iface !== undefined && args.threads > 1)
      throw new UsageError('--threads: live capture (-i) is analysed on one thread');
    threads = args.threads;
  }
  if (autostop.packets !== null) maxPackets = Math.min(maxPackets ?? Infinity, autostop.packets);
  if (iface === undefined) {
    for (const [flag, given] of [
      ['-f', args.f],
      ['-s', args.s],
      ['-a', args.a],
      ['-b', args.b],
    ] as const) {
      if (given !== undefined) throw new UsageError(`${flag} is a capture option: use it with -i IFACE`);
    }
  }
  const positionals = captureArguments(args['capture']);
  // Several captures, or a directory of them: each analyzed as it would be alone (cli/multi.ts).
  const several = positionals.length > 1 || (positionals.length === 1 && isDirectory(positionals[0]!));
  const positional = several ? undefined : positionals[0];
  const readFile = needValue(undash(args.r), '-r', 'a capture file name (-r FILE, or - for standard input)');
  // Checked with one capture too (where it has nothing to do), so a script's typo shows at once.
  if (args.jobs !== undefined && (!Number.isInteger(args.jobs) || args.jobs < 1 || args.jobs > 1024))
    throw new UsageError(
      `--jobs: ${Number.isNaN(args.jobs) ? 'not a number' : `${args.jobs} is not a number of workers`}: give a whole number of workers from 1 to 1024`,
    );
  if (several) {
    const what = positionals.length > 1 ? `${positionals.length} captures` : `a directory (${positionals[0]})`;
    if (cmd === 'tui') throw new UsageError(`tui browses one capture; ${what} given`);
    if (iface !== undefined)
      throw new UsageError(`-i ${iface} captures live; capture files cannot be read at the same time`);
    if (readFile !== undefined)
      throw new UsageError(`-r reads one capture; ${what} given: name them all as arguments, without -r`);
  }
  if (positional !== undefined && readFile !== undefined && positional !== readFile) {
    throw new UsageError(`two captures given (-r ${readFile} and ${positional}); give one`);
  }
  if (cmd === 'tui') {
    // Options of the batch outputs would be silently ignored by the UI: say so instead.
    const batchOnly: Array<[string, unknown]> = [
      ['-c', args.c],
      ['-a', args.a],
      ['-b', args.b],
      ['-w', args.w],
      ['--write-filter', args['write-filter']],
      ['--annotate', args.annotate],
      ['-F', args.F],
      ['--junit', args.junit],
      ['--html', args.html],
      ['--json', args.json],
      ['--ndjson', args.ndjson],
      ['-V', args.V],
      ['-x', args.x],
      ['-q', args.q],
      ['-l', args.l],
      ['-z', args.z],
      ['-T', args.T],
      ['-t', args.t],
      ['-o', args.o],
      ['--threads', args.threads],
    ];
    const given = batchOnly.filter(([, v]) => v !== undefined && v !== false).map(([flag]) => flag);
    if (given.length)
      throw new UsageError(
        `tui: ${given.join(', ')} ${given.length === 1 ? 'is an option' : 'are options'} of the batch outputs, not of the terminal UI (in the UI, w writes a pcap); run mpa-dissect without tui for ${given.length === 1 ? 'it' : 'them'}`,
      );
  }
  if (cmd === 'tui')
    return tuiCommand(readFile ?? positional, args, {
      iface,
      f: args.f,
      s: args.s,
      backend: args['capture-backend'],
      flowTimeout: args['flow-timeout'],
    });
  const write = needValue(undash(args.w), '-w', 'a file name (-w FILE)');
  const annotate = needValue(undash(args.annotate), '--annotate', 'a file name (--annotate FILE.pcapng)');
  const writeFormat = outputFormat(args.F, write);
  const junit = needValue(undash(args.junit), '--junit', 'a file name (--junit FILE)');
  const html = needValue(undash(args.html), '--html', 'a file name (--html FILE)');
  if (html === '-') throw new UsageError('--html needs a file name; standard output carries the text or JSON output');
  needValue(undash(args.rules), '--rules', 'a rules file name (--rules FILE)');
  // The field table (and the dissector trees behind it) is loaded only for -T.
  const filterFields = args.T !== undefined ? (await import('../src/report/fields.js')).FILTER_FIELDS : null;
  const fieldsFormat = parseFieldsOptions(undash(args.T), args.e ?? [], args.E ?? [], (n) => filterFields?.get(n));
  // What a file and a live interface are analysed with alike; each branch adds its own source and output pacing.
  const common = {
    json: args.json === true,
    ndjson: args.ndjson === true,
    junit: junit ?? null,
    html: html ?? null,
    displayFilter: undash(args.Y) ?? null,
    verbose: args.V === true,
    hex: args.x === true,
    quiet: args.q === true,
    write: write ?? null,
    writeFormat,
    annotate: annotate ?? null,
    stats: statsList(args.z),
    srt: srtList(args.z),
    ulp: (args.ulp ?? []).map(parseUlp),
    failOn: args['fail-on'],
    rules: undash(args.rules) ?? null,
    mpa: args.mpa ?? [],
    tuf: args.tuf ?? [],
    checksums: args.checksums,
    reassembly: reassemblyOptions(args),
    wide: args.wide === true,
    allowTruncated: args['allow-truncated'] === true,
    fields: fieldsFormat,
    timeFormat: parseTimeFormat(args.t),
    relativeSeq: parsePreferences(args.o ?? []).relativeSeq,
    ...(maxPackets !== undefined ? { maxPackets } : {}),
    ...(threads !== undefined ? { threads } : {}),
  };
  // --threads above what the machine holds is lowered, said once (with upper layers on, run.ts says
  // the run uses one thread instead). Workers start only as flows reach them (parallel-analysis.ts).
  if (threads !== undefined && threads > 1 && ulpAllOff({ overrides: common.ulp })) {
    const bounded = boundWorkers('--threads', threads);
    if (bounded.note !== null) errWrite(bounded.note);
    threads = common.threads = bounded.workers;
  }
  if (several) return multiCommand(positionals, common, args, threads);
  if (iface !== undefined) {
    if (positional !== undefined || readFile !== undefined)
      throw new UsageError(
        `-i ${iface} captures live; a capture file (${readFile ?? positional}) cannot be read at the same time`,
      );
    if (args['write-filter'] !== undefined)
      throw new UsageError('--write-filter chooses frames of a capture file; with -i, -w writes every captured packet');
    if (ring !== null && write === undefined)
      throw new UsageError('-b needs -w FILE (the name the ring files are made from)');
    if (write === '-') throw new UsageError('-w needs a file name; standard output carries the text or JSON output');
    if (ring !== null && writeFormat === 'pcapng')
      throw new UsageError(
        '-b writes a ring of pcap files; with -b, name -w FILE.pcap (or -F pcap) and use --annotate for pcapng',
      );
    const snaplen = args.s === undefined || args.s === 0 ? 262144 : args.s; // -s 0: the largest, as tcpdump and tshark
    if (!Number.isInteger(snaplen) || snaplen < 64 || snaplen > 262144)
      throw new UsageError(`-s: ${snaplen} is not a snapshot length between 64 and 262144`);
    const flowTimeout = args['flow-timeout'];
    if (!(flowTimeout > 0))
      throw new UsageError(`--flow-timeout: ${flowTimeout} is not a number of seconds greater than 0`);
    const io0 = { out: (s: string) => out.write(s), err: (s: string) => errWrite(s) };
    const started = live!.startLive(
      {
        iface,
        filter: args.f ?? '',
        snaplen,
        backend: args['capture-backend'],
        duration: autostop.duration,
        // pcapng (findings as comments) is written by run() (cli/annotate.ts), the ring writer writes pcap.
        write: writeFormat === 'pcapng' ? null : (write ?? null),
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
        live: started.hooks,
      },
      started.io,
    );
  }
  if (write === '-' || junit === '-' || annotate === '-')
    throw new UsageError(
      `${write === '-' ? '-w' : junit === '-' ? '--junit' : '--annotate'} needs a file name; standard output carries the text or JSON output`,
    );
  let capture = readFile ?? positional;
  if (capture === undefined) {
    if (!isatty(0)) {
      // `cat x.pcap | mpa-dissect`: a pipeline that forgets the "-" must not analyze the sample and pass.
      capture = '-';
    } else {
      // A terminal: nothing to read. Writing -w, --junit, --html or --annotate about the sample would only mislead.
      if (write !== undefined || junit !== undefined || html !== undefined || annotate !== undefined) {
        throw new UsageError(
          `no capture given (and standard input is a terminal): give one as the argument or with -r, or pipe one in`,
        );
      }
      capture = SAMPLE;
      errWrite(
        `mpa-dissect: no capture given and standard input is a terminal; analyzing the shipped sample ${SAMPLE}\n`,
      );
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
    { out: (s) => out.write(s), err: (s) => errWrite(s), outBytes: (b) => out.writeBytes(b) },
  );
}

/**
 * -w's file format, as tshark's -F names it: pcapng carries the findings as packet comments. Without
 * -F, the name decides (.pcapng), as Wireshark's "Save As" does; anything else stays classic pcap.
 */
function outputFormat(f: string | undefined, write: string | undefined): 'pcap' | 'pcapng' {
  if (f !== undefined) {
    const v = undash(f);
    if (v !== 'pcap' && v !== 'pcapng')
      throw new UsageError(
        `-F: "${printable(v.slice(0, 60))}" is not a format written here: pcapng (findings as packet comments) or pcap`,
      );
    if (write === undefined) throw new UsageError('-F chooses the format -w writes; give -w FILE too');
    return v;
  }
  return write !== undefined && /\.pcapng$/i.test(write) ? 'pcapng' : 'pcap';
}

/** The capture arguments, `-` restored (yargs gives an array for `[capture..]`). */
function captureArguments(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.map((x) => undash(String(x)));
}

/**
 * Several captures (cli/multi.ts). Options that describe one output stream of one capture are
 * refused with one line: -w (one pcap of one capture's frames), -T fields (one table for scripts),
 * -l (event lines as they come: here each capture's lines wait for its turn). The progress line
 * counts captures done, on the rules of a single capture's bar. Each capture runs with --threads 1 unless --threads is given, and --jobs then
 * defaults to the cores divided by the threads per capture, so the machine is not oversubscribed.
 */
async function multiCommand(
  captures: string[],
  common: Omit<RunOptions, 'capture' | 'lineBuffered' | 'writeFilter' | 'color' | 'progress'>,
  args: {
    jobs?: number | undefined;
    l?: boolean | undefined;
    progress?: boolean | undefined;
    'write-filter'?: string | undefined;
    color?: boolean | undefined;
  },
  /** --threads as given and checked (undefined: not given). */
  threadsArg: number | undefined,
): Promise<number> {
  const refuse: Array<[string, unknown]> = [
    ['-w', common.write],
    ['--write-filter', args['write-filter']],
    ['-T fields', common.fields],
    ['-l', args.l],
  ];
  const given = refuse.filter(([, v]) => v !== undefined && v !== null && v !== false).map(([flag]) => flag);
  if (given.length)
    throw new UsageError(
      `${given.join(', ')}: ${given.length === 1 ? 'an option' : 'options'} of one capture's output; with several captures run mpa-dissect once per capture for ${given.length === 1 ? 'it' : 'them'}`,
    );
  if (captures.filter((c) => c === '-').length > 1)
    throw new UsageError('-: standard input can be read once; it is named twice');
  if (captures.includes('-') && isatty(0))
    throw new UsageError('-: standard input is a terminal; pipe a capture into it');
  const list = expandCaptures(captures, errWrite);
  const threads = threadsArg ?? 1;
  let jobs = args.jobs ?? Math.max(1, Math.floor(availableParallelism() / threads));
  if (args.jobs !== undefined && args.jobs > 1 && list.length > 1) {
    // Never more workers than captures (runMulti), nor than the machine holds (said when lowered).
    const bounded = boundWorkers('--jobs', args.jobs, undefined, list.length);
    if (bounded.note !== null) errWrite(bounded.note);
    jobs = bounded.workers;
  }
  const base: RunOptions = {
    ...common,
    // One thread per capture unless asked: the captures are the parallel work (see above).
    ...(threadsArg === undefined ? { threads: 1 } : {}),
    capture: '',
    lineBuffered: false,
    writeFilter: null,
    color: args.color ?? (isatty(1) && !process.env['NO_COLOR']),
    progress: false,
  };
  // Checked once here, not once per capture on the workers: a bad option is one line, exit 2.
  checkCombinations(base);
  checkForcedOverlap(base.mpa.map(parseForcedMpa), (base.tuf ?? []).map(parseForcedTuf));
  if (base.rules !== null) (await import('../src/report/rules-file.js')).loadRulesFile(base.rules);
  await compileOption('-Y', base.displayFilter);
  if (base.junit !== null) checkOutputPath(base.junit, list, '--junit');
  if (base.html) checkOutputPath(base.html, list, '--html');
  // --annotate with several captures names a directory: one annotated pcapng per capture in it.
  const annotateDir = base.annotate ?? null;
  if (annotateDir !== null) {
    const what = `--annotate ${printable(annotateDir)}: with several captures, a directory for one annotated pcapng per capture`;
    if (existsSync(annotateDir) && !statSync(annotateDir).isDirectory())
      throw new UsageError(`${what}; that is a file`);
    try {
      mkdirSync(annotateDir, { recursive: true });
    } catch (e) {
      throw new UsageError(`${what}: ${writeReason(e)}`);
    }
  }
  const streamingToTerminal = isatty(1) && !base.json && !base.quiet;
  const progress = args.progress ?? (isatty(2) && !process.env['CI'] && !streamingToTerminal);
  const { runMulti } = await import('./multi.js');
  return runMulti(
    base,
    list,
    { jobs, jobsGiven: args.jobs !== undefined, junit: base.junit, progress, html: base.html ?? null, annotateDir },
    { out: (s) => out.write(s), err: (s) => errWrite(s), outBytes: (b) => out.writeBytes(b) },
  );
}

/** --junit or --html FILE with several captures: writable, and none of the captures. */
function checkOutputPath(path: string, captures: readonly string[], flag: string): void {
  for (const c of captures) {
    try {
      const a = statSync(path);
      const b = statSync(c);
      if (a.ino === b.ino && a.dev === b.dev)
        throw new UsageError(`${flag} ${path}: that is a capture being read; choose another file`);
    } catch (e) {
      if (e instanceof UsageError) throw e;
    }
  }
  try {
    closeSync(openSync(path, 'a'));
  } catch (e) {
    throw new UsageError(`${flag} ${path}: cannot write: ${writeReason(e)}`);
  }
}

/** `tui [capture]`: the terminal UI (cli/tui.ts), loaded only when asked for. */
async function tuiCommand(
  capture: string | undefined,
  args: {
    Y?: string | undefined;
    rules?: string | undefined;
    mpa?: string[] | undefined;
    tuf?: string[] | undefined;
    checksums: boolean;
    'tcp-buffer-flow': number;
    'tcp-buffer-total': number;
    'tcp-reorder-window': number;
  },
  live: {
    iface: string | undefined;
    f?: string | undefined;
    s?: number | undefined;
    backend: BackendChoice;
    flowTimeout: number;
  },
): Promise<number> {
  const iface = live.iface;
  if (iface !== undefined && capture !== undefined)
    throw new UsageError(`tui -i ${iface} captures live; a capture file (${capture}) cannot be read at the same time`);
  if (capture === undefined && iface === undefined)
    throw new UsageError('tui: give a capture file (mpa-dissect tui capture.pcap), or -i IFACE to capture live');
  // -s and --flow-timeout as for the CLI's -i.
  const snaplen = live.s === undefined || live.s === 0 ? 262144 : live.s;
  if (iface !== undefined && (!Number.isInteger(snaplen) || snaplen < 64 || snaplen > 262144))
    throw new UsageError(`-s: ${snaplen} is not a snapshot length between 64 and 262144`);
  if (iface !== undefined && !(live.flowTimeout > 0))
    throw new UsageError(`--flow-timeout: ${live.flowTimeout} is not a number of seconds greater than 0`);
  const { runTui } = await import('./tui.js');
  const code = await runTui({
    capture: capture ?? iface ?? '',
    ...(iface !== undefined
      ? { live: { iface, filter: live.f ?? '', snaplen, backend: live.backend, flowTimeout: live.flowTimeout } }
      : {}),
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
function reassemblyOptions(args: {
  'tcp-buffer-flow': number;
  'tcp-buffer-total': number;
  'tcp-reorder-window': number;
}): ReassemblyOptions {
  return {
    maxBufferedPerFlow: mib(args['tcp-buffer-flow'], '--tcp-buffer-flow'),
    maxBufferedTotal: mib(args['tcp-buffer-total'], '--tcp-buffer-total'),
    reorderWindow: mib(args['tcp-reorder-window'], '--tcp-reorder-window'),
  };
}

/** A size option given in MiB, checked (a usage error names the option). */
function mib(v: number, flag: string): number {
  if (!Number.isFinite(v) || v <= 0 || v > 65536)
    throw new UsageError(`${flag}: ${v} is not a size in MiB between 0 and 65536`);
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // A reader that went away (| head) is not an error worth a line.
    if (err instanceof ReaderGone) {
      process.exitCode = 0;
      return;
    }
    const known =
      err instanceof UsageError ||
      err instanceof CaptureOpenError ||
      err instanceof RulesFileError ||
      err instanceof OutputError;
    const msg = known ? err.message : err instanceof Error ? err.message : String(err);
    // A message may name a file or echo a value: its control characters are shown, not obeyed
    // (its line feeds are kept: a filter error is the message, the filter and a caret under it).
    errWrite(`mpa-dissect: ${printableLines(msg)}\n`);
    if (process.env['MPA_DISSECT_DEBUG'] && err instanceof Error) errWrite(`${err.stack}\n`);
    process.exitCode = 2;
  },
);
