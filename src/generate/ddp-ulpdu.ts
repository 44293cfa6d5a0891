/**
 * DDP (RFC 5041) / RDMAP (RFC 5040, RFC 7306) ULPDUs with every field a knob: the octets after
 * MPA's ULPDU_Length, for the scenario generator's rule demonstrations and for tests (which
 * re-export it from test/helpers/ddp-encoder.ts). Layouts: SPEC-NOTES Part 2.
 */

export interface Ctl {
  /** L flag; default true. */
  l?: boolean;
  /** DDP version; default 1. */
  dv?: number;
  /** RDMAP version; default 1. */
  rv?: number;
  /** DDP reserved bits (value of the 4-bit field); default 0. */
  rsvd?: number;
  /** RDMAP reserved bits (2-bit field); default 0. */
  rsv?: number;
  /** Force the T bit (to build buffer-model mismatches). */
  t?: boolean;
}

const enc = new TextEncoder();
export const bytes = (s: string): Uint8Array => enc.encode(s);

function u32(v: DataView, off: number, n: number): void {
  v.setUint32(off, n >>> 0);
}
function u64(v: DataView, off: number, n: bigint | number): void {
  v.setBigUint64(off, BigInt.asUintN(64, BigInt(n)));
}

function ctl(opcode: number, tagged: boolean, c: Ctl): [number, number] {
  const t = c.t ?? tagged;
  const b0 = (t ? 0x80 : 0) | ((c.l ?? true) ? 0x40 : 0) | (((c.rsvd ?? 0) & 0xf) << 2) | ((c.dv ?? 1) & 3);
  const b1 = (((c.rv ?? 1) & 3) << 6) | (((c.rsv ?? 0) & 3) << 4) | (opcode & 0xf);
  return [b0, b1];
}

export interface UntaggedSpec extends Ctl {
  opcode: number;
  qn: number;
  msn: number;
  mo?: number;
  /** Bytes 2..5 (Invalidate STag or reserved word). */
  word?: number;
  /** Octets after the 18-octet header (RDMAP header and/or payload). */
  body?: Uint8Array;
}

export function untagged(s: UntaggedSpec): Uint8Array {
  const body = s.body ?? new Uint8Array(0);
  const out = new Uint8Array(18 + body.length);
  const v = new DataView(out.buffer);
  const [b0, b1] = ctl(s.opcode, false, s);
  out[0] = b0;
  out[1] = b1;
  u32(v, 2, s.word ?? 0);
  u32(v, 6, s.qn);
  u32(v, 10, s.msn);
  u32(v, 14, s.mo ?? 0);
  out.set(body, 18);
  return out;
}

export interface TaggedSpec extends Ctl {
  opcode: number;
  stag: number;
  to: bigint | number;
  payload?: Uint8Array;
}

export function tagged(s: TaggedSpec): Uint8Array {
  const payload = s.payload ?? new Uint8Array(0);
  const out = new Uint8Array(14 + payload.length);
  const v = new DataView(out.buffer);
  const [b0, b1] = ctl(s.opcode, true, s);
  out[0] = b0;
  out[1] = b1;
  u32(v, 2, s.stag);
  u64(v, 6, s.to);
  out.set(payload, 14);
  return out;
}

export interface SendOpts extends Ctl {
  qn?: number;
  mo?: number;
  /** Solicited Event variant. */
  se?: boolean;
  /** Send with Invalidate: the STag to invalidate. */
  invalidate?: number;
  /** Raw bytes 2..5 when no invalidate is given (reserved word). */
  word?: number;
}

/** Send / Send with SE / with Invalidate (opcodes 0x3-0x6), one segment. */
export function send(msn: number, payload: Uint8Array | string = new Uint8Array(0), o: SendOpts = {}): Uint8Array {
  const inv = o.invalidate !== undefined;
  const opcode = inv ? (o.se ? 0x6 : 0x4) : o.se ? 0x5 : 0x3;
  return untagged({
    ...o,
    opcode,
    qn: o.qn ?? 0,
    msn,
    mo: o.mo ?? 0,
    word: inv ? o.invalidate : o.word,
    body: typeof payload === 'string' ? bytes(payload) : payload,
  });
}

/** RDMA Write (opcode 0x0), one segment. */
export function write(
  stag: number,
  to: bigint | number,
  payload: Uint8Array | string = new Uint8Array(0),
  o: Ctl = {},
): Uint8Array {
  return tagged({ ...o, opcode: 0x0, stag, to, payload: typeof payload === 'string' ? bytes(payload) : payload });
}

/** RDMA Read Response (opcode 0x2), one segment. */
export function readResponse(
  stag: number,
  to: bigint | number,
  payload: Uint8Array | string = new Uint8Array(0),
  o: Ctl = {},
): Uint8Array {
  return tagged({ ...o, opcode: 0x2, stag, to, payload: typeof payload === 'string' ? bytes(payload) : payload });
}

export interface ReadRequestSpec extends Ctl {
  msn: number;
  sinkStag: number;
  sinkTo: bigint | number;
  size: number;
  srcStag: number;
  srcTo: bigint | number;
  qn?: number;
  word?: number;
  /** Octets appended after the 28-octet header (to build a malformed request). */
  extra?: Uint8Array;
}

