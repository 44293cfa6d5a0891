import type { AnalysisResult, FlowResult, ServiceResponseTime } from '../analysis/pipeline-types.js';
import type { LatencyReport } from '../analysis/latency-types.js';
import type { Finding } from '../vocabulary/findings.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import type { MpaDirectionSummary } from '../../dissectors/mpa/mpa-flow.js';

export const SCHEMA_ID = 'mpa-dissect/report/v1';
export const TOOL = { name: 'mpa-dissect', version: '0.1.0' } as const;

/** The report document of ../shared/report-schema.md (only grows; fields keep their names). */

export interface ReportDocument {
  schema: string;
  tool: { name: string; version: string };
  capture: {
    path: string;
    format: string | null;
    packets: number;
    bytes: number;
    linkTypes: number[];
    error: string | null;
    /** Live capture only (`-i`): "capture" (kernel/libpcap) or "arrival" (stamped on arrival, backend cap). */
    timestamps?: 'capture' | 'arrival';
    backend?: string;
    dropped?: number | null;
  };
  flows: FlowJson[];
  findings: Finding[];
  summary: {
    flows: number;
    mpaFlows: number;
    fpdus: number;
    errors: number;
    warnings: number;
    infos: number;
    findingsOmitted: number;
  };
  /** Addition: service response times of the upper layers (present when any request was answered). */
  srt?: ServiceResponseTime[];
  /** Addition: where each request's time went (docs/latency.md; present when any request was timed). */
  latency?: LatencyReport;
}

export interface FlowJson {
  id: number;
  client: string;
  server: string;
  firstFrame: number;
  lastFrame: number;
  tcp: { directions: Array<Record<string, unknown>> };
  mpa: Record<string, unknown> | null;
  /** ULP Framing for TCP (an addition to the schema, documented in docs/report.md), null without it. */
  tuf: Record<string, unknown> | null;
}

