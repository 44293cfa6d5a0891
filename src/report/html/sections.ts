/**
 * One capture's part of the page, from its CaptureView: the verdict and facts, the flow table, the
 * findings by rule and by flow, the plots per MPA direction, the service response times.
 */
import { RULES } from '../../analysis/rules-catalog.js';
import { FPDU_LENGTH_BUCKETS, SPAN_LABELS } from './bins.js';
import { alongChart, barChart, COLORS, ladderChart, shareBars, timelineChart } from './charts.js';
import { esc, num, octets, seconds } from './escape.js';
import type { CaptureView, DirectionPlot, FindingView, FlowView } from './model.js';

const VERDICT_WORD: Readonly<Record<FlowView['verdict'], string>> = {
  error: 'errors',
  warning: 'warnings',
  ok: 'clean',
  'not-iwarp': 'not iWARP',
};

function td(text: string, sortValue?: number, cls = ''): string {
  return `<td${sortValue !== undefined ? ` data-v="${sortValue}"` : ''}${cls ? ` class="${cls}"` : ''}>${esc(text)}</td>`;
}

function facts(v: CaptureView): string {
  const rows: Array<[string, string]> = [
    ['Capture', v.path === '-' ? '<standard input>' : v.path],
    ['Format', v.live ? 'live capture' : (v.format ?? '-')],
    ['Packets', `${num(v.packets)} (${octets(v.bytes)})`],
    ['Duration', seconds(v.duration)],
    ['First packet', v.start === null ? '-' : new Date(v.start * 1000).toISOString()],
    ['Flows', `${num(v.summary.flows)} (${num(v.summary.mpaFlows)} MPA)`],
    ['FPDUs', num(v.summary.fpdus)],
    ['Findings', `${num(v.summary.errors)} errors, ${num(v.summary.warnings)} warnings, ${num(v.summary.infos)} info`],
  ];
  if (v.error) rows.push(['Read error', v.error]);
  return `<dl class="facts">${rows.map(([k, x]) => `<dt>${esc(k)}</dt><dd>${esc(x)}</dd>`).join('')}</dl>`;
}

function verdictBadge(v: CaptureView): string {
  const cls = v.exit.code === 0 ? 'ok' : v.exit.code === 1 ? 'error' : 'fatal';
  return `<p class="verdict ${cls}" data-exit="${v.exit.code}"><b>exit ${v.exit.code}</b> ${esc(v.exit.why)}</p>`;
}

function flowTable(v: CaptureView, id: string): string {
  const head = [
    'Stream',
    'Client',
    'Server',
    'MPA',
    'Markers',
    'CRC',
    'FPDUs',
    'Errors',
    'Warnings',
    'Closed',
    'Frames',
    'Upper layer',
    'Verdict',
  ];
  const rows = v.flows
    .map(
      (f) =>
        `<tr data-flow="${f.id}" class="v-${f.verdict}">${td(String(f.stream), f.stream)}${td(f.client)}${td(f.server)}${td(
          f.detection === 'startup' && f.rev !== null ? `Rev ${f.rev}` : f.detection || '-',
        )}${td(f.markers)}${td(f.crc)}${td(num(f.fpdus), f.fpdus)}${td(num(f.errors), f.errors)}${td(num(f.warnings), f.warnings)}${td(
          f.closed,
        )}${td(f.frames, Number(f.frames.split('-')[0]))}${td(f.upper || '-')}<td class="verdict-cell v-${f.verdict}" data-v="${
          f.verdict === 'error' ? 3 : f.verdict === 'warning' ? 2 : f.verdict === 'ok' ? 1 : 0
        }">${esc(VERDICT_WORD[f.verdict])}</td></tr>`,
    )
    .join('');
  const omitted = v.flowsOmitted
    ? `<p class="note">${num(v.flowsOmitted)} more flows not listed (the worst ${num(v.flows.length)} are; the --json report has them all).</p>`
    : '';
  return `<h3>Flows</h3><table class="sortable flows" id="${id}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>${omitted}`;
}

