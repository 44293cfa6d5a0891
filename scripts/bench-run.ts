/** One timed run in its own process (so peak RSS is this run's): `bench-run MODE FILE`. */
import { analyze } from '../src/analysis/pipeline.js';
import { defaultUpper } from '../src/analysis/upper.js';

const [mode, file] = process.argv.slice(2) as ['read' | 'dissect', string];
const t0 = process.hrtime.bigint();
const r = await analyze(file, mode === 'read' ? { dissect: false } : { upper: defaultUpper });
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
const fpdus = r.flows.reduce((n, f) => n + (f.mpa ? f.mpa.directions[0].fpdus + f.mpa.directions[1].fpdus : 0), 0);
process.stdout.write(
  JSON.stringify({
    mode,
    seconds: secs,
    bytes: r.capture.bytes,
    packets: r.capture.packets,
    fpdus,
    errors: r.findings.bySeverity.error,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  }) + '\n',
);
