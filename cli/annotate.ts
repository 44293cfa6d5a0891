/**
 * The outputs that carry findings into Wireshark as packet comments (issue 23):
 * --annotate FILE.pcapng (every frame) and -w FILE.pcapng (the frames -w chooses; every captured
 * frame when capturing live, as -w does there).
 *
 * A capture file is read a second time after the analysis, block by block, so every finding is
 * known when its frame is written and interfaces, timestamps and options are kept exactly
 * (src/report/annotate-copy.ts). Standard input, a pipe and live capture cannot be read twice:
 * their frames are written after a bounded delay (src/report/annotate-stream.ts), and findings that
 * come later than that are counted and said on standard error.
 */
import type { AnalysisOptions, AnalysisResult } from '../src/analysis/pipeline.js';
import type { LiveHooks } from './live.js';
import type { PacketRecord } from '../src/capture/packet.js';
import type { Finding } from '../src/vocabulary/findings.js';
import type { FrameExport } from '../src/report/pcap-export.js';
import { FrameComments } from '../src/report/packet-comments.js';
import { BlockFile } from '../src/report/pcapng-writer.js';
import { StreamAnnotator } from '../src/report/annotate-stream.js';
import { captureBytes, copyAnnotated } from '../src/report/annotate-copy.js';
import { plural } from '../src/report/text.js';
import { OutputError, writeReason, type RunIo } from './output.js';

export const APP = 'mpa-dissect';

/** What the file pcapng outputs are asked for, and where. */
export interface AnnotateRequest {
  capture: string;
  /** --annotate FILE, or null. */
  annotate: string | null;
  /** -w FILE when its format is pcapng, or null. */
  writePcapng: string | null;
  /** Frames cannot be read back (standard input, pipe, gzip stream is fine: it is re-read). */
  stream: boolean;
  live: boolean;
  /** Live capture's snaplen, written in the rebuilt interfaces (0: not stated). */
  snaplen?: number;
}

/** Runs `fn`, turning a failed open or write into the one-line OutputError naming the file. */
function guarded<T>(flag: string, path: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof OutputError) throw e;
    throw new OutputError(`${flag} ${path}: cannot write: ${writeReason(e)}`);
  }
}

interface Streaming {
  flag: string;
  path: string;
  file: BlockFile;
  writer: StreamAnnotator;
  comments: FrameComments;
}

export class AnnotateOutputs {
  /** --annotate of a file (second pass at the end). */
  private readonly fileAnnotate: FrameComments | null;
  /** -w FILE.pcapng of a file or stream, written at the end from the export's selection. */
  private readonly exportComments: FrameComments | null;
  private readonly streaming: Streaming[] = [];

  /** The outputs of a run: --annotate and a pcapng -w (`writePcapng`). */
  static forRun(
    o: { capture: string; annotate?: string | null; live?: LiveHooks },
    writePcapng: string | null,
    stream: boolean,
  ): AnnotateOutputs {
    return new AnnotateOutputs({
      capture: o.capture,
      annotate: o.annotate ?? null,
      writePcapng,
      stream,
      live: o.live !== undefined,
    });
  }

  /** Wires the outputs into the pipeline: every packet and every finding, and live capture's ticks. */
  attach(opts: AnalysisOptions, live: LiveHooks | undefined): void {
    const onPacket = opts.onPacket;
    const onFinding = opts.onFinding;
    if (this.streaming.length > 0) {
      opts.packetData = true; // frames written as they are read need their bytes
      opts.onPacket = (p) => {
        onPacket?.(p);
        this.packet(p);
      };
    }
    opts.onFinding = (f) => {
      this.finding(f);
      onFinding?.(f);
    };
    live?.everyTick?.(this.tick);
  }

