/**
 * ULP Framing for TCP traffic (draft-ietf-tsvwg-tcp-ulp-frame-00) for tests and samples: framing
 * PDUs (PDU alignment mode, §5) and marker insertion (marker mode, §6), each direction's bytes and
 * the segment cuts a framing-aware sender, a sender split or a resegmenting middlebox would make.
 * TCP comes from buildScenario.
 */
import { concat } from './frames.js';
import { rng } from './mpa-encoder.js';

/** One framing PDU: the 8-octet header (16-bit Length of the ULP PDUs, 48-bit Key) and the PDUs. */
export function framingPdu(key: number, ulp: Uint8Array, length = ulp.length): Uint8Array {
  const out = new Uint8Array(8 + ulp.length);
  out[0] = (length >> 8) & 0xff;
  out[1] = length & 0xff;
  const hi = Math.floor(key / 0x1000000);
  const lo = key % 0x1000000;
  out[2] = (hi >> 16) & 0xff;
  out[3] = (hi >> 8) & 0xff;
  out[4] = hi & 0xff;
  out[5] = (lo >> 16) & 0xff;
  out[6] = (lo >> 8) & 0xff;
  out[7] = lo & 0xff;
  out.set(ulp, 8);
  return out;
}

/** ULP PDU payloads of the given sizes, seeded (not all zeros, so they are no accidental markers). */
export function ulpPdus(sizes: readonly number[], seed = 1): Uint8Array[] {
  const r = rng(seed);
  return sizes.map((n) => {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
    return b;
  });
}

export interface AlignedStream {
  /** The framing PDUs, one per send. */
  pdus: Uint8Array[];
  bytes: Uint8Array;
  /** One segment per framing PDU: what a framing-aware TCP sends (§5.1). */
  cut: number[];
}

/** Alignment mode: one framing PDU per ULP PDU (or per group when `pack` groups them). */
export function alignedStream(
  key: number,
  ulps: readonly Uint8Array[],
  o: { pack?: number; keys?: (i: number) => number; length?: (i: number, real: number) => number } = {},
): AlignedStream {
  const pack = o.pack ?? 1;
  const pdus: Uint8Array[] = [];
  for (let i = 0; i < ulps.length; i += pack) {
    const body = concat(...ulps.slice(i, i + pack));
    const k = pdus.length;
    pdus.push(framingPdu(o.keys ? o.keys(k) : key, body, o.length ? o.length(k, body.length) : body.length));
  }
  return { pdus, bytes: concat(...pdus), cut: pdus.map((p) => p.length) };
}

export interface MarkerStream {
  bytes: Uint8Array;
  /** Stream offsets (from the enablement point) of each PDU's first octet. */
  pduStarts: number[];
  /** Stream offsets of the markers. */
  markerAt: number[];
}

/**
 * Marker mode: a marker every `interval` octets from the enablement point (the first one, offset 0,
 * leads), each holding the offset from its end to the next PDU start twice (§6). `npo2` alters the
 * second copy of chosen markers; `npo` the value of chosen markers (both copies).
 */
export function markerStream(
  pdus: readonly Uint8Array[],
  interval: number,
  o: { npo2?: (k: number, v: number) => number; npo?: (k: number, v: number) => number } = {},
): MarkerStream {
  const payload = pdus.reduce((a, b) => a + b.length, 0);
  // Lay the PDUs out in the stream with markers taking every interval-th 4 octets.
  const out: number[] = [];
  const pduStarts: number[] = [];
  const markerAt: number[] = [];
  const isMarker = (pos: number) => pos % interval === 0;
  let pos = 0;
  const place = (b: number) => {
    while (isMarker(pos)) {
      markerAt.push(pos);
      out.push(0, 0, 0, 0);
      pos += 4;
    }
    out.push(b);
    pos++;
  };
  for (const p of pdus) {
    // A PDU starting on a marker position starts after the marker.
    while (isMarker(pos)) {
      markerAt.push(pos);
      out.push(0, 0, 0, 0);
      pos += 4;
    }
    pduStarts.push(pos);
    for (const b of p) place(b);
  }
  const end = pos;
  void payload;
  const bytes = Uint8Array.from(out);
  markerAt.forEach((m, k) => {
    const next = pduStarts.find((s) => s >= m + 4) ?? end;
    let v = next - (m + 4);
    if (o.npo) v = o.npo(k, v);
    const v2 = o.npo2 ? o.npo2(k, v) : v;
    bytes[m] = (v >> 8) & 0xff;
    bytes[m + 1] = v & 0xff;
    bytes[m + 2] = (v2 >> 8) & 0xff;
    bytes[m + 3] = v2 & 0xff;
  });
  return { bytes, pduStarts, markerAt };
}
