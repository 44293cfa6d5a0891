/**
 * One analysis run of the CLI: options to a pipeline configuration, the pipeline's streaming
 * records to the outputs asked for, exit status. Work an output needs per FPDU (trees, filters,
 * reading frames back) is set up only when that output is asked for, so a plain --json run pays
 * for none of it.
 */
import type { SrtQuery } from '../src/report/srt.js';
import { readFileSync, statSync } from 'node:fs';
import { analyze, type AnalysisOptions, type AnalysisResult } from '../src/analysis/pipeline.js';
import { defaultUpper } from '../src/analysis/upper.js';
import { SEVERITY_RANK, type Finding, type Severity } from '../src/vocabulary/findings.js';
import type { PacketRecord } from '../src/capture/packet.js';
import { isGzipFile, readErrorRule } from '../src/capture/read-capture.js';
import type { ReassemblyOptions } from '../src/tcp/reassembler.js';
import { buildReport, TOOL, writeReport } from '../src/report/json-report.js';
import {
  CaptureOrder,
  EventAssembler,
  groupFrame,
  isFpdu,
  isStartup,
  isTuf,
  type EventGroup,
} from '../src/report/events.js';
import type { FieldGetter } from '../src/report/fields.js';
import type { CompiledFilter } from '../src/report/filter/filter.js';
import type { FrameStore } from '../src/report/frame-store.js';
import type { Progress } from '../src/report/progress.js';
import type { RulesConfig } from '../src/report/rules-file.js';
import type { FpduSizes, StatName } from '../src/report/stats.js';
import type { UlpOverride } from '../src/analysis/pipeline-types.js';
import {
  findingLine,
  fpduLine,
  makeStyle,
  plural,
  startupLine,
  summaryText,
  tufLine,
  type Style,
} from '../src/report/text.js';
import { NO_THRESHOLDS, thresholdFindings } from '../src/analysis/thresholds.js';
import { parseForcedMpa, parseForcedTuf, UsageError } from './options.js';
import { printable } from '../src/report/printable.js';
import { checkForcedOverlap, forcedNotes } from './forced-checks.js';
import type { FieldsFormat } from './fields-output.js';
import { OutputError, writeFileOrFail, writeReason, type RunIo } from './output.js';
import { checkAnnotatePath, checkWritable, isRegularFile } from './output-paths.js';
import type { LiveHooks } from './live.js';
import { flowJson } from '../src/report/json-report.js';
import { defaultThreads } from '../src/analysis/parallel/thread-count.js';
import { ulpAllOff } from '../src/analysis/ulp-registry.js';
import type { CaptureView } from '../src/report/html/model.js';
import { EventClock, type TimeFormat } from '../src/report/time-format.js';
import { SeqBases } from '../src/report/relative-seq.js';
import type { FrameFacts } from '../src/report/frame-facts.js';
import { LineBlock, Utf8Slab } from './line-block.js';

export type FailOn = 'error' | 'warning' | 'never';

export type SrtRequest = SrtQuery;

