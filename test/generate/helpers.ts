/**
 * Analyses generated capture bytes as the CLI does (DDP/RDMAP on) and reads the report back in the
 * ground truth's shape (src/generate/truth.ts).
 */
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import { truthOfReport, type TruthFinding, type TruthFlow } from '../../src/generate/truth.js';

export async function analyzedTruth(capture: Uint8Array): Promise<{ findings: TruthFinding[]; flows: TruthFlow[] }> {
  const r = await analyze('generated.pcap', { upper: defaultUpper, stream: (async function* () { yield capture; })() });
  return truthOfReport(buildReport(r));
}
