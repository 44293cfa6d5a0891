/**
 * Frames read back after the pipeline has moved on, for -x (the octets of a record) and -w (the
 * frames to export). A file is read again by offset; standard input cannot be, so its recent
 * frames are kept in a bounded window of copies.
 */
import type { PacketRecord } from '../capture/packet.js';
import { openRandomAccess, type RandomAccessCapture } from '../capture/random-access.js';
import type { FindingInput, FindingSink } from '../vocabulary/findings.js';
import { PacketDecoder } from '../net/decoder.js';
import { endpoint } from '../net/segment.js';

export interface FrameStore {
  /** Called with every packet as it is read. */
  note(p: PacketRecord): void;
  /** The frame (own copy of its bytes), or null when it cannot be had any more. */
  get(frame: number): PacketRecord | null;
  close(): void;
}

/** Frames FileFrames keeps after reading them back (a frame holds at most 256 KiB: 1 MiB in all). */
const RECENT = 4;

/**
 * A capture file: remembers each frame's offset (8 octets per frame) and reads it back on demand.
 * `ra` is null when the file could not be opened for reading back (its frames are then missing).
 * The last few frames read are kept: -x reads a frame back for every record it carries, and a
 * segment of small FPDUs carries hundreds (two reads and a copy each, otherwise).
 */
export class FileFrames implements FrameStore {
  private offsets = new Float64Array(1024);
  private count = 0;
  private readonly recent: Array<PacketRecord | null> = new Array<PacketRecord | null>(RECENT).fill(null);
  private next = 0;

  constructor(private readonly ra: RandomAccessCapture | null) {}

  /** Opens `path` for reading back; a file that cannot be opened yields a store with no frames. */
  static async open(path: string): Promise<FileFrames> {
    try {
      return new FileFrames(await openRandomAccess(path));
    } catch {
      // The capture reader reports why the file is unreadable; reading back just finds nothing.
      return new FileFrames(null);
    }
  }

  note(p: PacketRecord): void {
    if (p.frame >= this.offsets.length) {
      const bigger = new Float64Array(Math.max(this.offsets.length * 2, p.frame + 1));
      bigger.set(this.offsets);
      this.offsets = bigger;
    }
    this.offsets[p.frame] = p.fileOffset;
    if (p.frame > this.count) this.count = p.frame;
  }

  get(frame: number): PacketRecord | null {
    if (!this.ra || frame < 1 || frame > this.count) return null;
    for (const p of this.recent) if (p !== null && p.frame === frame && p.fileOffset === this.offsets[frame]) return p;
    const p = this.ra.read(this.offsets[frame]!, frame);
    if (p !== null) {
      this.recent[this.next] = p;
      this.next = (this.next + 1) % RECENT;
    }
    return p;
  }

  close(): void {
    this.recent.fill(null);
    this.ra?.close();
  }
}

/** Standard input: copies of the most recent frames, up to a byte and a frame budget. */
export class WindowFrames implements FrameStore {
  private readonly frames = new Map<number, PacketRecord>();
  private bytes = 0;

  constructor(
    private readonly maxBytes = 64 * 1024 * 1024,
    private readonly maxFrames = 200_000,
  ) {}

  note(p: PacketRecord): void {
    // A copy, never a view: `data` may be a Buffer (the cap backend's, reused for every packet),
    // whose slice() shares memory.
    this.frames.set(p.frame, { ...p, data: new Uint8Array(p.data) });
    this.bytes += p.data.length;
    // Maps iterate in insertion order: the first key is the oldest frame.
    while (this.bytes > this.maxBytes || this.frames.size > this.maxFrames) {
      const oldest = this.frames.keys().next();
      if (oldest.done === true) break;
      this.bytes -= this.frames.get(oldest.value)!.data.length;
      this.frames.delete(oldest.value);
    }
  }

  get(frame: number): PacketRecord | null {
    return this.frames.get(frame) ?? null;
  }

  close(): void {
    this.frames.clear();
    this.bytes = 0;
  }
}

const quiet: FindingSink = { report: (_id: string, _f: FindingInput) => {} };
/** streamBytes' decoder, kept between calls while it holds no fragments. */
let spare: PacketDecoder | null = null;

/** Octets of one direction's stream, rebuilt from the frames that carried them. */
export interface StreamBytes {
  bytes: Uint8Array;
  /** 1 where the octet was found in a frame that could be read back. */
  have: Uint8Array;
}

/**
 * Rebuilds `length` stream octets from absolute sequence number `seq`, sent by `from`, out of
 * `frames`. Octets no frame supplied stay marked missing (a frame gone from the window, an IP
 * fragment, a snaplen cut).
 */
export function streamBytes(
  store: FrameStore,
  frames: readonly number[],
  from: string,
  seq: number,
  length: number,
): StreamBytes {
  const bytes = new Uint8Array(length);
  const have = new Uint8Array(length);
  // Each call decodes its frames as a new decoder would: the one kept for the next call holds no
  // fragments of this call's frames (a decoder made per record was a tenth of -x's time).
  spare ??= new PacketDecoder(quiet);
  const dec = spare;
  for (const fr of frames) {
    const p = store.get(fr);
    if (!p) continue;
    dec.decode(p, (s) => {
      if (endpoint(s.src, s.srcPort) !== from) return;
      const d = (s.seq - seq) | 0; // signed distance, so sequence wrap is harmless
      const pl = s.payload;
      const lo = Math.max(0, -d);
      const hi = Math.min(pl.length, length - d);
      for (let i = lo; i < hi; i++) {
        if (have[d + i]) continue;
        bytes[d + i] = pl[i]!;
        have[d + i] = 1;
      }
    });
  }
  if (dec.holdsFragments) spare = null;
  return { bytes, have };
}
