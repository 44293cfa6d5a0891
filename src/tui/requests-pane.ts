/**
 * The requests view (key `r`, in place of the findings): every upper-layer request kept by the
 * model's latency collector, slowest first, answered or not (one never answered counts the time it
 * had waited when the capture ended), and under the list the selected request's four frames with
 * the time between them. Bounded by the collector: the slowest 10,000 answered and the 10,000
 * longest-waiting unanswered requests.
 */
import type { LatencyRequest } from '../analysis/latency-types.js';
import type { LatencyCollector } from '../report/latency.js';
import { fit, padLeft, type Line, type StyleName } from './lines.js';

/** The rows, rebuilt only when the collector took in more requests or the capture ended. */
export class RequestRows {
  private rows: LatencyRequest[] = [];
  private key = '';

  constructor(private readonly latency: LatencyCollector) {}

  get(): readonly LatencyRequest[] {
    const l = this.latency;
    const key = `${l.answeredCount()}/${l.unansweredCount()}/${l.captureEnd}`;
    if (key !== this.key) {
      this.key = key;
      const all = [...l.slowest(), ...l.neverAnswered()];
      // Unknown waits (no capture end yet) last; equal latencies in request order.
      const k = (r: LatencyRequest): number => (Number.isFinite(r.latency) ? r.latency : -1);
      this.rows = all.sort((a, b) => k(b) - k(a) || a.time - b.time);
    }
    return this.rows;
  }
}

const sec = (v: number | null): string => (v === null || !Number.isFinite(v) ? '?' : v.toFixed(6));

/** Lines under the list that describe the selected request. */
export const DETAIL_LINES = 4;

/** The frames of a row: request → data → response. */
function framesText(r: LatencyRequest): string {
  const req = `${r.requestFrame ?? '?'}`;
  const data =
    r.firstDataFrame === null
      ? ''
      : r.firstDataFrame === r.lastDataFrame
        ? ` → ${r.firstDataFrame}`
        : ` → ${r.firstDataFrame}..${r.lastDataFrame}`;
  return `${req}${data} → ${r.answered ? (r.responseFrame ?? '?') : 'none'}`;
}

/** The selected request: its command and where its time went, frame by frame (DETAIL_LINES lines). */
export function requestDetail(r: LatencyRequest): Line[] {
  const head: Line = [
    { t: `${r.program} ${r.command}, ${r.queue}: `, s: 'bold' },
    r.answered
      ? { t: `${sec(r.latency)} s (Enter: request PDU)` }
      : { t: `no response, waited ${sec(r.latency)} s to capture end`, s: 'warning' },
  ];
  const reqText = `  request frame ${r.requestFrame ?? '?'}`;
  const rsp: Line = r.answered
    ? [
        {
          t: `  → response frame ${r.responseFrame ?? '?'}: +${sec(r.firstDataFrame === null ? r.latency : r.lastDataToResponse)} s`,
        },
      ]
    : [{ t: '  no response', s: 'dim' }];
  if (r.firstDataFrame === null) return [head, [{ t: reqText }], [{ t: '  (no data moved by RDMA)', s: 'dim' }], rsp];
  const req: Line = [{ t: `${reqText} → first data frame ${r.firstDataFrame}: +${sec(r.toFirstData)} s` }];
  return [head, req, [{ t: `  → last data frame ${r.lastDataFrame}: +${sec(r.firstToLastData)} s` }], rsp];
}

/** The pane: a header, the rows from `top`, the selected one's detail under them when there is room. */
export function requestsPane(
  latency: LatencyCollector,
  rows: readonly LatencyRequest[],
  sel: number,
  top: number,
  h: number,
): { title: string; lines: Line[]; selected: number } {
  const detail = h >= DETAIL_LINES + 3 ? DETAIL_LINES : 0;
  const fitRows = Math.max(1, h - 1 - detail);
  const lines: Line[] = [
    [{ t: `${padLeft('Latency s', 10)} ${fit('Command', 16)} ${fit('Queue', 8)} Frames: req → data → rsp`, s: 'head' }],
  ];
  for (let k = top; k < Math.min(rows.length, top + fitRows); k++) {
    const r = rows[k]!;
    const style: StyleName | undefined = r.answered ? undefined : 'warning';
    lines.push([
      {
        t: `${padLeft(sec(r.latency), 10)} ${fit(r.command, 16)} ${fit(r.queue, 8)} ${framesText(r)}${r.answered ? '' : ' (never answered)'}`,
        ...(style ? { s: style } : {}),
      },
    ]);
  }
  if (rows.length === 0) lines.push([{ t: 'no upper-layer requests timed (SMB2, NFS, NVMe, SCSI)', s: 'dim' }]);
  const r = rows[sel];
  if (detail && r) {
    while (lines.length < h - detail) lines.push([]);
    lines.push(...requestDetail(r));
  }
  const answered = latency.answeredCount();
  const never = latency.unansweredCount();
  const kept = answered > latency.kept ? ` (the slowest ${latency.kept} kept)` : '';
  return {
    title: `Requests by latency: ${answered} answered, ${never} never answered${kept}`,
    lines,
    selected: rows.length ? sel - top + 1 : -1,
  };
}

/** Rows of the list the pane shows at once (for scrolling). */
export function requestRowsShown(h: number): number {
  return Math.max(1, h - 1 - (h >= DETAIL_LINES + 3 ? DETAIL_LINES : 0));
}
