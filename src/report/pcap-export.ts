/**
 * -w FILE: the frames of the events --write-filter selects, as a classic pcap a colleague opens in
 * Wireshark. Frames are written in capture order, once each.
 *
 * An evidence file must show the vendor what it showed us: a CRC error seen through the markers and
 * the framing of its connection is a different capture without them (framing lost, a resync, no FPDU
 * at all). So each flow a selected event belongs to is written whole, handshake and MPA startup
 * frames included (without the Request and Reply Wireshark does not recognise MPA), when it is at
 * most CONTEXT_BYTES; a larger one is written from its first frame up to its last selected frame
 * when that prefix fits, else only its selected and startup frames, and `partialFlows` says so. A
 * stream (standard input, a pipe, gzip) cannot be read again: its context comes from the window of
 * recent frames it keeps, and what has left the window is counted as missing.
 */
import type { PacketRecord } from '../capture/packet.js';
import { captureBytes, copyAnnotated } from './annotate-copy.js';
import { StreamAnnotator } from './annotate-stream.js';
import type { FrameStore } from './frame-store.js';
import type { FrameComments } from './packet-comments.js';
import { PcapFileWriter } from './pcap-writer.js';
import { BlockFile } from './pcapng-writer.js';
import { PacketDecoder } from '../net/decoder.js';
import { endpoint, type TcpSegment } from '../net/segment.js';
import type { FindingSink } from '../vocabulary/findings.js';

/** Largest flow (captured octets) written whole, or prefix written, as the context of its events. */
export const CONTEXT_BYTES = 64 * 1024 * 1024;

/** The flows' frames are learned by a second decode; the analysis reports what it finds. */
const NO_FINDINGS: FindingSink = { report: () => undefined };

/** One TCP connection's frames (by its two endpoints), in capture order: numbers and captured lengths. */
class FlowFrames {
  constructor(
    /** The two endpoints ("addr:port"), in the order of the connection's key. */
    readonly a: string,
    readonly b: string,
    /** The endpoint that sent the connection's first segment (its SYN): the client. */
    readonly client: string,
  ) {}
  frames = new Uint32Array(16);
  /** Captured octets up to and including each frame. */
  upTo = new Float64Array(16);
  n = 0;

  add(frame: number, octets: number): void {
    if (this.n > 0 && this.frames[this.n - 1] === frame) return; // one frame, two segments (IP fragments)
    if (this.n === this.frames.length) {
      const f = new Uint32Array(this.n * 2);
      f.set(this.frames);
      this.frames = f;
      const u = new Float64Array(this.n * 2);
      u.set(this.upTo);
      this.upTo = u;
    }
    this.upTo[this.n] = (this.n > 0 ? this.upTo[this.n - 1]! : 0) + octets;
    this.frames[this.n++] = frame;
  }

  get octets(): number {
    return this.n > 0 ? this.upTo[this.n - 1]! : 0;
  }
}

/** The key of a connection whichever way a segment goes. */
function connKey(a: string, b: string): string {
  return a < b ? `${a} ${b}` : `${b} ${a}`;
}

/** An endpoint's address: "10.0.0.1:4420" -> "10.0.0.1", "[fd00::1]:4420" -> "[fd00::1]". */
function addressOf(ep: string): string {
  return ep.slice(0, ep.lastIndexOf(':'));
}

export interface ExportResult {
  written: number;
  /** Frames selected but no longer available (standard input beyond the window) or unreadable. */
  missing: number;
  /** Frames left out because their link type differs from the first frame's (pcap holds one). */
  otherLinkType: number;
  /** Flows too large to write whole for context: only their selected and startup frames were written. */
  partialFlows: number;
}

export class FrameExport {
  private readonly wanted = new Set<number>();
  /** Copies taken at selection time when the store cannot read frames back later (stdin). */
  private readonly kept = new Map<number, PacketRecord>();
  private readonly startupFrames = new Map<number, number[]>();
  /** Per connection, its frames (files only: a stream cannot read them back). */
  private readonly conns = new Map<string, FlowFrames>();
  private readonly decoder: PacketDecoder;
  private frameLen = 0;
  /** Flows whose events were selected: written with their context; a frame of each, and the last selected. */
  private readonly contextFlows = new Map<number, { frame: number; last: number }>();
  private contextAdded = false;
  private partialFlows = 0;
  /** Every frame of the capture, not only those selected (`-Y '' -w`, as tshark writes it). */
  private every = false;
  private lastFrame = 0;

  constructor(
    private readonly store: FrameStore,
    private readonly copyNow: boolean,
  ) {
    this.decoder = new PacketDecoder(NO_FINDINGS);
  }

  /** Every packet, in capture order: which connection each frame belongs to. */
  note(p: PacketRecord): void {
    if (p.frame > this.lastFrame) this.lastFrame = p.frame;
    this.frameLen = p.data.length;
    this.decoder.decode(p, this.onSegment);
  }

