/**
 * `mpa-dissect -i IFACE`: the live-capture side of the CLI. Turns tshark's capture options (-i, -f,
 * -s, -c, -a, -w, -b) into a packet source for the same pipeline as files, and adds what only a
 * capture that may never end needs: -w of every packet (a ring with -b), the -a duration stop,
 * Ctrl-C/SIGTERM ending the run cleanly (summary, --json/--junit, complete -w files, the capture
 * program ended), a status line on stderr, and idle flows finished as NDJSON `flow` events.
 */
import type { AnalysisOptions, FlowResult } from '../src/analysis/pipeline.js';
import type { Finding } from '../src/vocabulary/findings.js';
import type { CaptureSummary, PacketRecord } from '../src/capture/packet.js';
import { openLive } from '../src/capture/live/open-live.js';
import type { BackendChoice } from '../src/capture/live/backend-names.js';
import type { PacketSource, PacketSourceHandlers, PacketSourceStats } from '../src/capture/live/packet-source.js';
import { CaptureFileWriter, type RingOptions } from '../src/report/ring-writer.js';
import { UsageError } from './options.js';
import { erasingFirst, type RunIo } from './output.js';
import { plural } from '../src/report/text.js';

export interface LiveArgs {
  iface: string;
  filter: string;
  snaplen: number;
  backend: BackendChoice;
  /** -a duration:S, seconds; null: until stopped. */
  duration: number | null;
  /** -w FILE: every captured packet. */
  write: string | null;
  ring: RingOptions | null;
  flowTimeout: number;
  /** Draw the status line on stderr (a terminal). */
  status: boolean;
}

/** `-a duration:S` and `-a packets:N` (tshark's autostop conditions; repeatable). */
export function parseAutostop(list: readonly string[]): { duration: number | null; packets: number | null } {
  let duration: number | null = null;
  let packets: number | null = null;
  for (const item of list.flatMap((s) => s.split(','))) {
    const m = /^(duration|packets):(\d+(?:\.\d+)?)$/.exec(item.trim());
    if (!m) throw new UsageError(`-a: "${item}" is not duration:SECONDS or packets:COUNT`);
    const v = Number(m[2]);
    if (!(v > 0)) throw new UsageError(`-a: ${m[1]} must be greater than 0`);
    if (m[1] === 'duration') duration = v;
    else {
      if (!Number.isInteger(v)) throw new UsageError(`-a: packets must be a whole number`);
      packets = v;
    }
  }
  return { duration, packets };
}

/** `-b filesize:MB,files:N` (repeatable; filesize in MB = 1 000 000 octets, fractions allowed). */
export function parseRing(list: readonly string[]): RingOptions | null {
  if (list.length === 0) return null;
  let fileSize: number | null = null;
  let files: number | null = null;
  for (const item of list.flatMap((s) => s.split(','))) {
    const m = /^(filesize|files):(\d+(?:\.\d+)?)$/.exec(item.trim());
    if (!m) throw new UsageError(`-b: "${item}" is not filesize:MB or files:N`);
    const v = Number(m[2]);
    if (m[1] === 'filesize') {
      if (!(v > 0)) throw new UsageError('-b: filesize must be greater than 0 (MB)');
      fileSize = Math.max(1024, Math.round(v * 1e6));
    } else {
      if (!Number.isInteger(v) || v < 1) throw new UsageError('-b: files must be a whole number of at least 1');
      files = v;
    }
  }
  if (fileSize === null) throw new UsageError('-b: give filesize:MB (files:N alone does not say when to switch files)');
  return { fileSize, files };
}

/** The live-capture pieces run() plugs into the pipeline (RunOptions.live). */
export interface LiveHooks {
  readonly source: PacketSource;
  /** Adds live behaviour to the pipeline options: packets to -w, counts for the status line, idle flows. */
  wrap(opts: AnalysisOptions, flowEnded: (f: FlowResult) => void): void;
  /** After the run (also after a failure): -w files closed, status line erased, signals released. */
  end(): void;
  /** Calls `fn` on every tick of the source (about every second), e.g. to write out held frames. */
  everyTick?(fn: (now: number) => void): void;
}

