/**
 * A small MPA sender for tests: builds startup frames and FPDU streams exactly as RFC 5044 says a
 * sender does (markers every 512 octets from SeqStart, CRC32c over the FPDU with markers, PAD),
 * with knobs to inject each fault the analyzer must find.
 */
import { crc32c } from '../../dissectors/mpa/crc32c.js';

export interface StartupSpec {
  kind: 'request' | 'reply';
  m?: boolean;
  c?: boolean;
  r?: boolean;
  enhanced?: boolean;
  res?: number;
  rev?: number;
  /** Private Data (for enhanced frames, include the 4-octet IRD/ORD block yourself or use enhancedPd). */
  pd?: Uint8Array;
  /** Override PD_Length (to lie about it). */
  pdLength?: number;
  /** Override the key. */
  key?: string;
}

export function startupFrame(s: StartupSpec): Uint8Array {
  const pd = s.pd ?? new Uint8Array(0);
  const out = new Uint8Array(20 + pd.length);
  const key = s.key ?? (s.kind === 'request' ? 'MPA ID Req Frame' : 'MPA ID Rep Frame');
  for (let i = 0; i < 16; i++) out[i] = key.charCodeAt(i) & 0xff;
  out[16] = (s.m ? 0x80 : 0) | (s.c ? 0x40 : 0) | (s.r ? 0x20 : 0) | (s.enhanced ? 0x10 : 0) | ((s.res ?? 0) & 0x0f);
  out[17] = s.rev ?? 1;
  const pl = s.pdLength ?? pd.length;
  out[18] = pl >> 8;
  out[19] = pl & 0xff;
  out.set(pd, 20);
  return out;
}

/** RFC 6581 IRD/ORD block followed by optional ULP private data. */
export function enhancedPd(
  o: { ird: number; ord: number; p2p?: boolean; send?: boolean; write?: boolean; read?: boolean },
  ulp: Uint8Array = new Uint8Array(0),
): Uint8Array {
  const irdW = (o.p2p ? 0x8000 : 0) | (o.send ? 0x4000 : 0) | (o.ird & 0x3fff);
  const ordW = (o.write ? 0x8000 : 0) | (o.read ? 0x4000 : 0) | (o.ord & 0x3fff);
  const b = new Uint8Array(4 + ulp.length);
  b[0] = irdW >> 8;
  b[1] = irdW & 0xff;
  b[2] = ordW >> 8;
  b[3] = ordW & 0xff;
  b.set(ulp, 4);
  return b;
}

export interface FpduFault {
  /** Corrupt the CRC (xor 1). */
  badCrc?: boolean;
  /** Send the CRC most significant octet first. */
  crcByteSwap?: boolean;
  /** Add this to the FPDUPTR of every marker inside the FPDU (CRC computed over the wrong marker). */
  fpduptrDelta?: number;
  /** Set the marker Reserved field. */
  markerReserved?: number;
  /** Set low bits of FPDUPTR (0-3). */
  fpduptrLowBits?: number;
  /** Fill PAD with this byte. */
  padByte?: number;
  /** Write each marker inside the FPDU as a little-endian 32-bit value (host byte order). */
  markerHostOrder?: boolean;
  /**
   * Write the FPDUPTR of each marker inside the FPDU least significant octet first, Reserved in
   * place: a marker built as a struct of two 16-bit fields in host byte order (OSC iWarp).
   */
  fpduptrHostOrder?: boolean;
  /** Leave out the markers due inside this FPDU (a sender that stops inserting them; OSC iWarp). */
  noMarkers?: boolean;
}

/**
 * Mistakes real senders make in the FPDU format (each breaks an RFC receiver's framing), for the
 * analyzer's diagnosis (dissectors/mpa/sender-mistakes.ts) to name.
 */
export interface SenderMistakeSpec {
  /** PAD as (ULPDU_Length+2) mod 4 (SoftUiWarp), or none at all. */
  pad?: 'len-plus-2' | 'none';
  /** ULPDU_Length also counts its own 2 octets, or the 4-octet CRC. */
  lengthCounts?: 'length-field' | 'crc';
  /** ULPDU_Length least significant octet first. */
  lengthLittleEndian?: boolean;
  /** Markers placed from this rel offset (0 = SeqStart) instead of SeqStart: the wrong phase. */
  markerOrigin?: number;
}

export interface FpduSpec {
  ulpdu: Uint8Array;
  fault?: FpduFault;
}

export interface EncodedFpdu {
  /** Offset (relative to SeqStart) of the ULPDU_Length field. */
  lenRel: number;
  /** Offset of the FPDU's first octet (leading marker if any). */
  startRel: number;
  endRel: number;
  ulpduLength: number;
  markers: number;
}