  private readonly onSegment = (s: TcpSegment): void => {
    const key = connKey(endpoint(s.src, s.srcPort), endpoint(s.dst, s.dstPort));
    let c = this.conns.get(key);
    if (c === undefined) {
      const a = endpoint(s.src, s.srcPort);
      const b = endpoint(s.dst, s.dstPort);
      c = a < b ? new FlowFrames(a, b, a) : new FlowFrames(b, a, a);
      this.conns.set(key, c);
    }
    c.add(s.frame, this.frameLen);
  };

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

  /** The frames to write, in capture order. */
  private *frames(): Generator<number> {
    if (this.every) for (let f = 1; f <= this.lastFrame; f++) yield f;
    else yield* [...this.wanted].sort((a, b) => a - b);
  }

  /**
   * The frames of an event. With its flow, the flow's startup frames, and at the end its context
   * (see the file's comment); without (-Y: what is displayed, as tshark -Y -w writes), the frames only.
   */
  select(flow: number | null, frames: readonly number[]): void {
    for (const f of frames) this.add(f);
    if (flow === null) return;
    const startup = this.startupFrames.get(flow) ?? [];
    for (const f of startup) this.add(f);
    const have = this.contextFlows.get(flow);
    let last = have?.last ?? 0;
    for (const f of frames) if (f > last) last = f;
    // The last frame: an IP datagram in fragments belongs to its connection by the frame that
    // completed it. A finding on no frame (the startup's Private Data) goes by the startup's.
    const frame = have?.frame ?? frames[frames.length - 1] ?? startup[0];
    if (frame === undefined) return;
    this.contextFlows.set(flow, { frame, last: Math.max(last, frame) });
  }

  /** The connection a frame belongs to (the frames of each are in capture order: binary search). */
  private connOf(frame: number): FlowFrames | undefined {
    for (const c of this.conns.values()) {
      let lo = 0;
      let hi = c.n - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const f = c.frames[mid]!;
        if (f === frame) return c;
        if (f < frame) lo = mid + 1;
        else hi = mid - 1;
      }
    }
    return undefined;
  }

  /** Adds each selected flow's context, once, before writing. */
  private addContext(): void {
    if (this.contextAdded) return;
    this.contextAdded = true;
    let budget = CONTEXT_BYTES;
    const related: Array<{ client: string; server: string }> = [];
    for (const { frame, last } of this.contextFlows.values()) {
      // Found by a frame of its own: flow numbers are the analysis's, and the frames are the capture's.
      const c = this.connOf(frame);
      if (c === undefined || c.n === 0) continue;
      const ends = { client: c.client, server: c.client === c.a ? c.b : c.a };
      let upTo = c.n;
      if (c.octets > CONTEXT_BYTES) {
        // The prefix through the last selected frame: a marker or framing certain from the start.
        upTo = 0;
        while (upTo < c.n && c.frames[upTo]! <= last) upTo++;
        if (upTo === 0 || c.upTo[upTo - 1]! > CONTEXT_BYTES) {
          this.partialFlows++;
          continue;
        }
      }
      for (let i = 0; i < upTo; i++) this.add(c.frames[i]!);
      budget -= c.upTo[upTo - 1]!;
      related.push(ends);
    }
    // An upper layer can tie connections together: an NVMe I/O queue's commands are checked against
    // what its admin queue learned (the namespace's block size, the controller ID), so a finding on
    // one is reproduced only with the other. Connections from the same host to the same server
    // endpoint go with it, whole, while they fit in what is left of the budget.
    for (const { client, server } of related) {
      const host = addressOf(client);
      for (const c of this.conns.values()) {
        const other = c.a === server ? c.b : c.b === server ? c.a : null;
        if (other === null || other === client || addressOf(other) !== host) continue;
        if (c.octets > budget) continue;
        budget -= c.octets;
        for (let i = 0; i < c.n; i++) this.add(c.frames[i]!);
      }
    }
    this.conns.clear();
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
    this.addContext();
    const res: ExportResult = { written: 0, missing: 0, otherLinkType: 0, partialFlows: this.partialFlows };
    const out = new BlockFile(path);
    try {
      if (this.copyNow) {
        const w = new StreamAnnotator(out, comments, app, 0, { frames: Infinity, bytes: Infinity, ms: Infinity });
        for (const f of this.frames()) {
          const p = this.kept.get(f) ?? this.store.get(f);
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
    this.addContext();
    const res: ExportResult = { written: 0, missing: 0, otherLinkType: 0, partialFlows: this.partialFlows };
    let w: PcapFileWriter | null = null;
    let linkType = -1;
    try {
      for (const f of this.frames()) {
        // A stream's context frames are read from its window of recent frames, if still there.
        const p = this.copyNow ? (this.kept.get(f) ?? this.store.get(f)) : this.store.get(f);
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
