/**
 * -w FILE: the frames of the events --write-filter selects, as a classic pcap a colleague opens in
 * Wireshark. Each flow written also gets its MPA Request and Reply frames, without which Wireshark
 * does not recognise MPA on the connection. Frames are written in capture order, once each.
 */
import type { PacketRecord } from '../capture/packet.js';
import { captureBytes, copyAnnotated } from './annotate-copy.js';
import { StreamAnnotator } from './annotate-stream.js';
import type { FrameStore } from './frame-store.js';
import type { FrameComments } from './packet-comments.js';
import { PcapFileWriter } from './pcap-writer.js';
import { BlockFile } from './pcapng-writer.js';

export interface ExportResult {
  written: number;
  /** Frames selected but no longer available (standard input beyond the window) or unreadable. */
  missing: number;
  /** Frames left out because their link type differs from the first frame's (pcap holds one). */
  otherLinkType: number;
}

export class FrameExport {
  private readonly wanted = new Set<number>();
  /** Copies taken at selection time when the store cannot read frames back later (stdin). */
  private readonly kept = new Map<number, PacketRecord>();
  private readonly startupFrames = new Map<number, number[]>();
  /** Every frame of the capture, not only those selected (`-Y '' -w`, as tshark writes it). */
  private every = false;
  private lastFrame = 0;

  constructor(
    private readonly store: FrameStore,
    private readonly copyNow: boolean,
  ) {}

  /** The frames of a flow's startup frames, added to whatever is selected from that flow. */
  noteStartup(flow: number, frames: readonly number[]): void {
    const s = this.startupFrames.get(flow);
    if (s) for (const f of frames) s.push(f);
    else this.startupFrames.set(flow, [...frames]);
  }

  /**
   * Every frame is written, whatever is selected: tshark takes an empty display filter as none,
   * and `tshark -Y '' -w` writes the whole capture. Nothing is copied per frame: a stream writes
   * what its window still holds, as for any selection.
   */
  selectEvery(): void {
    this.every = true;
  }

  /** The highest frame number seen (every frame up to it is written in selectEvery mode). */
  seen(frame: number): void {
    if (frame > this.lastFrame) this.lastFrame = frame;
  }

  /** The frames to write, in capture order. */
  private *frames(): Generator<number> {
    if (this.every) for (let f = 1; f <= this.lastFrame; f++) yield f;
    else yield* [...this.wanted].sort((a, b) => a - b);
  }

  select(flow: number | null, frames: readonly number[]): void {
    for (const f of frames) this.add(f);
    if (flow !== null) for (const f of this.startupFrames.get(flow) ?? []) this.add(f);
  }

  private add(frame: number): void {
    if (this.every || this.wanted.has(frame)) return;
    this.wanted.add(frame);
    if (this.copyNow) {
      const p = this.store.get(frame);
      if (p) this.kept.set(frame, p);
    }
  }

  /**
   * Writes the selected frames as pcapng, each with its findings as packet comments. A file is
   * copied block by block (interfaces, timestamps and options as they were: annotate-copy.ts);
   * a stream's kept copies get rebuilt interfaces (annotate-stream.ts).
   */
  async writePcapng(
    path: string,
    capture: string,
    comments: FrameComments,
    maxFrames: number,
    app: string,
  ): Promise<ExportResult> {
    const res: ExportResult = { written: 0, missing: 0, otherLinkType: 0 };
    const out = new BlockFile(path);
    try {
      if (this.copyNow) {
        const w = new StreamAnnotator(out, comments, app, 0, { frames: Infinity, bytes: Infinity, ms: Infinity });
        for (const f of this.frames()) {
          const p = this.every ? this.store.get(f) : this.kept.get(f);
          if (!p) res.missing++;
          else w.note(p);
        }
        w.end();
        res.written = w.written;
      } else {
        const wanted = this.wanted;
        const every = this.every;
        const r = await copyAnnotated(captureBytes(capture), out, {
          comments,
          keep: (f) => every || wanted.has(f),
          maxFrames,
          app,
        });
        res.written = r.written;
        res.missing = (every ? this.lastFrame : this.wanted.size) - r.written;
      }
    } finally {
      out.close();
    }
    return res;
  }

  get size(): number {
    return this.every ? this.lastFrame : this.wanted.size;
  }

  /** Writes the selected frames to `path`, reading them back one at a time (throws when it cannot write). */
  write(path: string): ExportResult {
    const res: ExportResult = { written: 0, missing: 0, otherLinkType: 0 };
    let w: PcapFileWriter | null = null;
    let linkType = -1;
    try {
      for (const f of this.frames()) {
        const p = this.copyNow && !this.every ? (this.kept.get(f) ?? null) : this.store.get(f);
        if (!p) {
          res.missing++;
          continue;
        }
        if (w === null) {
          linkType = p.linkType;
          w = new PcapFileWriter(path, linkType, true);
        }
        if (p.linkType !== linkType) {
          res.otherLinkType++;
          continue;
        }
        w.write({ tsSec: p.tsSec, tsNsec: p.tsNsec, data: p.data, origLen: p.origLen });
        res.written++;
      }
      // An empty export is still a valid pcap (Ethernet), so a CI step that always keeps it works.
      w ??= new PcapFileWriter(path, 1, true);
    } finally {
      w?.close();
    }
    return res;
  }
}