/** How a direction's FPDUs are encoded (`startRel` lets a stream continue from an earlier call). */
export interface FpduEncoding {
  markers: boolean;
  crc: boolean;
  startRel?: number;
  mistake?: SenderMistakeSpec;
  /** FPDUPTR counted from the FPDU's first octet (draft-ietf-rddp-mpa-00 §7.1, Rev 0 and pre-standard senders) instead of ULPDU_Length. */
  fpduptrFrom?: 'length' | 'fpdu';
}

/**
 * Encodes FPDUs as the bytes a sender puts on the wire after its startup frame. `rel` 0 = SeqStart.
 * `startRel` lets a stream continue from an earlier call.
 */
export function encodeFpdus(
  fpdus: Iterable<FpduSpec>,
  opts: FpduEncoding,
  /** Octets expected (a buffer of that size from the start, handed back without a copy when exact). */
  expected = 4096,
): { bytes: Uint8Array; fpdus: EncodedFpdu[] } {
  // Octets go straight into a growing buffer (a number per octet took 8 times the capture's size).
  const out = new ByteOut(expected);
  const infos: EncodedFpdu[] = [];
  encodeInto(fpdus, opts, out, (lenRel, startRel, endRel, ulpduLength, markers) =>
    infos.push({ lenRel, startRel, endRel, ulpduLength, markers }),
  );
  return { bytes: out.take(), fpdus: infos };
}

/**
 * Where each FPDU of a stream falls, without its octets: the same walk as encodeFpdus (markers,
 * PAD, CRC in the same places) over ULPDU lengths only, for a stream too large to hold.
 */
export function layoutFpdus(
  count: number,
  ulpduLength: (i: number) => number,
  fault: (i: number) => FpduFault | undefined,
  opts: FpduEncoding,
  info: (lenRel: number, startRel: number, endRel: number, ulpduLength: number, markers: number) => void,
): void {
  let zeros = new Uint8Array(4096);
  function* specs(): Generator<FpduSpec> {
    for (let i = 0; i < count; i++) {
      const n = ulpduLength(i);
      if (n > zeros.length) zeros = new Uint8Array(n);
      const f = fault(i);
      yield f ? { ulpdu: zeros.subarray(0, n), fault: f } : { ulpdu: zeros.subarray(0, n) };
    }
  }
  encodeInto(specs(), { ...opts, crc: false }, new OctetCount(), info);
}

/** Where encodeInto puts octets: a buffer, or a count of them (layoutFpdus). */
interface OctetSink {
  length: number;
  push(b: number): void;
  push4(a: number, b: number, c: number, d: number): void;
  append(src: Uint8Array): void;
  view(from: number): Uint8Array;
}

function encodeInto(
  fpdus: Iterable<FpduSpec>,
  opts: FpduEncoding,
  out: OctetSink,
  info: (lenRel: number, startRel: number, endRel: number, ulpduLength: number, markers: number) => void,
): void {
  const mk = opts.mistake ?? {};
  const origin = mk.markerOrigin ?? 0;
  const phase = (r: number) => (((r - origin) % 512) + 512) % 512;
  const markerAt = (r: number) => opts.markers && phase(r) === 0;
  let rel = opts.startRel ?? 0;
  for (const f of fpdus) {
    const fault = f.fault ?? {};
    const startIdx = out.length;
    const startRel = rel;
    let lenRel = -1;
    let markers = 0;
    const marker = () => {
      // RFC 5044 §4.3: from the ULPDU_Length field to the marker; 0 for a marker before the length field.
      let ptr = (lenRel < 0 ? 0 : rel - (opts.fpduptrFrom === 'fpdu' ? startRel : lenRel)) + (fault.fpduptrDelta ?? 0);
      ptr = (ptr & 0xfffc) | (fault.fpduptrLowBits ?? 0);
      const res = fault.markerReserved ?? 0;
      if (fault.markerHostOrder) out.push4(ptr & 0xff, (ptr >> 8) & 0xff, res & 0xff, res >> 8);
      else if (fault.fpduptrHostOrder) out.push4(res >> 8, res & 0xff, ptr & 0xff, (ptr >> 8) & 0xff);
      else out.push4(res >> 8, res & 0xff, (ptr >> 8) & 0xff, ptr & 0xff);
      rel += 4;
      markers++;
    };
    const placing = opts.markers && !fault.noMarkers;
    const due = (r: number) => markerAt(r) && !fault.noMarkers;
    const put = (b: number) => {
      if (due(rel)) marker();
      out.push(b);
      rel++;
    };
    /** Octets up to each marker position in one copy: the same octets put() would place one by one. */
    const putAll = (src: Uint8Array) => {
      for (let i = 0; i < src.length; ) {
        if (due(rel)) marker();
        const n = placing ? Math.min(src.length - i, 512 - phase(rel)) : src.length - i;
        out.append(src.subarray(i, i + n));
        rel += n;
        i += n;
      }
    };
    const len = f.ulpdu.length;
    const pad = mk.pad === 'len-plus-2' ? (2 + len) % 4 : mk.pad === 'none' ? 0 : (4 - ((2 + len) % 4)) % 4;
    if (due(rel)) marker();
    lenRel = rel;
    const field = len + (mk.lengthCounts === 'length-field' ? 2 : mk.lengthCounts === 'crc' ? 4 : 0);
    put(mk.lengthLittleEndian ? field & 0xff : field >> 8);
    put(mk.lengthLittleEndian ? field >> 8 : field & 0xff);
    putAll(f.ulpdu);
    for (let i = 0; i < pad; i++) put(fault.padByte ?? 0);
    if (due(rel)) marker(); // a marker right after PAD, before the CRC, is covered
    let crc = opts.crc ? crc32c(out.view(startIdx)) : 0;
    if (fault.badCrc) crc = (crc ^ 1) >>> 0;
    if (fault.crcByteSwap) out.push4((crc >>> 24) & 0xff, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff);
    else out.push4(crc & 0xff, (crc >>> 8) & 0xff, (crc >>> 16) & 0xff, (crc >>> 24) & 0xff);
    rel += 4;
    info(lenRel, startRel, rel, len, markers);
  }
}

