/**
 * The upper-layer contract: what DDP/RDMAP hands a protocol above it (SMB Direct, RPC-over-RDMA,
 * NVMe over Fabrics, iSER), once per RDMAP message, in capture order, and what that protocol hands
 * back. Wireshark's iWARP dissector passes `rdmap_info_t` to its heuristic sub-dissectors
 * (`iwarp_ddp_rdmap` table); this is the same information as typed data.
 *
 * An upper layer sees only these records and the connection facts below: it knows nothing of
 * MPA framing, markers, CRC or TCP. It reduces the buffers it advertises to ledger entries
 * (buffer-ledger.ts), which the RDMAP side checks every RDMA Write, Read Request and Send with
 * Invalidate against.
 */
import type { FieldDef, TreeNode } from '../../src/vocabulary/fields.js';
import type { FindingSink, RuleDef } from '../../src/vocabulary/findings.js';
import type { LeadingOctets } from '../mpa/mpa-types.js';
import type { BufferLedger } from './buffer-ledger.js';
import type { Dir, RdmapMessage, SendMessage } from './rdmap-message.js';

export * from './rdmap-message.js';
export type { LeadingOctets } from '../mpa/mpa-types.js';

/** Connection facts an upper layer may read: roles, ports, MPA private data, IRD/ORD. */
export interface UlpConnection {
  readonly flow: number;
  /** Direction (0/1) of the MPA Initiator, null when the startup was not captured. */
  readonly initiatorDir: Dir | null;
  /** TCP port of each direction's sender. */
  readonly ports: readonly [number, number];
  /** Port of the Responder (the listening side), null when unknown. */
  readonly serverPort: number | null;
  /** MPA Request / Reply Private Data after the RFC 6581 IRD/ORD block, null when not seen. */
  readonly requestPrivateData: Uint8Array | null;
  readonly replyPrivateData: Uint8Array | null;
  /** The Reply rejected the connection. */
  readonly rejected: boolean;
  /** RFC 6581 IRD/ORD of the Request (the Initiator's) and the Reply (the Responder's), null when not carried. */
  readonly requestIrd: number | null;
  readonly requestOrd: number | null;
  readonly replyIrd: number | null;
  readonly replyOrd: number | null;
  /**
   * Octets each direction (by Dir) sent before its MPA startup frame: the streaming-mode phase
   * RFC 5046 §5.1 defines (the iSCSI login over plain TCP), null when none. Absent: not known.
   */
  readonly leading?: readonly [LeadingOctets | null, LeadingOctets | null];
}

/** Direction of the MPA Initiator, or the TCP client when the startup was not captured. */
export function initiatorOf(c: UlpConnection): Dir {
  return c.initiatorDir ?? 0;
}

/** What an upper layer says about one message: shown where tshark's Info column and -V tree would. */
export interface UlpRecord {
  /** Protocol filter name of the top node ("smb_direct", "rpcordma"). */
  readonly protocol: string;
  /** tshark-style Info text: "SMB2 READ Request MessageId 12 ... 65536 via RDMA_V1". */
  readonly info: string;
  /** Detail tree, nested under the RDMAP message in -V; filters read their values off it. */
  readonly tree: readonly TreeNode[];
}

/**
 * A record whose detail tree is built on first use: most runs (the event lines, -q, statistics)
 * never read it, and building it for every Send is most of an upper layer's cost. `build` may only
 * use what outlives the call (decoded values and copies, never the Send's payload, which is a view).
 * The tree is a getter: code that copies a record (a spread, a structured clone to another thread)
 * reads `tree` into a plain object first.
 */
export class LazyUlpRecord implements UlpRecord {
  private built: readonly TreeNode[] | null = null;

  constructor(
    readonly protocol: string,
    readonly info: string,
    private readonly build: () => readonly TreeNode[],
  ) {}

  get tree(): readonly TreeNode[] {
    this.built ??= this.build();
    return this.built;
  }
}

/** Times of one request, for service response time statistics (seconds since the epoch; NaN when unknown). */
export interface RequestTiming {
  /** "SMB2", "NFSv3", ...: the group -z ...,srt reports by. */
  readonly program: string;
  /** Command or procedure name within the program. */
  readonly command: string;
  /** Its number (SMB2 command code, RPC procedure, NVMe opcode, SCSI operation code): tshark's SRT Index. */
  readonly code?: number;
  /** Queue or connection the request ran on. */
  readonly queue: string;
  readonly request: number;
  readonly firstData: number;
  readonly lastData: number;
  readonly response: number;
  /**
   * Frames of the same four moments: the frame that completed the request message, the first and
   * the last data transfer tied to it (RDMA Write, Read Request or Read Response hitting its
   * buffers), the response. Absent when unknown (no data moved, never answered).
   */
  readonly requestFrame?: number;
  readonly firstDataFrame?: number;
  readonly lastDataFrame?: number;
  readonly responseFrame?: number;
}

/** One connection's upper-layer dissector. */
export interface UpperLayerDissector {
  /**
   * Each RDMAP message of the connection, in capture order; a record when it has something to show.
   * The ledger has already checked the message (an RDMA Write, a Read Request, a Send with
   * Invalidate) when this is called, so a response retires entries that include its invalidation.
   */
  message(m: RdmapMessage): UlpRecord | null;
  /** The connection ended (or the capture did): report what was never answered. */
  end(lastTime: number): void;
  /**
   * Octets of direction `dir` are missing from the capture (a gap the TCP layer declared): messages
   * of that sender may be missing, and those captured after the gap may reach the upper layer late
   * (MPA holds them until framing is found again). An upper layer stops treating what it has not
   * seen (requests, their buffers, their identifiers) as an error. The ledger is already not strict.
   */
  captureLoss?(dir: Dir): void;
}

/** What an upper layer's dissector is made with. */
export interface UlpEnvironment {
  readonly connection: UlpConnection;
  readonly sink: FindingSink;
  readonly ledger: BufferLedger;
  /** Receives the timing of every request that got its response (and of those that did not, at end). */
  readonly timing: (t: RequestTiming) => void;
  /**
   * One store per analysis for facts that span connections (an NVMe controller ID returned on the
   * admin queue and named by the I/O queues): each upper layer keys and bounds its own entries.
   */
  readonly shared?: Map<string, unknown>;
}

/**
 * The upper layers this build decodes, by their `--ulp proto=` names. Listed here (not read off the
 * registry) so the command line can check a name without loading every dissector; a test keeps it
 * equal to src/analysis/ulp-specs.ts.
 */
export const ULP_IDS = ['smb-direct', 'rpc-rdma', 'nvme', 'iser'] as const;
export type UlpId = (typeof ULP_IDS)[number];

/**
 * An upper layer's registration, like a Wireshark heuristic dissector in `iwarp_ddp_rdmap`: how it
 * is recognised on a connection (private data, then port, then a valid first message), its field
 * and rule tables, and its dissector.
 */
export interface UpperLayerSpec {
  readonly id: UlpId;
  /** Shown in the flow table: "SMB Direct". */
  readonly name: string;
  /** Well-known Responder ports. */
  readonly ports: readonly number[];
  /** True when the connection's private data is this protocol's own (strong evidence). */
  readonly privateData: (c: UlpConnection) => boolean;
  /** True when the first Send of the connection is a valid first message of this protocol. */
  readonly firstMessage: (m: SendMessage, c: UlpConnection) => boolean;
  readonly fields: readonly FieldDef[];
  readonly rules: readonly RuleDef[];
  readonly create: (env: UlpEnvironment) => UpperLayerDissector;
}