  constructor(private readonly req: AnnotateRequest) {
    const streamAnnotate = req.annotate !== null && (req.stream || req.live);
    this.fileAnnotate = req.annotate !== null && !streamAnnotate ? new FrameComments() : null;
    this.exportComments = req.writePcapng !== null && !req.live ? new FrameComments() : null;
    if (streamAnnotate) this.open('--annotate', req.annotate!);
    // Live, -w writes every captured packet: as pcapng, that is what --annotate writes.
    if (req.live && req.writePcapng !== null) this.open('-w', req.writePcapng);
  }

  private open(flag: string, path: string): void {
    const file = guarded(flag, path, () => new BlockFile(path));
    const comments = new FrameComments();
    const writer = guarded(flag, path, () => new StreamAnnotator(file, comments, APP, this.req.snaplen ?? 0));
    this.streaming.push({ flag, path, file, writer, comments });
  }

  readonly packet = (p: PacketRecord): void => {
    for (const s of this.streaming) guarded(s.flag, s.path, () => s.writer.note(p));
  };

  readonly finding = (f: Finding): void => {
    this.fileAnnotate?.add(f);
    this.exportComments?.add(f);
    for (const s of this.streaming) s.comments.add(f);
  };

  /** Live capture's ticks: frames that waited their time are written, and the file is on disk. */
  readonly tick = (_nowSec: number): void => {
    for (const s of this.streaming)
      guarded(s.flag, s.path, () => {
        s.writer.age(Date.now());
        s.file.flush();
      });
  };

  /** Closes the streaming outputs (also after a failed run: what was written stays a valid file). */
  closeStreams(io: RunIo | null): void {
    for (const s of this.streaming.splice(0)) {
      guarded(s.flag, s.path, () => {
        try {
          s.writer.end();
        } finally {
          s.file.close();
        }
      });
      if (io) this.notes(io, s.flag, s.path, s.comments, 0, false);
    }
  }

  /** The outputs written at the end: --annotate of a file, -w FILE.pcapng. */
  async finish(r: AnalysisResult, exporter: FrameExport | null, io: RunIo): Promise<void> {
    this.closeStreams(io);
    const maxFrames = r.capture.packets;
    if (this.fileAnnotate && this.req.annotate !== null) {
      const path = this.req.annotate;
      const comments = this.fileAnnotate;
      const file = guarded('--annotate', path, () => new BlockFile(path));
      try {
        await copyAnnotated(captureBytes(this.req.capture), file, { comments, maxFrames, app: APP });
      } catch (e) {
        guarded('--annotate', path, () => {
          throw e;
        });
      } finally {
        guarded('--annotate', path, () => file.close());
      }
      this.notes(io, '--annotate', path, comments, 0, false);
    }
    if (this.exportComments && exporter && this.req.writePcapng !== null) {
      const path = this.req.writePcapng;
      let res;
      try {
        res = await exporter.writePcapng(path, this.req.capture, this.exportComments, maxFrames, APP);
      } catch (e) {
        guarded('-w', path, () => {
          throw e;
        });
        return;
      }
      this.notes(io, '-w', path, this.exportComments, res.missing, this.req.stream);
    }
  }

  private notes(io: RunIo, flag: string, path: string, c: FrameComments, missing: number, stream: boolean): void {
    const notes: string[] = [];
    if (missing)
      notes.push(
        `${plural(missing, 'selected frame was', 'selected frames were')} no longer available${stream ? ' (a stream keeps only its recent frames)' : ''}`,
      );
    if (c.late)
      notes.push(
        `${plural(c.late, 'finding comment')} came after ${c.late === 1 ? 'its frame was' : 'their frames were'} written (from a stream, frames wait at most 100000 frames, 32 MiB or 10 s for their findings) and ${c.late === 1 ? 'is' : 'are'} not in the file`,
      );
    if (c.dropped) notes.push(`${plural(c.dropped, 'finding comment')} beyond the limit left out`);
    if (notes.length) io.err(`mpa-dissect: ${flag} ${path}: ${notes.join('; ')}\n`);
  }
}
