/**
 * What the main thread produced while reading, in capture order, waiting for the workers: each
 * packet (for onPacket), each finding of the capture and network layers, and each segment handed
 * to a worker (a slot, filled by the events that worker sends back for it). drain() replays the
 * journal into the pipeline's callbacks as far as the workers have answered, so the callbacks see
 * exactly the sequence one thread would have produced.
 */
import type { PacketRecord } from '../../capture/packet.js';
import type { FindingInput } from '../findings.js';
import type { EventQueue, EventTarget } from './worker-events.js';

const PACKET = 0;
const FINDING = 1;
const SLOT = 2;

type Entry =
  | { k: typeof PACKET; p: PacketRecord }
  | { k: typeof FINDING; rule: string; f: FindingInput }
  | { k: typeof SLOT; worker: number; slot: number };

/** Packet copies are cut from shared 4 MiB blocks, not allocated one by one. */
const ARENA_BLOCK = 4 * 1024 * 1024;

export class CaptureJournal {
  private entries: Entry[] = [];
  private head = 0;
  private block = new Uint8Array(ARENA_BLOCK);
  private used = 0;

  get length(): number {
    return this.entries.length - this.head;
  }

  /** A copy of the packet: the reader's record and bytes are valid only during its callback. */
  packet(p: PacketRecord): void {
    const n = p.data.length;
    if (this.used + n > this.block.length) {
      this.block = new Uint8Array(Math.max(ARENA_BLOCK, n));
      this.used = 0;
    }
    this.block.set(p.data, this.used);
    const data = this.block.subarray(this.used, this.used + n);
    this.used += n;
    this.entries.push({
      k: PACKET,
      p: { frame: p.frame, tsSec: p.tsSec, tsNsec: p.tsNsec, linkType: p.linkType, data, origLen: p.origLen, fileOffset: p.fileOffset, interfaceId: p.interfaceId },
    });
  }

  finding(rule: string, f: FindingInput): void {
    this.entries.push({ k: FINDING, rule, f: { flow: f.flow, from: f.from, frames: [...f.frames], seq: f.seq, message: f.message } });
  }

  slot(worker: number, slot: number): void {
    this.entries.push({ k: SLOT, worker, slot });
  }

  /**
   * Replays entries until one waits for a worker that has not answered yet (`done[w]`: the last
   * slot worker w has answered for).
   */
  drain(done: readonly number[], queues: readonly EventQueue[], to: EventTarget): void {
    const es = this.entries;
    let i = this.head;
    try {
      for (; i < es.length; i++) {
        const e = es[i]!;
        if (e.k === SLOT) {
          if (done[e.worker]! < e.slot) break;
          queues[e.worker]!.replay(e.slot, to);
        } else if (e.k === PACKET) to.opts.onPacket?.(e.p);
        else to.report(e.rule, e.f);
      }
    } finally {
      this.head = i;
      if (this.head > 4096 && this.head * 2 > es.length) {
        this.entries = es.slice(this.head);
        this.head = 0;
      }
    }
  }
}