export interface RunOptions {
  /** Capture path, '-' for standard input. */
  capture: string;
  json: boolean;
  ndjson: boolean;
  junit: string | null;
  /** -Y; null or '' shows everything (as tshark's -Y ''). */
  displayFilter: string | null;
  verbose: boolean;
  hex: boolean;
  quiet: boolean;
  lineBuffered: boolean;
  write: string | null;
  /** -w's format: pcapng (by the name's extension or -F pcapng) carries the findings as packet comments. */
  writeFormat?: 'pcap' | 'pcapng';
  /** --annotate FILE: the whole capture as pcapng, the findings as packet comments (cli/annotate.ts). */
  annotate?: string | null;
  writeFilter: string | null;
  stats: StatName[];
  /** -z smb2,srt, -z nvme,srt and -z rpc,srt,PROGRAM,VERSION: service response times of the upper layers. */
  srt?: SrtRequest[];
  /** --ulp: upper layer forced (or none) per flow. */
  ulp?: UlpOverride[];
  failOn: FailOn;
  rules: string | null;
  mpa: string[];
  /** --tuf specs (ULP Framing for TCP forced on flows). */
  tuf?: string[];
  checksums: boolean;
  /** TCP reassembly limits (octets). */
  reassembly?: ReassemblyOptions;
  color: boolean;
  progress: boolean;
  /** --wide: the flow table with every column. */
  wide?: boolean;
  /** --allow-truncated: a capture cut mid-record exits by its findings, not 2. */
  allowTruncated?: boolean;
  /** Standard input is read because no capture was named (said in the error when it holds no capture). */
  implicitStdin?: boolean;
  /** -T fields: rows of field values instead of event lines and summary. */
  fields?: FieldsFormat | null;
  /** -t: the time column of the event lines (tshark's formats; default r, relative to the first packet). */
  timeFormat?: TimeFormat;
  /** false: -o tcp.relative_sequence_numbers:FALSE, absolute sequence numbers in event lines, -V and tcp.seq. */
  relativeSeq?: boolean;
  /** -c: stop after this many packets (files and live capture). */
  maxPackets?: number;
  /** Live capture (-i): `capture` is the interface name, packets come from the hooks' source. */
  live?: LiveHooks;
  /** --threads: worker threads for reassembly and dissection; unset: defaultThreads(). */
  threads?: number;
  /** Called once with the whole analysis (thresholds judged) before the closing outputs: a multi-capture run digests it. */
  onAnalysis?: (r: AnalysisResult) => void;
  /** --html FILE: the self-contained HTML report of this run (src/report/html/). */
  html?: string | null;
  /** Called once with this capture's HTML page data (a multi-capture run puts every capture on one page). */
  onHtml?: (v: CaptureView) => void;
}

function failed(r: AnalysisResult, failOn: FailOn): boolean {
  if (failOn === 'never') return false;
  const min = SEVERITY_RANK[failOn];
  return (Object.keys(r.findings.bySeverity) as Severity[]).some(
    (s) => SEVERITY_RANK[s] >= min && r.findings.bySeverity[s] > 0,
  );
}

/** Compiles a filter option, turning a bad filter into a usage error that points at the column. */
export async function compileOption(flag: string, text: string | null): Promise<CompiledFilter | null> {
  if (text === null || text.trim() === '') return null;
  const { formatFilterError, FilterError } = await import('../src/report/filter/filter.js');
  const { compileEventFilter } = await import('../src/report/fields.js');
  try {
    return compileEventFilter(text);
  } catch (e) {
    if (e instanceof FilterError) {
      const hint = /is neither a field nor a protocol name/.test(e.message)
        ? '\n(mpa-dissect fields lists the field names)'
        : '';
      const where = e.pointed ? `column ${e.column}: ` : '';
      throw new UsageError(`${flag}: ${where}${formatFilterError(text, e)}${hint}`);
    }
    throw e;
  }
}

export function checkCombinations(o: RunOptions): void {
  if (o.json && o.ndjson) throw new UsageError('--json and --ndjson are two forms of the same output; choose one');
  if (o.json && (o.verbose || o.hex))
    throw new UsageError(
      '-V and -x add to the text output; the --json report has no event lines (use --ndjson for events)',
    );
  if (o.ndjson && (o.verbose || o.hex))
    throw new UsageError('-V and -x add to the text output; they do not combine with --ndjson');
  if (o.json && o.displayFilter !== null && o.displayFilter.trim() !== '') {
    throw new UsageError(
      '-Y filters event lines; the --json report always describes the whole capture (use --ndjson for filtered events)',
    );
  }
  if (o.writeFilter !== null && o.write === null)
    throw new UsageError('--write-filter chooses the frames -w writes; give -w FILE too');
  if (o.fields && (o.json || o.ndjson || o.verbose || o.hex))
    throw new UsageError('-T fields is an output of its own; it does not combine with --json, --ndjson, -V or -x');
}

/**
 * Findings that describe normal behaviour: shown in the flow table (Closed: fin/fin) and kept in
 * -V, --ndjson, --json and the findings by rule, but not as an event line of their own unless
 * -V, -Y or a rules file asks for them. A clean FIN between FPDUs is how connections end.
 */
const QUIET_IN_EVENT_LINES: ReadonlySet<string> = new Set(['mpa.tcp-closed-between']);

