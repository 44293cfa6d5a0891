/**
 * `mpa-dissect tui [capture]`: options to a TUI source, then the terminal UI until the user quits.
 * Refuses (exit 2, one line) when standard output is not a terminal. `tui -i IFACE` builds a
 * TuiSource whose options carry the live packet source and whose frame store is a WindowFrames
 * (randomAccess false); the rest of the UI does not change.
 */
import { statSync } from 'node:fs';
import { defaultUpper } from '../src/analysis/upper.js';
import type { AnalysisOptions } from '../src/analysis/pipeline.js';
import { FileFrames, WindowFrames } from '../src/report/frame-store.js';
import { loadRulesFile } from '../src/report/rules-file.js';
import { compileEventFilter } from '../src/report/fields.js';
import { FilterError, formatFilterError } from '../src/report/filter/filter.js';
import { NO_THRESHOLDS } from '../src/analysis/thresholds.js';
import { CaptureModel, type TuiSource } from '../src/tui/capture-model.js';
import { ViewModel } from '../src/tui/view-model.js';
import { FilterHistory, historyPath } from '../src/tui/filter-history.js';
import { parseForcedMpa, parseForcedTuf, UsageError } from './options.js';
import { openLive } from '../src/capture/live/open-live.js';
import type { BackendChoice } from '../src/capture/live/backend-names.js';
import type { PacketSourceInfo } from '../src/capture/live/packet-source.js';

export interface TuiOptions {
  capture: string;
  displayFilter: string | null;
  rules: string | null;
  mpa: string[];
  tuf?: string[];
  checksums: boolean;
  reassembly?: AnalysisOptions['reassembly'];
  /** `tui -i IFACE`: capture live instead of reading `capture`. */
  live?: TuiLiveArgs;
}

/** The capture options `tui -i` shares with the CLI's `-i` (cli/live.ts). */
export interface TuiLiveArgs {
  iface: string;
  filter: string;
  snaplen: number;
  backend: BackendChoice;
  flowTimeout: number;
}

/** The AnalysisOptions every source shares (decoder, reassembly, rules, --mpa, DDP/RDMAP). */
export function analysisOptions(o: TuiOptions): { options: AnalysisOptions; thresholds: TuiSource['thresholds'] } {
  const config = o.rules !== null ? loadRulesFile(o.rules) : null;
  return {
    options: {
      forced: o.mpa.map(parseForcedMpa),
      forcedTuf: (o.tuf ?? []).map(parseForcedTuf),
      upper: defaultUpper,
      decoder: { checksums: o.checksums },
      ...(o.reassembly ? { reassembly: o.reassembly } : {}),
      rules: config?.overrides ?? null,
    },
    thresholds: config?.thresholds ?? NO_THRESHOLDS,
  };
}

/** A capture file: read in the background, frames read back by offset. A FIFO keeps recent frames only. */
export async function fileSource(
  path: string,
  options: AnalysisOptions,
  thresholds: TuiSource['thresholds'],
): Promise<TuiSource> {
  let regular = true;
  let size: number | null = null;
  try {
    const st = statSync(path);
    regular = st.isFile();
    size = regular ? st.size : null;
  } catch {
    // analyze() says what is wrong with the path; the UI shows it.
  }
  const frames = regular ? await FileFrames.open(path) : new WindowFrames();
  return {
    label: path,
    path,
    options,
    frames,
    randomAccess: regular,
    totalBytes: size,
    ...(thresholds ? { thresholds } : {}),
  };
}

/**
 * A source that cannot be read back (a pipe today; `tui -i IFACE` next): `options` carries the
 * stream or packet source for analyze(); the bytes pane and `w` see the frames still in the window.
 */
export function streamSource(
  label: string,
  options: AnalysisOptions,
  thresholds: TuiSource['thresholds'],
  frames = new WindowFrames(),
): TuiSource {
  return {
    label,
    path: label,
    options,
    frames,
    randomAccess: false,
    totalBytes: null,
    ...(thresholds ? { thresholds } : {}),
  };
}

/**
 * `tui -i IFACE`: the backend and interface are checked and the capture started before the UI
 * takes the terminal, so "no permission", "no such interface" and "no backend" are the CLI's one
 * line and exit 2. Records older than the frame window keep their index entry; their octets are gone.
 */
