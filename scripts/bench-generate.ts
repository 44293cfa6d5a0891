/**
 * Writes large MPA captures for `npm run bench` without holding them in memory: connections with
 * markers and CRC in both directions, FPDUs cut into 1448-octet TCP segments (FPDUs packed into a
 * segment and spanning segments). The shape is chosen per bench case (BenchShape): how many
 * connections are open at once and interleaved segment by segment, the FPDU sizes, how many FPDUs
 * each connection carries, and segment reordering and loss.
 */
import { PcapFileWriter, LINKTYPE_ETHERNET } from '../src/report/pcap-writer.js';
import { crc32c } from '../dissectors/mpa/crc32c.js';
import { startupFrame } from '../src/generate/mpa-encoder.js';

const MSS = 1448;

export interface BenchShape {
  /** Connections open at the same time, their segments interleaved round-robin (default 1). */
  concurrent?: number;
  /** ULPDU payload sizes (after the 18-octet Send header), cycled. */
  sizes?: readonly number[];
  /** Bytes per connection before it closes and the next one opens (default 256 MiB). */
  perConnection?: number;
  /** FPDUs per connection (instead of perConnection): a few FPDUs on many connections. */
  fpdusPerConnection?: number;
  /** Probability that a data segment is held back and sent after the next few (reordering). */
  reorder?: number;
  /** Probability that a data segment is never captured (loss). */
  loss?: number;
  /** Connections are closed (FIN) only at the end of the capture (all open at once). */
  closeAtEnd?: boolean;
}

export interface BenchCapture {
  packets: number;
  bytes: number;
  fpdus: number;
  connections: number;
}

/** The FPDU sizes of case (a): 18 to 16 018 octets of ULPDU, about 300 FPDUs per MB. */
export const MIXED_SIZES = [0, 64, 100, 512, 1000, 1400, 4000, 8192, 16000, 300] as const;
/** Small FPDUs, several per segment (case b): about 8,000 FPDUs per MB. */
export const SMALL_SIZES = [0, 16, 32, 64, 100, 48, 200, 8] as const;

interface Dir {
  src: number;
  dst: number;
  sport: number;
  dport: number;
  seq: number;
  /** Position relative to SeqStart (for markers). */
  rel: number;
  pending: Uint8Array;
  pendingLen: number;
  msn: number;
}

interface Conn {
  a: Dir;
  b: Dir;
  k: number;
  fpdus: number;
  bytes: number;
}

function frameHeader(buf: Uint8Array, d: Dir, ack: number, flags: number, payloadLen: number): void {
  // Ethernet
  buf.fill(0, 0, 14);
  buf[0] = 2;
  buf[6] = 2;
  buf[12] = 0x08;
  buf[13] = 0x00;
  const v = new DataView(buf.buffer, buf.byteOffset);
  // IPv4 (checksums left 0: the analyzer does not check them by default, as with offload)
  buf[14] = 0x45;
  buf[15] = 0;
  v.setUint16(16, 20 + 20 + payloadLen);
  v.setUint16(18, 0);
  v.setUint16(20, 0x4000);
  buf[22] = 64;
  buf[23] = 6;
  v.setUint16(24, 0);
  v.setUint32(26, d.src);
  v.setUint32(30, d.dst);
  // TCP
  v.setUint16(34, d.sport);
  v.setUint16(36, d.dport);
  v.setUint32(38, d.seq >>> 0);
  v.setUint32(42, ack >>> 0);
  buf[46] = 0x50;
  buf[47] = flags;
  v.setUint16(48, 65535);
  v.setUint32(50, 0);
}

/** The single-connection capture of the original bench (case a). */
export function generateBenchCapture(path: string, targetBytes: number, seed = 1): BenchCapture {
  return generateShapedCapture(path, targetBytes, {}, seed);
}