/**
 * Whether the rules file names `id` itself with a setting other than "off" (e.g. "info", its
 * default, which RulesConfig does not record as an override): the user asked to see it. The file
 * was already read and checked by loadRulesFile; anything unreadable now just means "no".
 */
function namedInRulesFile(path: string | null, id: string): boolean {
  if (path === null) return false;
  try {
    if (!statSync(path).isFile()) return false;
    const doc: unknown = JSON.parse(readFileSync(path, 'utf8'));
    const rules = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>)['rules'] : undefined;
    if (typeof rules !== 'object' || rules === null) return false;
    const v = (rules as Record<string, unknown>)[id];
    return typeof v === 'string' && v !== 'off';
  } catch {
    return false;
  }
}

/** Capture-reader findings are said once, as the error line at the end, not also as an event line. */
const isCaptureFinding = (f: Finding): boolean => f.rule === 'capture.truncated' || f.rule === 'capture.read-error';

const NO_INDEXES: readonly number[] = [];

/** Runs the analysis and every output; returns the exit status (0, 1; usage problems throw). */
export async function run(o: RunOptions, io: RunIo): Promise<number> {
  checkCombinations(o);
  const forced = o.mpa.map(parseForcedMpa);
  const forcedTuf = (o.tuf ?? []).map(parseForcedTuf);
  checkForcedOverlap(forced, forcedTuf);
  const config: RulesConfig | null =
    o.rules !== null ? (await import('../src/report/rules-file.js')).loadRulesFile(o.rules) : null;
  const display = await compileOption('-Y', o.displayFilter);
  const writeFilter = await compileOption('--write-filter', o.writeFilter);
  // What only some outputs need is loaded only for them (start-up cost: see DEVELOPING.md, Benchmarks).
  const fieldsOut = o.fields ? await import('./fields-output.js') : null;
  const trees = o.verbose
    ? { ...(await import('../src/report/tree-text.js')), ...(await import('../src/report/fields.js')) }
    : null;
  const hexdump = o.hex ? await import('../src/report/hexdump.js') : null;
  const ndjson = o.ndjson ? await import('../src/report/ndjson.js') : null;
  const statsMod = o.stats.length > 0 ? await import('../src/report/stats.js') : null;
  if (o.junit !== null) checkWritable(o.junit, '--junit', o.capture);
  const htmlPath = o.html ?? null;
  if (htmlPath !== null) checkWritable(htmlPath, '--html', o.capture);
  // The HTML report's sink: bounded aggregates, O(1) per FPDU (src/report/html/collect.ts).
  const htmlMod = htmlPath !== null || o.onHtml ? await import('../src/report/html/collect.js') : null;
  const html = htmlMod ? new htmlMod.HtmlCollector() : null;
  if (o.annotate) checkAnnotatePath(o.annotate, o.write, o.capture, o.live !== undefined); // before -w's file exists
  if (o.write !== null && !o.live) checkWritable(o.write, '-w', o.capture); // live: the ring writer opens its files
  const started = Date.now();
  const st: Style = makeStyle(o.color);
  const fieldsFmt = o.fields ?? null;
  const text = !o.json && !o.ndjson && !fieldsFmt;
  // -q with -z prints only the statistics (as tshark -q -z).
  const statsOnly = text && o.quiet && (o.stats.length > 0 || (o.srt?.length ?? 0) > 0);
  const eventLines = (text && !o.quiet) || o.ndjson || fieldsFmt !== null;
  const quietRules = new Set(
    [...QUIET_IN_EVENT_LINES].filter(
      (id) => !o.verbose && display === null && !config?.overrides.severity.has(id) && !namedInRulesFile(o.rules, id),
    ),
  );
  const needEvents = (eventLines && !statsOnly) || o.write !== null;

  // Output buffering: lines go out in blocks (or one by one with -l, as tshark -l). io.out writes
  // synchronously (cli/output.ts), so a slow reader holds the analysis back instead of memory growing.
  const block = new LineBlock(io);
  const flush = (): void => block.flush();
  const line = (s: string): void => block.line(s);
  // Event lines in capture order: a group's lines are formatted at once (its frames are still in the
  // window for -x) and put back in frame order by CaptureOrder; -l shows each as it comes.
  // The window holds thousands of groups, so each waits as little as the young-generation
  // collector would copy: its UTF-8 in a shared slab (outside the JS heap) where the output takes
  // octets, else one flat string, not an array of lines.
  const ordered = o.lineBuffered ? null : new CaptureOrder<string | Uint8Array>((v) => block.line(v));
  const slab = ordered && block.takesBytes ? new Utf8Slab() : null;
  const groupLines: string[] = [];
  const eventLine = (s: string): void => {
    groupLines.push(s);
  };
  if (fieldsFmt?.header) line(fieldsOut!.fieldsHeader(fieldsFmt));

  const stdin = o.capture === '-';
  // A pipe given by name (a FIFO, /dev/fd/N) cannot be read twice either: keep copies as for stdin.
  // A gzip file is read through the decompressor, so frames cannot be read back by offset either.
  const stream = stdin || o.live !== undefined || !isRegularFile(o.capture) || isGzipFile(o.capture);
  let store: FrameStore | null = null;
  // Live, -w writes every captured packet (the hooks do), not the frames behind findings.
  const exportFrames = o.write !== null && !o.live;
  if (o.hex || exportFrames) {
    const { FileFrames, WindowFrames } = await import('../src/report/frame-store.js');
    store = stream ? new WindowFrames() : await FileFrames.open(o.capture);
  }
  const exportMod = exportFrames && store ? await import('../src/report/pcap-export.js') : null;
  const exporter = exportMod && store ? new exportMod.FrameExport(store, stream) : null;
  // tshark takes an empty -Y as no filter: `-Y '' -w FILE` writes every frame, as tshark does.
  if (exporter && writeFilter === null && o.writeFilter === null && o.displayFilter?.trim() === '')
    exporter.selectEvery();
  const writePcapng = o.write !== null && o.writeFormat === 'pcapng' ? o.write : null;
  const annotated =
    o.annotate || writePcapng ? (await import('./annotate.js')).AnnotateOutputs.forRun(o, writePcapng, stream) : null;

  const flows = new Map<number, { client: string; server: string }>();
  // Per-frame facts (frame.time*, tcp.seq, ...) cost a second TCP header decode per packet: only
  // when -T fields or a filter names one of them (the module itself only when there is one).
  const factsMod =
    fieldsFmt || o.displayFilter !== null || o.writeFilter !== null
      ? await import('../src/report/frame-facts.js')
      : null;
  const wantsFacts =
    factsMod !== null &&
    ((fieldsFmt?.fields.some((x) => factsMod.isFrameFact(x.abbrev)) ?? false) ||
      [o.displayFilter, o.writeFilter].some((t) => t !== null && factsMod.namesFrameFact(t)));
  const facts: FrameFacts | null = wantsFacts ? new factsMod.FrameFacts(o.relativeSeq !== false) : null;
  const fields =
    display || writeFilter || fieldsFmt
      ? new (await import('../src/report/fields.js')).EventFields((flow, from) => {
          const fl = flow === null ? undefined : flows.get(flow);
          if (!fl || from === null) return null;
          return from === fl.client ? fl.server : from === fl.server ? fl.client : null;
        }, facts)
      : null;

  /** Time of the last packet: what a request never answered had waited until. */
  let lastPacketTime = Number.NaN;
  const clock = new EventClock(o.timeFormat ?? 'r');
  // Relative sequence numbers (Wireshark's default) from each direction's base, learned from its records.
  // Always learned: --ndjson gives seqRelative beside seq whatever -o says.
  const bases = new SeqBases();
  const textRelative = o.relativeSeq !== false;

  const upperInfo = (u: unknown): string | null => defaultUpper?.summarize?.(u) ?? null;
  const matches = (f: CompiledFilter | null, get: FieldGetter | null): boolean =>
    f === null || (get !== null && f.matches(get));

  /** A finding's relative base: its record's when it is about it, else its direction's as learned. */
  const baseOf = (f: Finding, rec: EventGroup['record'], learned: number | null): number | null =>
    rec !== null && f.flow === rec.flow && f.from === rec.from && learned !== null
      ? learned
      : bases.base(f.flow, f.from);

  let packets = 0;
  const onGroup = (g: EventGroup): void => {
    // An unreadable capture is said once, by the error line at the end.
    if (packets === 0 && g.record === null && g.findings.every(isCaptureFinding)) return;
    const got = fields ? fields.group(g) : null;
    const rec = g.record;
    // Learned from every record, shown or not, so later findings of its direction are relative too.
    const learned = rec ? bases.learn(rec) : null;
    // undefined: absolute numbers in the text (-o tcp.relative_sequence_numbers:FALSE).
    const recBase = textRelative && rec ? learned : undefined;
    if (rec && isStartup(rec)) exporter?.noteStartup(rec.flow, rec.frames);
    if (exporter) {
      if (writeFilter) {
        if (rec && matches(writeFilter, got!.record)) exporter.select(rec.flow, rec.frames);
        g.findings.forEach((f, i) => {
          if (matches(writeFilter, got!.findings[i]!)) exporter.select(f.flow, f.frames);
        });
      } else if (display) {
        // -Y without --write-filter: the frames of what -Y displays, as tshark -Y -w writes.
        if (rec && matches(display, got!.record)) exporter.select(null, rec.frames);
        g.findings.forEach((f, i) => {
          if (!isCaptureFinding(f) && matches(display, got!.findings[i]!)) exporter.select(null, f.frames);
        });
      } else {
        // Default: the frames involved in findings (and the record each was raised on).
        if (rec && g.findings.length) exporter.select(rec.flow, rec.frames);
        for (const f of g.findings) exporter.select(f.flow, f.frames);
      }
    }
    if (!eventLines) return;
    const shownRec = rec !== null && matches(display, got ? got.record : null) ? rec : null;
    // Without -Y every finding is shown: no index arrays per group (a million findings, a million groups).
    let shownIdx: readonly number[];
    let shown: readonly Finding[];
    if (display === null) {
      shownIdx = fieldsFmt ? g.findings.map((_, i) => i) : NO_INDEXES;
      shown = g.findings;
    } else {
      const idx: number[] = [];
      g.findings.forEach((_, i) => {
        if (matches(display, got ? got.findings[i]! : null)) idx.push(i);
      });
      shownIdx = idx;
      shown = idx.map((i) => g.findings[i]!);
    }
    groupLines.length = 0;
    if (fieldsFmt) {
      // One row per record, its findings aggregated in it (as tshark shows a packet's expert infos in
      // its row), so counting rows counts records; a finding about no record is a row of its own.
      if (rec) {
        if (shownRec || shownIdx.length > 0) eventLine(fieldsOut!.fieldsRow(fieldsFmt, got!.record!));
      } else
        for (const i of shownIdx)
          if (!isCaptureFinding(g.findings[i]!)) eventLine(fieldsOut!.fieldsRow(fieldsFmt, got!.findings[i]!));
    } else if (ndjson) {
      if (shownRec)
        eventLine(
          JSON.stringify(
            isFpdu(shownRec)
              ? ndjson.fpduEvent(shownRec)
              : isTuf(shownRec)
                ? ndjson.tufEvent(shownRec)
                : ndjson.startupEvent(shownRec),
          ),
        );
      for (const f of shown) eventLine(ndjson.findingEventLine(f, baseOf(f, rec, learned)));
    } else {
      // Only for a line shown: -t dd counts from the previous line displayed.
      // A record's time is its last frame's, as tshark's (the packet that completed it), also when
      // MPA handed it on later, after finding framing again.
      const last = shownRec ? shownRec.frames[shownRec.frames.length - 1] : undefined;
      const own = last !== undefined && clock.knows(last);
      const time = shownRec
        ? own
          ? clock.text(clock.secOf(last), clock.nsecOf(last), last)
          : clock.text(g.tsSec, g.tsNsec, g.atFrame ?? 0)
        : '';
      if (shownRec)
        eventLine(
          isFpdu(shownRec)
            ? fpduLine(shownRec, upperInfo(shownRec.upper), time, st, recBase)
            : isTuf(shownRec)
              ? tufLine(shownRec, time, st, recBase)
              : startupLine(shownRec, time, st),
        );
      for (const f of shown)
        if (!quietRules.has(f.rule) && !isCaptureFinding(f))
          eventLine(findingLine(f, st, textRelative ? baseOf(f, rec, learned) : undefined));
      if (shownRec && (o.verbose || o.hex)) {
        if (trees) {
          for (const l of trees.treeLines([trees.tcpNode(shownRec, recBase ?? undefined)])) eventLine(l);
          for (const l of trees.treeLines(trees.recordTree(shownRec))) eventLine(l);
        }
        if (hexdump && store) for (const l of hexdump.recordDump(shownRec, store, st)) eventLine(l);
        eventLine('');
      }
    }
    if (groupLines.length === 0) return;
    if (ordered)
      ordered.push(
        groupFrame(g),
        slab ? slab.encodeLines(groupLines) : groupLines.length === 1 ? groupLines[0]! : groupLines.join('\n'),
      );
    else {
      groupLines.forEach(line);
      flush();
    }
  };

  const assembler = needEvents ? new EventAssembler(onGroup, o.lineBuffered) : null;
  const sizes: FpduSizes | null = statsMod && o.stats.includes('fpdu-sizes') ? new statsMod.FpduSizes() : null;

  let progress: Progress | null = null;
  // A .gz file: the bar follows its compressed octets read, so it has a total as a plain file has.
  const compressed = o.progress && !stdin && isGzipFile(o.capture) ? { read: 0 } : null;
  let empty = 0;
  if (o.progress) {
    let total: number | null = null;
    if (!stdin) {
      try {
        total = statSync(o.capture).size;
      } catch {
        total = null;
      }
    }
    progress = new (await import('../src/report/progress.js')).Progress(io.err, total);
  }

  let countEmpty = true;
  const onPacket = (p: PacketRecord): void => {
    packets++;
    clock.packet(p.frame, p.tsSec, p.tsNsec);
    facts?.note(p);
    lastPacketTime = p.tsSec + p.tsNsec / 1e9;
    assembler?.time(p.tsSec, p.tsNsec, p.frame);
    store?.note(p);
    exporter?.note(p);
    progress?.tick(compressed ? compressed.read : p.fileOffset, p.frame);
    // Counted where the bytes reach this callback (with --threads they may not: opts.packetData).
    if (countEmpty && p.data.length === 0) empty++;
    html?.packet(p);
  };

  // Service response times: for -z ...,srt and for the JSON report's ulp.srt.
  // The latency collector holds the SRT one and adds histograms, phases, queues, never-answered requests.
  const srtMod = (o.srt?.length ?? 0) > 0 || o.json || html ? await import('../src/report/srt.js') : null;
  const latMod = srtMod ? await import('../src/report/latency.js') : null;
  const latency = latMod ? new latMod.LatencyCollector() : null;
  const srt = latency?.srt ?? null;
  const opts: AnalysisOptions = {
    forced,
    forcedTuf,
    upper: defaultUpper,
    ulp: { overrides: o.ulp ?? [] },
    ...(latency ? { onRequestTiming: latency.add } : {}),
    decoder: { checksums: o.checksums },
    ...(o.reassembly ? { reassembly: o.reassembly } : {}),
    rules: config?.overrides ?? null,
    onPacket,
    ...(fields ? { onFlow: (h) => flows.set(h.id, { client: h.client, server: h.server }) } : {}),
    ...(assembler
      ? {
          onStartup: (s) => assembler.record(s),
          onFpdu: (f) => {
            sizes?.add(f);
            assembler.record(f);
          },
          onTuf: (t) => assembler.record(t),
          onFinding: (f) => assembler.finding(f),
        }
      : sizes
        ? { onFpdu: (f) => sizes.add(f) }
        : {}),
  };
  if (html) {
    opts.onStartup = also(opts.onStartup, html.startup);
    opts.onFpdu = also(opts.onFpdu, html.fpdu);
    opts.onFinding = also(opts.onFinding, html.finding);
  }
  if (o.maxPackets !== undefined) opts.maxPackets = o.maxPackets;
  opts.threads = o.live ? 1 : (o.threads ?? defaultThreads(o.capture, stream));
  if (compressed) opts.compressed = compressed;
  // Upper layers above RDMAP run on one thread (their records and request timings are not carried
  // back from workers): said once when --threads asked for more, instead of silently ignoring it.
  if (o.threads !== undefined && o.threads > 1 && !o.live && !ulpAllOff({ overrides: o.ulp ?? [] }))
    io.err(
      `mpa-dissect: --threads ${o.threads}: upper layers above RDMAP (SMB Direct, RPC-over-RDMA) are decoded on one thread, so this run uses one; --ulp flow=all,proto=none lets --threads apply\n`,
    );
  // A WindowFrames, the frame facts and -w's connection map are the readers of packet bytes in
  // onPacket; and a gzip capture, whose empty records are counted (a small file can inflate to
  // millions of them).
  const gz = !stdin && isGzipFile(o.capture);
  opts.packetData = (store !== null && stream) || facts !== null || exporter !== null || gz;
  countEmpty = opts.packetData || (o.threads ?? 1) <= 1;
  annotated?.attach(opts, o.live); // packets and findings to the pcapng outputs (cli/annotate.ts)
  // Live: flows finished by --flow-timeout stream out as NDJSON `flow` events (once each).
  const flowsOut = new Set<number>();
  o.live?.wrap(opts, (f) => {
    if (!o.ndjson) return;
    flowsOut.add(f.tcp.id);
    line(JSON.stringify({ type: 'flow', ...flowJson(f) }));
    if (o.lineBuffered) flush();
  });
  let r: AnalysisResult;
  try {
    r = await analyze(o.capture, opts);
  } catch (e) {
    annotated?.closeStreams(null); // what was written stays a valid file
    throw e;
  } finally {
    progress?.done();
    o.live?.end();
  }

  const notes = forcedNotes(
    forced,
    forcedTuf,
    r.flows.map((f) => f.tcp),
  );
  for (const w of r.capture.warnings ?? [])
    notes.push(`mpa-dissect: warning: ${printable(`${o.capture === '-' ? '<stdin>' : o.capture}: ${w}`)}\n`);
  // Millions of records without a captured octet (a .gz of empty records) take minutes: say so.
  if (empty >= 1000)
    notes.push(
      `mpa-dissect: ${printable(o.capture)}: ${empty} of ${packets} records were empty (no captured octets)\n`,
    );
  for (const n of notes) io.err(n);

  // Thresholds are judged on the totals, then reported like any finding (they stream last).
  for (const [id, input] of thresholdFindings(r, config?.thresholds ?? NO_THRESHOLDS)) {
    r.findings.report(id, input); // streams to the event outputs through the collector's listener
  }
  assembler?.end();
  ordered?.drain();
  annotated?.closeStreams(io);
  o.onAnalysis?.(r);

  // A file that is no capture (empty, another format, unreadable at its first record): one line,
  // exit 2, and no empty report after it.
  const capErr = r.capture.error;
  const errLine = capErr
    ? `mpa-dissect: ${printable(`${capErr.file}: offset ${capErr.offset}, frame ${capErr.frame}: ${capErr.message}`)}\n`
    : '';
  if (capErr && r.capture.packets === 0) {
    flush();
    store?.close();
    // `mpa-dissect` in a CI step that forgot its argument reads an empty standard input: say why.
    const why =
      o.implicitStdin === true && capErr.offset === 0
        ? ' (no capture was named, so standard input was read: name a capture file)'
        : '';
    io.err(errLine.replace(/\n$/, `${why}\n`));
    await writeHtml(o, r, html, 2);
    return 2;
  }

  if (srt) r.srt = srt.rows();
  if (latency) {
    latency.end(lastPacketTime);
    if (latency.answeredCount() + latency.unansweredCount() > 0) r.latency = latency.report();
  }
  const statsBlock = o.stats.map((n) => statsMod!.statsText(n, r, sizes));
  if (srt && srtMod && latency && latMod)
    for (const q of o.srt ?? []) {
      const table = srtMod.srtText(q, srt) + latMod.unansweredText(latency, srtMod.srtProgram(q));
      statsBlock.push(table.replace(/^\n/, '').replace(/\n$/, ''));
    }
  if (o.json) {
    writeReport(r, (s) => io.out(s)); // flow by flow: the document is never whole in memory
  } else if (ndjson) {
    for (const e of ndjson.closingEvents(buildReport(r, r.flows, false)))
      if (e['type'] !== 'flow' || !flowsOut.has(e['id'] as number)) line(JSON.stringify(e));
    flush();
  } else if (fieldsFmt) {
    flush();
    for (const s of statsBlock) io.out(`\n${s}\n`);
  } else if (statsOnly) {
    flush();
    io.out(statsBlock.join('\n\n') + '\n');
  } else {
    flush();
    io.out(`${o.quiet ? '' : '\n'}${summaryText(r, st, { wide: o.wide === true })}\n`);
    for (const s of statsBlock) io.out(`\n${s}\n`);
  }
  // With a JSON form on standard output, human tables go to stderr so the JSON stays parseable.
  if (o.json || o.ndjson) for (const s of statsBlock) io.err(`${s}\n\n`);

  if (o.junit !== null) await writeJUnit(o, r, (Date.now() - started) / 1000);
  await annotated?.finish(r, exporter, io);
  if (exporter && o.write !== null && writePcapng === null) {
    let res;
    try {
      res = exporter.write(o.write);
    } catch (e) {
      throw new OutputError(`-w ${o.write}: cannot write: ${writeReason(e)}`);
    }
    const notes: string[] = [];
    if (res.missing)
      notes.push(
        `${plural(res.missing, 'selected frame was', 'selected frames were')} no longer available${stream ? ' (a stream keeps only its recent frames)' : ''}`,
      );
    if (res.otherLinkType) notes.push(`${plural(res.otherLinkType, 'frame')} of another link type left out`);
    if (res.partialFlows)
      notes.push(
        `${plural(res.partialFlows, 'connection')} over ${exportMod!.CONTEXT_BYTES >> 20} MiB before its last selected frame: only the frames behind its findings and its startup frames written, so a re-analysis may not show them the same way`,
      );
    if (notes.length) io.err(`mpa-dissect: -w ${o.write}: ${notes.join('; ')}\n`);
  }
  store?.close();

  let code = failed(r, o.failOn) ? 1 : 0;
  if (capErr) {
    io.err(errLine);
    // tshark exits 2 on a capture it could not read to the end; a gate must not pass on half a capture.
    // --allow-truncated accepts a capture stopped mid-record (Ctrl-C), judging it by its findings.
    if (!(o.allowTruncated === true && readErrorRule(capErr) === 'capture.truncated')) code = 2;
  }
  await writeHtml(o, r, html, code);
  return code;
}

