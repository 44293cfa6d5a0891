/**
 * Writes an upper layer's bench workload (`npm run bench` cases h and i) straight to a pcap file,
 * without holding it in memory: connections opened with SYN, SYN-ACK and the MPA Rev 2 startup
 * frames (RFC 6581 block, then the upper layer's private data), the generator sessions' RDMAP
 * messages (ulp-connection.ts UlpEvent) cut into DDP segments that fit one FPDU per 1448-octet TCP
 * segment (RFC 5041 §5), each FPDU with PAD and CRC32c (RFC 5044 §4, no markers) in its own TCP
 * segment, and a FIN from each side at the end. Connections' batches interleave as the caller
 * frames them.
 */
import { crc32c } from '../dissectors/mpa/crc32c.js';
import { readRequest as readRequestUlpdu, sendSegments, taggedSegments } from '../src/generate/ddp-ulpdu.js';
import { enhancedPd, patternBytes, startupFrame } from '../src/generate/mpa-encoder.js';
import type { UlpEvent } from '../src/generate/ulp-connection.js';
import { LINKTYPE_ETHERNET, PcapFileWriter } from '../src/report/pcap-writer.js';
import type { BenchCapture } from './bench-generate.js';

const MSS = 1448;
/** Largest ULPDU whose FPDU (length, PAD, CRC; no markers) fills one MSS. */
const ROOM = MSS - 6;

interface Side {
  addr: number;
  port: number;
  seq: number;
}

/** One connection being written. */
export interface BenchConn {
  readonly side: [Side, Side];
  /** Last MSN of each direction's queue 0 (Sends) and queue 1 (Read Requests). */
  readonly msn: [[number, number], [number, number]];
}

export interface OpenOptions {
  /** IPv4 addresses (as 32-bit numbers) and ports of the client (MPA Initiator) and the server. */
  readonly client: { addr: number; port: number };
  readonly server: { addr: number; port: number };
  /** The upper layer's private data after the RFC 6581 block, in the Request and the Reply. */
  readonly requestPd: Uint8Array;
  readonly replyPd: Uint8Array;
}

export class UlpBenchWriter {
  private readonly w: PcapFileWriter;
  private readonly frame = new Uint8Array(54 + 65536);
  private readonly v = new DataView(this.frame.buffer);
  private readonly fpdu = new Uint8Array(MSS + 8);
  /** Payload of the RDMA Writes and Read Responses that carry no data of their own. */
  private readonly bulk = patternBytes(1 << 20, 77);
  private packets = 0;
  private fpdus = 0;
  private connections = 0;
  private usTotal = 0;
  /** Octets written so far (record headers included): what the caller sizes the workload by. */
  bytes = 0;
  private readonly t0 = 1_700_000_000;

  constructor(path: string) {
    this.w = new PcapFileWriter(path, LINKTYPE_ETHERNET, false);
  }

  private emit(from: Side, to: Side, flags: number, payload: Uint8Array, delayUs: number): void {
    const frame = this.frame;
    const v = this.v;
    this.usTotal += delayUs;
    frame.fill(0, 0, 14);
    frame[0] = 2;
    frame[6] = 2;
    frame[12] = 0x08;
    frame[14] = 0x45;
    v.setUint16(16, 40 + payload.length);
    v.setUint16(20, 0x4000);
    frame[22] = 64;
    frame[23] = 6;
    v.setUint16(24, 0);
    v.setUint32(26, from.addr);
    v.setUint32(30, to.addr);
    v.setUint16(34, from.port);
    v.setUint16(36, to.port);
    v.setUint32(38, from.seq >>> 0);
    v.setUint32(42, to.seq >>> 0);
    frame[46] = 0x50;
    frame[47] = flags;
    v.setUint16(48, 65535);
    v.setUint32(50, 0);
    frame.set(payload, 54);
    const sec = Math.floor(this.usTotal / 1e6);
    this.w.write({
      tsSec: this.t0 + sec,
      tsNsec: Math.round(this.usTotal - sec * 1e6) * 1000,
      data: frame.subarray(0, 54 + payload.length),
    });
    from.seq = (from.seq + payload.length + (flags & 0x03 ? 1 : 0)) >>> 0;
    this.packets++;
    this.bytes += 16 + 54 + payload.length;
  }