function rulesTable(v: CaptureView, id: string): string {
  if (v.rules.length === 0) return '<h3>Findings by rule</h3><p>No findings.</p>';
  const rows = v.rules
    .map(
      (r) =>
        `<tr class="rule sev-${r.severity}" data-rule="${esc(r.rule)}">${td(r.rule)}<td class="sev sev-${r.severity}" data-v="${
          r.severity === 'error' ? 2 : r.severity === 'warning' ? 1 : 0
        }">${esc(r.severity)}</td>${td(num(r.count), r.count)}${td(r.ref ?? '-')}${td(r.code === null ? '-' : String(r.code), r.code ?? -1)}${td(r.summary)}</tr>`,
    )
    .join('');
  return `<h3>Findings by rule</h3><table class="sortable rules" id="${id}"><thead><tr><th>Rule</th><th>Severity</th><th>Count</th><th>Reference</th><th>MPA error code</th><th>Meaning</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function findingRow(f: FindingView): string {
  const frames = f.frames.length ? f.frames.join(', ') : '-';
  return `<tr class="finding" data-sev="${f.severity}" data-rule="${esc(f.rule)}"><td class="sev sev-${f.severity}" data-v="${
    f.severity === 'error' ? 2 : f.severity === 'warning' ? 1 : 0
  }">${esc(f.severity)}</td>${td(f.rule)}${td(frames, f.frames[0] ?? 0)}${td(f.seq === null ? '-' : String(f.seq), f.seq ?? -1)}${td(
    seconds(f.time),
    f.time,
  )}${td(f.from ?? '-')}${td(RULES.get(f.rule)?.ref ?? '-')}${td(f.message, undefined, 'msg')}</tr>`;
}

function findingsByFlow(v: CaptureView, id: string, flowName: (flow: number | null) => string): string {
  if (v.findings.length === 0) return '';
  const groups = new Map<number | null, FindingView[]>();
  for (const f of v.findings) {
    const g = groups.get(f.flow);
    if (g) g.push(f);
    else groups.set(f.flow, [f]);
  }
  const order = [...groups.keys()].sort((a, b) => (a ?? -1) - (b ?? -1));
  const head =
    '<thead><tr><th>Severity</th><th>Rule</th><th>Frames</th><th>Seq</th><th>Time</th><th>From</th><th>Reference</th><th>Message</th></tr></thead>';
  const parts = order.map((flow) => {
    const list = groups.get(flow)!;
    const e = list.filter((f) => f.severity === 'error').length;
    const w = list.filter((f) => f.severity === 'warning').length;
    return `<details class="flowfindings" open data-flow="${flow ?? ''}"><summary>${esc(flowName(flow))}: ${num(e)} errors, ${num(w)} warnings, ${num(
      list.length - e - w,
    )} info</summary><table class="sortable findings">${head}<tbody>${list.map(findingRow).join('')}</tbody></table></details>`;
  });
  const omitted = v.findingsOmitted
    ? `<p class="note">${num(v.findingsOmitted)} more findings not listed (counted above; --json or --ndjson has them).</p>`
    : '';
  const filter = `<div class="sevfilter" data-scope="${id}"><b>Show:</b>${(['error', 'warning', 'info'] as const)
    .map((s) => `<label><input type="checkbox" value="${s}" checked> ${s}</label>`)
    .join('')}<span class="shown"></span></div>`;
  return `<h3>Findings by flow</h3>${filter}<div id="${id}">${parts.join('')}</div>${omitted}`;
}

function directionPlots(p: DirectionPlot): string {
  const sizeTips = FPDU_LENGTH_BUCKETS.map((lo, i) =>
    i === FPDU_LENGTH_BUCKETS.length - 1 ? `${lo}-65535` : `${lo}-${FPDU_LENGTH_BUCKETS[i + 1]! - 1}`,
  );
  const sizeLabels = FPDU_LENGTH_BUCKETS.map((lo) => (lo >= 1024 ? `${+(lo / 1024).toFixed(1)}K` : String(lo)));
  const a = p.alignment;
  return `<div class="direction" data-flow="${p.flow}" data-dir="${p.dir}"><h5>${esc(p.from)} → ${esc(p.to)}: ${num(p.fpdus)} FPDUs</h5><div class="plots">${barChart(
    'FPDU sizes (ULPDU_Length)',
    sizeLabels,
    [{ name: 'FPDUs', color: COLORS.info, values: p.sizes }],
    'octets (from)',
    sizeTips,
  )}${barChart('TCP segments per FPDU', SPAN_LABELS, [{ name: 'FPDUs', color: COLORS.info, values: p.spans }], 'segments')}${shareBars(
    'Alignment of FPDUs to TCP segments',
    [
      ['segments starting with an FPDU', a.fpduAligned, a.segments],
      ['segments starting with its header whole', a.headerAligned, a.segments],
      ['FPDUs spanning several segments', a.spanning, p.fpdus],
    ],
  )}${alongChart(p)}${
    p.findings.bins.length ? timelineChart(p.findings, "Findings on this direction's sender over time (seconds)") : ''
  }</div></div>`;
}

function flowPlots(v: CaptureView, flowName: (flow: number | null) => string): string {
  const byFlow = new Map<number, DirectionPlot[]>();
  for (const p of v.plots) {
    const l = byFlow.get(p.flow);
    if (l) l.push(p);
    else byFlow.set(p.flow, [p]);
  }
  const flows = new Map(v.flows.map((f) => [f.id, f]));
  const ids = [...new Set([...byFlow.keys(), ...v.flows.filter((f) => f.ladder.length > 0).map((f) => f.id)])]
    .sort((a, b) => a - b)
    .slice(0, 32);
  if (ids.length === 0) return '';
  const parts = ids.map((id, i) => {
    const f = flows.get(id);
    const plots = (byFlow.get(id) ?? []).sort((a, b) => a.dir - b.dir);
    return `<details class="flowplots"${i < 4 ? ' open' : ''} data-flow="${id}"><summary>${esc(flowName(id))}</summary>${f ? `<div class="plots">${ladderChart(f)}</div>` : ''}${plots
      .map(directionPlots)
      .join('')}</details>`;
  });
  const omitted = v.plotsOmitted ? `<p class="note">${num(v.plotsOmitted)} more MPA directions not drawn.</p>` : '';
  return `<h3>MPA per flow and direction</h3>${parts.join('')}${omitted}`;
}

function srtSection(v: CaptureView): string {
  const s = v.srt;
  if (!s || s.commands.length === 0) return '';
  const rows = s.commands
    .map(
      (c) =>
        `<tr>${td(c.program)}${td(c.command)}${td(num(c.calls), c.calls)}${td(seconds(c.min), c.min)}${td(seconds(c.avg), c.avg)}${td(
          seconds(c.p50),
          c.p50,
        )}${td(seconds(c.p99), c.p99)}${td(seconds(c.max), c.max)}</tr>`,
    )
    .join('');
  const charts = s.commands
    .slice(0, 16)
    .map((c) => {
      let lo = c.histogram.findIndex((n) => n > 0);
      let hi = c.histogram.length - 1;
      while (hi > 0 && c.histogram[hi] === 0) hi--;
      if (lo < 0) return '';
      lo = Math.max(0, lo - 1);
      hi = Math.min(c.histogram.length - 1, hi + 1);
      const labels: string[] = [];
      for (let i = lo; i <= hi; i++)
        labels.push(
          i < s.buckets.length ? `≤${seconds(s.buckets[i]!)}` : `>${seconds(s.buckets[s.buckets.length - 1]!)}`,
        );
      return barChart(
        `${c.program} ${c.command}: response times`,
        labels,
        [{ name: 'calls', color: COLORS.info, values: c.histogram.slice(lo, hi + 1) }],
        'response time',
      );
    })
    .join('');
  return `<h3>Service response time</h3><table class="sortable srt"><thead><tr><th>Program</th><th>Command</th><th>Calls</th><th>Min</th><th>Avg</th><th>p50</th><th>p99</th><th>Max</th></tr></thead><tbody>${rows}</tbody></table><div class="plots">${charts}</div>`;
}

/** The section of one capture; `n` numbers its element ids. */
export function captureSection(v: CaptureView, n: number): string {
  const flows = new Map(v.flows.map((f) => [f.id, f]));
  const flowName = (flow: number | null): string => {
    if (flow === null) return 'capture';
    const f = flows.get(flow);
    return f ? `stream ${f.stream}: ${f.client} → ${f.server}` : `stream ${flow - 1}`;
  };
  const timeline = v.timeline.bins.length ? `<div class="plots">${timelineChart(v.timeline)}</div>` : '';
  return `<section class="capture" id="capture-${n}"><h2>${esc(v.path === '-' ? '<standard input>' : v.path)}</h2>${verdictBadge(v)}${facts(
    v,
  )}${flowTable(v, `flows-${n}`)}${rulesTable(v, `rules-${n}`)}${timeline}${findingsByFlow(v, `findings-${n}`, flowName)}${flowPlots(
    v,
    flowName,
  )}${srtSection(v)}</section>`;
}
