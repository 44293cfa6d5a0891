/**
 * What an analysis is given and gives back: the options of analyze() (outputs, forced MPA and TUF,
 * the layer above MPA, threads) and its result (per-flow summaries, findings, decoder counts).
 * Apart from pipeline.ts so that the stages it wires (flow stage, threads, upper layer, thresholds)
 * name them without importing the pipeline that imports them.
 */
import type { CaptureSummary, PacketRecord } from '../capture/packet.js';
import type { LatencyReport } from './latency-types.js';
import type { PacketSource } from '../capture/live/packet-source.js';
import type { DecoderOptions, PacketDecoder } from '../net/decoder.js';
import type { ReassemblyOptions, TcpFlowStats } from '../tcp/reassembler.js';
import type { FlowHandle } from '../tcp/stream.js';
import type { FpduRecord, MpaFlowSummary, UpperLayer } from '../../dissectors/mpa/mpa-types.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import type { ForcedTuf, TufFlowSummary, TufRecord } from '../../dissectors/tuf/tuf-flow.js';
import type { Finding, FindingSink } from '../vocabulary/findings.js';
import type { FindingCollector } from './finding-collector.js';
import type { RuleOverrides } from './rules-catalog.js';
import type { RequestTiming } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import type { UlpFlowSummary } from '../../dissectors/ddp-rdmap/ulp-handoff.js';
import type { UlpId } from '../../dissectors/ddp-rdmap/ulp-contract.js';

/** Which flow `--mpa` applies to: "all", a flow id, or an endpoint (either side) "ADDR:PORT" / port. */
export type FlowSelector =
  | { kind: 'all' }
  | { kind: 'id'; id: number }
  | { kind: 'port'; port: number }
  | { kind: 'endpoint'; endpoint: string };

export interface ForcedMpaSpec {
  selector: FlowSelector;
  /** Markers per direction: client->server, server->client. */
  markers: [boolean, boolean];
  crc: boolean;
  seqStart: [number | null, number | null];
  /** `start=`: MPA enabled without startup frames (pre-standard) at these SeqStarts. */
  prestandard?: boolean;
  /** `start=SEQ`: the direction whose octets hold SEQ. */
  startAny?: number | null;
}

/** `--tuf`: ULP Framing for TCP forced on the flows selected (it wins over MPA on them). */
export interface ForcedTufSpec {
  selector: FlowSelector;
  tuf: ForcedTuf;
}

/** The layer above MPA, created per MPA flow (the DDP/RDMAP analyzer). */
export interface UpperFactory {
  create(
    flowId: number,
    ctx: MpaContext,
    sink: FindingSink,
    handle: FlowHandle,
  ): UpperLayer & { summary?(dir: 0 | 1): unknown };
  /** One-line Info text for a record the upper layer returned (tshark's Info column). */
  summarize?(rec: unknown): string | null;
  /** What the connection carries above RDMA (SMB Direct, NFS over RDMA...), when the evidence is clear. */
  label?(mpa: MpaFlowSummary, serverPort: number): unknown;
}

