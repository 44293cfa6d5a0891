/**
 * Writes the SMB Direct workload of `npm run bench` (case h) without holding it in memory: a few
 * SMB Direct connections (MPA Rev 2, CRC, no markers, the MS-SMBD Appendix A IRD/ORD block), each
 * negotiated and established as the generator's SmbdSession does it, then SMB2 READs and WRITEs
 * over RDMA_V1 channels in turn: the bulk moves in RDMA Writes (READ) and RDMA Read Requests with
 * their Read Responses (WRITE), as MS-SMBD 3.1.4.5/3.1.4.6 and MS-SMB2 3.3.5.12/3.3.5.13 say.
 *
 * The session's events (its RDMAP messages, credits and MessageIds as the specification counts
 * them) are drained after every operation and framed here: DDP segments that fit one FPDU per
 * 1448-octet TCP segment (RFC 5041 §5), FPDUs with PAD and CRC32c (RFC 5044 §4), one TCP segment
 * each, the connections' operations interleaved.
 */
import { crc32c } from '../dissectors/mpa/crc32c.js';
import { readRequest as readRequestUlpdu, sendSegments, taggedSegments } from '../src/generate/ddp-ulpdu.js';
import { enhancedPd, patternBytes, startupFrame } from '../src/generate/mpa-encoder.js';
import { irdOrd } from '../src/generate/smbd-encoder.js';
import { CHANNEL_RDMA_V1, CHANNEL_RDMA_V1_INVALIDATE, SMBD_PORT, SmbdSession } from '../src/generate/smbd-session.js';
import type { UlpEvent } from '../src/generate/ulp-connection.js';
import { LINKTYPE_ETHERNET, PcapFileWriter } from '../src/report/pcap-writer.js';
import type { BenchCapture } from './bench-generate.js';

const MSS = 1448;
/** Largest ULPDU whose FPDU (length, PAD, CRC; no markers) fills one MSS. */
const ROOM = MSS - 6;
/** The SMB2 READ and WRITE lengths, cycled (Windows and Linux clients use 64 KiB to 1 MiB). */
const LENGTHS = [1 << 20, 65536, 262144, 1 << 20] as const;

interface Side {
  addr: number;
  port: number;
  seq: number;
}

interface Conn {
  s: SmbdSession;
  side: [Side, Side];
  /** Read Requests of the current batch of events: their Data Sink (for the Read Response). */
  reads: Map<number, { stag: number; to: bigint; size: number }>;
}