export function generateShapedCapture(path: string, targetBytes: number, shape: BenchShape, seed = 1): BenchCapture {
  const w = new PcapFileWriter(path, LINKTYPE_ETHERNET, false);
  const frame = new Uint8Array(54 + 65536);
  const sizes = shape.sizes ?? MIXED_SIZES;
  const concurrent = Math.max(1, shape.concurrent ?? 1);
  const perConn = shape.perConnection ?? 256 * 1024 * 1024;
  let packets = 0;
  let bytes = 0;
  let fpdus = 0;
  let connections = 0;
  let t = 1_700_000_000;
  let us = 0;
  let x = seed >>> 0 || 1;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
  const emit = (d: Dir, ack: number, flags: number, payload: Uint8Array, off: number, len: number) => {
    frameHeader(frame, d, ack, flags, len);
    frame.set(payload.subarray(off, off + len), 54);
    us += 3;
    if (us >= 1e6) {
      us -= 1e6;
      t++;
    }
    w.write({ tsSec: t, tsNsec: us * 1000, data: frame.subarray(0, 54 + len) });
    packets++;
    bytes += 16 + 54 + len;
  };
  // Reordering: a data segment held back goes out after the next one or two (same direction or not).
  let heldBack: { d: Dir; ack: number; data: Uint8Array; left: number } | null = null;
  const reorder = shape.reorder ?? 0;
  const loss = shape.loss ?? 0;
  const dataSegment = (d: Dir, ack: number, flags: number, payload: Uint8Array, len: number) => {
    if (loss > 0 && rnd() < loss) {
      bytes += 16 + 54 + len; // counted as produced so the size target holds; never captured
      return;
    }
    if (heldBack !== null && --heldBack.left <= 0) {
      emit(d, ack, flags, payload, 0, len);
      const h = heldBack;
      heldBack = null;
      const saved = h.d.seq;
      h.d.seq = (h.d as Dir & { heldSeq: number }).heldSeq;
      emit(h.d, h.ack, 0x10, h.data, 0, h.data.length);
      h.d.seq = saved;
      return;
    }
    if (heldBack === null && reorder > 0 && rnd() < reorder) {
      (d as Dir & { heldSeq: number }).heldSeq = d.seq;
      heldBack = { d, ack, data: payload.slice(0, len), left: 1 + Math.floor(rnd() * 2) };
      return;
    }
    emit(d, ack, flags, payload, 0, len);
  };
  const fpdu = new Uint8Array(70000);
  const body = new Uint8Array(65536);
  for (let i = 0; i < body.length; i++) body[i] = Math.floor(rnd() * 256);
  // One FPDU with markers (RFC 5044 §4.3: FPDUPTR counts from the ULPDU_Length field; 0 before it).
  const buildFpdu = (d: Dir, msn: number, len: number): Uint8Array => {
    let o = 0;
    let lenRel = -1;
    const marker = () => {
      const ptr = lenRel < 0 ? 0 : d.rel - lenRel;
      fpdu[o++] = 0;
      fpdu[o++] = 0;
      fpdu[o++] = (ptr >> 8) & 0xff;
      fpdu[o++] = ptr & 0xff;
      d.rel += 4;
    };
    const put = (b: number) => {
      if (d.rel % 512 === 0) marker();
      fpdu[o++] = b;
      d.rel++;
    };
    if (d.rel % 512 === 0) marker();
    lenRel = d.rel;
    const ulpdu = 18 + len;
    put(ulpdu >> 8);
    put(ulpdu & 0xff);
    // Untagged Send header (RFC 5041/5040): L, DV 1, RV 1, opcode 3, QN 0, MSN, MO 0.
    const hdr = [
      0x41,
      0x43,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      (msn >>> 24) & 0xff,
      (msn >>> 16) & 0xff,
      (msn >>> 8) & 0xff,
      msn & 0xff,
      0,
      0,
      0,
      0,
    ];
    for (const b of hdr) put(b);
    // Payload runs between markers are copied whole (the generator must outrun the analyzer).
    let i = 0;
    while (i < len) {
      if (d.rel % 512 === 0) marker();
      const n = Math.min(len - i, 512 - (d.rel % 512));
      fpdu.set(body.subarray(i, i + n), o);
      o += n;
      i += n;
      d.rel += n;
    }
    const pad = (4 - ((2 + ulpdu) % 4)) % 4;
    for (let j = 0; j < pad; j++) put(0);
    if (d.rel % 512 === 0) marker(); // covered by the CRC
    const c = crc32c(fpdu, 0, o);
    fpdu[o++] = c & 0xff;
    fpdu[o++] = (c >>> 8) & 0xff;
    fpdu[o++] = (c >>> 16) & 0xff;
    fpdu[o++] = (c >>> 24) & 0xff;
    d.rel += 4;
    return fpdu.subarray(0, o);
  };
  const req = startupFrame({ kind: 'request', m: true, c: true });
  const rep = startupFrame({ kind: 'reply', m: true, c: true });
  const empty = new Uint8Array(0);
  const open = (): Conn => {
    connections++;
    const n = connections;
    // 10.0.0.0/8 clients, one server: every connection has its own 4-tuple.
    const client = (0x0a000000 | (((n >>> 14) & 0xffff) << 8) | 1) >>> 0;
    const sport = 1024 + (n & 0x3fff);
    const mk = (src: number, dst: number, sp: number, dp: number, seq: number): Dir => ({
      src,
      dst,
      sport: sp,
      dport: dp,
      seq,
      rel: 0,
      pending: new Uint8Array(MSS),
      pendingLen: 0,
      msn: 1,
    });
    const a = mk(client, 0x0a0000fe, sport, 4420, 1000 + n * 7);
    const b = mk(0x0a0000fe, client, 4420, sport, 900000 + n * 13);
    emit({ ...a, seq: a.seq - 1 }, 0, 0x02, empty, 0, 0);
    emit({ ...b, seq: b.seq - 1 }, a.seq, 0x12, empty, 0, 0);
    emit(a, b.seq, 0x18, req, 0, req.length);
    a.seq += req.length;
    emit(b, a.seq, 0x18, rep, 0, rep.length);
    b.seq += rep.length;
    return { a, b, k: 0, fpdus: 0, bytes: 0 };
  };
  const flushDir = (d: Dir, peer: Dir, flags: number) => {
    if (!d.pendingLen) return;
    dataSegment(d, peer.seq, flags, d.pending, d.pendingLen);
    d.seq += d.pendingLen;
    d.pendingLen = 0;
  };
  /** Appends FPDU bytes to a direction; returns the number of full segments sent. */
  const send = (d: Dir, peer: Dir, data: Uint8Array): number => {
    let off = 0;
    let sent = 0;
    while (off < data.length) {
      const n = Math.min(MSS - d.pendingLen, data.length - off);
      d.pending.set(data.subarray(off, off + n), d.pendingLen);
      d.pendingLen += n;
      off += n;
      if (d.pendingLen === MSS) {
        flushDir(d, peer, 0x10);
        sent++;
      }
    }
    return sent;
  };
  const close = (c: Conn) => {
    flushDir(c.a, c.b, 0x18);
    flushDir(c.b, c.a, 0x18);
    emit(c.a, c.b.seq, 0x11, empty, 0, 0);
    emit(c.b, c.a.seq + 1, 0x11, empty, 0, 0);
  };
  /** One step of a connection: FPDUs until at least one segment went out (or its FPDU quota ran out). */
  const step = (c: Conn): void => {
    let segs = 0;
    const start = bytes;
    while (segs === 0) {
      const len = sizes[c.k++ % sizes.length]!;
      segs += send(c.a, c.b, buildFpdu(c.a, c.a.msn++, len));
      c.fpdus++;
      fpdus++;
      if (c.k % 8 === 0) {
        segs += send(c.b, c.a, buildFpdu(c.b, c.b.msn++, sizes[(c.k >> 3) % sizes.length]!));
        c.fpdus++;
        fpdus++;
      }
      if (shape.fpdusPerConnection !== undefined && c.fpdus >= shape.fpdusPerConnection) break;
    }
    c.bytes += bytes - start;
  };
  const done = (c: Conn): boolean =>
    shape.fpdusPerConnection !== undefined ? c.fpdus >= shape.fpdusPerConnection : c.bytes >= perConn;
  const live: Conn[] = [];
  const finished: Conn[] = [];
  for (let i = 0; i < concurrent && bytes < targetBytes; i++) live.push(open());
  let r = 0;
  while (bytes < targetBytes && live.length > 0) {
    if (r >= live.length) r = 0;
    const c = live[r]!;
    step(c);
    if (done(c)) {
      if (shape.closeAtEnd) {
        // Its last partial segments go out now; FIN only at the end of the capture.
        flushDir(c.a, c.b, 0x18);
        flushDir(c.b, c.a, 0x18);
        finished.push(c);
      } else close(c);
      live[r] = live[live.length - 1]!;
      live.pop();
      // Keep `concurrent` connections open while the size target is not reached.
      if (bytes < targetBytes && (shape.fpdusPerConnection === undefined || finished.length + live.length < concurrent))
        live.push(open());
    } else r++;
  }
  if (heldBack !== null) {
    const h = heldBack as { d: Dir & { heldSeq?: number }; ack: number; data: Uint8Array };
    const saved = h.d.seq;
    h.d.seq = h.d.heldSeq ?? h.d.seq;
    emit(h.d, h.ack, 0x10, h.data, 0, h.data.length);
    h.d.seq = saved;
  }
  for (const c of live) close(c);
  for (const c of finished) close(c);
  w.close();
  return { packets, bytes, fpdus, connections };
}
