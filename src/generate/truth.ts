/**
 * Ground truth of a generated capture: what an RFC-correct analyzer must report, in the report
 * schema's terms (../shared/report-schema.md): findings by rule, sender endpoint and seq (the
 * ULPDU_Length field's sequence number for an FPDU), and per MPA direction the FPDU and marker
 * counts. `mpa-dissect generate --truth FILE` writes it; the corpus and the round-trip test compare
 * the analyzer's report with it.
 */

export const TRUTH_SCHEMA = 'mpa-dissect/truth/v1';

export interface TruthFinding {
  rule: string;
  /** Sender endpoint (ADDR:PORT) of the direction the finding is about; null for capture-wide findings. */
  from: string | null;
  /** Absolute TCP sequence number as the report gives it; null when the finding has none. */
  seq: number | null;
}

export interface TruthDirection {
  from: string;
  to: string;
  markers: boolean;
  fpdus: number;
  markerCount: number;
  crcErrors: number;
  markerErrors: number;
}

export interface TruthFlow {
  client: string;
  server: string;
  /** null: the flow carries no MPA the analyzer can find. */
  mpa: { directions: [TruthDirection, TruthDirection] } | null;
}

export interface GroundTruth {
  schema: typeof TRUTH_SCHEMA;
  scenario: string;
  seed: number;
  /** Every knob's value (as given on the command line). */
  knobs: Record<string, string>;
  /** Analyzer options the capture is meant to be read with (e.g. --checksums); usually none. */
  args: string[];
  /** Sorted by rule, then from, then seq; each occurrence listed. */
  findings: TruthFinding[];
  flows: TruthFlow[];
  /** Where the generator knows them: per sender endpoint, the seq of each FPDU's ULPDU_Length field, in order. */
  fpduSeqs?: Record<string, number[]>;
}

/** ADDR:PORT as the report writes endpoints (IPv6 in brackets). */
export function endpoint(addr: string, port: number): string {
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
}

export function compareFindings(a: TruthFinding, b: TruthFinding): number {
  return a.rule < b.rule
    ? -1
    : a.rule > b.rule
      ? 1
      : (a.from ?? '') < (b.from ?? '')
        ? -1
        : (a.from ?? '') > (b.from ?? '')
          ? 1
          : (a.seq ?? -1) - (b.seq ?? -1);
}

export function sortFindings(f: TruthFinding[]): TruthFinding[] {
  return [...f].sort(compareFindings);
}

/** A report document's findings and MPA directions in the truth's shape (for comparisons). */
export function truthOfReport(report: {
  findings: ReadonlyArray<{ rule: string; from: string | null; seq: number | null }>;
  flows: ReadonlyArray<{ client: string; server: string; mpa: Readonly<Record<string, unknown>> | null }>;
}): { findings: TruthFinding[]; flows: TruthFlow[] } {
  const dir = (d: Record<string, unknown>): TruthDirection => ({
    from: String(d['from']),
    to: String(d['to']),
    markers: d['markers'] === true,
    fpdus: Number(d['fpdus'] ?? 0),
    markerCount: Number(d['markerCount'] ?? 0),
    crcErrors: Number(d['crcErrors'] ?? 0),
    markerErrors: Number(d['markerErrors'] ?? 0),
  });
  return {
    findings: sortFindings(report.findings.map((f) => ({ rule: f.rule, from: f.from, seq: f.seq }))),
    flows: report.flows.map((f) => {
      const dirs = (f.mpa?.['directions'] ?? []) as ReadonlyArray<Record<string, unknown>>;
      return {
        client: f.client,
        server: f.server,
        mpa:
          f.mpa && dirs.length === 2
            ? { directions: [dir(dirs[0]!), dir(dirs[1]!)] as [TruthDirection, TruthDirection] }
            : null,
      };
    }),
  };
}