/** The status line: packets, flows, FPDUs, errors, drops; redrawn twice a second on stderr. */
class StatusLine {
  packets = 0;
  flows = 0;
  fpdus = 0;
  errors = 0;
  private drawn = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly err: (s: string) => void,
    private readonly stats: () => PacketSourceStats,
    private readonly iface: string,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.draw(), 500);
    this.timer.unref();
  }

  draw(): void {
    const d = this.stats().dropped;
    this.err(
      `\r${this.iface}: ${plural(this.packets, 'packet')}  ${plural(this.flows, 'flow')}  ${plural(this.fpdus, 'FPDU')}  ${plural(this.errors, 'error')}  ${d === null ? 'drops n/a' : `${d} dropped`}\x1b[K`,
    );
    this.drawn = true;
  }

  /** Erases the line (before other output reaches the same terminal). */
  clear(): void {
    if (this.drawn) this.err('\r\x1b[K');
    this.drawn = false;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
  }
}

/**
 * Opens the capture (backend, interface; throws a one-line LiveCaptureError) and returns the hooks
 * and the output channels to give run(): when the status line shares the terminal with the event
 * lines, each write to stdout first erases it.
 */
export function startLive(a: LiveArgs, io: RunIo): { hooks: LiveHooks; io: RunIo } {
  const opened = openLive(a.backend, { iface: a.iface, filter: a.filter, snaplen: a.snaplen });
  const inner = opened.source;
  const writer = a.write !== null ? new CaptureFileWriter(a.write, a.ring ?? { fileSize: null, files: null }) : null;
  const status = a.status ? new StatusLine(io.err, () => inner.stats(), opened.iface) : null;
  let linkType = 1;
  const tickers: Array<(now: number) => void> = [];
  let timer: NodeJS.Timeout | null = null;
  let signals = 0;
  const onSignal = (): void => {
    // The first Ctrl-C or SIGTERM ends the capture cleanly; a second one quits at once.
    if (++signals > 1) process.exit(130);
    source.stop();
  };
  // A decorator of the backend's source: -w, -a duration, flushing on ticks.
  const source: PacketSource = {
    run(h: PacketSourceHandlers): Promise<CaptureSummary> {
      return inner.run({
        packet: h.packet,
        tick(now) {
          writer?.flush();
          for (const fn of tickers) fn(now);
          h.tick?.(now);
        },
        started(info) {
          // As tshark says it; tests and scripts wait for this line before sending traffic.
          io.err(
            `Capturing on '${info.iface}' (${info.backend}, ${info.timestamps === 'arrival' ? 'timestamps on arrival' : 'kernel timestamps'})\n`,
          );
          // dumpcap does not name the link type before its first packet: the writer then opens on it.
          if (info.linkType >= 0) {
            linkType = info.linkType;
            writer?.start(info.linkType);
          }
          if (a.duration !== null) {
            timer = setTimeout(() => inner.stop(), a.duration * 1000);
          }
          status?.start();
          h.started?.(info);
        },
      });
    },
    stop: () => inner.stop(),
    stats: () => inner.stats(),
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const hooks: LiveHooks = {
    source,
    everyTick(fn) {
      tickers.push(fn);
    },
    wrap(opts, flowEnded) {
      opts.source = source;
      opts.flowTimeout = a.flowTimeout;
      opts.onFlowEnd = flowEnded;
      const onPacket = opts.onPacket;
      opts.onPacket = (p: PacketRecord) => {
        if (status) status.packets++;
        writer?.write(p);
        onPacket?.(p);
      };
      if (status) {
        const onFlow = opts.onFlow;
        opts.onFlow = (h) => {
          status.flows++;
          onFlow?.(h);
        };
        const onFpdu = opts.onFpdu;
        opts.onFpdu = (f) => {
          status.fpdus++;
          onFpdu?.(f);
        };
        const onFinding = opts.onFinding;
        opts.onFinding = (f: Finding) => {
          if (f.severity === 'error') status.errors++;
          onFinding?.(f);
        };
      }
    },
    end() {
      if (timer) clearTimeout(timer);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      status?.stop();
      writer?.close(linkType);
    },
  };
  const wrapped: RunIo = status ? erasingFirst(io, () => status.clear()) : io;
  return { hooks, io: wrapped };
}
