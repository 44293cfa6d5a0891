/**
 * The page's charts as inline SVG, drawn on the server from the bounded aggregates (no charting
 * library, no script needed to see them). Every mark that has something to say on hover carries
 * it in `data-tip` (the client script shows it; a `<title>` says it too without script).
 */
import { esc, num, octets, seconds } from './escape.js';
import type { DirectionPlot, FlowView, SampledLine } from './model.js';

export const COLORS = {
  good: '#2e7d32',
  bad: '#c62828',
  warning: '#ef6c00',
  info: '#1565c0',
  grey: '#9e9e9e',
  marker: '#6a1b9a',
} as const;

const W = 640;
const H = 150;
const PAD_L = 44;
const PAD_B = 30;
const PAD_T = 8;

function svgOpen(h = H, label = ''): string {
  return `<svg class="chart" viewBox="0 0 ${W} ${h}" role="img" aria-label="${esc(label)}">`;
}

function rect(x: number, y: number, w: number, h: number, fill: string, tip: string): string {
  return `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(0.5, w).toFixed(1)}" height="${Math.max(0, h).toFixed(1)}" fill="${fill}" data-tip="${esc(tip)}"><title>${esc(tip)}</title></rect>`;
}

function axisY(max: number, h = H): string {
  const y0 = h - PAD_B;
  return (
    `<line x1="${PAD_L}" y1="${PAD_T}" x2="${PAD_L}" y2="${y0}" class="axis"/>` +
    `<line x1="${PAD_L}" y1="${y0}" x2="${W - 4}" y2="${y0}" class="axis"/>` +
    `<text x="${PAD_L - 4}" y="${PAD_T + 8}" class="tick" text-anchor="end">${esc(num(max))}</text>` +
    `<text x="${PAD_L - 4}" y="${y0}" class="tick" text-anchor="end">0</text>`
  );
}

export interface Series {
  name: string;
  color: string;
  values: readonly number[];
}

