/**
 * The HTML report page (--html FILE): one self-contained document, no network (a Content
 * Security Policy forbids any fetch), style and script inline. Several captures get an overview
 * table first, then a section each; the per-capture caps shrink with their number so the page
 * stays within a few MB.
 */
import { CLIENT_SCRIPT } from './client.js';
import { esc, num } from './escape.js';
import type { CaptureView } from './model.js';
import { captureSection } from './sections.js';

const STYLE = `
:root{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;background:#fafafa}
body{margin:0 auto;max-width:1200px;padding:0 16px 48px}
h1{font-size:1.5em;margin:16px 0 4px}h2{font-size:1.25em;border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:32px;word-break:break-all}
h3{font-size:1.05em;margin:20px 0 6px}h5{margin:10px 0 4px;font-size:.95em}
.sub{color:#666;font-size:.9em;margin:0}
table{border-collapse:collapse;font-size:.85em;background:#fff;width:100%;margin:4px 0}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
td[data-v]{text-align:right;font-variant-numeric:tabular-nums}
td.msg{word-break:break-word}
.sev-error,.v-error.verdict-cell{color:#c62828;font-weight:600}.sev-warning,.v-warning.verdict-cell{color:#ef6c00;font-weight:600}.sev-info{color:#1565c0}
.v-ok.verdict-cell{color:#2e7d32}.v-not-iwarp.verdict-cell{color:#888}
.verdict{padding:8px 12px;border-radius:4px;margin:8px 0}.verdict.ok{background:#e8f5e9}.verdict.error{background:#ffebee}.verdict.fatal{background:#fbe9e7;border:1px solid #c62828}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;font-size:.9em;margin:8px 0}.facts dt{color:#666}.facts dd{margin:0;word-break:break-all}
.plots{display:flex;flex-wrap:wrap;gap:8px}figure{margin:0;flex:1 1 460px;min-width:320px;max-width:640px;background:#fff;border:1px solid #e4e4e4;padding:6px}
figcaption{font-size:.85em;font-weight:600;margin-bottom:2px}
svg.chart{width:100%;height:auto;display:block}.axis{stroke:#999;stroke-width:1}.tick{font-size:10px;fill:#555}
svg [data-tip]:hover{opacity:.75}
.legend{font-size:.8em;color:#444}.legend span{margin-right:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
details{background:#fff;border:1px solid #e4e4e4;margin:6px 0;padding:4px 8px}summary{cursor:pointer;font-weight:600;font-size:.9em}
.sevfilter{font-size:.9em;margin:4px 0}.sevfilter label{margin-left:12px}.sevfilter .shown{margin-left:16px;color:#666}
.note{color:#666;font-size:.85em}
#tip{position:fixed;z-index:10;max-width:480px;background:#263238;color:#fff;font-size:12px;padding:4px 8px;border-radius:3px;pointer-events:none;white-space:pre-wrap}
`;

/** Caps scale down with many captures: the page of 100 captures is not 100 single pages. */
function budget(views: readonly CaptureView[]): CaptureView[] {
  const k = Math.max(1, views.length);
  const flows = Math.max(20, Math.floor(1000 / k));
  const findings = Math.max(30, Math.floor(3000 / k));
  const plots = Math.max(2, Math.floor(16 / k));
  return views.map((v) => {
    if (k === 1) return v;
    const f = v.flows.slice(0, flows);
    const fi = v.findings.slice(0, findings);
    const p = v.plots.slice(0, plots);
    return {
      ...v,
      flows: f,
      flowsOmitted: v.flowsOmitted + v.flows.length - f.length,
      findings: fi,
      findingsOmitted: v.findingsOmitted + v.findings.length - fi.length,
      plots: p,
      plotsOmitted: v.plotsOmitted + v.plots.length - p.length,
    };
  });
}

function overview(views: readonly CaptureView[]): string {
  const rows = views
    .map(
      (v, i) =>
        `<tr><td><a href="#capture-${i}">${esc(v.path)}</a></td><td data-v="${v.packets}">${esc(num(v.packets))}</td><td data-v="${v.summary.flows}">${esc(
          num(v.summary.flows),
        )}</td><td data-v="${v.summary.fpdus}">${esc(num(v.summary.fpdus))}</td><td data-v="${v.summary.errors}">${esc(num(v.summary.errors))}</td><td data-v="${
          v.summary.warnings
        }">${esc(num(v.summary.warnings))}</td><td data-v="${v.exit.code}" class="${v.exit.code === 0 ? 'v-ok' : 'v-error'} verdict-cell">exit ${v.exit.code}</td><td>${esc(
          v.exit.why,
        )}</td></tr>`,
    )
    .join('');
  return `<h2>Captures</h2><table class="sortable captures" id="captures"><thead><tr><th>Capture</th><th>Packets</th><th>Flows</th><th>FPDUs</th><th>Errors</th><th>Warnings</th><th>Exit</th><th>Why</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export interface PageOptions {
  /** The run's exit status and why, for several captures (one capture: its own). */
  exit: { code: number; why: string };
  tool: string;
  generated: Date;
}

/** The whole document. */
export function htmlPage(viewsIn: readonly CaptureView[], o: PageOptions): string {
  const views = budget(viewsIn);
  const title = views.length === 1 ? `mpa-dissect: ${views[0]!.path}` : `mpa-dissect: ${views.length} captures`;
  const several = views.length > 1;
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${STYLE}</style></head>
<body><h1>iWARP analysis report</h1><p class="sub">${esc(o.tool)} · ${esc(o.generated.toISOString())}${
    several ? ` · ${views.length} captures · <b>exit ${o.exit.code}</b> ${esc(o.exit.why)}` : ''
  }</p>
${several ? overview(views) : ''}
${views.map((v, i) => captureSection(v, i)).join('\n')}
<div id="tip" hidden></div>
<script>${CLIENT_SCRIPT}</script>
</body></html>
`;
}

/** A multi-capture run's exit status in words. */
export function severalWhy(views: readonly CaptureView[], code: number): string {
  const failed = views.filter((v) => v.exit.code !== 0).length;
  if (code === 0) return `all ${views.length} captures passed`;
  return `${failed} of ${views.length} captures did not pass (the worst exit status is the run's)`;
}
