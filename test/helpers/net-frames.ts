/**
 * Link-layer wrappers, IPv4 with options, IPv6 extension headers and fragmenters for the packet
 * decoder's tests, plus a FindingSink that keeps what it is told.
 */
import type { FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import type { PacketRecord } from '../../src/capture/packet.js';
import { concat, parseIPv4 } from './frames.js';

export interface Reported extends FindingInput {
  rule: string;
}

export class CollectSink implements FindingSink {
  readonly got: Reported[] = [];
  report(rule: string, f: FindingInput): void {
    this.got.push({ rule, ...f, frames: [...f.frames] });
  }
  rules(): string[] {
    return this.got.map((f) => f.rule);
  }
}

let frameNo = 0;

/** A PacketRecord as a reader would hand it out. */
export function packet(
  linkType: number,
  data: Uint8Array,
  o: { origLen?: number; frame?: number; tsSec?: number } = {},
): PacketRecord {
  return {
    frame: o.frame ?? ++frameNo,
    tsSec: o.tsSec ?? 1000,
    tsNsec: 0,
    linkType,
    data,
    origLen: o.origLen ?? data.length,
    fileOffset: 0,
    interfaceId: 0,
  };
}

function u16(n: number): Uint8Array {
  return Uint8Array.of(n >> 8, n & 0xff);
}

/** Ethernet header with the given tags (TPID, VID) in front of the ethertype. */
export function ethernetTagged(
  payload: Uint8Array,
  etherType: number,
  tags: ReadonlyArray<[number, number]>,
): Uint8Array {
  const macs = Uint8Array.of(2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1);
  const t = tags.flatMap(([tpid, vid]) => [...u16(tpid), ...u16(vid)]);
  return concat(macs, Uint8Array.from(t), u16(etherType), payload);
}

/** Linux cooked capture v1 (16-byte header). */
export function sll(payload: Uint8Array, protocol: number): Uint8Array {
  const h = new Uint8Array(16);
  h.set(u16(0), 0); // sent to us
  h.set(u16(1), 2); // ARPHRD_ETHER
  h.set(u16(6), 4);
  h.set([2, 0, 0, 0, 0, 1], 6);
  h.set(u16(protocol), 14);
  return concat(h, payload);
}

/** Linux cooked capture v2 (20-byte header), what `tcpdump -i any` writes. */
export function sll2(payload: Uint8Array, protocol: number): Uint8Array {
  const h = new Uint8Array(20);
  h.set(u16(protocol), 0);
  h.set([0, 0, 0, 3], 4); // interface index
  h.set(u16(1), 8);
  h[10] = 4; // outgoing
  h[11] = 6;
  h.set([2, 0, 0, 0, 0, 1], 12);
  return concat(h, payload);
}

/** BSD loopback: 4-byte address family, host order (NULL) or network order (LOOP). */
export function loopback(payload: Uint8Array, family: number, littleEndian: boolean): Uint8Array {
  const h = new Uint8Array(4);
  new DataView(h.buffer).setUint32(0, family, littleEndian);
  return concat(h, payload);
}

function checksum(b: Uint8Array): number {
  let s = 0;
  for (let i = 0; i + 1 < b.length; i += 2) s += (b[i]! << 8) | b[i + 1]!;
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return ~s & 0xffff;
}

export interface Ipv4Spec {
  src: string;
  dst: string;
  payload: Uint8Array;
  /** Raw option bytes (padded to 4). */
  options?: Uint8Array;
  id?: number;
  /** Fragment offset in bytes. */
  fragOffset?: number;
  more?: boolean;
  protocol?: number;
  /** Overrides: version nibble, IHL, total length. */
  version?: number;
  ihl?: number;
  totalLength?: number;
}

/** IPv4 packet with options and fragment fields; header checksum computed. */
export function ipv4Packet(s: Ipv4Spec): Uint8Array {
  const opts = s.options ?? new Uint8Array(0);
  const hl = 20 + ((opts.length + 3) & ~3);
  const p = new Uint8Array(hl + s.payload.length);
  const v = new DataView(p.buffer);
  p[0] = ((s.version ?? 4) << 4) | (s.ihl ?? hl / 4);
  v.setUint16(2, s.totalLength ?? p.length);
  v.setUint16(4, s.id ?? 0x1234);
  v.setUint16(6, ((s.more ? 1 : 0) << 13) | ((s.fragOffset ?? 0) >> 3));
  p[8] = 64;
  p[9] = s.protocol ?? 6;
  p.set(parseIPv4(s.src), 12);
  p.set(parseIPv4(s.dst), 16);
  p.set(opts, 20);
  v.setUint16(10, checksum(p.subarray(0, hl)));
  p.set(s.payload, hl);
  return p;
}

/** Splits an upper-layer payload into IPv4 fragments of the given sizes (all but the last multiples of 8). */
export function ipv4Fragments(
  src: string,
  dst: string,
  payload: Uint8Array,
  sizes: readonly number[],
  id = 0x4242,
): Uint8Array[] {
  const out: Uint8Array[] = [];
  let off = 0;
  for (let i = 0; i < sizes.length; i++) {
    const last = i === sizes.length - 1;
    const len = last ? payload.length - off : sizes[i]!;
    out.push(ipv4Packet({ src, dst, payload: payload.subarray(off, off + len), id, fragOffset: off, more: !last }));
    off += len;
  }
  return out;
}

/** A generic IPv6 extension header (hop-by-hop, routing, destination options): length in 8-octet units. */
export function ext6(next: number, totalLen: number, fill = 0): Uint8Array {
  const h = new Uint8Array(totalLen).fill(fill);
  h[0] = next;
  h[1] = totalLen / 8 - 1;
  if (fill === 0) {
    // PadN option over the rest so the header is well formed.
    h[2] = 1;
    h[3] = totalLen - 4;
  }
  return h;
}

/** Authentication header (RFC 4302): length in 4-octet units minus 2. */
export function ah6(next: number, totalLen: number): Uint8Array {
  const h = new Uint8Array(totalLen);
  h[0] = next;
  h[1] = totalLen / 4 - 2;
  return h;
}

/** IPv6 fragment header. */
export function frag6(next: number, offset: number, more: boolean, id: number): Uint8Array {
  const h = new Uint8Array(8);
  const v = new DataView(h.buffer);
  h[0] = next;
  v.setUint16(2, offset | (more ? 1 : 0));
  v.setUint32(4, id);
  return h;
}
