/**
 * Analyses generated capture bytes as the CLI does (DDP/RDMAP on) and reads the report back in the
 * ground truth's shape (src/generate/truth.ts).
 */
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import { truthOfReport, type TruthFinding, type TruthFlow } from '../../src/generate/truth.js';

export async function analyzedTruth(capture: Uint8Array): Promise<{ findings: TruthFinding[]; flows: TruthFlow[] }> {
  const { findings, flows } = await analyzedWithSeqs(capture);
  return { findings, flows };
}

/** As analyzedTruth, plus the seq of every FPDU framed, per sender endpoint, in stream order. */
export async function analyzedWithSeqs(
  capture: Uint8Array,
): Promise<{ findings: TruthFinding[]; flows: TruthFlow[]; fpduSeqs: Record<string, number[]> }> {
  const seqs: Record<string, Array<[number, number]>> = {};
  const r = await analyze('generated.pcap', {
    upper: defaultUpper,
    stream: (async function* () {
      yield capture;
    })(),
    // Stream order: by offset in the direction (seq may wrap past 2^32).
    onFpdu: (f) => (seqs[f.from] ??= []).push([f.lenOffset, f.seq]),
  });
  const fpduSeqs = Object.fromEntries(
    Object.entries(seqs).map(([k, v]) => [k, v.sort((a, b) => a[0] - b[0]).map((x) => x[1])]),
  );
  return { ...truthOfReport(buildReport(r)), fpduSeqs };
}
