/**
 * Live capture through a capture program run as a child: `tcpdump -U -w -` (or `dumpcap -w -`)
 * writes a pcap stream to its standard output and our own reader parses it, so packets keep the
 * kernel's timestamps and original lengths and no native addon is needed. Drop counts come from
 * the program's statistics on standard error: tcpdump prints them on SIGUSR1 (asked for every few
 * seconds) and when it ends; dumpcap when it ends.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { CaptureSummary, PacketRecord } from '../packet.js';
import { readCaptureStream } from '../read-capture.js';
import { LiveCaptureError, isNoDeviceText, isPermissionText, permissionError } from './errors.js';
import { linkTypeOf } from './link-names.js';
import type { LiveOptions } from './cap-source.js';
import type { PacketSource, PacketSourceHandlers, PacketSourceStats } from './packet-source.js';

export type ChildBackend = 'tcpdump' | 'dumpcap';

/** How long a capture program may take to say it is listening, and to end after being asked. */
const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;
const STATS_EVERY_MS = 2_000;
/** The capture program's kernel buffer, as the cap backend asks libpcap for. */
const KERNEL_BUFFER_KIB = 32 * 1024;

function args(tool: ChildBackend, o: LiveOptions): string[] {
  if (tool === 'tcpdump') {
    // -U: a record per packet as it comes; --immediate-mode: no libpcap batching; -n: no DNS;
    // -B: a 32 MiB kernel buffer (tcpdump's 2 MiB default drops packets on "any" under load).
    const a = [
      '-i',
      o.iface,
      '-U',
      '--immediate-mode',
      '-n',
      '-B',
      String(KERNEL_BUFFER_KIB),
      '-s',
      String(o.snaplen),
      '--time-stamp-precision=nano',
      '-w',
      '-',
    ];
    return o.filter ? [...a, o.filter] : a;
  }
  const a = ['-i', o.iface, '-P', '-B', String(KERNEL_BUFFER_KIB / 1024), '-s', String(o.snaplen), '-w', '-'];
  return o.filter ? [...a, '-f', o.filter] : a;
}

export class ChildSource implements PacketSource {
  private child: ChildProcessByStdio<null, Readable, Readable> | null = null;
  private packets = 0;
  private dropped: number | null = null;
  private stopped = false;
  private exited = false;
  private stderr = '';

  constructor(
    private readonly tool: ChildBackend,
    private readonly o: LiveOptions,
  ) {}

