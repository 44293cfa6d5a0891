/**
 * What the main thread produced while reading, in capture order, waiting for the workers: each
 * packet (for onPacket), each finding of the capture and network layers, and each segment handed
 * to a worker (a slot, filled by the events that worker sends back for it). drain() replays the
 * journal into the pipeline's callbacks as far as the workers have answered, so the callbacks see
 * exactly the sequence one thread would have produced.
 *
 * A FIFO of fixed-width numeric rows (a ring in one Float64Array): a packet or a segment costs no
 * object. Findings and packet bytes, when kept, wait in side queues.
 */
import type { PacketRecord } from '../../capture/packet.js';
import type { FindingInput } from '../../vocabulary/findings.js';
import type { EventQueue, EventTarget } from './worker-events.js';

const PACKET = 0;
const FINDING = 1;
const SLOT = 2;
const WIDTH = 8;

/** Packet copies are cut from shared 4 MiB blocks, not allocated one by one. */
const ARENA_BLOCK = 4 * 1024 * 1024;
const EMPTY = new Uint8Array(0);

export class CaptureJournal {
  private rows = new Float64Array(WIDTH * 4096);
  /** Ring positions, in rows. */
  private head = 0;
  private count = 0;
  private readonly findings: Array<{ rule: string; f: FindingInput }> = [];
  private findingsHead = 0;
  private readonly bytes: Uint8Array[] = [];
  private bytesHead = 0;
  private block = new Uint8Array(0);
  private used = 0;
  /** The record onPacket is handed (valid during the call, as a reader's). */
  private readonly rec: PacketRecord = {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    linkType: 0,
    data: EMPTY,
    origLen: 0,
    fileOffset: 0,
    interfaceId: 0,
  };

  /** `keepBytes`: onPacket reads the packet's bytes, so they are copied until its turn. */
  constructor(private readonly keepBytes: boolean) {}

  get length(): number {
    return this.count;
  }

  private row(): number {
    const cap = this.rows.length / WIDTH;
    if (this.count === cap) {
      // Full: unwrap into a ring twice the size.
      const bigger = new Float64Array(this.rows.length * 2);
      const h = this.head * WIDTH;
      bigger.set(this.rows.subarray(h));
      bigger.set(this.rows.subarray(0, h), this.rows.length - h);
      this.rows = bigger;
      this.head = 0;
    }
    const r = (this.head + this.count++) % (this.rows.length / WIDTH);
    return r * WIDTH;
  }

  packet(p: PacketRecord): void {
    const o = this.row();
    const r = this.rows;
    r[o] = PACKET;
    r[o + 1] = p.frame;
    r[o + 2] = p.tsSec;
    r[o + 3] = p.tsNsec;
    r[o + 4] = p.linkType;
    r[o + 5] = p.origLen;
    r[o + 6] = p.fileOffset;
    r[o + 7] = p.interfaceId;
    if (this.keepBytes) this.bytes.push(this.copy(p.data));
  }

  private copy(d: Uint8Array): Uint8Array {
    const n = d.length;
    if (this.used + n > this.block.length) {
      this.block = new Uint8Array(Math.max(ARENA_BLOCK, n));
      this.used = 0;
    }
    this.block.set(d, this.used);
    const v = this.block.subarray(this.used, this.used + n);
    this.used += n;
    return v;
  }

  finding(rule: string, f: FindingInput): void {
    this.rows[this.row()] = FINDING;
    this.findings.push({
      rule,
      f: { flow: f.flow, from: f.from, frames: [...f.frames], seq: f.seq, message: f.message },
    });
  }

  slot(worker: number, slot: number): void {
    const o = this.row();
    this.rows[o] = SLOT;
    this.rows[o + 1] = worker;
    this.rows[o + 2] = slot;
  }

  /**
   * Replays entries until one waits for a worker that has not answered yet (`done[w]`: the last
   * slot worker w has answered for).
   */
  drain(done: readonly number[], queues: readonly EventQueue[], to: EventTarget): void {
    const r = this.rows;
    const cap = r.length / WIDTH;
    while (this.count > 0) {
      const o = this.head * WIDTH;
      const kind = r[o];
      if (kind === SLOT) {
        const w = r[o + 1]!;
        const slot = r[o + 2]!;
        if (done[w]! < slot) return;
        this.advance(cap);
        queues[w]!.replay(slot, to);
      } else if (kind === PACKET) {
        this.advance(cap);
        const p = this.rec;
        p.frame = r[o + 1]!;
        p.tsSec = r[o + 2]!;
        p.tsNsec = r[o + 3]!;
        p.linkType = r[o + 4]!;
        p.origLen = r[o + 5]!;
        p.fileOffset = r[o + 6]!;
        p.interfaceId = r[o + 7]!;
        p.data = this.keepBytes ? this.take(this.bytes, this.bytesHead++) : EMPTY;
        to.opts.onPacket?.(p);
      } else {
        this.advance(cap);
        const e = this.take(this.findings, this.findingsHead++);
        to.report(e.rule, e.f);
      }
    }
  }

  private advance(cap: number): void {
    this.head = (this.head + 1) % cap;
    this.count--;
    if (this.findingsHead > 1024 && this.findingsHead * 2 > this.findings.length) {
      this.findings.splice(0, this.findingsHead);
      this.findingsHead = 0;
    }
    if (this.bytesHead > 1024 && this.bytesHead * 2 > this.bytes.length) {
      this.bytes.splice(0, this.bytesHead);
      this.bytesHead = 0;
    }
  }

  private take<T>(q: T[], i: number): T {
    const v = q[i]!;
    q[i] = undefined as unknown as T; // let it go now: the queue is trimmed only now and then
    return v;
  }
}
