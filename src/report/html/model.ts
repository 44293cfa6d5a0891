/**
 * The data of an HTML report page: plain, bounded, structured-clone-safe objects (a multi-capture
 * run builds one CaptureView per capture on a worker thread and sends it to the main thread).
 * Every list has a fixed cap and says how many it left out; nothing grows with the FPDU count.
 */
import type { Severity } from '../../vocabulary/findings.js';

/** One bin of a sampled line (along the connection, or along time): counts, and the first point's whereabouts for hover. */
export interface Bin {
  /** Start of the bin on its axis (stream offset in octets, or seconds since the capture's first packet). */
  x: number;
  /** Counts per series (the series a chart names). */
  n: number[];
  /** Frame and seq of the first point in the bin (of the first bad one when there is one). */
  frame: number;
  seq: number;
  /** Rule id of the first finding in the bin (time lines of findings), else ''. */
  label: string;
}

export interface SampledLine {
  /** Bin width on the axis; bins start at 0, bin i covers [i*width, (i+1)*width). */
  width: number;
  bins: Bin[];
}

export interface StartupView {
  kind: 'request' | 'reply' | 'fpdu';
  from: string;
  frame: number;
  seq: number;
  /** Seconds since the capture's first packet. */
  time: number;
  text: string;
}

/** What the page draws for one MPA direction of one flow. */
export interface DirectionPlot {
  flow: number;
  dir: 0 | 1;
  from: string;
  to: string;
  fpdus: number;
  /** FPDU_LENGTH_BUCKETS counts of ULPDU_Length. */
  sizes: number[];
  /** TCP segments each FPDU arrived in: 1, 2, 3, 4-7, 8 or more. */
  spans: number[];
  alignment: { segments: number; fpduAligned: number; headerAligned: number; spanning: number };
  /** Along the stream (octet offset): series [CRC good, CRC bad, CRC unchecked, markers, markers mismatched]. */
  along: SampledLine;
  /** Findings this direction's sender caused, over time (seconds from the first packet): series [error, warning, info]. */
  findings: SampledLine;
}

export interface FlowView {
  id: number;
  stream: number;
  client: string;
  server: string;
  /** How MPA (or TUF) was found, or '' for plain TCP. */
  detection: string;
  rev: number | null;
  markers: string;
  crc: string;
  fpdus: number;
  errors: number;
  warnings: number;
  infos: number;
  verdict: 'error' | 'warning' | 'ok' | 'not-iwarp';
  closed: string;
  frames: string;
  upper: string;
  /** The startup exchange and the first FPDU each way, in capture order (the ladder). */
  ladder: StartupView[];
}

export interface FindingView {
  rule: string;
  severity: Severity;
  flow: number | null;
  from: string | null;
  frames: number[];
  seq: number | null;
  message: string;
  /** Seconds since the capture's first packet when it was reported. */
  time: number;
}

export interface RuleView {
  rule: string;
  severity: Severity;
  ref: string | null;
  code: number | null;
  summary: string;
  count: number;
}

export interface SrtView {
  program: string;
  command: string;
  calls: number;
  min: number;
  max: number;
  avg: number;
  p50: number;
  p99: number;
  histogram: number[];
}

export interface CaptureView {
  path: string;
  format: string | null;
  packets: number;
  bytes: number;
  /** Seconds between the first and the last packet. */
  duration: number;
  /** Epoch seconds of the first packet, or null with none. */
  start: number | null;
  live: boolean;
  exit: { code: number; why: string };
  error: string | null;
  summary: { flows: number; mpaFlows: number; fpdus: number; errors: number; warnings: number; infos: number };
  flows: FlowView[];
  flowsOmitted: number;
  rules: RuleView[];
  findings: FindingView[];
  findingsOmitted: number;
  plots: DirectionPlot[];
  /** MPA directions not plotted (beyond the plot cap). */
  plotsOmitted: number;
  /** Findings over the capture's time: series [error, warning, info]. */
  timeline: SampledLine;
  srt: { buckets: number[]; commands: SrtView[] } | null;
}
