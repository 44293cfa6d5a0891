/**
 * The HTML report's sink: fed by the pipeline's streaming callbacks like the other outputs, it
 * keeps only bounded aggregates (histograms and AdaptiveBins per plotted MPA direction, capped
 * lists of findings and startup ladders) at O(1) per FPDU, then turns them and the run's result
 * into a CaptureView (model.ts) for the page.
 */
import type { AnalysisResult, FlowResult } from '../../analysis/pipeline-types.js';
import type { FpduRecord } from '../../../dissectors/mpa/mpa-types.js';
import type { StartupRecord } from '../../../dissectors/mpa/startup.js';
import type { PacketRecord } from '../../capture/packet.js';
import { RULES } from '../../analysis/rules-catalog.js';
import { SEVERITY_RANK, type Finding, type Severity } from '../../vocabulary/findings.js';
import { AdaptiveBins, FPDU_LENGTH_BUCKETS, lengthBucket, SPAN_LABELS, spanBucket } from './bins.js';
import type { CaptureDigest } from '../capture-digest.js';
import type { CaptureView, DirectionPlot, FindingView, FlowView, RuleView, StartupView } from './model.js';

/** Caps of one capture's page (see docs/html-report.md): what a million FPDUs still fits in. */
export const HTML_LIMITS = {
  /** MPA directions drawn (the first ones to carry FPDUs). */
  plots: 16,
  /** Bins of each sampled line. */
  bins: 160,
  /** Rows of the flow table (worst verdict first). */
  flows: 1000,
  /** Findings listed per severity. */
  findings: 1000,
  /** Flows whose startup exchange is kept for the ladder. */
  ladders: 1000,
} as const;

/** Series of DirectionPlot.along. */
export const ALONG_SERIES = ['CRC good', 'CRC bad', 'CRC unchecked', 'markers', 'markers mismatched'] as const;
const CRC_SERIES: Readonly<Record<FpduRecord['crcStatus'], number>> = {
  good: 0,
  bad: 1,
  'byte-swapped': 1,
  unchecked: 2,
  // Cut by the capture's snaplen: not checked either (the charts say "unchecked").
  'not-captured': 2,
};
const SEV_SERIES: Readonly<Record<Severity, number>> = { error: 0, warning: 1, info: 2 };

interface DirAgg {
  plot: DirectionPlot;
  along: AdaptiveBins;
  findings: AdaptiveBins;
}

export class HtmlCollector {
  private t0: number | null = null;
  private now = 0;
  private readonly dirs = new Map<number, [DirAgg | null, DirAgg | null]>();
  private plotted = 0;
  private plotsOmitted = 0;
  private readonly ladders = new Map<number, StartupView[]>();
  private readonly firstFpdu = new Map<number, number>();
  private readonly perFlow = new Map<number, [number, number, number]>();
  private readonly kept: Record<Severity, FindingView[]> = { error: [], warning: [], info: [] };
  private findingsOmitted = 0;
  private readonly timeline = new AdaptiveBins(3, HTML_LIMITS.bins, 1e-6);

  // Arrow functions: handed to the pipeline as they are.
  readonly packet = (p: PacketRecord): void => {
    const t = p.tsSec + p.tsNsec / 1e9;
    if (this.t0 === null) this.t0 = t;
    this.now = t;
  };

  private rel(): number {
    return this.t0 === null ? 0 : this.now - this.t0;
  }

  readonly startup = (s: StartupRecord): void => {
    const l = this.ladder(s.flow);
    l?.push({
      kind: s.kind,
      from: s.from,
      frame: s.frame,
      seq: s.seq,
      time: this.rel(),
      text: `MPA ${s.kind === 'request' ? 'Request' : 'Reply'} Rev ${s.rev} M=${+s.m} C=${+s.c}${s.r ? ' R=1' : ''}${s.pdLength ? ` PD ${s.pdLength}` : ''}${s.enhancedBlock ? ` IRD ${s.enhancedBlock.ird} ORD ${s.enhancedBlock.ord}` : ''}`,
    });
  };