export function liveSource(
  a: TuiLiveArgs,
  options: AnalysisOptions,
  thresholds: TuiSource['thresholds'],
): { source: TuiSource; started: Promise<PacketSourceInfo> } {
  const opened = openLive(a.backend, { iface: a.iface, filter: a.filter, snaplen: a.snaplen });
  const inner = opened.source;
  let began!: (info: PacketSourceInfo) => void;
  const started = new Promise<PacketSourceInfo>((res) => (began = res));
  const packets: AnalysisOptions['source'] = {
    run: (h) =>
      inner.run({
        ...h,
        started: (info) => {
          h.started?.(info);
          began(info);
        },
      }),
    stop: () => inner.stop(),
    stats: () => inner.stats(),
  };
  const base = streamSource(opened.iface, { ...options, source: packets, flowTimeout: a.flowTimeout }, thresholds);
  return {
    source: {
      ...base,
      live: { iface: opened.iface, backend: opened.backend, stats: () => inner.stats(), stop: () => inner.stop() },
    },
    started,
  };
}

export async function runTui(o: TuiOptions): Promise<number> {
  if (process.stdout.isTTY !== true || process.stdin.isTTY !== true) {
    process.stderr.write(
      'mpa-dissect tui: not a terminal (the TUI needs a terminal on standard input and output); use mpa-dissect CAPTURE, --json or --ndjson instead\n',
    );
    return 2;
  }
  if (o.live) return runLiveTui(o, o.live);
  if (o.capture === '-')
    throw new UsageError(
      'tui reads keys from the terminal, so it cannot read the capture from standard input; give a file',
    );
  checkDisplayFilter(o.displayFilter);
  const { options, thresholds } = analysisOptions(o);
  const source = await fileSource(o.capture, options, thresholds);
  const model = new CaptureModel(source);
  const vm = new ViewModel(model, new FilterHistory(historyPath()));
  if (o.displayFilter !== null && o.displayFilter.trim() !== '') vm.applyFilter(o.displayFilter);
  // Loaded only here: the other commands never pay for blessed.
  const { BlessedScreen } = await import('../src/tui/blessed-screen.js');
  const screen = new BlessedScreen(vm);
  void model.run();
  let code = await screen.done;
  // An unreadable capture: the exit status the CLI gives for it (2), not q's 0.
  if (code === 0 && model.state === 'failed') code = 2;
  source.frames.close();
  return code;
}

async function runLiveTui(o: TuiOptions, a: TuiLiveArgs): Promise<number> {
  checkDisplayFilter(o.displayFilter);
  const { options, thresholds } = analysisOptions(o);
  // Throws the one-line LiveCaptureError (no backend, unknown interface) before the UI starts.
  const { source, started } = liveSource(a, options, thresholds);
  const model = new CaptureModel(source);
  const ran = model.run();
  // A capture program that cannot start (no permission, a bad filter) says so here, still as one line.
  const first = await Promise.race([started.then(() => 'started' as const), ran.then(() => 'ended' as const)]);
  if (first === 'ended' && model.state === 'failed') {
    process.stderr.write(`mpa-dissect: ${model.error ?? `-i ${a.iface}: the capture did not start`}\n`);
    source.frames.close();
    return 2;
  }
  const vm = new ViewModel(model, new FilterHistory(historyPath()));
  if (o.displayFilter !== null && o.displayFilter.trim() !== '') vm.applyFilter(o.displayFilter);
  const { BlessedScreen } = await import('../src/tui/blessed-screen.js');
  const screen = new BlessedScreen(vm);
  let code = await screen.done;
  // q, Ctrl-C, SIGTERM: end the capture (the child tcpdump gets SIGINT, SIGKILL after a grace) and
  // wait for it, so no capture program outlives the UI.
  source.live?.stop();
  await ran;
  if (code === 0 && model.state === 'failed') code = 2;
  source.frames.close();
  return code;
}

/** -Y is checked before the terminal is taken, so a bad filter is the CLI's one line with the caret. */
function checkDisplayFilter(text: string | null): void {
  if (text === null || text.trim() === '') return;
  try {
    compileEventFilter(text);
  } catch (e) {
    if (e instanceof FilterError) throw new UsageError(`-Y: column ${e.column}: ${formatFilterError(text, e)}`);
    throw e;
  }
}
