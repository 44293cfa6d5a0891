/**
 * `npm run bench`: generates a 1 GB MPA capture (markers and CRC both ways), then times
 * (1) reading + TCP reassembly and (2) full dissection (MPA framing, markers, CRC32c, DDP/RDMAP),
 * each in its own process, and prints MB/s, packets/s and peak RSS against the targets.
 * BENCH_BYTES overrides the size; BENCH_FILE reuses an existing capture.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateBenchCapture } from './bench-generate.js';
import { crc32cImplementation } from '../dissectors/mpa/crc32c.js';

const here = dirname(fileURLToPath(import.meta.url));
const size = Number(process.env['BENCH_BYTES'] ?? 1e9);
const keep = !!process.env['BENCH_FILE'];
const file = process.env['BENCH_FILE'] ?? join(tmpdir(), `mpa-dissect-bench-${process.pid}.pcap`);
if (!existsSync(file)) {
  const t = Date.now();
  const g = generateBenchCapture(file, size);
  console.log(`generated ${file}: ${(g.bytes / 1e6).toFixed(0)} MB, ${g.packets} packets, ${g.fpdus} FPDUs in ${((Date.now() - t) / 1000).toFixed(1)} s`);
}
const mb = statSync(file).size / 1e6;
console.log(`CRC32c implementation: ${crc32cImplementation() === 'native' ? 'native (@node-rs/crc32)' : 'JS (slicing-by-16)'}`);
const targets = { read: { mbps: 1000, rss: 200 }, dissect: { mbps: 500, rss: 200 } };
try {
  for (const mode of ['read', 'dissect'] as const) {
    // One warm-up for the page cache, then the measured run.
    const run = () => JSON.parse(execFileSync(process.execPath, [join(here, 'bench-run.js'), mode, file], { encoding: 'utf8' })) as { seconds: number; packets: number; fpdus: number; errors: number; maxRssMB: number };
    run();
    const r = run();
    const mbps = mb / r.seconds;
    const t = targets[mode];
    console.log(
      `${mode === 'read' ? 'read + reassemble' : 'full dissection '}: ${mbps.toFixed(0)} MB/s, ${(r.packets / r.seconds / 1e3).toFixed(0)} kpackets/s, ` +
        `peak RSS ${r.maxRssMB.toFixed(0)} MB${mode === 'dissect' ? `, ${r.fpdus} FPDUs, ${r.errors} errors` : ''}` +
        `  [target > ${t.mbps} MB/s: ${mbps >= t.mbps ? 'met' : 'NOT met'}; RSS < ${t.rss} MB: ${r.maxRssMB < t.rss ? 'met' : 'NOT met'}]`,
    );
  }
  // The terminal UI on the same capture: peak RSS while it is read and browsed (target < 300 MB).
  const tui = JSON.parse(execFileSync(process.execPath, [join(here, 'bench-tui.js'), file], { encoding: 'utf8' })) as { readSeconds: number; firstFlowMs: number | null; maxStallMs: number; items: number; indexMB: number; middlePduMs: number; maxRssMB: number };
  console.log(
    `terminal UI      : read in ${tui.readSeconds.toFixed(1)} s, first flow after ${tui.firstFlowMs?.toFixed(0) ?? '-'} ms, longest event-loop stall ${tui.maxStallMs.toFixed(0)} ms, ` +
      `${tui.items} items in a ${tui.indexMB.toFixed(0)} MB index, a PDU rebuilt from the file in ${tui.middlePduMs.toFixed(0)} ms, peak RSS ${tui.maxRssMB.toFixed(0)} MB` +
      `  [RSS < 300 MB: ${tui.maxRssMB < 300 ? 'met' : 'NOT met'}; stall < 100 ms: ${tui.maxStallMs < 100 ? 'met' : 'NOT met'}]`,
  );
  // Output into a stalled pipe: back-pressure and memory on hostile outputs (bound 300 MB).
  console.log('output into a stalled pipe (256k zero-length FPDUs; 1M empty records):');
  try {
    execFileSync(process.execPath, [join(here, 'bench-output.js')], { stdio: 'inherit' });
  } catch {
    console.log('output bench: a case broke its bound (see the FAIL line above)');
  }
  // Many flows: 100,000 one-segment TCP flows, `-q` and `--json` (target: seconds, < 300 MB).
  console.log('many flows (per-flow state and the end-of-run report):');
  execFileSync(process.execPath, [join(here, 'bench-flows.js')], { stdio: 'inherit' });
} finally {
  if (!keep) unlinkSync(file);
}