  private ladder(flow: number): StartupView[] | null {
    let l = this.ladders.get(flow);
    if (!l) {
      if (this.ladders.size >= HTML_LIMITS.ladders) return null;
      l = [];
      this.ladders.set(flow, l);
    }
    return l.length < 8 ? l : null;
  }

  readonly fpdu = (f: FpduRecord): void => {
    // The first FPDU each way closes the ladder (bit 0: client's, bit 1: server's).
    const seen = this.firstFpdu.get(f.flow) ?? 0;
    if ((seen & (1 << f.dir)) === 0 && this.firstFpdu.size < HTML_LIMITS.ladders) {
      this.firstFpdu.set(f.flow, seen | (1 << f.dir));
      this.ladder(f.flow)?.push({
        kind: 'fpdu',
        from: f.from,
        frame: f.frames[0] ?? 0,
        seq: f.seq,
        time: this.rel(),
        text: `first FPDU, ULPDU_Length ${f.ulpduLength}`,
      });
    }
    let pair = this.dirs.get(f.flow);
    if (!pair) {
      pair = [null, null];
      this.dirs.set(f.flow, pair);
    }
    let d = pair[f.dir];
    if (!d) {
      if (this.plotted >= HTML_LIMITS.plots) return;
      this.plotted++;
      d = {
        plot: {
          flow: f.flow,
          dir: f.dir,
          from: f.from,
          to: f.to,
          fpdus: 0,
          sizes: new Array<number>(FPDU_LENGTH_BUCKETS.length).fill(0),
          spans: new Array<number>(SPAN_LABELS.length).fill(0),
          alignment: { segments: 0, fpduAligned: 0, headerAligned: 0, spanning: 0 },
          along: { width: 1, bins: [] },
          findings: { width: 1, bins: [] },
        },
        along: new AdaptiveBins(ALONG_SERIES.length, HTML_LIMITS.bins, 64),
        findings: new AdaptiveBins(3, HTML_LIMITS.bins, 1e-6),
      };
      pair[f.dir] = d;
    }
    const p = d.plot;
    p.fpdus++;
    p.sizes[lengthBucket(f.ulpduLength)]!++;
    p.spans[spanBucket(f.frames.length)]!++;
    let mismatched = 0;
    for (const m of f.markers) if ((m.fpduptr & ~3) !== m.expected) mismatched++;
    const crc = CRC_SERIES[f.crcStatus];
    const i = d.along.add(f.start, crc, f.frames[0] ?? 0, f.seq, crc === 1 || mismatched > 0);
    if (f.markers.length) d.along.count(i, 3, f.markers.length);
    if (mismatched) d.along.count(i, 4, mismatched);
  };

  readonly finding = (f: Finding): void => {
    if (f.flow !== null) {
      let c = this.perFlow.get(f.flow);
      if (!c) {
        c = [0, 0, 0];
        this.perFlow.set(f.flow, c);
      }
      c[SEV_SERIES[f.severity]]!++;
    }
    const t = this.rel();
    const sev = SEV_SERIES[f.severity];
    this.timeline.add(t, sev, f.frames[0] ?? 0, f.seq ?? 0, f.severity === 'error', f.rule);
    // The direction whose sender the finding names, when it is drawn.
    if (f.flow !== null && f.from !== null) {
      const pair = this.dirs.get(f.flow);
      const d = pair?.[0]?.plot.from === f.from ? pair[0] : pair?.[1]?.plot.from === f.from ? pair[1] : null;
      d?.findings.add(t, sev, f.frames[0] ?? 0, f.seq ?? 0, f.severity === 'error', f.rule);
    }
    const list = this.kept[f.severity];
    if (list.length < HTML_LIMITS.findings)
      list.push({
        rule: f.rule,
        severity: f.severity,
        flow: f.flow,
        from: f.from,
        frames: f.frames.slice(0, 16),
        seq: f.seq,
        message: f.message.length > 500 ? `${f.message.slice(0, 500)}…` : f.message,
        time: t,
      });
    else this.findingsOmitted++;
  };