/** Octets as lowercase hex, the report's encoding for bytes. */
export function hex(b: Uint8Array): string {
  return Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

export function startupJson(s: StartupRecord | null): Record<string, unknown> | null {
  if (!s) return null;
  const e = s.enhancedBlock;
  return {
    frame: s.frame,
    seq: s.seq,
    // Addition: Wireshark's relative sequence number (the stream offset plus one), null when unknown.
    seqRelative: s.offset === undefined ? null : (s.offset + 1) >>> 0,
    rev: s.rev,
    m: s.m,
    c: s.c,
    r: s.r,
    enhanced: s.enhanced,
    res: s.res,
    pdLength: s.pdLength,
    privateData: hex(s.privateData),
    ird: e ? e.ird : null,
    ord: e ? e.ord : null,
    p2p: e ? e.p2p : null,
    rtr: e ? { ...e.rtr } : null,
    keyOk: s.keyOk,
    vendor: s.vendor,
  };
}

function mpaDirectionJson(d: MpaDirectionSummary, ddp: unknown): Record<string, unknown> {
  return {
    from: d.from,
    to: d.to,
    markers: d.markers,
    seqStart: d.seqStart,
    seqStartExact: d.seqStartExact,
    fpdus: d.fpdus,
    ulpduBytes: d.ulpduBytes,
    crcErrors: d.crcErrors,
    ...(d.crcNotCaptured ? { crcNotCaptured: d.crcNotCaptured } : {}),
    markerErrors: d.markerErrors,
    markerCount: d.markerCount,
    afterError: d.afterError,
    bytesSkipped: d.bytesSkipped,
    senderMistake: d.senderMistake,
    senderMistakeFpdus: d.senderMistakeFpdus,
    alignment: d.alignment,
    ddp: ddp ?? null,
  };
}

export function flowJson(f: FlowResult): FlowJson {
  const t = f.tcp;
  const m = f.mpa;
  return {
    id: t.id,
    client: t.client,
    server: t.server,
    firstFrame: t.firstFrame,
    lastFrame: t.lastFrame,
    tcp: {
      directions: t.directions.map((d) => ({
        from: d.from,
        to: d.to,
        bytes: d.bytes,
        segments: d.segments,
        retransmissions: d.retransmissions,
        gaps: d.gaps,
        gapsOmitted: d.gapsOmitted,
        mss: d.mss,
        closed: d.closed,
        // Addition: relative sequence numbers as Wireshark shows them are seq minus this (mod 2^32).
        seqRelativeBase: d.seqRelativeBase ?? null,
      })),
    },
    mpa: m
      ? {
          detection: m.detection,
          initiator: m.initiator,
          responder: m.responder,
          request: startupJson(m.request),
          reply: startupJson(m.reply),
          crc: m.crc,
          rejected: m.rejected,
          upperLayer: f.upperLayer ?? null,
          ...(f.ulp ? { ulp: f.ulp } : {}),
          directions: m.directions.map((d, i) => mpaDirectionJson(d, f.upper ? f.upper[i] : null)),
          // Additions present only when they apply (docs/report.md, "The report document").
          ...(m.rdmac ? { rdmac: { ...m.rdmac } } : {}),
          ...(m.enablement ? { enablement: m.enablement.map((e) => (e ? { ...e } : null)) } : {}),
        }
      : null,
    tuf: f.tuf
      ? { mode: f.tuf.mode, detection: f.tuf.detection, directions: f.tuf.directions.map((d) => ({ ...d })) }
      : null,
  };
}

/**
 * The findings with `seqRelative` added (Wireshark's relative form of `seq`, null when the finding
 * has no seq or its direction no base): `seq` stays absolute, the report only grows.
 */
export function findingsJson(findings: readonly Finding[], flows: readonly FlowResult[]): Finding[] {
  const bases = new Map<number, FlowResult['tcp']['directions']>();
  for (const f of flows) bases.set(f.tcp.id, f.tcp.directions);
  return findings.map((x) => {
    const dirs = x.flow === null ? undefined : bases.get(x.flow);
    const d = dirs?.find((y) => y.from === x.from);
    const base = d?.seqRelativeBase ?? null;
    return { ...x, seqRelative: x.seq === null || base === null ? null : (x.seq - base) >>> 0 };
  });
}

/** `withFindings` false: `findings: []`, for a caller that reads only the rest (the --ndjson closing events). */
export function buildReport(
  r: AnalysisResult,
  all: readonly FlowResult[] = r.flows,
  withFindings = true,
): ReportDocument {
  const flows = r.flows.map(flowJson);
  const mpaFlows = r.flows.filter((f) => f.mpa !== null);
  const fpdus = mpaFlows.reduce((n, f) => n + f.mpa!.directions[0].fpdus + f.mpa!.directions[1].fpdus, 0);
  const c = r.capture;
  const s = r.findings.bySeverity;
  return {
    schema: SCHEMA_ID,
    tool: { ...TOOL },
    capture: {
      path: c.path,
      format: c.format,
      packets: c.packets,
      bytes: c.bytes,
      linkTypes: c.linkTypes,
      error: c.error ? `${c.error.file}: offset ${c.error.offset}, frame ${c.error.frame}: ${c.error.message}` : null,
      ...(c.timestamps !== undefined ? { timestamps: c.timestamps } : {}),
      ...(c.backend !== undefined ? { backend: c.backend } : {}),
      ...(c.dropped !== undefined ? { dropped: c.dropped } : {}),
    },
    flows,
    findings: withFindings ? findingsJson(r.findings.findings, all) : [],
    summary: {
      flows: flows.length,
      mpaFlows: mpaFlows.length,
      fpdus,
      errors: s.error,
      warnings: s.warning,
      infos: s.info,
      findingsOmitted: r.findings.omitted,
    },
    ...(r.srt && r.srt.length > 0 ? { srt: r.srt.map((x) => ({ ...x })) } : {}),
    ...(r.latency ? { latency: r.latency } : {}),
  };
}

/**
 * The report document without its flows (`flows: []`) but with the summary of all of them: what a
 * caller needs that is not the flows themselves (writeReport, the digest of a multi-capture run).
 */
export function reportHead(r: AnalysisResult): ReportDocument {
  const doc = buildReport({ ...r, flows: [] }, r.flows);
  const mpaFlows = r.flows.filter((f) => f.mpa !== null);
  doc.summary.flows = r.flows.length;
  doc.summary.mpaFlows = mpaFlows.length;
  doc.summary.fpdus = mpaFlows.reduce((n, f) => n + f.mpa!.directions[0].fpdus + f.mpa!.directions[1].fpdus, 0);
  return doc;
}

/**
 * The `--json` document written in pieces, flow by flow: byte for byte what
 * `JSON.stringify(buildReport(r), null, 1) + '\n'` gives, without the whole document (100,000
 * flows: tens of MB of objects and one string of as many) ever held at once.
 */
const ONE_PREFIX = '{\n "flows": [';
const ONE_SUFFIX = '\n ]\n}';

export function writeReport(r: AnalysisResult, out: (s: string) => void, chunkChars = 1 << 20): void {
  const doc = reportHead(r);
  const text = JSON.stringify(doc, null, 1) + '\n';
  // The key sits at depth 1 ("\n " before it); inside strings every quote is escaped, so this is the one.
  const slot = '\n "flows": []';
  const at = text.indexOf(slot);
  if (r.flows.length === 0 || at < 0) {
    out(text);
    return;
  }
  let buf = text.slice(0, at) + '\n "flows": [';
  for (let i = 0; i < r.flows.length; i++) {
    // Array elements sit at depth 2: stringified inside a one-element "flows" array, they come out
    // indented as in the whole document (no second pass over the text to indent them).
    const one = JSON.stringify({ flows: [flowJson(r.flows[i]!)] }, null, 1);
    buf += (i === 0 ? '' : ',') + one.slice(ONE_PREFIX.length, one.length - ONE_SUFFIX.length);
    if (buf.length >= chunkChars) {
      out(buf);
      buf = '';
    }
  }
  out(buf + '\n ]' + text.slice(at + slot.length));
}
