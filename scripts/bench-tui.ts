/**
 * The terminal UI's figures on a big capture, in its own process (so peak RSS is this run's):
 * `bench-tui FILE`. Runs the capture model and the view model exactly as `mpa-dissect tui` does,
 * without a terminal: the render work of every 100 ms tick (pump, every pane's lines, status) is
 * done and timed, as is the event loop's longest stall while the capture is read in the background.
 * Then browses: the last PDU, one in the middle (rebuilt from the file), the detail tree and bytes.
 * Prints one JSON line.
 */
import { statSync } from 'node:fs';
import { analysisOptions, fileSource } from '../cli/tui.js';
import { CaptureModel } from '../src/tui/capture-model.js';
import { ViewModel } from '../src/tui/view-model.js';

const file = process.argv[2]!;
const t0 = performance.now();
const { options, thresholds } = analysisOptions({
  capture: file,
  displayFilter: null,
  rules: null,
  mpa: [],
  checksums: false,
});
const source = await fileSource(file, options, thresholds);
const model = new CaptureModel(source);
const vm = new ViewModel(model);
vm.resize(120, 40);

let firstFlowMs: number | null = null;
let maxStallMs = 0;
let maxRenderMs = 0;
let last = performance.now();
// The event loop's stall: how late a 10 ms timer fires.
const lag = setInterval(() => {
  const now = performance.now();
  maxStallMs = Math.max(maxStallMs, now - last - 10);
  last = now;
}, 10);
// What the blessed layer does every 100 ms: pump the list, build every pane.
const render = setInterval(() => {
  const a = performance.now();
  vm.pump(20);
  vm.panes();
  vm.status();
  maxRenderMs = Math.max(maxRenderMs, performance.now() - a);
  if (firstFlowMs === null && model.flows.length > 0) firstFlowMs = performance.now() - t0;
}, 100);
await model.run();
clearInterval(lag);
clearInterval(render);
const readSeconds = (performance.now() - t0) / 1000;
vm.settle();

// Browse: the last PDU (cached), then one in the middle (rebuilt through random access).
vm.focus = 'pdus';
const b0 = performance.now();
vm.key('S-g', 'G');
vm.panes();
const lastMs = performance.now() - b0;
const b1 = performance.now();
vm.key('g', 'g');
for (let k = 0; k < 20; k++) vm.key('pagedown');
const mid = vm.selectedItem();
const tree = vm.panes().find((p) => p.id === 'tree')!.lines.length;
const bytes = vm.panes().find((p) => p.id === 'bytes')!.lines.length;
const middleMs = performance.now() - b1;
// The errors-only view over the whole index (verdict bits only: no decoding).
const e0 = performance.now();
vm.key('e', 'e');
vm.settle();
const errorsOnlyMs = performance.now() - e0;

vm.key('e', 'e');
// A display filter over every PDU: records beyond the cache are rebuilt from the file.
const f0 = performance.now();
vm.applyFilter('iwarp_mpa.crc_status == "bad" || iwarp_ddp.msn == 7');
// As the UI does: slices between turns of the event loop, while the file is re-dissected.
while (vm.pending()) {
  vm.pump(40);
  await new Promise((r) => setTimeout(r, vm.waiting() ? 30 : 0));
}
const filterMs = performance.now() - f0;
const filterMatches = vm.visibleCount();

const ix = model.index;
process.stdout.write(
  JSON.stringify({
    megabytes: statSync(file).size / 1e6,
    packets: model.packets,
    items: ix.count,
    fpdus: model.fpdus,
    flows: model.flows.length,
    readSeconds,
    firstFlowMs,
    maxStallMs,
    maxRenderMs,
    indexMB: ix.bytes / 1e6,
    lastPduMs: lastMs,
    middlePdu: mid,
    middlePduMs: middleMs,
    treeLines: tree,
    bytesLines: bytes,
    errorsOnlyMs,
    filterMs,
    filterMatches,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
  }) + '\n',
);
source.frames.close();
process.exit(0);