  /** Was any MPA direction left unplotted? Counted at the end, from the flows. */
  private countOmitted(r: AnalysisResult): void {
    let all = 0;
    for (const f of r.flows) if (f.mpa) for (const d of f.mpa.directions) if (d.fpdus > 0) all++;
    this.plotsOmitted = Math.max(0, all - this.plotted);
  }

  /** The page data of this capture. `exit` is the run's exit status and why. */
  view(r: AnalysisResult, exit: { code: number; why: string }, live: boolean): CaptureView {
    this.countOmitted(r);
    const byId = new Map<number, FlowResult>();
    for (const f of r.flows) byId.set(f.tcp.id, f);
    const plots: DirectionPlot[] = [];
    for (const pair of this.dirs.values())
      for (const d of pair) {
        if (!d) continue;
        const fr = byId.get(d.plot.flow);
        const sum = fr?.mpa?.directions[d.plot.dir];
        if (sum) d.plot.alignment = { ...sum.alignment };
        d.plot.along = d.along.view();
        d.plot.findings = d.findings.view();
        plots.push(d.plot);
      }
    const flows = r.flows.map((f) => this.flowView(f));
    const rank = (v: FlowView): number =>
      v.verdict === 'error' ? 3 : v.verdict === 'warning' ? 2 : v.verdict === 'ok' ? 1 : 0;
    // Worst first when the table must be cut; then in stream order.
    const shown =
      flows.length > HTML_LIMITS.flows
        ? flows
            .sort((a, b) => rank(b) - rank(a) || a.id - b.id)
            .slice(0, HTML_LIMITS.flows)
            .sort((a, b) => a.id - b.id)
        : flows;
    const rules: RuleView[] = [...r.findings.byRule]
      .map(([id, count]) => {
        const def = RULES.get(id);
        return {
          rule: id,
          severity: def ? r.findings.severityOf(def) : 'info',
          ref: def?.ref ?? null,
          code: def?.rfcErrorCode ?? null,
          summary: def?.summary ?? '',
          count,
        } satisfies RuleView;
      })
      .sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.count - a.count);
    const s = r.findings.bySeverity;
    const lat = r.latency;
    const c = r.capture;
    return {
      path: c.path,
      format: c.format,
      packets: c.packets,
      bytes: c.bytes,
      duration: this.t0 === null ? 0 : this.now - this.t0,
      start: this.t0,
      live,
      exit,
      error: c.error ? `${c.error.file}: offset ${c.error.offset}, frame ${c.error.frame}: ${c.error.message}` : null,
      summary: {
        flows: r.flows.length,
        mpaFlows: r.flows.filter((f) => f.mpa !== null).length,
        fpdus: r.flows.reduce((n, f) => n + (f.mpa ? f.mpa.directions[0].fpdus + f.mpa.directions[1].fpdus : 0), 0),
        errors: s.error,
        warnings: s.warning,
        infos: s.info,
      },
      flows: shown,
      flowsOmitted: flows.length - shown.length,
      rules,
      findings: [...this.kept.error, ...this.kept.warning, ...this.kept.info],
      findingsOmitted: this.findingsOmitted,
      plots,
      plotsOmitted: this.plotsOmitted,
      timeline: this.timeline.view(),
      srt: lat
        ? {
            buckets: [...lat.buckets],
            commands: lat.commands.slice(0, 64).map((x) => ({
              program: x.program,
              command: x.command,
              calls: x.calls,
              min: x.min,
              max: x.max,
              avg: x.avg,
              p50: x.p50,
              p99: x.p99,
              histogram: [...x.histogram],
            })),
          }
        : null,
    };
  }

  private flowView(f: FlowResult): FlowView {
    const t = f.tcp;
    const m = f.mpa;
    const c = this.perFlow.get(t.id) ?? [0, 0, 0];
    const onoff = (b: boolean | null): string => (b === null ? '?' : b ? 'on' : 'off');
    const crcDir = (bad: number): string => (!m || m.crc === null ? '?' : !m.crc ? 'off' : bad ? `${bad} bad` : 'ok');
    const iwarp = m !== null || f.tuf !== null;
    return {
      id: t.id,
      stream: t.id - 1,
      client: t.client,
      server: t.server,
      detection: m ? m.detection : f.tuf ? `TUF ${f.tuf.mode}` : '',
      rev: m ? (m.reply?.rev ?? m.request?.rev ?? null) : null,
      markers: m ? `${onoff(m.directions[0].markers)}/${onoff(m.directions[1].markers)}` : '-',
      crc: m ? `${crcDir(m.directions[0].crcErrors)}/${crcDir(m.directions[1].crcErrors)}` : '-',
      fpdus: m ? m.directions[0].fpdus + m.directions[1].fpdus : 0,
      errors: c[0],
      warnings: c[1],
      infos: c[2],
      verdict: c[0] > 0 ? 'error' : c[1] > 0 ? 'warning' : iwarp ? 'ok' : 'not-iwarp',
      closed: t.directions.map((x) => x.closed ?? '-').join('/'),
      frames: `${t.firstFrame}-${t.lastFrame}`,
      upper: upperName(f),
      ladder: this.ladders.get(t.id) ?? [],
    };
  }
}

