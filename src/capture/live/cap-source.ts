/**
 * Live capture through the cap binding (libpcap in this process). cap hands out the bytes of each
 * packet but no pcap header: no timestamp and no original length. Packets are therefore stamped
 * when they reach us ("timestamps": "arrival" in the report; libpcap runs in immediate mode, so
 * that is microseconds after the kernel saw them, but it is not the kernel's time), and the
 * original length of a frame that filled the snaplen is read from its IP header (wire-length.ts):
 * cap fixes libpcap's snaplen at 65535 octets, below loopback's 65536-octet MTU and the frames
 * GRO/TSO hand over, so such a frame is a cut frame (TCP sees a gap of exactly the missing octets
 * and MPA frames across it), never a malformed one. cap reports no drop counts.
 */
import type { CaptureSummary, PacketRecord } from '../packet.js';
import { loadCap, type CapHandle } from './cap-binding.js';
import { LiveCaptureError, isNoDeviceText, isPermissionText, permissionError } from './errors.js';
import { linkTypeOf } from './link-names.js';
import { wireLengthFromHeaders } from './wire-length.js';
import type { PacketSource, PacketSourceHandlers, PacketSourceStats } from './packet-source.js';

export interface LiveOptions {
  iface: string;
  /** BPF capture filter (-f), '' for none. */
  filter: string;
  /** Octets kept per packet (-s). */
  snaplen: number;
}

/** libpcap's own buffer: large, so a burst on a busy link is not dropped while JavaScript is busy. */
const KERNEL_BUFFER = 32 * 1024 * 1024;
/** cap's fixed libpcap snaplen (binding.cc: pcap_set_snaplen(65535)). */
export const CAP_MAX_SNAPLEN = 65535;

/**
 * Every binding object this process made, kept referenced until it ends: one the garbage collector
 * takes (after a failed open, or after close()) crashes the process in the binding's destructor
 * (Pcap::~Pcap -> AsyncWrap::EmitDestroy: SIGSEGV), as it did at the end of a live run when a
 * collection came after the capture was closed. One small object per capture started.
 */
const RETIRED: unknown[] = [];

export class CapSource implements PacketSource {
  private cap: CapHandle | null = null;
  private packets = 0;
  private bytes = 0;
  private done: (() => void) | null = null;
  private stopped = false;
  private failure: Error | null = null;
  private readonly rec: PacketRecord = {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    linkType: 0,
    data: new Uint8Array(0),
    origLen: 0,
    fileOffset: 0,
    interfaceId: 0,
  };

  constructor(private readonly o: LiveOptions) {}

  run(h: PacketSourceHandlers): Promise<CaptureSummary> {
    const mod = loadCap();
    if (!mod) return Promise.reject(new LiveCaptureError('-i: the cap binding is not available'));
    const c = new mod.Cap();
    RETIRED.push(c);
    const buf = Buffer.alloc(Math.min(Math.max(this.o.snaplen, 64), CAP_MAX_SNAPLEN));
    let lt: string;
    try {
      lt = c.open(this.o.iface, this.o.filter, KERNEL_BUFFER, buf);
    } catch (e) {
      // A failed open (a filter libpcap rejects, no permission): c stays in RETIRED (see above).
      const msg = e instanceof Error ? e.message : String(e);
      if (isPermissionText(msg)) return Promise.reject(permissionError(this.o.iface, 'cap', msg));
      if (isNoDeviceText(msg)) return Promise.reject(new LiveCaptureError(`-i ${this.o.iface}: ${msg}`));
      return Promise.reject(
        new LiveCaptureError(
          this.o.filter ? `-f ${JSON.stringify(this.o.filter)}: ${msg}` : `-i ${this.o.iface}: ${msg}`,
        ),
      );
    }
    const linkType = linkTypeOf(lt);
    if (linkType === null) {
      c.close();
      return Promise.reject(new LiveCaptureError(`-i ${this.o.iface}: link type ${lt} is not one mpa-dissect decodes`));
    }
    this.cap = c;
    const rec = this.rec;
    rec.linkType = linkType;
    // A frame that filled the buffer (the snaplen) may have been longer on the wire.
    const full = buf.length;
    c.on('packet', (nbytes: number, truncated: boolean) => {
      if (this.stopped) return;
      // Arrival time, without allocating: the high-resolution clock against the epoch (sub-microsecond).
      const ms = performance.timeOrigin + performance.now();
      const sec = Math.floor(ms / 1000);
      rec.tsSec = sec;
      rec.tsNsec = Math.min(999_999_999, Math.round((ms - sec * 1000) * 1e6));
      rec.frame = ++this.packets;
      rec.data = buf.subarray(0, nbytes);
      rec.origLen =
        truncated || nbytes >= full ? Math.max(nbytes, wireLengthFromHeaders(rec.data, linkType) ?? nbytes) : nbytes;
      rec.fileOffset = this.bytes;
      this.bytes += nbytes;
      try {
        h.packet(rec);
      } catch (e) {
        this.failure = e instanceof Error ? e : new Error(String(e));
        this.stop();
      }
    });
    h.started?.({ iface: this.o.iface, linkType, backend: 'cap', timestamps: 'arrival' });
    const ticker = setInterval(() => h.tick?.(Date.now() / 1000), 1000);
    return new Promise<CaptureSummary>((resolve, reject) => {
      this.done = () => {
        clearInterval(ticker);
        if (this.failure) {
          reject(this.failure);
          return;
        }
        resolve({
          path: this.o.iface,
          format: 'live',
          packets: this.packets,
          bytes: this.bytes,
          linkTypes: [linkType],
          error: null,
          timestamps: 'arrival',
          backend: 'cap',
          dropped: null,
        });
      };
      if (this.stopped) this.finish();
    });
  }

  stop(): void {
    if (this.stopped && this.cap === null) return;
    this.stopped = true;
    // Closing from inside cap's packet callback is allowed (the binding defers the pcap_close).
    setImmediate(() => this.finish());
  }

  private finish(): void {
    if (this.cap) {
      this.cap.removeAllListeners('packet');
      this.cap.close();
      this.cap = null;
    }
    const d = this.done;
    this.done = null;
    d?.();
  }

  stats(): PacketSourceStats {
    return { packets: this.packets, dropped: null };
  }
}