export function readRequest(s: ReadRequestSpec): Uint8Array {
  const extra = s.extra ?? new Uint8Array(0);
  const h = new Uint8Array(28 + extra.length);
  const v = new DataView(h.buffer);
  u32(v, 0, s.sinkStag);
  u64(v, 4, s.sinkTo);
  u32(v, 12, s.size);
  u32(v, 16, s.srcStag);
  u64(v, 20, s.srcTo);
  h.set(extra, 28);
  return untagged({ ...s, opcode: 0x1, qn: s.qn ?? 1, msn: s.msn, mo: 0, word: s.word ?? 0, body: h });
}

export interface TerminateSpec extends Ctl {
  layer: number;
  etype: number;
  code: number;
  m?: boolean;
  d?: boolean;
  r?: boolean;
  /** Reserved low 13 bits of the Hdrct word. */
  hdrctRsvd?: number;
  /** DDP Segment Length; written when M or D is set (or when forced with `writeSegLen`). */
  segLen?: number;
  writeSegLen?: boolean;
  /** The copied DDP header (14 or 18 octets, or shorter to build a truncated one). */
  ddpHeader?: Uint8Array;
  /** The copied RDMAP header (28 octets for a Read Request). */
  rdmapHeader?: Uint8Array;
  msn?: number;
  qn?: number;
}

/** Terminate (opcode 0x7, QN 2, MSN 1 by default): siw's shapes are M+D(+R) or no headers. */
export function terminate(s: TerminateSpec): Uint8Array {
  const parts: number[] = [];
  parts.push(((s.layer & 0xf) << 4) | (s.etype & 0xf), s.code & 0xff);
  const hdrct = (s.m ? 0x8000 : 0) | (s.d ? 0x4000 : 0) | (s.r ? 0x2000 : 0) | ((s.hdrctRsvd ?? 0) & 0x1fff);
  parts.push(hdrct >> 8, hdrct & 0xff);
  if (s.m || s.d || s.writeSegLen) {
    const n = s.segLen ?? 0;
    parts.push((n >> 8) & 0xff, n & 0xff);
  }
  const body = new Uint8Array([...parts, ...(s.ddpHeader ?? []), ...(s.rdmapHeader ?? [])]);
  return untagged({ ...s, opcode: 0x7, qn: s.qn ?? 2, msn: s.msn ?? 1, mo: 0, word: 0, body });
}

export interface AtomicRequestSpec extends Ctl {
  msn: number;
  atomicOpcode: number;
  requestId: number;
  remoteStag: number;
  remoteTo: bigint | number;
  data?: bigint | number;
  mask?: bigint | number;
  compareData?: bigint | number;
  compareMask?: bigint | number;
  reserved?: number;
  qn?: number;
}

export function atomicRequest(s: AtomicRequestSpec): Uint8Array {
  const h = new Uint8Array(52);
  const v = new DataView(h.buffer);
  u32(v, 0, ((s.reserved ?? 0) << 4) | (s.atomicOpcode & 0xf));
  u32(v, 4, s.requestId);
  u32(v, 8, s.remoteStag);
  u64(v, 12, s.remoteTo);
  u64(v, 20, s.data ?? 0);
  u64(v, 28, s.mask ?? 0);
  u64(v, 36, s.compareData ?? 0);
  u64(v, 44, s.compareMask ?? 0);
  return untagged({ ...s, opcode: 0xa, qn: s.qn ?? 1, msn: s.msn, mo: 0, body: h });
}

export function atomicResponse(
  s: Ctl & { msn: number; originalRequestId: number; value: bigint | number; qn?: number },
): Uint8Array {
  const h = new Uint8Array(12);
  const v = new DataView(h.buffer);
  u32(v, 0, s.originalRequestId);
  u64(v, 4, s.value);
  return untagged({ ...s, opcode: 0xb, qn: s.qn ?? 3, msn: s.msn, mo: 0, body: h });
}

/** Immediate Data (0x8, or 0x9 with SE): 8 octets after the untagged header (layout provisional). */
export function immediate(
  s: Ctl & { msn: number; data: bigint | number | Uint8Array; se?: boolean; qn?: number },
): Uint8Array {
  let h: Uint8Array;
  if (s.data instanceof Uint8Array) h = s.data;
  else {
    h = new Uint8Array(8);
    u64(new DataView(h.buffer), 0, s.data);
  }
  return untagged({ ...s, opcode: s.se ? 0x9 : 0x8, qn: s.qn ?? 0, msn: s.msn, mo: 0, body: h });
}

/** One Send message split into segments of at most `maxPayload` octets (MO advancing, L on the last). */
export function sendSegments(msn: number, payload: Uint8Array, maxPayload: number, o: SendOpts = {}): Uint8Array[] {
  const out: Uint8Array[] = [];
  let mo = 0;
  do {
    const n = Math.min(maxPayload, payload.length - mo);
    const last = mo + n >= payload.length;
    out.push(send(msn, payload.subarray(mo, mo + n), { ...o, mo, l: last }));
    mo += n;
  } while (mo < payload.length);
  return out;
}

/** One tagged message (Write or Read Response) split into segments, TO advancing. */
export function taggedSegments(
  opcode: 0x0 | 0x2,
  stag: number,
  to: bigint | number,
  payload: Uint8Array,
  maxPayload: number,
  o: Ctl = {},
): Uint8Array[] {
  const out: Uint8Array[] = [];
  let off = 0;
  const base = BigInt(to);
  do {
    const n = Math.min(maxPayload, payload.length - off);
    const last = off + n >= payload.length;
    out.push(tagged({ ...o, opcode, stag, to: base + BigInt(off), payload: payload.subarray(off, off + n), l: last }));
    off += n;
  } while (off < payload.length);
  return out;
}

export function filled(n: number, seed = 1): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}
