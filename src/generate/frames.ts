/**
 * Builders for link, IP and TCP headers, so tests make their captures in-test.
 * Checksums are computed (IPv4 header, TCP) so tshark and checksum-checking modes accept them.
 */

export interface TcpSpec {
  src: string;
  dst: string;
  sport: number;
  dport: number;
  seq: number;
  ack?: number;
  /** Flag bits, e.g. SYN=0x02 ACK=0x10 FIN=0x01 RST=0x04 PSH=0x08. */
  flags?: number;
  window?: number;
  /** Raw TCP option bytes (padded to 4 by the builder). */
  options?: Uint8Array;
  payload?: Uint8Array;
}

export const FIN = 0x01,
  SYN = 0x02,
  RST = 0x04,
  PSH = 0x08,
  ACK = 0x10;

export function parseIPv4(s: string): Uint8Array {
  const p = s.split('.').map(Number);
  return Uint8Array.from(p);
}

/** Parses IPv6 text (with :: compression) into 16 bytes. */
export function parseIPv6(s: string): Uint8Array {
  const out = new Uint8Array(16);
  const [head, tail] = s.includes('::') ? s.split('::') : [s, null];
  const h = head ? head.split(':').filter((x) => x !== '') : [];
  const t = tail ? tail.split(':').filter((x) => x !== '') : [];
  const words = tail === null ? h : [...h, ...new Array(8 - h.length - t.length).fill('0'), ...t];
  words.forEach((w, i) => {
    const n = parseInt(w, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  return out;
}

/** An address's octets, parsed once (a generated capture has millions of frames between two hosts); never written to. */
const parsed = new Map<string, Uint8Array>();
function addrBytes(s: string): Uint8Array {
  let b = parsed.get(s);
  if (!b) {
    if (parsed.size > 64) parsed.clear();
    b = s.includes(':') ? parseIPv6(s) : parseIPv4(s);
    parsed.set(s, b);
  }
  return b;
}

function sum16(b: Uint8Array, init = 0): number {
  let s = init;
  for (let i = 0; i + 1 < b.length; i += 2) s += (b[i]! << 8) | b[i + 1]!;
  if (b.length & 1) s += b[b.length - 1]! << 8;
  return s;
}

function fold(s: number): number {
  while (s > 0xffff) s = (s & 0xffff) + (s >>> 16);
  return ~s & 0xffff;
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** MSS option bytes (kind 2). */
export function mssOption(mss: number): Uint8Array {
  return Uint8Array.from([2, 4, mss >> 8, mss & 0xff]);
}

/** TCP header + payload, checksum over the given pseudo header addresses. */
export function tcpSegment(t: TcpSpec): Uint8Array {
  const seg = new Uint8Array(tcpHeaderLength(t) + (t.payload?.length ?? 0));
  tcpSegmentInto(seg, t);
  return seg;
}

function tcpHeaderLength(t: TcpSpec): number {
  return 20 + (((t.options?.length ?? 0) + 3) & ~3);
}

/** The segment written into `seg` (zeroed, exactly its size). */
function tcpSegmentInto(seg: Uint8Array, t: TcpSpec): void {
  const opts = t.options ?? new Uint8Array(0);
  const hl = tcpHeaderLength(t);
  const payload = t.payload ?? new Uint8Array(0);
  const v = new DataView(seg.buffer, seg.byteOffset, seg.length);
  v.setUint16(0, t.sport);
  v.setUint16(2, t.dport);
  v.setUint32(4, t.seq >>> 0);
  v.setUint32(8, (t.ack ?? 0) >>> 0);
  seg[12] = (hl / 4) << 4;
  seg[13] = t.flags ?? ACK;
  v.setUint16(14, t.window ?? 65535);
  seg.set(opts, 20);
  seg.set(payload, hl);
  let s = sum16(addrBytes(t.src)) + sum16(addrBytes(t.dst)) + 6 + seg.length;
  s = sum16(seg, s);
  v.setUint16(16, fold(s));
}

export interface IpOpts {
  id?: number;
  ttl?: number;
  /** IPv4 fragment: offset in bytes (multiple of 8) and more-fragments flag. */
  fragOffset?: number;
  moreFragments?: boolean;
  protocol?: number;
}

export function ipv4(src: string, dst: string, payload: Uint8Array, o: IpOpts = {}): Uint8Array {
  const p = new Uint8Array(20 + payload.length);
  const v = new DataView(p.buffer);
  p[0] = 0x45;
  v.setUint16(2, p.length);
  v.setUint16(4, o.id ?? 1);
  v.setUint16(
    6,
    ((o.moreFragments ? 1 : 0) << 13) |
      ((o.fragOffset ?? 0) >> 3) |
      (o.fragOffset === undefined && !o.moreFragments ? 0x4000 : 0),
  );
  p[8] = o.ttl ?? 64;
  p[9] = o.protocol ?? 6;
  p.set(parseIPv4(src), 12);
  p.set(parseIPv4(dst), 16);
  v.setUint16(10, fold(sum16(p.subarray(0, 20))));
  p.set(payload, 20);
  return p;
}

export function ipv6(src: string, dst: string, payload: Uint8Array, nextHeader = 6): Uint8Array {
  const p = new Uint8Array(40 + payload.length);
  const v = new DataView(p.buffer);
  p[0] = 0x60;
  v.setUint16(4, payload.length);
  p[6] = nextHeader;
  p[7] = 64;
  p.set(parseIPv6(src), 8);
  p.set(parseIPv6(dst), 24);
  p.set(payload, 40);
  return p;
}

/** Ethernet II; with `vlan`, one IEEE 802.1Q tag (TPID 0x8100, priority 0) carrying that VID. */
export function ethernet(ip: Uint8Array, etherType?: number, vlan?: number): Uint8Array {
  const tag = vlan === undefined ? 0 : 4;
  const e = new Uint8Array(14 + tag + ip.length);
  e.set([0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1], 0);
  const et = etherType ?? (ip[0]! >> 4 === 6 ? 0x86dd : 0x0800);
  if (vlan !== undefined) e.set([0x81, 0x00, (vlan >> 8) & 0x0f, vlan & 0xff], 12);
  e[12 + tag] = et >> 8;
  e[13 + tag] = et & 0xff;
  e.set(ip, 14 + tag);
  return e;
}

/**
 * A whole Ethernet/IP/TCP frame (802.1Q-tagged with `vlan`): the octets ethernet(ipv4 or
 * ipv6(tcpSegment)) gives, written into one buffer (a generated gigabyte is not copied three times).
 */
export function tcpFrame(t: TcpSpec, vlan?: number): Uint8Array {
  const v6 = t.src.includes(':');
  const l2 = 14 + (vlan === undefined ? 0 : 4);
  const l3 = v6 ? 40 : 20;
  const segLen = tcpHeaderLength(t) + (t.payload?.length ?? 0);
  const e = new Uint8Array(l2 + l3 + segLen);
  tcpSegmentInto(e.subarray(l2 + l3), t);
  const p = e.subarray(l2);
  const v = new DataView(p.buffer, p.byteOffset, l3);
  if (v6) {
    p[0] = 0x60;
    v.setUint16(4, segLen);
    p[6] = 6;
    p[7] = 64;
    p.set(addrBytes(t.src), 8);
    p.set(addrBytes(t.dst), 24);
  } else {
    // As ipv4() with no options: id 1, Don't Fragment, TTL 64, TCP.
    p[0] = 0x45;
    v.setUint16(2, l3 + segLen);
    v.setUint16(4, 1);
    v.setUint16(6, 0x4000);
    p[8] = 64;
    p[9] = 6;
    p.set(addrBytes(t.src), 12);
    p.set(addrBytes(t.dst), 16);
    v.setUint16(10, fold(sum16(p.subarray(0, 20))));
  }
  e.set([0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1], 0);
  const tag = l2 - 14;
  const et = v6 ? 0x86dd : 0x0800;
  if (vlan !== undefined) e.set([0x81, 0x00, (vlan >> 8) & 0x0f, vlan & 0xff], 12);
  e[12 + tag] = et >> 8;
  e[13 + tag] = et & 0xff;
  return e;
}