function upperName(f: FlowResult): string {
  if (f.ulp) return f.ulp.name;
  const l = f.upperLayer as { protocol?: unknown; name?: unknown } | string | null | undefined;
  if (typeof l === 'string') return l;
  if (l && typeof l.name === 'string') return l.name;
  if (l && typeof l.protocol === 'string') return l.protocol;
  return '';
}

/** The exit status in words: what the page's verdict says and why. */
export function exitWhy(
  code: number,
  r: AnalysisResult,
  failOn: 'error' | 'warning' | 'never',
  captureError: string | null,
): string {
  if (code === 2)
    return captureError ? `the capture could not be read to the end: ${captureError}` : 'usage or output error';
  const s = r.findings.bySeverity;
  if (code === 1) {
    const n = failOn === 'warning' ? s.error + s.warning : s.error;
    return `${n} finding${n === 1 ? '' : 's'} at or above --fail-on ${failOn}`;
  }
  if (failOn === 'never') return '--fail-on never: findings do not fail the run';
  return `no finding at or above --fail-on ${failOn}${captureError ? ` (capture cut short, accepted by --allow-truncated: ${captureError})` : ''}`;
}

/** The page data of a capture that was not analysed (unreadable, or its worker failed): its digest's counts. */
export function unanalysedView(d: CaptureDigest, code: number): CaptureView {
  return {
    path: d.path,
    format: d.format,
    packets: d.packets,
    bytes: d.bytes,
    duration: 0,
    start: null,
    live: false,
    exit: { code, why: d.error ? `the capture could not be read: ${d.error}` : 'not analysed' },
    error: d.error,
    summary: {
      flows: d.flows,
      mpaFlows: d.mpaFlows,
      fpdus: d.fpdus,
      errors: d.errors,
      warnings: d.warnings,
      infos: d.infos,
    },
    flows: [],
    flowsOmitted: d.flows,
    rules: d.byRule.map((r) => {
      const def = RULES.get(r.rule);
      return {
        rule: r.rule,
        severity: r.severity,
        ref: def?.ref ?? null,
        code: def?.rfcErrorCode ?? null,
        summary: def?.summary ?? '',
        count: r.count,
      };
    }),
    findings: [],
    findingsOmitted: 0,
    plots: [],
    plotsOmitted: 0,
    timeline: { width: 1, bins: [] },
    srt: null,
  };
}
