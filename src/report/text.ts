import { SEVERITY_RANK, type Finding, type RuleDef, type Severity } from '../vocabulary/findings.js';
import { RULES } from '../analysis/rules-catalog.js';
import type { AnalysisResult } from '../analysis/pipeline.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import { lengthFieldOf } from '../../dissectors/mpa/framer.js';
import type { FieldDef } from '../vocabulary/fields.js';
import type { TufRecord } from '../../dissectors/tuf/types.js';
import { printable } from './printable.js';
import { compareRuleIds } from './rule-order.js';

/** ANSI colours, only when the output is a terminal and NO_COLOR is unset. */
export interface Style {
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  magenta(s: string): string;
  cyan(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

export function makeStyle(color: boolean): Style {
  const w = (a: number, b: number) => (s: string) => (color ? `\x1b[${a}m${s}\x1b[${b}m` : s);
  return {
    red: w(31, 39),
    yellow: w(33, 39),
    green: w(32, 39),
    magenta: w(35, 39),
    cyan: w(36, 39),
    dim: w(2, 22),
    bold: w(1, 22),
  };
}

const ANSI = /\x1b\[[0-9;]*m/g;

function visible(s: string): number {
  return s.replace(ANSI, '').length;
}

function pad(s: string, n: number): string {
  const v = visible(s);
  return v >= n ? s : ' '.repeat(n - v) + s;
}

function padEnd(s: string, n: number): string {
  const v = visible(s);
  return v >= n ? s : s + ' '.repeat(n - v);
}

/** Columns padded to their widest cell; `right` marks columns aligned right (numbers). */
export function table(rows: string[][], right: readonly boolean[] = []): string {
  // Widths by a loop, not Math.max(...column): a spread of 100,000+ rows overflows the stack.
  const w = rows[0]!.map(() => 0);
  for (const r of rows) {
    for (let i = 0; i < w.length; i++) {
      const v = visible(r[i] ?? '');
      if (v > w[i]!) w[i] = v;
    }
  }
  let out = '';
  for (let k = 0; k < rows.length; k++) {
    if (k > 0) out += '\n';
    out += rows[k]!.map((c, i) => (right[i] ? pad(c, w[i]!) : padEnd(c, w[i]!)))
      .join('  ')
      .trimEnd();
  }
  return out;
}

/** Every line of `text` at most `max` columns wide (without splitting it into an array of lines). */
function fits(text: string, max: number): boolean {
  for (let from = 0; from <= text.length; ) {
    const nl = text.indexOf('\n', from);
    const end = nl < 0 ? text.length : nl;
    if (end - from > max && visible(text.slice(from, end)) > max) return false;
    from = end + 1;
  }
  return true;
}

/** "1 TCP flow", "2 TCP flows": a count with its noun, singular for one. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The flow number users see: Wireshark's tcp.stream, counted from 0 (our flow ids count from 1). */
export function streamNumber(flowId: number): number {
  return flowId - 1;
}

function framesCol(frames: readonly number[]): string {
  return frames.length > 1 ? `${frames[0]}-${frames[frames.length - 1]}` : String(frames[0] ?? '');
}

/** The columns every event line starts with: frames (as tshark's No.), time, endpoints. */
function lead(frames: readonly number[], time: string, from: string, to: string): string {
  return `${pad(framesCol(frames), 6)}  ${pad(time, 10)}  ${from} → ${to}  `;
}

/**
 * A sequence number as the event lines show it: absolute (`base` undefined, -o
 * tcp.relative_sequence_numbers:FALSE), relative to its direction's base as Wireshark shows it
 * (src/report/relative-seq.ts), or absolute and marked so when the base is not known yet (null).
 */
export function seqText(seq: number, base: number | null | undefined): string {
  if (base === undefined) return String(seq);
  if (base === null) return `${seq} (absolute)`;
  return String((seq - base) >>> 0);
}

export function startupLine(r: StartupRecord, time: string, st: Style): string {
  const what = r.kind === 'request' ? 'MPA Request' : 'MPA Reply';
  const flags = `M=${+r.m} C=${+r.c} R=${+r.r}${r.enhanced ? ' enhanced' : ''}${r.res ? ` Res=0x${r.res.toString(16)}` : ''}`;
  const e = r.enhancedBlock;
  const v2 = e
    ? ` IRD=${e.ird} ORD=${e.ord}${e.p2p ? ' P2P' : ''}${e.rtr.send ? ' RTR:send' : ''}${e.rtr.write ? ' RTR:write' : ''}${e.rtr.read ? ' RTR:read' : ''}`
    : '';
  return `${lead(r.frames, time, r.from, r.to)}${what} Rev ${r.rev} ${flags} PD_Length ${r.pdLength}${v2}${r.keyOk ? '' : st.red(' [bad key]')}`;
}

export function fpduLine(
  r: FpduRecord,
  upper: string | null,
  time: string,
  st: Style,
  seqBase?: number | null,
): string {
  const crc =
    r.crcStatus === 'unchecked'
      ? 'CRC n/a'
      : r.crcStatus === 'not-captured'
        ? 'CRC not captured'
        : r.crcStatus === 'good'
          ? 'CRC ok'
          : r.crcStatus === 'byte-swapped'
            ? st.red('CRC BYTE-SWAPPED')
            : st.red('CRC BAD');
  const m = r.markers.length ? ` markers=${r.markers.length}` : '';
  // len= is the ULPDU_Length field as sent; a diagnosed length mistake's framed length follows.
  const field = lengthFieldOf(r);
  const len = field === r.ulpduLength ? `${field}` : `${field} [framed ${r.ulpduLength}]`;
  return `${lead(r.frames, time, r.from, r.to)}FPDU seq=${seqText(r.seq, seqBase)} len=${len}${m} ${crc}${r.afterError ? st.dim(' [after error]') : ''}${upper ? `  ${upper}` : ''}`;
}

/** A TUF framing PDU (alignment mode) or marker-delimited PDU (marker mode). */
export function tufLine(r: TufRecord, time: string, st: Style, seqBase?: number | null): string {
  if (r.mode === 'alignment') {
    const key = r.keyOk ? `key=0x${r.key}` : st.red(`key=0x${r.key} [second key]`);
    const fit = r.aligned ? 'aligned' : st.yellow(`unaligned (${r.segments} segment${r.segments === 1 ? '' : 's'})`);
    return `${lead(r.frames, time, r.from, r.to)}TUF framing PDU seq=${seqText(r.seq, seqBase)} len=${r.length} ${key} ${fit}`;
  }
  const bad = r.markers.some((m) => m.npo !== m.npo2);
  const split = r.markers.filter((m) => m.split).length;
  return `${lead(r.frames, time, r.from, r.to)}TUF PDU seq=${seqText((r.seq + (r.pduStart - r.start)) >>> 0, seqBase)} len=${r.length} markers=${r.markers.length}${split ? ` (${split} split)` : ''}${bad ? st.red(' [marker copies differ]') : ''}`;
}

function severityText(s: Severity, st: Style): string {
  return s === 'error' ? st.red('error  ') : s === 'warning' ? st.yellow('warning') : st.dim('info   ');
}

export function findingLine(f: Finding, st: Style, seqBase?: number | null): string {
  const where = f.flow !== null ? ` stream ${streamNumber(f.flow)}` : '';
  const frames = f.frames.length ? ` frames ${compactFrames(f.frames)}` : '';
  const seq = f.seq !== null ? ` seq ${seqText(f.seq, seqBase)}` : '';
  const code = f.rfcErrorCode !== null ? ` [MPA error ${f.rfcErrorCode}]` : '';
  return `        ${severityText(f.severity, st)} ${f.rule}${code}${where}${frames}${seq}: ${f.message}`;
}

function compactFrames(fr: readonly number[]): string {
  if (fr.length <= 4) return fr.join(',');
  return `${fr[0]},${fr[1]},…,${fr[fr.length - 1]} (${fr.length})`;
}

function pct(a: number, b: number): string {
  return b === 0 ? '-' : `${Math.round((100 * a) / b)}%`;
}

/** Shortens an address:port to `max` characters by eliding the middle of the address (long IPv6). */
function shortEndpoint(ep: string, max: number): string {
  if (ep.length <= max) return ep;
  const i = ep.lastIndexOf(':');
  const port = ep.slice(i);
  const addr = ep.slice(0, i);
  const keep = Math.max(4, max - port.length - 1);
  const head = Math.ceil(keep / 2);
  return `${addr.slice(0, head)}…${addr.slice(addr.length - (keep - head))}${port}`;
}

export interface FlowTableOptions {
  /** Every column (--wide); by default the table fits 100 columns and leaves to -z conv what it shows. */
  wide?: boolean;
}

/**
 * Per-flow table. By default it fits 100 columns: stream (Wireshark's tcp.stream), endpoints, how
 * MPA was found and its Rev, markers and CRC per direction, FPDUs, errors/warnings, how each
 * direction closed. Frames, bytes, gaps and alignment are in --wide (and -z conv, -z alignment).
 */
export function flowTable(r: AnalysisResult, st: Style, opts: FlowTableOptions = {}): string {
  return opts.wide === true ? wideFlowTable(r, st) : compactFlowTable(r, st);
}

function findingCounts(r: AnalysisResult): { errors: Map<number, number>; warnings: Map<number, number> } {
  const errors = new Map<number, number>();
  const warnings = new Map<number, number>();
  for (const x of r.findings.findings) {
    if (x.flow === null) continue;
    if (x.severity === 'error') errors.set(x.flow, (errors.get(x.flow) ?? 0) + 1);
    else if (x.severity === 'warning') warnings.set(x.flow, (warnings.get(x.flow) ?? 0) + 1);
  }
  return { errors, warnings };
}

/** How MPA was found, short: its Rev when startup frames were seen, else how framing was found. */
/** What the MPA column says of a TUF flow (a flow is one or the other). */
function tufShort(t: NonNullable<AnalysisResult['flows'][number]['tuf']>): string {
  return t.mode === 'alignment' ? 'TUF align' : 'TUF mark';
}

/** A TUF flow's counts per direction: framing PDUs (alignment) or PDUs (markers). */
function tufCounts(t: NonNullable<AnalysisResult['flows'][number]['tuf']>): string {
  return t.directions.map((d) => String((t.mode === 'alignment' ? d.framingPdus : d.pdus) ?? 0)).join('/');
}

/** Alignment: the direction's key found or not; markers: the interval. */
function tufMarkers(t: NonNullable<AnalysisResult['flows'][number]['tuf']>): string {
  return t.mode === 'alignment'
    ? '-'
    : t.directions.map((d) => (d.interval !== null ? String(d.interval) : 'off')).join('/');
}

function mpaShort(m: NonNullable<AnalysisResult['flows'][number]['mpa']>): string {
  const rev = m.reply?.rev ?? m.request?.rev ?? null;
  if (m.detection === 'startup') return rev !== null ? `Rev ${rev}` : 'startup';
  if (m.detection === 'prestandard') return 'pre-std';
  return m.detection === 'heuristic' ? 'mid-strm' : 'forced';
}

const FIT = 100;

function compactFlowTable(r: AnalysisResult, st: Style): string {
  // Endpoints are shortened (the middle of long addresses elided) until the table fits 100 columns.
  let text = '';
  for (const max of [40, 30, 24, 20, 16, 12]) {
    text = compactRows(r, st, max);
    if (fits(text, FIT)) break;
  }
  const note = st.dim('a/b: client→server/server→client. --wide: frames, bytes, alignment, gaps (also -z conv).');
  return `${text}\n${note}`;
}

/**
 * The compact table, as table() lays it out, built row by row without holding every row's cells:
 * one pass for the column widths, one for the text (100,000 flows: the cells would be tens of MB).
 */
function compactRows(r: AnalysisResult, st: Style, endpointMax: number): string {
  const counts = findingCounts(r);
  const head = ['Stream', 'Client → Server', 'MPA', 'Markers', 'CRC', 'FPDUs', 'Err/Warn', 'Closed'];
  const right = [true, false, false, false, false, false, false, false];
  const w = head.map(visible);
  for (const f of r.flows) {
    const c = compactRow(f, st, endpointMax, counts);
    for (let i = 0; i < w.length; i++) {
      const v = visible(c[i] ?? '');
      if (v > w[i]!) w[i] = v;
    }
  }
  const line = (c: readonly string[]) =>
    c
      .map((x, i) => (right[i] ? pad(x, w[i]!) : padEnd(x, w[i]!)))
      .join('  ')
      .trimEnd();
  let out = line(head);
  for (const f of r.flows) out += '\n' + line(compactRow(f, st, endpointMax, counts));
  return out;
}

/** How the flow tables say a direction's markers (on/off) and CRC (ok, N bad, off; ? before negotiation). */
function directionWords(
  m: AnalysisResult['flows'][number]['mpa'],
  st: Style,
): {
  onoff: (b: boolean | null) => string;
  crcDir: (d: { crcErrors: number; crcNotCaptured?: number; fpdus: number }) => string;
} {
  return {
    onoff: (b) => (b === null ? '?' : b ? 'on' : 'off'),
    // 'n/c': every FPDU's CRC was cut off by the snaplen, so none could be checked.
    crcDir: (d) =>
      !m || m.crc === null
        ? '?'
        : !m.crc
          ? 'off'
          : d.crcErrors
            ? st.red(`${d.crcErrors} bad`)
            : d.crcNotCaptured && d.crcNotCaptured === d.fpdus
              ? 'n/c'
              : 'ok',
  };
}

function compactRow(
  f: AnalysisResult['flows'][number],
  st: Style,
  endpointMax: number,
  { errors, warnings }: ReturnType<typeof findingCounts>,
): string[] {
  const t = f.tcp;
  const d = t.directions;
  const m = f.mpa;
  const tf = f.tuf;
  const { onoff, crcDir } = directionWords(m, st);
  const nErr = errors.get(t.id) ?? 0;
  const nWarn = warnings.get(t.id) ?? 0;
  return [
    String(streamNumber(t.id)),
    `${shortEndpoint(t.client, endpointMax)} → ${shortEndpoint(t.server, endpointMax)}`,
    m ? mpaShort(m) : tf ? tufShort(tf) : '-',
    m ? `${onoff(m.directions[0].markers)}/${onoff(m.directions[1].markers)}` : tf ? tufMarkers(tf) : '-',
    m ? `${crcDir(m.directions[0])}/${crcDir(m.directions[1])}` : '-',
    m ? `${m.directions[0].fpdus}/${m.directions[1].fpdus}` : tf ? tufCounts(tf) : '-',
    `${nErr ? st.red(String(nErr)) : '0'}/${nWarn ? st.yellow(String(nWarn)) : '0'}`,
    d.map((x) => x.closed ?? '-').join('/'),
  ];
}

/** Every column, however wide (--wide). */
function wideFlowTable(r: AnalysisResult, st: Style): string {
  const { errors, warnings } = findingCounts(r);
  const rows: string[][] = [
    [
      'Stream',
      'Client → Server',
      'Frames',
      'Bytes c→s/s→c',
      'MPA',
      'Rev',
      'Markers c→s/s→c',
      'CRC c→s/s→c',
      'FPDUs c→s/s→c',
      'Errors',
      'Warnings',
      'Aligned c→s/s→c',
      'Gaps',
      'Closed',
    ],
  ];
  for (const f of r.flows) {
    const t = f.tcp;
    const d = t.directions;
    const m = f.mpa;
    const tf = f.tuf;
    const { onoff, crcDir } = directionWords(m, st);
    const nErr = errors.get(t.id) ?? 0;
    const nWarn = warnings.get(t.id) ?? 0;
    rows.push([
      String(streamNumber(t.id)),
      `${t.client} → ${t.server}`,
      `${t.firstFrame}-${t.lastFrame}`,
      `${d[0].bytes}/${d[1].bytes}`,
      m ? m.detection : tf ? `${tufShort(tf)} (${tf.detection})` : '-',
      m ? String(m.reply?.rev ?? m.request?.rev ?? '?') : '-',
      m ? `${onoff(m.directions[0].markers)}/${onoff(m.directions[1].markers)}` : tf ? tufMarkers(tf) : '-',
      m ? `${crcDir(m.directions[0])}/${crcDir(m.directions[1])}` : '-',
      m ? `${m.directions[0].fpdus}/${m.directions[1].fpdus}` : tf ? tufCounts(tf) : '-',
      nErr ? st.red(String(nErr)) : '0',
      nWarn ? st.yellow(String(nWarn)) : '0',
      m
        ? m.directions.map((x) => pct(x.alignment.fpduAligned, x.alignment.segments)).join('/')
        : tf && tf.mode === 'alignment'
          ? tf.directions
              .map((x) => pct(x.alignedSegments ?? 0, (x.alignedSegments ?? 0) + (x.unalignedSegments ?? 0)))
              .join('/')
          : '-',
      String(d[0].gaps.length + d[1].gaps.length),
      d.map((x) => x.closed ?? '-').join('/'),
    ]);
  }
  return table(rows, [true, false, false, true, false, false, false, false, false, true, true, false, true, false]);
}

/** Findings by rule, most frequent first, with the severity in force for this run. */
export function findingsByRule(r: AnalysisResult, st: Style): string[] {
  const sevOf = (id: string): Severity => {
    const rule = RULES.get(id);
    return rule ? r.findings.severityOf(rule) : 'info';
  };
  return ruleCountLines(
    [...r.findings.byRule.entries()].map(([rule, count]) => ({ rule, severity: sevOf(rule), count })),
    st,
  );
}

/**
 * Lines of a findings-by-rule table: errors first, then warnings, then infos; the most frequent
 * first within each; the rule's one-line meaning from the catalog.
 */
export function ruleCountLines(
  rows: ReadonlyArray<{ rule: string; severity: Severity; count: number }>,
  st: Style,
): string[] {
  const byRule = [...rows].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.count - a.count || compareRuleIds(a.rule, b.rule),
  );
  if (byRule.length === 0) return ['  none'];
  let w = 0; // a loop, not Math.max(...): 150,000 rules (a merged report) overflow a spread's stack
  for (const x of byRule) if (printable(x.rule).length > w) w = printable(x.rule).length;
  return byRule.map(({ rule: id, severity, count }) => {
    const rule = RULES.get(id);
    return `  ${pad(String(count), 6)}  ${severityText(severity, st)}  ${printable(id).padEnd(w)}  ${rule?.summary ?? ''}`.trimEnd();
  });
}

/** The closing summary: flow table, findings by rule, totals. It always covers the whole capture. */
export function summaryText(r: AnalysisResult, st: Style, opts: FlowTableOptions = {}): string {
  const out: string[] = [
    st.bold('Flows'),
    r.flows.length ? flowTable(r, st, opts) : '  none',
    '',
    st.bold('Findings by rule'),
    ...findingsByRule(r, st),
    '',
  ];
  const s = r.findings.bySeverity;
  const omitted = r.findings.omitted ? ` (${r.findings.omitted} not kept in memory)` : '';
  out.push(
    `${plural(r.capture.packets, 'packet')}, ${plural(r.flows.length, 'TCP flow')}, ${r.flows.filter((f) => f.mpa).length} MPA${tufFlowCount(r)}; ` +
      `${plural(s.error, 'error')}, ${plural(s.warning, 'warning')}, ${plural(s.info, 'info')}${omitted}`,
  );
  return out.join('\n');
}

/** ", 1 TUF" after the MPA count, only when some flow carries TUF (the line is unchanged otherwise). */
function tufFlowCount(r: AnalysisResult): string {
  const n = r.flows.filter((f) => f.tuf).length;
  return n ? `, ${n} TUF` : '';
}

/** `mpa-dissect rules`: the catalog, with the severity in force when a rules file is given. */
export function rulesText(rules: readonly RuleDef[], inForce?: (r: RuleDef) => Severity | 'off'): string {
  const head = inForce
    ? ['Rule', 'Severity', 'In force', 'Code', 'Reference', 'Meaning']
    : ['Rule', 'Severity', 'Code', 'Reference', 'Meaning'];
  const rows: string[][] = [head];
  for (const r of rules) {
    const code = r.rfcErrorCode === null ? '-' : String(r.rfcErrorCode);
    rows.push(
      inForce
        ? [r.id, r.severity, inForce(r), code, r.ref ?? '-', r.summary]
        : [r.id, r.severity, code, r.ref ?? '-', r.summary],
    );
  }
  return table(rows);
}

/** `mpa-dissect fields`: every name a display filter can use (as tshark -G fields). */
export function fieldsText(fields: Iterable<FieldDef>): string {
  const rows: string[][] = [['Field', 'Type', 'Name', 'Description']];
  for (const f of fields) rows.push([f.abbrev, f.type, f.name, f.blurb]);
  return table(rows);
}
