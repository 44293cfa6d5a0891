/**
 * Capture mutations for the fuzzer: bit flips, truncation, hostile length fields (pcap record and
 * pcapng block lengths, 16-bit fields early in a packet: IP total length, TCP data offset, MPA
 * ULPDU_Length, DDP lengths), and splicing records of two captures. Every choice comes from `r`.
 */
export type Rand = () => number;

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

/** Record boundaries of a classic pcap file (header 24 octets, record headers 16): [start, end) of each record. */
export function pcapRecords(b: Uint8Array): Array<[number, number]> | null {
  if (b.length < 24) return null;
  const m = (b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!;
  let le: boolean;
  if (m === (0xd4c3b2a1 | 0) || m === (0x4d3cb2a1 | 0)) le = true;
  else if (m === (0xa1b2c3d4 | 0) || m === (0xa1b23c4d | 0)) le = false;
  else return null;
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: Array<[number, number]> = [];
  let o = 24;
  while (o + 16 <= b.length) {
    const incl = v.getUint32(o + 8, le);
    const end = o + 16 + incl;
    if (end > b.length) break;
    out.push([o, end]);
    o = end;
  }
  return out;
}

function littleEndianPcap(b: Uint8Array): boolean {
  return b[0] === 0xd4 || b[0] === 0x4d;
}

const HOSTILE16 = [
  0, 1, 2, 3, 4, 5, 6, 7, 0x7f, 0x80, 0xff, 0x100, 0x5ff, 0x600, 0x7fff, 0x8000, 0xfcff, 0xfd00, 0xfffe, 0xffff,
];
const HOSTILE32 = [0, 1, 15, 16, 17, 0xffff, 0x10000, 0x3ffff, 0x40000, 0x7fffffff, 0x80000000, 0xfffffff0, 0xffffffff];

export type CaptureMutation =
  | 'bitflip'
  | 'bytes'
  | 'truncate'
  | 'record-length'
  | 'field-length'
  | 'splice'
  | 'duplicate-records'
  | 'zero-run';

export const CAPTURE_MUTATIONS: readonly CaptureMutation[] = [
  'bitflip',
  'bytes',
  'truncate',
  'record-length',
  'field-length',
  'splice',
  'duplicate-records',
  'zero-run',
];

/** One mutated copy of `a` (`b` is another corpus capture, for splicing). */
export function mutateCapture(r: Rand, a: Uint8Array, b: Uint8Array, kind: CaptureMutation): Uint8Array {
  const out = a.slice();
  const body = (n: number) => 24 + int(r, Math.max(1, n - 24));
  switch (kind) {
    case 'bitflip': {
      const n = 1 + int(r, 32);
      for (let k = 0; k < n; k++) out[body(out.length)]! ^= 1 << int(r, 8);
      return out;
    }
    case 'bytes': {
      const n = 1 + int(r, 16);
      for (let k = 0; k < n; k++) out[body(out.length)] = pick(r, [0, 0xff, 0x7f, 0x80, int(r, 256)]);
      return out;
    }
    case 'truncate':
      return out.subarray(0, int(r, out.length + 1)).slice();
    case 'zero-run': {
      const at = body(out.length);
      out.fill(pick(r, [0, 0xff]), at, Math.min(out.length, at + 1 + int(r, 4096)));
      return out;
    }
    case 'record-length': {
      const recs = pcapRecords(out);
      if (recs === null || recs.length === 0) {
        // pcapng (or unknown): a block total length, or any 32-bit word
        const at = 8 + 4 * int(r, Math.max(1, (out.length - 12) >> 2));
        new DataView(out.buffer).setUint32(at, pick(r, HOSTILE32), true);
        return out;
      }
      const [s, e] = pick(r, recs);
      const v = new DataView(out.buffer);
      const le = littleEndianPcap(out);
      const which = int(r, 3);
      const val = which === 2 ? e - s - 16 + pick(r, [-1, 1, -16, 16, 1000]) : pick(r, HOSTILE32);
      if (which !== 1) v.setUint32(s + 8, val >>> 0, le); // incl_len
      if (which !== 0) v.setUint32(s + 12, pick(r, HOSTILE32) >>> 0, le); // orig_len
      return out;
    }
    case 'field-length': {
      const recs = pcapRecords(out);
      const n = 1 + int(r, 4);
      for (let k = 0; k < n; k++) {
        let at: number;
        if (recs !== null && recs.length > 0) {
          const [s, e] = pick(r, recs);
          // Link + IP + TCP + the first MPA/DDP octets sit in the first ~90 octets of a packet.
          at = s + 16 + int(r, Math.max(1, Math.min(e - s - 17, 96)));
        } else {
          at = body(out.length - 1);
        }
        if (at + 1 >= out.length) continue;
        const v = pick(r, HOSTILE16);
        out[at] = v >> 8;
        out[at + 1] = v & 0xff;
      }
      return out;
    }
    case 'splice': {
      const ra = pcapRecords(a);
      const rb = pcapRecords(b);
      if (ra === null || rb === null || ra.length === 0 || rb.length === 0) return mutateCapture(r, a, b, 'bitflip');
      const parts: Uint8Array[] = [a.subarray(0, 24)];
      const n = 1 + int(r, ra.length + rb.length);
      for (let k = 0; k < n; k++) {
        // Records of the other capture keep their own link type's bytes: a mismatch is part of the test.
        if (r() < 0.5) {
          const [s, e] = pick(r, ra);
          parts.push(a.subarray(s, e));
        } else {
          const [s, e] = pick(r, rb);
          parts.push(b.subarray(s, e));
        }
      }
      return concatAll(parts);
    }
    case 'duplicate-records': {
      const recs = pcapRecords(a);
      if (recs === null || recs.length === 0) return mutateCapture(r, a, b, 'bytes');
      const parts: Uint8Array[] = [a.subarray(0, 24)];
      for (const [s, e] of recs) {
        const copies = r() < 0.1 ? 1 + int(r, 3) : r() < 0.05 ? 0 : 1;
        for (let k = 0; k < copies; k++) parts.push(a.subarray(s, e));
      }
      // and some reordering
      for (let k = 1; k + 1 < parts.length; k++) {
        if (r() < 0.05) {
          const t = parts[k]!;
          parts[k] = parts[k + 1]!;
          parts[k + 1] = t;
        }
      }
      return concatAll(parts);
    }
  }
}

function concatAll(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