/** Both callbacks, the first one first (the HTML sink added beside the other outputs). */
function also<T>(first: ((x: T) => void) | undefined, second: (x: T) => void): (x: T) => void {
  if (!first) return second;
  return (x) => {
    first(x);
    second(x);
  };
}

/** The HTML page (--html) or its data (a multi-capture run's onHtml), with the exit status in words. */
async function writeHtml(
  o: RunOptions,
  r: AnalysisResult,
  html: import('../src/report/html/collect.js').HtmlCollector | null,
  code: number,
): Promise<void> {
  if (!html) return;
  const { exitWhy } = await import('../src/report/html/collect.js');
  const c = r.capture.error;
  const capErr = c ? `${c.file}: offset ${c.offset}, frame ${c.frame}: ${c.message}` : null;
  const view = html.view(r, { code, why: exitWhy(code, r, o.failOn, capErr) }, o.live !== undefined);
  o.onHtml?.(view);
  if (!o.html) return;
  const { htmlPage } = await import('../src/report/html/page.js');
  const page = htmlPage([view], { exit: view.exit, tool: `${TOOL.name} ${TOOL.version}`, generated: new Date() });
  writeFileOrFail(o.html, '--html', page);
}

async function writeJUnit(o: RunOptions, r: AnalysisResult, seconds: number): Promise<void> {
  const { buildJUnit } = await import('../src/report/junit.js');
  const { allRules } = await import('../src/analysis/rules-catalog.js');
  const xml = buildJUnit({
    timeSeconds: seconds,
    captureName: o.capture === '-' ? '<stdin>' : o.capture,
    flows: r.flows.map((f) => ({ id: f.tcp.id, name: `stream ${f.tcp.id - 1} ${f.tcp.client} -> ${f.tcp.server}` })),
    rules: allRules(),
    findings: r.findings.findings,
    failOn: o.failOn,
    disabled: allRules()
      .filter((x) => !r.findings.enabled(x.id))
      .map((x) => x.id),
  });
  writeFileOrFail(o.junit!, '--junit', xml);
}