  /** One ULPDU as an FPDU (RFC 5044 §4: ULPDU_Length, ULPDU, PAD to 4, CRC32c) in one TCP segment. */
  private sendUlpdu(c: BenchConn, dir: 0 | 1, ulpdu: Uint8Array, delayUs: number): void {
    const fpdu = this.fpdu;
    const n = ulpdu.length;
    fpdu[0] = n >> 8;
    fpdu[1] = n & 0xff;
    fpdu.set(ulpdu, 2);
    let o = 2 + n;
    while (o % 4 !== 0) fpdu[o++] = 0;
    const crc = crc32c(fpdu, 0, o);
    fpdu[o++] = crc & 0xff;
    fpdu[o++] = (crc >>> 8) & 0xff;
    fpdu[o++] = (crc >>> 16) & 0xff;
    fpdu[o++] = (crc >>> 24) & 0xff;
    this.emit(c.side[dir], c.side[1 - dir]!, 0x18, fpdu.subarray(0, o), delayUs);
    this.fpdus++;
  }

  /** SYN, SYN-ACK, MPA Request and Reply (Rev 2, CRC, no markers, IRD/ORD 16). */
  open(o: OpenOptions): BenchConn {
    const side: [Side, Side] = [
      { ...o.client, seq: 1_000_000 + this.connections * 7919 },
      { ...o.server, seq: 3_000_000 + this.connections * 104729 },
    ];
    this.connections++;
    const c: BenchConn = {
      side,
      msn: [
        [0, 0],
        [0, 0],
      ],
    };
    const empty = new Uint8Array(0);
    this.emit({ ...side[0], seq: side[0].seq - 1 }, side[1], 0x02, empty, 100);
    this.emit({ ...side[1], seq: side[1].seq - 1 }, side[0], 0x12, empty, 30);
    const io = { ird: 16, ord: 16 };
    this.emit(
      side[0],
      side[1],
      0x18,
      startupFrame({ kind: 'request', c: true, rev: 2, enhanced: true, pd: enhancedPd(io, o.requestPd) }),
      30,
    );
    this.emit(
      side[1],
      side[0],
      0x18,
      startupFrame({ kind: 'reply', c: true, rev: 2, enhanced: true, pd: enhancedPd(io, o.replyPd) }),
      60,
    );
    return c;
  }

  /**
   * Frames a batch of events on `c`, in order (a Read Response names its Read Request by its
   * index in this batch), and empties the array.
   */
  frameEvents(c: BenchConn, events: UlpEvent[]): void {
    const reads = new Map<number, { stag: number; to: bigint; size: number }>();
    events.forEach((e, i) => {
      const d = e.dir;
      const m = c.msn[d];
      const delay = e.delayUs ?? 12;
      let segs: Uint8Array[];
      switch (e.op) {
        case 'send':
          segs = sendSegments(
            ++m[0],
            e.payload,
            ROOM - 18,
            e.invalidate !== undefined ? { invalidate: e.invalidate } : {},
          );
          break;
        case 'write':
          segs = taggedSegments(0x0, e.stag, e.to, e.data ?? this.bulk.subarray(0, e.length), ROOM - 14);
          break;
        case 'read-request':
          reads.set(i, { stag: e.sinkStag, to: e.sinkTo, size: e.size });
          segs = [
            readRequestUlpdu({
              msn: ++m[1],
              sinkStag: e.sinkStag,
              sinkTo: e.sinkTo,
              size: e.size,
              srcStag: e.srcStag,
              srcTo: e.srcTo,
            }),
          ];
          break;
        case 'read-response': {
          const q = reads.get(e.request)!;
          const data = e.data ?? this.bulk.subarray(0, e.length ?? q.size);
          segs = taggedSegments(0x2, q.stag, q.to, data, ROOM - 14);
          break;
        }
      }
      segs.forEach((u, j) => {
        this.sendUlpdu(c, d, u, j === 0 ? delay : 1);
      });
    });
    events.length = 0;
  }

  /** A FIN from each side. */
  close(c: BenchConn): void {
    this.emit(c.side[0], c.side[1], 0x11, new Uint8Array(0), 50);
    this.emit(c.side[1], c.side[0], 0x11, new Uint8Array(0), 20);
  }

  finish(): BenchCapture {
    this.w.close();
    return { packets: this.packets, bytes: this.bytes, fpdus: this.fpdus, connections: this.connections };
  }
}
