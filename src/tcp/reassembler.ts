/**
 * TCP reassembly: a flow table, and per direction an ordered byte stream with frame attribution,
 * explicit gaps and close events. Like gopacket's `reassembly`, it knows nothing of what the stream
 * carries. This file is the entry point and the flows' lifecycle (open, port reuse, idle expiry,
 * end of capture); the work is done by its neighbours:
 *   flow-table.ts     4-tuple lookup
 *   direction.ts      per-flow and per-direction state
 *   stream-builder.ts a segment's payload, FIN and RST into deliveries, held data, gaps and ends
 *   held-pieces.ts, held-memory.ts   out-of-order copies and the memory they are charged
 *   history.ts, overlap.ts           delivered bytes kept, and retransmissions compared with them
 *   flow-stats.ts     the statistics reported per flow
 */
import { TCP_ACK, TCP_SYN, type TcpSegment } from '../net/segment.js';
import type { FindingSink } from '../vocabulary/findings.js';
import { type Dir, Flow } from './direction.js';
import { FlowTable } from './flow-table.js';
import { flowStats, type TcpFlowStats } from './flow-stats.js';
import { HeldMemory } from './held-memory.js';
import { HistoryRings } from './history.js';
import { StreamBuilder } from './stream-builder.js';
import type { FlowConsumer, FlowHandle } from './stream.js';

export interface ReassemblyOptions {
  /** Out-of-order bytes held per flow (both directions), default 16 MiB. */
  maxBufferedPerFlow?: number;
  /** Out-of-order bytes held across all flows, default 64 MiB. */
  maxBufferedTotal?: number;
  /**
   * A hole is declared lost once this many bytes are buffered beyond it, default 4 MiB.
   * (A FIN or RST on the direction, the peer acknowledging beyond the hole, or end of capture do it too.)
   */
  reorderWindow?: number;
  /** Delivered bytes kept per direction to compare overlapping retransmissions, default 64 KiB. */
  historyBytes?: number;
  /**
   * Budget for all directions' history together, default 32 MiB (512 rings of 64 KiB). A ring is taken
   * on a direction's first delivery and given back when the direction ends. When the budget is spent,
   * the ring of a direction that has not delivered since the clock hand last passed it is taken over;
   * if every ring is busy the newcomer goes without and tries again after 4 rings' worth of delivery.
   * Overlaps with bytes no longer in history are counted as retransmissions but not compared.
   */
  maxHistoryTotal?: number;
}

/*
 * Memory, all told: held out-of-order data is charged in whole slabs (4 KiB growing to 256 KiB per
 * direction, plus 64 octets per piece), so maxBufferedTotal bounds the real allocation; history is
 * bounded by maxHistoryTotal; up to 4 MiB of free slabs are kept for reuse. With the defaults that is
 * at most about 100 MiB. Besides that, every flow keeps about 1 KiB of state and statistics until the
 * end (flows() reports them all).
 */

export type { FlowHandle } from './stream.js';
export { MAX_GAPS, type TcpDirectionStats, type TcpFlowStats } from './flow-stats.js';

const MIB = 1024 * 1024;

export class Reassembler {
  private readonly table = new FlowTable();
  private readonly all: Flow[] = [];
  private nextId = 1;
  /**
   * Where a new flow's id comes from: 1, 2, 3... in the order flows open. The parallel pipeline
   * (src/analysis/parallel) replaces it in each worker with the id one thread would have given.
   */
  flowId: () => number = () => this.nextId++;
  /** The direction of the previous segment: consecutive segments mostly share it, saving the hash lookup. */
  private last: Dir | null = null;

  private readonly mem: HeldMemory;
  private readonly streams: StreamBuilder;

