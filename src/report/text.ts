import type { Finding } from '../analysis/findings.js';
import type { AnalysisResult } from '../analysis/pipeline.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import { RULES } from '../analysis/rules-catalog.js';

/** ANSI colours, only when the output is a terminal and NO_COLOR is unset. */
export interface Style {
  red(s: string): string;
  yellow(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
  cyan(s: string): string;
}

export function makeStyle(color: boolean): Style {
  const w = (a: number, b: number) => (s: string) => (color ? `\x1b[${a}m${s}\x1b[${b}m` : s);
  return { red: w(31, 39), yellow: w(33, 39), dim: w(2, 22), bold: w(1, 22), cyan: w(36, 39) };
}

export function startupLine(r: StartupRecord): string {
  const what = r.kind === 'request' ? 'MPA Request' : 'MPA Reply';
  const flags = `M=${+r.m} C=${+r.c} R=${+r.r}${r.enhanced ? ' enhanced' : ''}${r.res ? ` Res=0x${r.res.toString(16)}` : ''}`;
  const e = r.enhancedBlock;
  const v2 = e ? ` IRD=${e.ird} ORD=${e.ord}${e.p2p ? ' P2P' : ''}${e.rtr.send ? ' RTR:send' : ''}${e.rtr.write ? ' RTR:write' : ''}${e.rtr.read ? ' RTR:read' : ''}` : '';
  return `${pad(String(r.frame), 6)}  ${r.from} → ${r.to}  ${what} Rev ${r.rev} ${flags} PD_Length ${r.pdLength}${v2}${r.keyOk ? '' : ' [bad key]'}`;
}

export function fpduLine(r: FpduRecord, upper: string | null): string {
  const crc = r.crcStatus === 'unchecked' ? 'CRC n/a' : r.crcStatus === 'good' ? 'CRC ok' : r.crcStatus === 'byte-swapped' ? 'CRC BYTE-SWAPPED' : 'CRC BAD';
  const m = r.markers.length ? ` markers=${r.markers.length}` : '';
  const frames = r.frames.length > 1 ? `${r.frames[0]}-${r.frames[r.frames.length - 1]}` : String(r.frames[0] ?? '');
  return `${pad(frames, 6)}  ${r.from} → ${r.to}  FPDU seq=${r.seq} len=${r.ulpduLength}${m} ${crc}${r.afterError ? ' [after error]' : ''}${upper ? `  ${upper}` : ''}`;
}

export function findingLine(f: Finding, st: Style): string {
  const sev = f.severity === 'error' ? st.red('error  ') : f.severity === 'warning' ? st.yellow('warning') : st.dim('info   ');
  const where = f.flow !== null ? ` flow ${f.flow}` : '';
  const frames = f.frames.length ? ` frames ${compactFrames(f.frames)}` : '';
  const seq = f.seq !== null ? ` seq ${f.seq}` : '';
  const code = f.rfcErrorCode !== null ? ` [MPA error ${f.rfcErrorCode}]` : '';
  return `        ${sev} ${f.rule}${code}${where}${frames}${seq}: ${f.message}`;
}

function compactFrames(fr: readonly number[]): string {
  if (fr.length <= 4) return fr.join(',');
  return `${fr[0]},${fr[1]},…,${fr[fr.length - 1]} (${fr.length})`;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : ' '.repeat(n - s.length) + s;
}

function table(rows: string[][]): string {
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(w[i]!)).join('  ').trimEnd()).join('\n');
}

function pct(a: number, b: number): string {
  return b === 0 ? '-' : `${Math.round((100 * a) / b)}%`;
}

/** Per-flow summary table, then findings by rule. */
export function summaryText(r: AnalysisResult, st: Style): string {
  const out: string[] = [];
  const rows: string[][] = [['Flow', 'Client → Server', 'Frames', 'Bytes c→s', 'Bytes s→c', 'Gaps', 'Closed', 'MPA', 'Rev', 'Markers c→s/s→c', 'CRC', 'FPDUs c→s/s→c', 'Errors', 'Aligned c→s/s→c']];
  for (const f of r.flows) {
    const t = f.tcp;
    const d = t.directions;
    const m = f.mpa;
    const errors = r.findings.findings.filter((x) => x.flow === t.id && x.severity === 'error').length;
    const closed = d.map((x) => x.closed ?? '-').join('/');
    const onoff = (b: boolean | null) => (b === null ? '?' : b ? 'on' : 'off');
    rows.push([
      String(t.id),
      `${t.client} → ${t.server}`,
      `${t.firstFrame}-${t.lastFrame}`,
      String(d[0].bytes),
      String(d[1].bytes),
      String(d[0].gaps.length + d[1].gaps.length),
      closed,
      m ? m.detection : '-',
      m ? String(m.reply?.rev ?? m.request?.rev ?? '?') : '-',
      m ? `${onoff(m.directions[0].markers)}/${onoff(m.directions[1].markers)}` : '-',
      m ? onoff(m.crc) : '-',
      m ? `${m.directions[0].fpdus}/${m.directions[1].fpdus}` : '-',
      String(errors),
      m ? m.directions.map((x) => pct(x.alignment.fpduAligned, x.alignment.segments)).join('/') : '-',
    ]);
  }
  out.push(st.bold('Flows'));
  out.push(table(rows));
  const byRule = [...r.findings.byRule.entries()].sort((a, b) => b[1] - a[1]);
  out.push('');
  out.push(st.bold('Findings by rule'));
  if (byRule.length === 0) out.push('  none');
  for (const [id, n] of byRule) {
    const rule = RULES.get(id)!;
    const sev = r.findings.severityOf(rule);
    const sevS = sev === 'error' ? st.red(sev) : sev === 'warning' ? st.yellow(sev) : st.dim(sev);
    out.push(`  ${pad(String(n), 6)}  ${sevS.padEnd(7)}  ${id.padEnd(28)}  ${rule.summary}`);
  }
  const s = r.findings.bySeverity;
  out.push('');
  out.push(`${r.capture.packets} packets, ${r.flows.length} TCP flows, ${r.flows.filter((f) => f.mpa).length} MPA; ${s.error} errors, ${s.warning} warnings, ${s.info} infos`);
  return out.join('\n');
}

/** `mpa-dissect rules`: the catalog. */
export function rulesText(): string {
  const rows: string[][] = [['Rule', 'Severity', 'Code', 'Reference', 'Meaning']];
  for (const r of RULES.values()) rows.push([r.id, r.severity, r.rfcErrorCode === null ? '-' : String(r.rfcErrorCode), r.ref ?? '-', r.summary]);
  return table(rows);
}
