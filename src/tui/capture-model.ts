/**
 * The terminal UI's data: fed by the pipeline's streaming callbacks while the capture is read in
 * the background, kept as a compact index (src/tui/pdu-index.ts) plus per-flow summaries and the
 * findings. A record the user opens comes from a small cache of recent records, or is rebuilt
 * from its index entry and its frames read back through the source's frame store (random access
 * for a file). A source that cannot be read back (a live stream) keeps its recent frames only, so
 * older records show what the index knows and say the octets are gone.
 */
import { analyze, type AnalysisOptions, type AnalysisResult } from '../analysis/pipeline.js';
import type { Finding } from '../vocabulary/findings.js';
import { MAX_KEPT_FINDINGS } from '../analysis/finding-collector.js';
import type { TreeNode } from '../vocabulary/fields.js';
import type { PacketRecord } from '../capture/packet.js';
import type { PacketSourceStats } from '../capture/live/packet-source.js';
import type { FlowHandle } from '../tcp/stream.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import { lengthFieldOf, type MarkerInfo } from '../../dissectors/mpa/framer.js';
import { fpduLayout, mpaFpduTree, OCTET_MARKER } from '../../dissectors/mpa/tree.js';
import { ULPDU_HEADER_BYTES } from '../../dissectors/mpa/ulpdu.js';
import { decodeDdp } from '../../dissectors/ddp-rdmap/decode.js';
import type { DdpSegmentRecord } from '../../dissectors/ddp-rdmap/types.js';
import { ddpSummary, segmentInfo } from '../../dissectors/ddp-rdmap/tree.js';
import type { UlpFlowSummary } from '../../dissectors/ddp-rdmap/ulp-handoff.js';
import { isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { EventAssembler, isFpdu, isTuf, type EventGroup, type MpaRecord } from '../report/events.js';
import type { TufMode, TufRecord } from '../../dissectors/tuf/types.js';
import { tufTree } from '../../dissectors/tuf/tree.js';
import { recordTree } from '../report/fields.js';
import { recordOffset } from '../report/relative-seq.js';
import { nodeText } from '../report/tree-text.js';
import { streamBytes, type FrameStore, type StreamBytes } from '../report/frame-store.js';
import { thresholdFindings, type Thresholds } from '../analysis/thresholds.js';
import { LatencyCollector } from '../report/latency.js';
import {
  CRC_CODES,
  KIND_FINDING,
  KIND_FPDU,
  KIND_REPLY,
  KIND_REQUEST,
  KIND_TUF,
  PduIndex,
  U32List,
  V_AFTER_ERROR,
  V_BAD_KEY,
  V_CRC_BAD,
  V_ERROR,
  V_INFO,
  V_MARKER_BAD,
  V_PAD_NONZERO,
  V_WARNING,
} from './pdu-index.js';

/**
 * Where the records come from. A file today; a live interface (`tui -i`) plugs in here: it gives
 * analyze() its packet source through `options` and a frame store that keeps recent frames
 * (WindowFrames), with `randomAccess` false. Nothing else in the UI knows the difference.
 */
export interface TuiSource {
  /** Shown in the status bar: the file name or the interface. */
  readonly label: string;
  /** The path analyze() is given (a name for error messages when `options` carries the stream). */
  readonly path: string;
  /** Decoder, reassembly, rules, --mpa, upper layer, and for a stream its source. */
  readonly options: AnalysisOptions;
  /** Frames read back for the bytes pane, the rebuilt records and `w`. */
  readonly frames: FrameStore;
  /** True when any frame can be read back later (a file); false for a stream. */
  readonly randomAccess: boolean;
  /** Size in octets, for the progress figure; null when unknown (a stream). */
  readonly totalBytes: number | null;
  /** Thresholds of a rules file, judged at the end as the CLI does. */
  readonly thresholds?: Thresholds;
  /** A live capture (`tui -i`): the interface for the status bar, the backend's counts, and how to end it. */
  readonly live?: TuiLiveSource;
}

export interface TuiLiveSource {
  readonly iface: string;
  readonly backend: string;
  stats(): PacketSourceStats;
  /** Ends the capture (idempotent); the model's run() then finishes. */
  stop(): void;
}

export type Detection = 'startup' | 'heuristic' | 'forced' | 'prestandard';

export interface FlowRow {
  readonly id: number;
  readonly client: string;
  readonly server: string;
  detection: Detection | null;
  request: StartupRecord | null;
  reply: StartupRecord | null;
  /** Absolute SeqStart per direction (first octet after the sender's startup frame), when known. */
  seqStart: [number | null, number | null];
  /**
   * Per direction, the base Wireshark's relative sequence numbers count from (the list shows them,
   * as Wireshark does by default): a record's seq minus its stream offset minus one.
   */
  seqBase: [number | null, number | null];
  fpdus: [number, number];
  /** FPDU wire octets while reading; TCP payload octets once the capture is read. */
  bytes: [number, number];
  crcBad: [number, number];
  errors: number;
  warnings: number;
  firstFrame: number;
  /**
   * The upper layer: the one decoded above RDMAP ("SMB Direct: 91 messages, from private data"),
   * else what the port or private data suggests ("SMB Direct (port)"); null: none.
   */
  upper: string | null;
  /** RFC 5044 Appendix C outcome with an RDMA Consortium (Rev 0) peer: 'v0' (interoperates) or 'close', else null. */
  rdmac: 'v0' | 'close' | null;
  /** ULP Framing for TCP on this flow (a flow is MPA or TUF, never both). */
  tuf: TufMode | null;
  /** This flow's items, in capture order. */
  readonly items: U32List;
}

export type ModelState = 'reading' | 'done' | 'failed';

/** What the detail and bytes panes show for one item. */
export interface Decoded {
  readonly record: MpaRecord | null;
  readonly tree: TreeNode[];
  readonly info: string;
  /** True when rebuilt from the index (the DDP analysis subtree is not rebuilt). */
  readonly rebuilt: boolean;
}

const CACHE = 2_000;

/** Findings that stand for octets missing from a stream (shown as "gap" in the PDU list). */
const GAP_RULES: ReadonlySet<string> = new Set(['tcp.capture-loss', 'tcp.buffer-cap']);

/** True when a node down to `depth` levels has `hint` in its text. */
function treeMentions(nodes: readonly TreeNode[], hint: string, depth: number): boolean {
  for (const n of nodes) {
    if (nodeText(n).includes(hint)) return true;
    if (depth > 1 && n.children && treeMentions(n.children, hint, depth - 1)) return true;
  }
  return false;
}

function severityBit(s: Finding['severity']): number {
  return s === 'error' ? V_ERROR : s === 'warning' ? V_WARNING : V_INFO;
}

/** The flow table's Upper column: the upper layer decoded, else the label of the port or private data. */
export function upperText(label: unknown, ulp: UlpFlowSummary | null = null): string | null {
  if (ulp) {
    const basis = ulp.basis === 'heuristic' ? 'first Send' : ulp.basis === 'private-data' ? 'private data' : ulp.basis;
    return `${ulp.name}: ${ulp.messages} message${ulp.messages === 1 ? '' : 's'}, from ${basis}`;
  }
  if (label && typeof label === 'object' && 'protocol' in label) {
    const l = label as { protocol: unknown; basis?: unknown };
    return `${String(l.protocol)}${typeof l.basis === 'string' ? ` (${l.basis})` : ''}`;
  }
  return null;
}

/** Frames whose times the TUI keeps for its rows (12 octets each: 12 MB at most). */
const FRAME_TIMES = 1 << 20;

/** Upper-layer Info texts kept for items whose record is rebuilt from the index (a few per Send). */
const MAX_ULP_INFO = 200_000;

export class CaptureModel {
  readonly index = new PduIndex();
  readonly flows: FlowRow[] = [];
  private readonly flowById = new Map<number, FlowRow>();
  /** Findings kept (bounded as the pipeline bounds them), with the item each belongs to. */
  readonly findings: Finding[] = [];
  readonly findingItem = new U32List();
  findingsOmitted = 0;
  private readonly startups: StartupRecord[] = [];
  private readonly tufs: TufRecord[] = [];
  private readonly cache = new Map<number, MpaRecord>();
  state: ModelState = 'reading';
  /** One line: why the capture could not be read (open failure, or a read error). */
  error: string | null = null;
  packets = 0;
  bytesRead = 0;
  errors = 0;
  warnings = 0;
  fpdus = 0;
  result: AnalysisResult | null = null;
  /** The first packet's timestamp (seconds and nanoseconds apart, as the CLI subtracts them: exact to the nanosecond). */
  private t0: [number, number] | null = null;
  /**
   * Seconds since the first packet of the last FRAME_TIMES frames, by frame number modulo the
   * table's size, with the frame each slot holds (a row's time is its last frame's). Bounded: a
   * long live capture keeps the recent frames' times only.
   */
  private frameTimes = new Float64Array(1024);
  private frameOf = new Uint32Array(1024);
  /** Capture time of the last packet (seconds since the epoch). */
  private lastTime = Number.NaN;
  /** Every upper-layer request's timing: the slowest and the never-answered kept for the requests view. */
  readonly latency = new LatencyCollector();
  private readonly listeners: Array<() => void> = [];

  /** `cacheSize`: records kept as the pipeline made them; beyond it they are rebuilt on demand. */
  constructor(
    readonly source: TuiSource,
    private readonly cacheSize = CACHE,
  ) {}

  /** Called after every batch of new items, and when the state changes. */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }

  flow(id: number): FlowRow | undefined {
    return this.flowById.get(id);
  }

  /** Item i's sequence number as the PDU list shows it: relative to its direction, as Wireshark does. */
  shownSeq(i: number): number {
    const ix = this.index;
    const base = this.flowById.get(ix.flow[i]!)?.seqBase[ix.dir[i]!] ?? null;
    return base === null ? ix.seq[i]! : (ix.seq[i]! - base) >>> 0;
  }

  private ensureFlow(id: number, client: string, server: string, frame: number): FlowRow {
    let f = this.flowById.get(id);
    if (!f) {
      f = {
        id,
        client,
        server,
        detection: null,
        rdmac: null,
        request: null,
        reply: null,
        seqStart: [null, null],
        seqBase: [null, null],
        fpdus: [0, 0],
        bytes: [0, 0],
        crcBad: [0, 0],
        errors: 0,
        warnings: 0,
        firstFrame: frame,
        upper: null,
        tuf: null,
        items: new U32List(),
      };
      this.flowById.set(id, f);
      this.flows.push(f);
    }
    return f;
  }

  /** Reads the whole source through the pipeline; resolves when it ends (never rejects). */
  async run(): Promise<void> {
    const asm = new EventAssembler((g) => this.group(g));
    const s = this.source;
    const opts: AnalysisOptions = {
      // 256 KiB reads (the CLI's are 4 MiB): the work between two turns of the event loop, when
      // keys are handled, stays well under 100 ms even on a loaded machine.
      chunkSize: 256 << 10,
      ...s.options,
      onPacket: (p: PacketRecord) => {
        s.options.onPacket?.(p);
        s.frames.note(p);
        if (this.t0 === null) this.t0 = [p.tsSec, p.tsNsec];
        this.noteTime(p.frame, this.rel(p.tsSec, p.tsNsec));
        this.lastTime = p.tsSec + p.tsNsec / 1e9;
        asm.time(p.tsSec, p.tsNsec);
        this.packets = p.frame;
        this.bytesRead = p.fileOffset;
      },
      onFlow: (h: FlowHandle) => {
        s.options.onFlow?.(h);
        this.ensureFlow(h.id, h.client, h.server, this.packets);
      },
      onStartup: (r) => asm.record(r),
      onFpdu: (r) => asm.record(r),
      onTuf: (r) => asm.record(r),
      onFinding: (f) => asm.finding(f),
      onRequestTiming: (t) => {
        s.options.onRequestTiming?.(t);
        this.latency.add(t);
      },
    };
    let lastNotify = 0;
    const batch = setInterval(() => {
      if (this.index.count !== lastNotify) {
        lastNotify = this.index.count;
        this.changed();
      }
    }, 100);
    try {
      const r = await analyze(s.path, opts);
      if (s.thresholds) for (const [id, input] of thresholdFindings(r, s.thresholds)) r.findings.report(id, input);
      asm.end();
      this.latency.end(this.lastTime);
      this.result = r;
      for (const fr of r.flows) {
        const f = this.ensureFlow(fr.tcp.id, fr.tcp.client, fr.tcp.server, fr.tcp.firstFrame);
        f.firstFrame = fr.tcp.firstFrame;
        f.bytes = [fr.tcp.directions[0].bytes, fr.tcp.directions[1].bytes];
        if (fr.mpa) f.detection = fr.mpa.detection;
        if (fr.mpa?.rdmac?.decided) f.rdmac = fr.mpa.rdmac.mustClose ? 'close' : 'v0';
        if (fr.tuf) f.tuf = fr.tuf.mode;
        f.upper = upperText(fr.upperLayer, fr.ulp);
      }
      this.packets = r.capture.packets;
      if (s.totalBytes !== null) this.bytesRead = s.totalBytes;
      if (r.capture.error) {
        const e = r.capture.error;
        this.error = `${e.file}: offset ${e.offset}, frame ${e.frame}: ${e.message}`;
      }
      this.state = r.capture.error && r.capture.packets === 0 ? 'failed' : 'done';
    } catch (e) {
      asm.end();
      this.error = e instanceof Error ? e.message : String(e);
      this.state = 'failed';
    } finally {
      clearInterval(batch);
    }
    this.changed();
  }

  /**
   * Runs the pipeline over the file again and hands out every item's record and findings, in item
   * order (the pipeline is deterministic: the k-th group is item k). Re-dissecting the whole file
   * beats rebuilding every record one by one when a new filter must look at all of them, and gives
   * the DDP analysis fields too. Only for a source that can be read again; `stop` aborts. Resolves
   * true when it reached the end.
   */
  async replay(
    each: (i: number, r: MpaRecord | null, findings: Finding[]) => void,
    stop: () => boolean,
  ): Promise<boolean> {
    if (!this.source.randomAccess || this.state !== 'done') return false;
    let next = 0;
    const asm = new EventAssembler((g) => {
      if (g.record === null) for (const f of g.findings) each(next++, null, [f]);
      else each(next++, g.record, g.findings);
    });
    const stopped = new Error('replay stopped');
    try {
      await analyze(this.source.path, {
        chunkSize: 256 << 10,
        ...this.source.options,
        onPacket: (p: PacketRecord) => {
          if (stop()) throw stopped;
          asm.time(p.tsSec, p.tsNsec);
        },
        onStartup: (r) => asm.record(r),
        onFpdu: (r) => asm.record(r),
        onTuf: (r) => asm.record(r),
        onFinding: (f) => asm.finding(f),
      });
      asm.end();
      return true;
    } catch {
      // Stopped, or the file changed under us: the caller evaluates what is left itself.
      return false;
    }
  }

  private keepFinding(f: Finding, item: number): void {
    if (f.severity === 'error') this.errors++;
    else if (f.severity === 'warning') this.warnings++;
    const fl = f.flow !== null ? this.flowById.get(f.flow) : undefined;
    if (fl) {
      if (f.severity === 'error') fl.errors++;
      else if (f.severity === 'warning') fl.warnings++;
    }
    if (this.findings.length >= MAX_KEPT_FINDINGS) {
      this.findingsOmitted++;
      return;
    }
    const ix = this.index;
    if (ix.findingAt[item]! < 0) ix.findingAt[item] = this.findings.length;
    ix.findingCount[item]!++;
    this.findings.push(f);
    this.findingItem.push(item);
  }

  private noteTime(frame: number, t: number): void {
    if (frame >= this.frameTimes.length && this.frameTimes.length < FRAME_TIMES) {
      // Doubling keeps the size a power of two, so a frame's slot is frame & (size - 1) throughout.
      let n = this.frameTimes.length;
      while (n <= frame && n < FRAME_TIMES) n *= 2;
      const times = new Float64Array(n);
      const of = new Uint32Array(n);
      for (let i = 0; i < this.frameOf.length; i++) {
        const f = this.frameOf[i]!;
        if (f !== 0) {
          times[f & (n - 1)] = this.frameTimes[i]!;
          of[f & (n - 1)] = f;
        }
      }
      this.frameTimes = times;
      this.frameOf = of;
    }
    const slot = frame & (this.frameTimes.length - 1);
    this.frameTimes[slot] = t;
    this.frameOf[slot] = frame;
  }

  /** Seconds since the first packet. */
  private rel(sec: number, nsec: number): number {
    return this.t0 === null ? 0 : sec - this.t0[0] + (nsec - this.t0[1]) / 1e9;
  }

  private group(g: EventGroup): void {
    const ix = this.index;
    const r = g.record;
    // A row's time is its last frame's, as tshark shows a reassembled PDU at the frame that
    // completes it (and the CLI's event line, the packet being read when the record came out); a
    // finding raised later about earlier frames shows theirs. Without frames: the packet being read.
    const at = (frames: readonly number[]): number => {
      let last = 0;
      for (const f of frames) if (f > last) last = f;
      const slot = last & (this.frameTimes.length - 1);
      return last > 0 && this.frameOf[slot] === last ? this.frameTimes[slot]! : this.rel(g.tsSec, g.tsNsec);
    };
    if (r === null) {
      // A standalone finding: an item of its own (a gap, a close, a read error).
      for (const f of g.findings) {
        const fl = f.flow !== null ? this.flowById.get(f.flow) : undefined;
        const dir = fl && f.from === fl.server ? 1 : 0;
        const i = ix.add(KIND_FINDING, f.flow ?? 0, dir, at(f.frames), f.frames);
        if (f.seq !== null) ix.seq[i] = f.seq;
        ix.verdict[i] = severityBit(f.severity);
        this.keepFinding(f, i);
        fl?.items.push(i);
      }
      return;
    }
    const fl = this.ensureFlow(r.flow, r.dir === 0 ? r.from : r.to, r.dir === 0 ? r.to : r.from, r.frames[0] ?? 0);
    const off = recordOffset(r);
    if (off !== undefined) fl.seqBase[r.dir] = (r.seq - off - 1) >>> 0;
    let i: number;
    if (isFpdu(r)) {
      i = ix.add(KIND_FPDU, r.flow, r.dir, at(r.frames), r.frames);
      ix.seq[i] = r.seq;
      ix.lenDelta[i] = r.lenOffset - r.start;
      ix.start[i] = r.start;
      ix.ulpduLength[i] = r.ulpduLength;
      ix.lengthField[i] = lengthFieldOf(r);
      ix.pad[i] = r.pad;
      ix.wireSize[i] = r.wireSize;
      ix.crcWire[i] = r.crcWire;
      ix.crcComputed[i] = r.crcComputed;
      ix.crc[i] = CRC_CODES.indexOf(r.crcStatus);
      let v = 0;
      if (r.crcStatus === 'bad' || r.crcStatus === 'byte-swapped') v |= V_CRC_BAD;
      if (r.padNonZero) v |= V_PAD_NONZERO;
      if (r.afterError) v |= V_AFTER_ERROR;
      for (const m of r.markers) {
        ix.addMarker(i, m.offset, m.seq, m.reserved, m.fpduptr, m.expected);
        if ((m.fpduptr & ~3) !== m.expected) v |= V_MARKER_BAD;
      }
      ix.verdict[i] = v;
      fl.fpdus[r.dir]++;
      fl.bytes[r.dir] += r.wireSize;
      if (v & V_CRC_BAD) fl.crcBad[r.dir]++;
      if (fl.detection === null) fl.detection = fl.request || fl.reply ? 'startup' : 'heuristic';
      this.fpdus++;
      // The upper layer's Info survives the record (rebuilt records have no upper layer otherwise).
      const ulp = isDdpSegmentRecord(r.upper) ? r.upper.ulp : null;
      if (ulp) {
        if (this.ulpInfo.size < MAX_ULP_INFO) this.ulpInfo.set(i, { protocol: ulp.protocol, info: ulp.info });
        fl.upper ??= ulp.protocol;
      }
    } else if (isTuf(r)) {
      // TUF records are kept whole (a few dozen octets each): TUF captures are rare and small.
      i = ix.add(KIND_TUF, r.flow, r.dir, at(r.frames), r.frames);
      ix.seq[i] = r.seq;
      ix.start[i] = r.start;
      ix.ulpduLength[i] = r.length;
      ix.wireSize[i] = r.wireSize;
      ix.markerCount[i] = r.markers.length;
      ix.ref[i] = this.tufs.length;
      if (!r.keyOk || r.markers.some((m) => m.npo !== m.npo2)) ix.verdict[i] = V_MARKER_BAD;
      this.tufs.push(r);
      fl.tuf = r.mode;
      fl.fpdus[r.dir]++;
      fl.bytes[r.dir] += r.wireSize;
      this.fpdus++;
    } else {
      i = ix.add(r.kind === 'request' ? KIND_REQUEST : KIND_REPLY, r.flow, r.dir, at(r.frames), r.frames);
      ix.seq[i] = r.seq;
      ix.ulpduLength[i] = r.pdLength;
      ix.wireSize[i] = 20 + r.privateData.length;
      ix.ref[i] = this.startups.length;
      if (!r.keyOk) ix.verdict[i] = V_BAD_KEY;
      this.startups.push(r);
      if (r.kind === 'request') fl.request = r;
      else fl.reply = r;
      fl.detection = 'startup';
      fl.seqStart[r.dir] = (r.seq + 20 + r.pdLength) >>> 0;
    }
    for (const f of g.findings) {
      // MPA enabled without startup frames: named as soon as it is found (the flow summary agrees later).
      if (f.rule === 'mpa.enabled-without-startup') fl.detection = 'prestandard';
      else if (f.rule === 'mpa.rdmac-interop') fl.rdmac = 'v0';
      else if (f.rule === 'mpa.rdmac-must-close') fl.rdmac = 'close';
      ix.verdict[i]! |= severityBit(f.severity);
      this.keepFinding(f, i);
    }
    fl.items.push(i);
    this.remember(i, r);
  }

  private remember(i: number, r: MpaRecord): void {
    this.cache.set(i, r);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next();
      if (oldest.done !== true) {
        this.cache.delete(oldest.value);
        this.rebuiltSet.delete(oldest.value);
      }
    }
  }

  /** The findings raised on item i (or the item's own finding). */
  /**
   * The FPDU that completed a message in frame `frame` (the frame an upper layer's request timing
   * names): of the FPDUs ending in that frame, the first whose detail tree mentions `hint` (the
   * upper layer's summary line names the command), else the first.
   * -1 when none is indexed. A scan of the index columns, done once per jump.
   */
  itemCompletingIn(frame: number, hint: string): number {
    const ix = this.index;
    let first = -1;
    for (let i = 0; i < ix.count; i++) {
      const n = ix.frameCount[i]!;
      if (ix.kind[i] !== KIND_FPDU || n === 0 || ix.frames.get(ix.frameAt[i]! + n - 1) !== frame) continue;
      if (first < 0) first = i;
      if (hint === '' || treeMentions(this.decode(i).tree, hint, 3)) return i;
      if (i - first > 64) break;
    }
    return first;
  }

  findingsOf(i: number): Finding[] {
    const at = this.index.findingAt[i]!;
    if (at < 0) return [];
    return this.findings.slice(at, at + this.index.findingCount[i]!);
  }

  /** Sender and receiver of item i. */
  endpoints(i: number): { from: string; to: string } {
    const fl = this.flowById.get(this.index.flow[i]!);
    if (!fl) return { from: '', to: '' };
    return this.index.dir[i] === 0 ? { from: fl.client, to: fl.server } : { from: fl.server, to: fl.client };
  }

  /** The record of item i: cached, or rebuilt from the index and the frames read back. */
  record(i: number): MpaRecord | null {
    const ix = this.index;
    const k = ix.kind[i]!;
    if (k === KIND_FINDING) return null;
    if (k === KIND_REQUEST || k === KIND_REPLY) return this.startups[ix.ref[i]!] ?? null;
    if (k === KIND_TUF) return this.tufs[ix.ref[i]!] ?? null;
    const hit = this.cache.get(i);
    if (hit) {
      // Refresh its place in the LRU order.
      this.cache.delete(i);
      this.cache.set(i, hit);
      return hit;
    }
    const r = this.rebuild(i);
    this.remember(i, r);
    this.rebuiltSet.add(i);
    return r;
  }

  private rebuild(i: number): FpduRecord {
    const ix = this.index;
    const { from, to } = this.endpoints(i);
    const markers: MarkerInfo[] = [];
    for (let m = ix.markerAt[i]!; m < ix.markerAt[i]! + ix.markerCount[i]!; m++) {
      markers.push({
        offset: ix.mOffset[m]!,
        seq: ix.mSeq[m]!,
        reserved: ix.mReserved[m]!,
        fpduptr: ix.mFpduptr[m]!,
        expected: ix.mExpected[m]!,
      });
    }
    const frames = ix.framesOf(i);
    const rec: FpduRecord = {
      kind: 'fpdu',
      flow: ix.flow[i]!,
      dir: ix.dir[i]! as 0 | 1,
      from,
      to,
      afterError: (ix.verdict[i]! & V_AFTER_ERROR) !== 0,
      upper: null,
      start: ix.start[i]!,
      lenOffset: ix.start[i]! + ix.lenDelta[i]!,
      seq: ix.seq[i]!,
      ulpduLength: ix.ulpduLength[i]!,
      lengthField: ix.lengthField[i]!,
      pad: ix.pad[i]!,
      wireSize: ix.wireSize[i]!,
      crcWire: ix.crcWire[i]!,
      crcComputed: ix.crcComputed[i]!,
      crcStatus: CRC_CODES[ix.crc[i]!] ?? 'unchecked',
      markers,
      padNonZero: (ix.verdict[i]! & V_PAD_NONZERO) !== 0,
      frames,
      head: new Uint8Array(0),
    };
    const wire = this.wireBytes(i, rec);
    if (wire) {
      // The ULPDU's first octets, markers removed, as the framer hands them up (RFC 5044 §7.1).
      const layout = fpduLayout(rec);
      const want = Math.min(rec.ulpduLength, ULPDU_HEADER_BYTES);
      const head: number[] = [];
      for (let o = ix.lenDelta[i]! + 2; o < wire.bytes.length && head.length < want; o++) {
        if (layout[o] === OCTET_MARKER) continue;
        if (!wire.have[o]) break;
        head.push(wire.bytes[o]!);
      }
      rec.head = Uint8Array.from(head);
      if (rec.ulpduLength > 0 && head.length > 0) {
        const pdu = decodeDdp(rec.head, rec.ulpduLength);
        const seg: DdpSegmentRecord = {
          flow: rec.flow,
          dir: rec.dir,
          from,
          seq: rec.seq,
          frames,
          length: rec.ulpduLength,
          crc:
            rec.crcStatus === 'good'
              ? 'good'
              : rec.crcStatus === 'unchecked' || rec.crcStatus === 'not-captured'
                ? 'unchecked'
                : 'bad',
          afterError: rec.afterError,
          pdu,
          skipped: null,
          findings: this.findingsOf(i)
            .filter((f) => f.rule.startsWith('ddp.') || f.rule.startsWith('rdmap.'))
            .map((f) => ({ rule: f.rule, message: f.message })),
          message: null,
          rtr: null,
          readRequest: null,
          terminated: null,
        };
        // The upper layer's Info as the pipeline gave it; its detail tree is not rebuilt.
        const u = this.ulpInfo.get(i);
        if (u) seg.ulp = { protocol: u.protocol, info: u.info, tree: [] };
        rec.upper = seg;
      }
    }
    return rec;
  }

  /** The wire octets of an FPDU or startup frame (markers included), or null when none can be read back. */
  wireBytes(i: number, rec?: MpaRecord | null): StreamBytes | null {
    const r = rec ?? this.record(i);
    if (!r) return null;
    const ix = this.index;
    const startSeq = isFpdu(r) ? (r.seq - (r.lenOffset - r.start)) >>> 0 : r.seq;
    const n = isFpdu(r) || isTuf(r) ? r.wireSize : 20 + r.privateData.length;
    const data = streamBytes(this.source.frames, ix.framesOf(i), r.from, startSeq, n);
    return data.have.includes(1) ? data : null;
  }

  /** Tree, Info text and record of item i. */
  decode(i: number): Decoded {
    const r = this.record(i);
    if (!r) return { record: null, tree: [], info: this.findingsOf(i)[0]?.message ?? '', rebuilt: false };
    const rebuilt = this.rebuiltSet.has(i);
    let tree: TreeNode[];
    if (isTuf(r)) tree = tufTree(r);
    else if (isFpdu(r) && isDdpSegmentRecord(r.upper)) tree = recordTree(r);
    else if (isFpdu(r)) tree = mpaFpduTree(r);
    else tree = recordTree(r);
    return { record: r, tree, info: this.info(r), rebuilt };
  }

  /** Items whose cached record was rebuilt from the index (not the pipeline's own record). */
  private readonly rebuiltSet = new Set<number>();
  /** Item -> its upper layer's protocol and Info (bounded by MAX_ULP_INFO). */
  private readonly ulpInfo = new Map<number, { protocol: string; info: string }>();

  /** The Info column of item i (no tree built). */
  infoOf(i: number): string {
    const r = this.record(i);
    return r ? this.info(r) : (this.findingsOf(i)[0]?.message ?? '');
  }

  /** The Info column: the DDP/RDMAP summary of an FPDU and its upper layer's, the startup frame's parameters. */
  info(r: MpaRecord): string {
    if (!isFpdu(r)) return this.startupOrTufInfo(r);
    if (!isDdpSegmentRecord(r.upper)) return '';
    // As Wireshark's packet list: the top protocol's Info first (it is what a narrow pane keeps),
    // then the RDMAP message it came in.
    const ulp = r.upper.ulp;
    return ulp ? `${ulp.info}  [${ddpSummary(r.upper)}]` : segmentInfo(r.upper);
  }

  private startupOrTufInfo(r: Exclude<MpaRecord, FpduRecord>): string {
    if (isTuf(r)) {
      if (r.mode === 'alignment')
        return `TUF key 0x${r.key}${r.keyOk ? '' : ' [second key]'} ${r.aligned ? 'aligned' : `unaligned, ${r.segments} segments`}`;
      const bad = r.markers.some((m) => m.npo !== m.npo2);
      return `TUF PDU at seq ${(r.seq + (r.pduStart - r.start)) >>> 0}, ${r.markers.length} marker${r.markers.length === 1 ? '' : 's'}${bad ? ' [copies differ]' : ''}`;
    }
    const e = r.enhancedBlock;
    const flags = `M=${+r.m} C=${+r.c}${r.r ? ' R=1 (rejected)' : ''}`;
    const v2 = e
      ? ` IRD=${e.ird} ORD=${e.ord}${e.p2p ? ' P2P' : ''}${e.rtr.send ? ' RTR:send' : ''}${e.rtr.write ? ' RTR:write' : ''}${e.rtr.read ? ' RTR:read' : ''}`
      : '';
    return `Rev ${r.rev} ${flags} PD_Length ${r.pdLength}${v2}${r.keyOk ? '' : ' [bad key]'}`;
  }

  /** Item kind as a word. */
  kindText(i: number): string {
    const k = this.index.kind[i]!;
    if (k === KIND_REQUEST) return 'Request';
    if (k === KIND_REPLY) return 'Reply';
    if (k === KIND_FPDU) return 'FPDU';
    if (k === KIND_TUF) return this.tufs[this.index.ref[i]!]?.mode === 'markers' ? 'TUF PDU' : 'TUF';
    const rule = this.findingsOf(i)[0]?.rule;
    return rule !== undefined && GAP_RULES.has(rule) ? 'gap' : 'finding';
  }
}