/** Stacked columns, one per label (histograms); hover: the label and each series' count. */
export function barChart(
  title: string,
  labels: readonly string[],
  series: readonly Series[],
  unit: string,
  /** What the hover calls each column (default: its label). */
  tipLabels: readonly string[] = labels,
): string {
  const n = labels.length;
  const totals = labels.map((_, i) => series.reduce((a, s) => a + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const plotW = W - PAD_L - 8;
  const bw = plotW / Math.max(1, n);
  const y0 = H - PAD_B;
  const scale = (y0 - PAD_T) / max;
  let body = axisY(max);
  const every = Math.max(1, Math.ceil(n / 14));
  for (let i = 0; i < n; i++) {
    const x = PAD_L + i * bw + 1;
    let y = y0;
    for (const s of series) {
      const v = s.values[i] ?? 0;
      if (v <= 0) continue;
      const h = v * scale;
      y -= h;
      body += rect(
        x,
        y,
        bw - 2,
        h,
        s.color,
        `${title}: ${tipLabels[i]} ${unit}: ${s.name} ${num(v)} of ${num(totals[i]!)}`,
      );
    }
    if (i % every === 0)
      body += `<text x="${(x + bw / 2).toFixed(1)}" y="${y0 + 12}" class="tick" text-anchor="middle">${esc(labels[i])}</text>`;
  }
  body += `<text x="${W / 2}" y="${H - 4}" class="tick" text-anchor="middle">${esc(unit)}</text>`;
  return `<figure><figcaption>${esc(title)}</figcaption>${svgOpen(H, title)}${body}</svg>${legend(series)}</figure>`;
}

function legend(series: readonly Series[]): string {
  if (series.length < 2) return '';
  return `<div class="legend">${series.map((s) => `<span><i style="background:${s.color}"></i>${esc(s.name)}</span>`).join('')}</div>`;
}

/**
 * A sampled line as stacked columns over its axis (stream octets or seconds). `describe` words a
 * bin for the hover: its range, counts and first (or first bad) point.
 */
export function lineChart(
  title: string,
  line: SampledLine,
  series: readonly Series[],
  axis: (x: number) => string,
  describe: (b: SampledLine['bins'][number], range: string) => string,
  extra: (b: SampledLine['bins'][number], x: number, bw: number, y0: number) => string = () => '',
  /** Legend entries for what `extra` draws. */
  extraLegend: readonly Series[] = [],
): string {
  const bins = line.bins;
  const last = bins.length ? bins[bins.length - 1]!.x + line.width : line.width;
  const plotW = W - PAD_L - 8;
  const sx = plotW / Math.max(last, 1e-12);
  const bw = Math.max(1, line.width * sx);
  const y0 = H - PAD_B;
  const totals = bins.map((b) => series.reduce((a, _, i) => a + (b.n[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const scale = (y0 - PAD_T - 6) / max;
  let body = axisY(max);
  bins.forEach((b, k) => {
    const x = PAD_L + b.x * sx;
    const range = `${axis(b.x)} – ${axis(b.x + line.width)}`;
    const tip = describe(b, range);
    let y = y0;
    series.forEach((s, i) => {
      const v = b.n[i] ?? 0;
      if (v <= 0) return;
      const h = Math.max(1, v * scale);
      y -= h;
      body += rect(x, y, bw - (bw > 3 ? 1 : 0), h, s.color, tip);
    });
    if (totals[k] === 0) body += rect(x, y0 - 2, bw, 2, COLORS.grey, tip);
    body += extra(b, x, bw, y0);
  });
  for (const f of [0, 0.5, 1])
    body += `<text x="${(PAD_L + f * plotW).toFixed(1)}" y="${y0 + 12}" class="tick" text-anchor="${f === 0 ? 'start' : f === 1 ? 'end' : 'middle'}">${esc(axis(f * last))}</text>`;
  return `<figure><figcaption>${esc(title)}</figcaption>${svgOpen(H, title)}${body}</svg>${legend([...series, ...extraLegend])}</figure>`;
}

/** FPDUs along the connection: CRC verdicts stacked, mismatched markers as a purple tick above. */
export function alongChart(p: DirectionPlot): string {
  const series: Series[] = [
    { name: 'CRC good', color: COLORS.good, values: [] },
    { name: 'CRC bad', color: COLORS.bad, values: [] },
    { name: 'CRC unchecked', color: COLORS.grey, values: [] },
  ];
  return lineChart(
    'FPDUs along the stream: CRC verdicts and markers',
    p.along,
    series,
    (x) => octets(Math.round(x)),
    (b, range) =>
      `stream octets ${range}: ${num(b.n[0]! + b.n[1]! + b.n[2]!)} FPDUs (CRC good ${num(b.n[0]!)}, bad ${num(b.n[1]!)}, unchecked ${num(b.n[2]!)}), markers ${num(b.n[3]!)} (${num(b.n[4]!)} mismatched); ${b.n[1]! + b.n[4]! > 0 ? 'first bad' : 'first'}: frame ${b.frame}, seq ${b.seq}`,
    (b, x, bw) =>
      b.n[4]! > 0
        ? `<rect x="${x.toFixed(1)}" y="0" width="${Math.max(3, bw).toFixed(1)}" height="7" fill="${COLORS.marker}"/>`
        : b.n[3]! > 0
          ? `<rect x="${x.toFixed(1)}" y="2" width="${Math.max(1, bw).toFixed(1)}" height="3" fill="#ce93d8"/>`
          : '',
    [
      { name: 'markers', color: '#ce93d8', values: [] },
      { name: 'FPDUPTR mismatched', color: COLORS.marker, values: [] },
    ],
  );
}

/** Findings over time (seconds from the first packet), by severity. */
export function timelineChart(line: SampledLine, title = 'Findings over time (seconds from the first packet)'): string {
  const series: Series[] = [
    { name: 'error', color: COLORS.bad, values: [] },
    { name: 'warning', color: COLORS.warning, values: [] },
    { name: 'info', color: COLORS.info, values: [] },
  ];
  return lineChart(
    title,
    line,
    series,
    (x) => seconds(x),
    (b, range) =>
      `${range}: ${num(b.n[0]!)} errors, ${num(b.n[1]!)} warnings, ${num(b.n[2]!)} info; first ${b.label}: frame ${b.frame}, seq ${b.seq}`,
  );
}

/** Horizontal bars of shares (alignment of FPDUs to TCP segments). */
export function shareBars(title: string, rows: ReadonlyArray<readonly [string, number, number]>): string {
  const h = 22 * rows.length + 8;
  let body = '';
  rows.forEach(([label, part, whole], i) => {
    const y = 4 + i * 22;
    const f = whole > 0 ? part / whole : 0;
    const tip = `${label}: ${num(part)} of ${num(whole)} (${(100 * f).toFixed(1)}%)`;
    body += `<text x="0" y="${y + 13}" class="tick">${esc(label)}</text>`;
    body += `<rect x="230" y="${y}" width="${W - 300}" height="16" fill="#eee"/>`;
    body += rect(230, y, (W - 300) * f, 16, COLORS.info, tip);
    body += `<text x="${W - 64}" y="${y + 13}" class="tick">${(100 * f).toFixed(1)}%</text>`;
  });
  return `<figure><figcaption>${esc(title)}</figcaption>${svgOpen(h, title)}${body}</svg></figure>`;
}

/** The startup exchange as a ladder: client and server lines, an arrow per message, time going down. */
export function ladderChart(f: FlowView): string {
  const steps = f.ladder;
  if (steps.length === 0) return '';
  const h = 40 + steps.length * 34;
  const xl = 120;
  const xr = W - 120;
  let body =
    `<text x="${xl}" y="14" class="tick" text-anchor="middle">${esc(f.client)}</text>` +
    `<text x="${xr}" y="14" class="tick" text-anchor="middle">${esc(f.server)}</text>` +
    `<line x1="${xl}" y1="20" x2="${xl}" y2="${h - 4}" class="axis"/><line x1="${xr}" y1="20" x2="${xr}" y2="${h - 4}" class="axis"/>`;
  steps.forEach((s, i) => {
    const y = 34 + i * 34;
    const right = s.from === f.client;
    const [x1, x2] = right ? [xl, xr] : [xr, xl];
    const color = s.kind === 'fpdu' ? COLORS.grey : COLORS.info;
    const tip = `${s.text}: frame ${s.frame}, seq ${s.seq}, ${seconds(s.time)}`;
    const head = right
      ? `${x2 - 8},${y - 4} ${x2},${y} ${x2 - 8},${y + 4}`
      : `${x2 + 8},${y - 4} ${x2},${y} ${x2 + 8},${y + 4}`;
    body += `<g data-tip="${esc(tip)}"><title>${esc(tip)}</title><line x1="${x1}" y1="${y}" x2="${x2}" y2="${y}" stroke="${color}" stroke-width="2"/><polygon points="${head}" fill="${color}"/>`;
    body += `<text x="${(xl + xr) / 2}" y="${y - 5}" class="tick" text-anchor="middle">${esc(s.text)}</text>`;
    body += `<text x="4" y="${y + 4}" class="tick">${esc(seconds(s.time))}</text><text x="${W - 4}" y="${y + 4}" class="tick" text-anchor="end">frame ${s.frame}</text></g>`;
  });
  return `<figure><figcaption>Startup exchange, stream ${f.stream}</figcaption>${svgOpen(h, 'startup ladder')}${body}</svg></figure>`;
}