  constructor(
    sink: FindingSink,
    private readonly newFlow: (f: FlowHandle) => FlowConsumer | null,
    opts: ReassemblyOptions = {},
  ) {
    const maxPerFlow = opts.maxBufferedPerFlow ?? 16 * MIB;
    const maxTotal = opts.maxBufferedTotal ?? 64 * MIB;
    const reorderWindow = opts.reorderWindow ?? 4 * MIB;
    const histBytes = opts.historyBytes ?? 64 * 1024;
    const histTotal = opts.maxHistoryTotal ?? 32 * MIB;
    const histOn = histBytes > 0 && histTotal >= histBytes;
    const rings = new HistoryRings(histBytes, histOn ? Math.floor(histTotal / histBytes) : 0);
    this.mem = new HeldMemory(maxPerFlow, maxTotal);
    this.streams = new StreamBuilder(sink, this.mem, rings, histOn, reorderWindow, maxPerFlow, maxTotal);
  }

  /** Memory charged for held out-of-order data right now (slab space plus bookkeeping), all flows. */
  bufferedBytes(): number {
    return this.mem.heldCost;
  }

  segment(s: TcpSegment): void {
    let d = this.last;
    if (
      d === null ||
      d.srcPort !== s.srcPort ||
      d.dstPort !== s.dstPort ||
      d.srcAddr !== s.src ||
      d.dstAddr !== s.dst
    ) {
      d = this.table.lookup(s);
    }
    const f = s.flags;
    if (d === null) {
      d = this.open(s);
    } else if ((f & (TCP_SYN | TCP_ACK)) === TCP_SYN && this.reused(d, s.seq)) {
      this.retire(d.flow);
      d = this.open(s);
    }
    this.last = d;
    d.flow.lastFrame = s.frame;
    d.flow.lastSec = s.tsSec + s.tsNsec / 1e9;
    this.streams.segment(d, s);
  }

  /** Ends every flow still open, in the order they opened (`each` is told which flow is ending next). */
  finish(each?: (id: number) => void): void {
    for (const fl of this.all) {
      each?.(fl.id);
      this.streams.closeFlow(fl);
    }
  }

  /**
   * Live capture: ends every flow that has carried no segment for `timeoutSec` seconds before
   * `nowSec` (its directions end as at the end of a capture) and takes it out of the flow table, so
   * its buffers and dissector state can go; a later segment on the same 4-tuple opens a new flow.
   * Returns the statistics of the flows let go (each only once).
   */
  expireIdle(nowSec: number, timeoutSec: number): TcpFlowStats[] {
    const out: TcpFlowStats[] = [];
    for (const fl of this.all) {
      if (fl.expired || nowSec - fl.lastSec < timeoutSec) continue;
      fl.expired = true;
      this.retire(fl);
      if (this.last !== null && this.last.flow === fl) this.last = null;
      out.push(flowStats(fl));
    }
    return out;
  }

  flows(): TcpFlowStats[] {
    return this.all.map(flowStats);
  }

  // ---- flows' lifecycle ----

  private open(s: TcpSegment): Dir {
    // A SYN-ACK's sender is the server; otherwise the first sender (a SYN's sender) is the client.
    const synAck = (s.flags & (TCP_SYN | TCP_ACK)) === (TCP_SYN | TCP_ACK);
    const fl = synAck
      ? new Flow(this.flowId(), s.dst, s.dstPort, s.src, s.srcPort, s.frame)
      : new Flow(this.flowId(), s.src, s.srcPort, s.dst, s.dstPort, s.frame);
    this.all.push(fl);
    for (const d of fl.dirs) this.table.insert(d);
    const c = this.newFlow(fl);
    if (c !== null) {
      fl.dirs[0].consumer = c.directions[0];
      fl.dirs[1].consumer = c.directions[1];
    }
    return synAck ? fl.dirs[1] : fl.dirs[0];
  }

  /** Does a SYN with this ISN start a new connection on d's 4-tuple? */
  private reused(d: Dir, isn: number): boolean {
    if (d.synSeen && d.isn === isn) return false; // a retransmitted SYN
    // After a close, a new ISN is port reuse; on a live flow that already carried data it is a new
    // connection whose predecessor's close was not captured. Before any data it is a fresh attempt.
    return d.flow.closedAny || d.flow.carried();
  }

  /** Ends the flow's open directions and takes it out of the table (its 4-tuple was reused, or it expired). */
  private retire(fl: Flow): void {
    this.streams.closeFlow(fl);
    for (const d of fl.dirs) this.table.remove(d);
  }
}
