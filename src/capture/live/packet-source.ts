/**
 * The packet-source contract: where packets come from when they come from something other than a
 * capture file or a byte stream (a live interface today). The pipeline (src/analysis/pipeline.ts,
 * AnalysisOptions.source) drives one; the CLI (`-i`) and the TUI (`tui -i`) create them.
 *
 * A source calls `packet` once per captured packet in arrival order, with one reused PacketRecord
 * whose `data` is valid only during the call (as the file readers do), and `tick` about once a
 * second with the wall clock even when no packet comes (idle flows are finished on it). `run`
 * resolves with the capture summary once the source has stopped: after `stop()`, or by itself
 * (-c, -a, the capture process ended). A source never throws from `run` for a capture that ends
 * early: the reason is in `summary.error` (one line), as for a truncated file.
 */
import type { CaptureSummary, PacketRecord } from '../packet.js';

/** How packet timestamps were taken: by the kernel/libpcap, or by us when the packet reached us. */
export type TimestampSource = 'capture' | 'arrival';

export interface PacketSourceInfo {
  /** Interface name as given (`lo`, `any`, `eth0`). */
  readonly iface: string;
  /** LINKTYPE_* of every packet this source hands out; -1 when the backend tells only with the first packet (dumpcap). */
  readonly linkType: number;
  readonly backend: string;
  readonly timestamps: TimestampSource;
}

export interface PacketSourceHandlers {
  packet(p: PacketRecord): void;
  /** About once a second, with the wall clock in seconds since the epoch. */
  tick?(nowSec: number): void;
  /** Once, when capturing has begun (packets sent from now on are captured). */
  started?(info: PacketSourceInfo): void;
}

export interface PacketSourceStats {
  /** Packets handed out so far. */
  packets: number;
  /** Packets the kernel or libpcap dropped, as the backend last reported; null when it cannot tell. */
  dropped: number | null;
}

export interface PacketSource {
  run(h: PacketSourceHandlers): Promise<CaptureSummary>;
  /** Ends the capture (idempotent); `run` resolves once the last packet is handed out. */
  stop(): void;
  stats(): PacketSourceStats;
}
