/**
 * Writes a large MPA capture without holding it in memory: one connection per `connections`, FPDUs
 * of mixed sizes with markers and CRC in both directions, cut into 1448-octet TCP segments.
 */
import { PcapFileWriter, LINKTYPE_ETHERNET } from '../src/report/pcap-writer.js';
import { crc32c } from '../dissectors/mpa/crc32c.js';
import { startupFrame } from '../src/generate/mpa-encoder.js';

const MSS = 1448;

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

export function generateBenchCapture(path: string, targetBytes: number, seed = 1): { packets: number; bytes: number; fpdus: number } {
  const w = new PcapFileWriter(path, LINKTYPE_ETHERNET, false);
  const frame = new Uint8Array(54 + 65536);
  let packets = 0;
  let bytes = 0;
  let fpdus = 0;
  let t = 1_700_000_000;
  let us = 0;
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
  // Builds one FPDU with markers into `out` at `o`; returns the new offset.
  const fpdu = new Uint8Array(70000);
  const body = new Uint8Array(65536);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < body.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    body[i] = x & 0xff;
  }
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
    const hdr = [0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0, (msn >>> 24) & 0xff, (msn >>> 16) & 0xff, (msn >>> 8) & 0xff, msn & 0xff, 0, 0, 0, 0];
    for (const b of hdr) put(b);
    for (let i = 0; i < len; i++) put(body[i]!);
    const pad = (4 - ((2 + ulpdu) % 4)) % 4;
    for (let i = 0; i < pad; i++) put(0);
    if (d.rel % 512 === 0) marker(); // covered by the CRC
    const c = crc32c(fpdu, 0, o);
    fpdu[o++] = c & 0xff;
    fpdu[o++] = (c >>> 8) & 0xff;
    fpdu[o++] = (c >>> 16) & 0xff;
    fpdu[o++] = (c >>> 24) & 0xff;
    d.rel += 4;
    return fpdu.subarray(0, o);
  };
  let conn = 0;
  while (bytes < targetBytes) {
    conn++;
    const a: Dir = { src: 0x0a000001, dst: 0x0a000002, sport: 40000 + (conn % 20000), dport: 4420, seq: 1000, rel: 0, pending: new Uint8Array(MSS), pendingLen: 0 };
    const b: Dir = { src: 0x0a000002, dst: 0x0a000001, sport: 4420, dport: a.sport, seq: 900000, rel: 0, pending: new Uint8Array(MSS), pendingLen: 0 };
    emit({ ...a, seq: a.seq - 1 }, 0, 0x02, new Uint8Array(0), 0, 0);
    emit({ ...b, seq: b.seq - 1 }, a.seq, 0x12, new Uint8Array(0), 0, 0);
    const req = startupFrame({ kind: 'request', m: true, c: true });
    const rep = startupFrame({ kind: 'reply', m: true, c: true });
    emit(a, b.seq, 0x18, req, 0, req.length);
    a.seq += req.length;
    emit(b, a.seq, 0x18, rep, 0, rep.length);
    b.seq += rep.length;
    // Segment a direction's FPDU bytes into MSS-sized segments (FPDUs packed and spanning).
    const send = (d: Dir, peer: Dir, data: Uint8Array) => {
      let off = 0;
      while (off < data.length) {
        const n = Math.min(MSS - d.pendingLen, data.length - off);
        d.pending.set(data.subarray(off, off + n), d.pendingLen);
        d.pendingLen += n;
        off += n;
        if (d.pendingLen === MSS) {
          emit(d, peer.seq, 0x10, d.pending, 0, MSS);
          d.seq += MSS;
          d.pendingLen = 0;
        }
      }
    };
    const perConn = Math.min(256 * 1024 * 1024, targetBytes - bytes);
    let msnA = 1;
    let msnB = 1;
    let k = 0;
    const sizes = [0, 64, 100, 512, 1000, 1400, 4000, 8192, 16000, 300];
    const start = bytes;
    while (bytes - start < perConn) {
      const len = sizes[k++ % sizes.length]!;
      send(a, b, buildFpdu(a, msnA++, len));
      fpdus++;
      if (k % 8 === 0) {
        send(b, a, buildFpdu(b, msnB++, sizes[(k >> 3) % sizes.length]!));
        fpdus++;
      }
    }
    for (const [d, p] of [[a, b], [b, a]] as const) {
      if (d.pendingLen) {
        emit(d, p.seq, 0x18, d.pending, 0, d.pendingLen);
        d.seq += d.pendingLen;
        d.pendingLen = 0;
      }
    }
    emit(a, b.seq, 0x11, new Uint8Array(0), 0, 0);
    emit(b, a.seq + 1, 0x11, new Uint8Array(0), 0, 0);
  }
  w.close();
  return { packets, bytes, fpdus };
}