  async run(h: PacketSourceHandlers): Promise<CaptureSummary> {
    const child = spawn(this.tool, args(this.tool, this.o), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const exit = new Promise<number | null>((res) => {
      child.once('error', (e) => {
        this.stderr += `${e.message}\n`;
        this.exited = true;
        res(null);
      });
      child.once('exit', (code) => {
        this.exited = true;
        res(code);
      });
    });
    let linkType = -1;
    const listening = new Promise<boolean>((res) => {
      const timer = setTimeout(() => res(false), START_TIMEOUT_MS);
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (s: string) => {
        this.stderr += s;
        this.parseStats();
        // tcpdump: "listening on lo, link-type EN10MB (Ethernet), ..."; dumpcap: "Capturing on 'lo'".
        const m = /listening on \S+, link-type (\S+)/.exec(this.stderr);
        if (m) linkType = linkTypeOf(m[1]!) ?? -1;
        if (m || /Capturing on /.test(this.stderr)) {
          clearTimeout(timer);
          res(true);
        }
        if (this.stderr.length > 65536) this.stderr = this.stderr.slice(-16384);
      });
      void exit.then(() => {
        clearTimeout(timer);
        res(false);
      });
    });
    if (!(await listening)) {
      if (!this.exited) this.kill('SIGKILL');
      await exit;
      // Stopped (Ctrl-C) before the program said it was listening: an empty capture, not an error.
      if (this.stopped)
        return {
          path: this.o.iface,
          format: 'live',
          packets: 0,
          bytes: 0,
          linkTypes: [],
          error: null,
          timestamps: 'capture',
          backend: this.tool,
          dropped: this.dropped,
        };
      throw this.startError();
    }
    h.started?.({ iface: this.o.iface, linkType, backend: this.tool, timestamps: 'capture' });
    const ticker = setInterval(() => h.tick?.(Date.now() / 1000), 1000);
    const statsTimer = this.tool === 'tcpdump' ? setInterval(() => this.kill('SIGUSR1'), STATS_EVERY_MS) : null;
    let failure: unknown = null;
    const onPacket = (p: PacketRecord): void => {
      this.packets = p.frame;
      if (failure !== null) return;
      try {
        h.packet(p);
      } catch (e) {
        failure = e;
        this.stop();
      }
    };
    let summary: CaptureSummary;
    try {
      summary = await readCaptureStream(child.stdout, this.o.iface, onPacket);
    } finally {
      clearInterval(ticker);
      if (statsTimer) clearInterval(statsTimer);
    }
    // Our reader stopped (the program ended its output, or the stream was bad): make sure it ends.
    if (!this.exited) this.stop();
    const code = await exit;
    this.parseStats();
    if (failure !== null) throw failure;
    const base: CaptureSummary = {
      ...summary,
      path: this.o.iface,
      format: 'live',
      timestamps: 'capture',
      backend: this.tool,
      dropped: this.dropped,
    };
    if (!this.stopped && code !== 0 && summary.error === null) {
      const why = this.lastLines() || `exit status ${code}`;
      return {
        ...base,
        error: {
          file: this.o.iface,
          offset: summary.bytes,
          frame: summary.packets + 1,
          message: `${this.tool} ended: ${why}`,
        },
      };
    }
    // An empty stream after a stop (no pcap header yet) is no capture error.
    if (this.stopped && summary.error !== null && summary.packets === 0) return { ...base, error: null };
    return base;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.exited || !this.child) return;
    this.kill('SIGINT');
    const t = setTimeout(() => this.kill('SIGKILL'), STOP_GRACE_MS);
    t.unref();
  }

  stats(): PacketSourceStats {
    return { packets: this.packets, dropped: this.dropped };
  }

  private kill(sig: NodeJS.Signals): void {
    if (this.exited) return;
    try {
      this.child?.kill(sig);
    } catch {
      // already gone
    }
  }

  /** "N packets dropped by kernel" (tcpdump), "Packets received/dropped on interface 'lo': N/M" (dumpcap). */
  private parseStats(): void {
    const all = [
      ...this.stderr.matchAll(/(\d+) packets? dropped by kernel|received\/dropped on interface '[^']*': \d+\/(\d+)/g),
    ];
    const last = all[all.length - 1];
    if (last) this.dropped = Number(last[1] ?? last[2]);
  }

  private lastLines(): string {
    return this.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter(
        (l) =>
          l !== '' &&
          !/^\d+ packets? (captured|received by filter|dropped by kernel)/.test(l) &&
          !/^listening on/.test(l),
      )
      .map((l) => l.replace(/^(tcpdump|dumpcap):\s*/, ''))
      .join('; ');
  }

  private startError(): LiveCaptureError {
    const text = this.lastLines();
    if (/ENOENT|spawn .* ENOENT/.test(text))
      return new LiveCaptureError(
        `-i: ${this.tool} is not installed (apt-get install ${this.tool === 'tcpdump' ? 'tcpdump' : 'wireshark-common'})`,
      );
    if (isPermissionText(text)) return permissionError(this.o.iface, this.tool, text);
    if (isNoDeviceText(text)) return new LiveCaptureError(`-i ${this.o.iface}: ${text}`);
    if (/syntax error|filter/i.test(text) && this.o.filter)
      return new LiveCaptureError(`-f ${JSON.stringify(this.o.filter)}: ${text}`);
    return new LiveCaptureError(`-i ${this.o.iface}: ${this.tool} did not start: ${text || 'no message'}`);
  }
}