/** Generates about `targetBytes` of SMB Direct traffic on `connections` connections. */
export function generateSmbdCapture(path: string, targetBytes: number, connections = 2): BenchCapture {
  const w = new PcapFileWriter(path, LINKTYPE_ETHERNET, false);
  const frame = new Uint8Array(54 + 65536);
  const v = new DataView(frame.buffer);
  const fpdu = new Uint8Array(MSS + 8);
  const bulk = patternBytes(1 << 20, 77);
  let packets = 0;
  let bytes = 0;
  let fpdus = 0;
  let usTotal = 0;
  const t0 = 1_700_000_000;

  const emit = (from: Side, to: Side, flags: number, payload: Uint8Array, delayUs: number): void => {
    usTotal += delayUs;
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
    const sec = Math.floor(usTotal / 1e6);
    w.write({
      tsSec: t0 + sec,
      tsNsec: Math.round(usTotal - sec * 1e6) * 1000,
      data: frame.subarray(0, 54 + payload.length),
    });
    from.seq = (from.seq + payload.length + (flags & 0x03 ? 1 : 0)) >>> 0;
    packets++;
    bytes += 16 + 54 + payload.length;
  };

  /** One ULPDU as an FPDU (RFC 5044 §4: ULPDU_Length, ULPDU, PAD to 4, CRC32c) in one TCP segment. */
  const sendUlpdu = (c: Conn, dir: 0 | 1, ulpdu: Uint8Array, delayUs: number): void => {
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
    emit(c.side[dir], c.side[1 - dir]!, 0x18, fpdu.subarray(0, o), delayUs);
    fpdus++;
  };

  const msn = new Map<Conn, [[number, number], [number, number]]>();
  const frameEvent = (c: Conn, e: UlpEvent, i: number): void => {
    const d = e.dir;
    const m = msn.get(c)!;
    const delay = e.delayUs ?? 12;
    let segs: Uint8Array[];
    switch (e.op) {
      case 'send':
        segs = sendSegments(
          ++m[d][0],
          e.payload,
          ROOM - 18,
          e.invalidate !== undefined ? { invalidate: e.invalidate } : {},
        );
        break;
      case 'write':
        segs = taggedSegments(0x0, e.stag, e.to, e.data ?? bulk.subarray(0, e.length), ROOM - 14);
        break;
      case 'read-request':
        c.reads.set(i, { stag: e.sinkStag, to: e.sinkTo, size: e.size });
        segs = [
          readRequestUlpdu({
            msn: ++m[d][1],
            sinkStag: e.sinkStag,
            sinkTo: e.sinkTo,
            size: e.size,
            srcStag: e.srcStag,
            srcTo: e.srcTo,
          }),
        ];
        break;
      case 'read-response': {
        const q = c.reads.get(e.request)!;
        segs = taggedSegments(0x2, q.stag, q.to, bulk.subarray(0, e.length ?? q.size), ROOM - 14);
        break;
      }
    }
    segs.forEach((u, j) => {
      sendUlpdu(c, d, u, j === 0 ? delay : 1);
    });
  };
  const drain = (c: Conn): void => {
    c.s.events.forEach((e, i) => {
      frameEvent(c, e, i);
    });
    // Indices restart with the next operation (read responses name their request within one).
    c.s.events.length = 0;
    c.reads.clear();
  };

  const open = (n: number): Conn => {
    const side: [Side, Side] = [
      { addr: (0x0a000001 + n * 0x100) >>> 0, port: 49152 + n, seq: 1_000_000 + n * 7919 },
      { addr: 0x0a0000fe, port: SMBD_PORT, seq: 3_000_000 + n * 104729 },
    ];
    const c: Conn = { s: new SmbdSession(), side, reads: new Map() };
    msn.set(c, [
      [0, 0],
      [0, 0],
    ]);
    const empty = new Uint8Array(0);
    emit({ ...side[0], seq: side[0].seq - 1 }, side[1], 0x02, empty, 100);
    emit({ ...side[1], seq: side[1].seq - 1 }, side[0], 0x12, empty, 30);
    const pd = enhancedPd({ ird: 16, ord: 16 }, irdOrd(16, 16));
    emit(side[0], side[1], 0x18, startupFrame({ kind: 'request', c: true, rev: 2, enhanced: true, pd }), 30);
    emit(side[1], side[0], 0x18, startupFrame({ kind: 'reply', c: true, rev: 2, enhanced: true, pd }), 60);
    c.s.establish();
    drain(c);
    return c;
  };

  const conns = Array.from({ length: Math.max(1, connections) }, (_, n) => open(n));
  let op = 0;
  while (bytes < targetBytes) {
    const c = conns[op % conns.length]!;
    const k = Math.floor(op / conns.length);
    const length = LENGTHS[(k >> 1) % LENGTHS.length]!;
    // READ and WRITE in turn on each connection, both channels (RDMA_V1_INVALIDATE from SMB 3.0.2).
    const channel = k % 4 < 2 ? CHANNEL_RDMA_V1 : CHANNEL_RDMA_V1_INVALIDATE;
    if (k % 2 === 0) c.s.read({ length, channel });
    else c.s.writeOp({ length, channel });
    drain(c);
    op++;
  }
  for (const c of conns) {
    c.s.close();
    drain(c);
    emit(c.side[0], c.side[1], 0x11, new Uint8Array(0), 50);
    emit(c.side[1], c.side[0], 0x11, new Uint8Array(0), 20);
  }
  w.close();
  return { packets, bytes, fpdus, connections: conns.length };
}