export interface AnalysisOptions {
  decoder?: DecoderOptions;
  reassembly?: ReassemblyOptions;
  rules?: RuleOverrides | null;
  forced?: ForcedMpaSpec[];
  forcedTuf?: ForcedTufSpec[];
  upper?: UpperFactory | null;
  /**
   * Upper layers above RDMAP (SMB Direct, RPC-over-RDMA): decoded by default on the default upper
   * layer; `--ulp` overrides per flow; null decodes none.
   */
  ulp?: UlpOptions | null;
  /** Each request an upper layer saw answered (or never answered, at the end), with its times. */
  onRequestTiming?: (t: RequestTiming) => void;
  /** false: TCP reassembly only, no protocol dissection (the bench's read + reassemble figure). */
  dissect?: boolean;
  /** Streaming outputs (text lines, NDJSON, TUI). */
  onStartup?: (r: StartupRecord) => void;
  onFpdu?: (r: FpduRecord) => void;
  /** A TUF framing PDU (alignment mode) or marker-delimited PDU (marker mode). */
  onTuf?: (r: TufRecord) => void;
  onFinding?: (f: Finding) => void;
  /** Called for every packet before decoding (progress, pcap export bookkeeping). */
  onPacket?: (p: PacketRecord) => void;
  /**
   * false: onPacket does not read `data`. With threads, onPacket is called once the workers have
   * answered for the packet, so its bytes are copied until then unless this says they are not read.
   */
  packetData?: boolean;
  /** Called once per TCP flow when the reassembler first sees it (outputs that name both endpoints). */
  onFlow?: (h: FlowHandle) => void;
  chunkSize?: number;
  /** A gzip-compressed capture file: its compressed octets read so far (ReadCaptureOptions.compressed). */
  compressed?: { read: number };
  /** Read from this stream instead of the path (tests, live sources). */
  stream?: AsyncIterable<Uint8Array | string>;
  /**
   * Take packets from this source instead of the path or stream (a live interface: `-i`, `tui -i`).
   * The analysis runs until the source stops; `path` only names the capture in the result. See
   * src/capture/live/packet-source.ts for the contract.
   */
  source?: PacketSource;
  /**
   * A flow that carried no segment for this many seconds is finished: its directions end as at the
   * end of a capture, its reassembly and dissector state are released, onFlowEnd reports it, and a
   * later segment on the same 4-tuple opens a new flow. Judged on the source's ticks and on packet
   * timestamps. Default: never (files); the CLI sets 300 for live capture.
   */
  flowTimeout?: number;
  /** Called once for each flow finished by flowTimeout, with what the final result will list for it. */
  onFlowEnd?: (f: FlowResult) => void;
  /** Stop after this many packets (tshark -c), files and sources alike. */
  maxPackets?: number;
  /**
   * Worker threads for reassembly and dissection (src/analysis/parallel/): flows are sharded by
   * 4-tuple and everything is handed to the callbacks above in the order one thread would. 1 or
   * unset: this thread does everything. A live source, flowTimeout or an upper layer other than
   * the default one always runs on one thread (see parallel/parallel-analysis.ts).
   */
  threads?: number;
}

export interface FlowResult {
  tcp: TcpFlowStats;
  mpa: MpaFlowSummary | null;
  /** ULP Framing for TCP, when the flow carries it (never together with mpa). */
  tuf: TufFlowSummary | null;
  /** Upper-layer protocol label from the layer above MPA, or null. */
  upperLayer: unknown;
  /** Per-direction summaries of the layer above MPA, when it ran. */
  upper: [unknown, unknown] | null;
  /** The upper layer decoded above RDMAP (SMB Direct, RPC-over-RDMA), when one was. */
  ulp?: UlpFlowSummary | null;
}

export interface AnalysisResult {
  capture: CaptureSummary;
  flows: FlowResult[];
  findings: FindingCollector;
  decoder: PacketDecoder['stats'];
  /** Service response times of the upper layers' requests, when they were collected (report `srt`). */
  srt?: readonly ServiceResponseTime[];
  /** Where the upper layers' requests' time went (report `latency`), when requests were timed. */
  latency?: LatencyReport;
}

/** One command's service response times (seconds): tshark's -z ...,srt row plus percentiles. */
export interface ServiceResponseTime {
  /** "SMB2", "NFSv3", "NFSv4". */
  readonly program: string;
  readonly command: string;
  /** The command's number (SMB2 command code, RPC procedure): tshark's Index column. */
  readonly code: number;
  readonly calls: number;
  readonly min: number;
  readonly max: number;
  readonly avg: number;
  readonly sum: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  /** Percentiles come from a sample of the calls. */
  readonly sampled: boolean;
  /** Calls with data moved by RDMA, and their mean times from the request to the first and last data. */
  readonly withData: number;
  readonly avgToFirstData: number;
  readonly avgToLastData: number;
}

/** `--ulp flow=SEL,proto=ID|none`: an upper layer forced (or none) on the flows SEL names. */
export interface UlpOverride {
  readonly selector: FlowSelector;
  readonly proto: UlpId | 'none';
}

export interface UlpOptions {
  readonly overrides: readonly UlpOverride[];
}