/** An OctetSink that only counts. */
class OctetCount implements OctetSink {
  length = 0;
  push(): void {
    this.length++;
  }
  push4(): void {
    this.length += 4;
  }
  append(src: Uint8Array): void {
    this.length += src.length;
  }
  view(): Uint8Array {
    return new Uint8Array(0);
  }
}

/** A growing octet buffer (values are taken modulo 256, as Uint8Array.from does). */
class ByteOut implements OctetSink {
  private buf: Uint8Array;
  length = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    b.set(this.buf.subarray(0, this.length));
    this.buf = b;
  }

  push(b: number): void {
    this.room(1);
    this.buf[this.length++] = b;
  }

  push4(a: number, b: number, c: number, d: number): void {
    this.room(4);
    const u = this.buf;
    const n = this.length;
    u[n] = a;
    u[n + 1] = b;
    u[n + 2] = c;
    u[n + 3] = d;
    this.length = n + 4;
  }

  append(src: Uint8Array): void {
    this.room(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  view(from: number): Uint8Array {
    return this.buf.subarray(from, this.length);
  }

  /** The octets, in a buffer of their own size. */
  take(): Uint8Array {
    return this.length === this.buf.length ? this.buf : this.buf.slice(0, this.length);
  }
}

// --- minimal DDP/RDMAP ULPDUs (RFC 5041/5040 layouts, SPEC-NOTES Part 2) ---

export function sendUlpdu(
  msn: number,
  payload: Uint8Array,
  o: { qn?: number; mo?: number; last?: boolean; opcode?: number; dv?: number } = {},
): Uint8Array {
  const u = new Uint8Array(18 + payload.length);
  const dv = o.dv ?? 1;
  u[0] = ((o.last ?? true) ? 0x40 : 0) | dv;
  u[1] = (dv << 6) | (o.opcode ?? 0x3);
  const v = new DataView(u.buffer);
  v.setUint32(6, o.qn ?? 0);
  v.setUint32(10, msn);
  v.setUint32(14, o.mo ?? 0);
  u.set(payload, 18);
  return u;
}

export function writeUlpdu(
  stag: number,
  to: number,
  payload: Uint8Array,
  o: { last?: boolean; dv?: number } = {},
): Uint8Array {
  const u = new Uint8Array(14 + payload.length);
  const dv = o.dv ?? 1;
  u[0] = 0x80 | ((o.last ?? true) ? 0x40 : 0) | dv;
  u[1] = (dv << 6) | 0x0;
  const v = new DataView(u.buffer);
  v.setUint32(2, stag);
  v.setBigUint64(6, BigInt(to));
  u.set(payload, 14);
  return u;
}

/** Deterministic pseudo-random generator (tests must be reproducible). */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 0x100000000;
  };
}

export function patternBytes(n: number, seed: number): Uint8Array {
  // rng(seed)'s sequence inlined, each octet Math.floor(r() * 256) = the state's top 8 bits (r() is
  // state / 2^32, exact in a double): Uint8Array.from with a callback took seconds per megabyte.
  let s = seed >>> 0 || 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = s >>> 24;
  }
  return out;
}
