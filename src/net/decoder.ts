import type { FindingSink } from '../vocabulary/findings.js';
import {
  LINKTYPE_ETHERNET,
  LINKTYPE_IPV4,
  LINKTYPE_IPV6,
  LINKTYPE_LINUX_SLL,
  LINKTYPE_LINUX_SLL2,
  LINKTYPE_LOOP,
  LINKTYPE_NULL,
  LINKTYPE_RAW,
  LINKTYPE_RAW_12,
  LINKTYPE_RAW_14,
} from '../capture/link-types.js';
import type { PacketRecord } from '../capture/packet.js';
import { u16, u32 } from './bytes.js';
import { expectedChecksum, fold, sum16 } from './checksum.js';
import { FragmentReassembler, type FragmentEvents } from './fragments.js';
import { AddressCache } from './ip-text.js';
import { blankSegment, endpoint, type TcpSegment } from './segment.js';
import { emptyOptions, parseTcpOptions } from './tcp-options.js';

/**
 * Frames to TCP segments: link layer, IPv4/IPv6 (options, extension headers, fragment
 * reassembly), TCP header. Whatever cannot be decoded becomes a finding or a count, never an
 * exception. One TcpSegment object is reused; its payload is a view into the frame (or into a
 * reassembled datagram).
 */

export interface DecoderOptions {
  /** Verify IPv4 header and TCP checksums. Default false: capture offload makes them wrong. */
  checksums?: boolean;
  /** Cap on bytes held for IP reassembly. Default 64 MiB. */
  maxFragmentBytes?: number;
}

export interface DecoderStats {
  /** Frames carrying no TCP: other ethertypes, other IP protocols, other address families. */
  nonTcp: number;
  /** Frames of link types this decoder does not know, per link type. */
  unknownLinkTypes: Map<number, number>;
  /** Frames skipped because a header is malformed (each one is also a finding). */
  malformed: number;
  /** IP datagrams rebuilt from fragments. */
  fragmentsReassembled: number;
  /** Frames skipped because the snaplen cut into their IP or TCP headers. */
  headersCut: number;
  /** Incomplete datagrams given up (memory cap, timeout, end of capture). */
  fragmentsDropped: number;
}

const ETH_IPV4 = 0x0800;
const ETH_IPV6 = 0x86dd;
const PROTO_TCP = 6;
const DEFAULT_FRAGMENT_CAP = 64 * 1024 * 1024;

function isVlanTag(et: number): boolean {
  return et === 0x8100 || et === 0x88a8 || et === 0x9100 || et === 0x9200;
}

/** IPv6 extension headers walked to reach the upper-layer header. */
function ipv6ExtName(nh: number): string | null {
  switch (nh) {
    case 0:
      return 'hop-by-hop options';
    case 43:
      return 'routing';
    case 60:
      return 'destination options';
    case 51:
      return 'authentication';
    case 135:
      return 'mobility';
    case 139:
      return 'HIP';
    case 140:
      return 'shim6';
    default:
      return null;
  }
}

function hex(n: number): string {
  return `0x${n.toString(16).padStart(4, '0')}`;
}

const NO_FRAME: PacketRecord = {
  frame: 0,
  tsSec: 0,
  tsNsec: 0,
  linkType: 0,
  data: new Uint8Array(0),
  origLen: 0,
  fileOffset: 0,
  interfaceId: 0,
};
const noSegment = (): void => {};

export class PacketDecoder {
  readonly stats: DecoderStats = {
    nonTcp: 0,
    unknownLinkTypes: new Map(),
    malformed: 0,
    fragmentsReassembled: 0,
    headersCut: 0,
    fragmentsDropped: 0,
  };
  private readonly checksums: boolean;
  private readonly addrs = new AddressCache();
  private readonly frags: FragmentReassembler;
  private readonly seg: TcpSegment = blankSegment();
  /** The frame being decoded and where its segments go (fields, so helpers need no closures). */
  private p: PacketRecord = NO_FRAME;
  private emit: (s: TcpSegment) => void = noSegment;
  private cutReported = false;

  constructor(
    private readonly sink: FindingSink,
    opts: DecoderOptions = {},
  ) {
    this.checksums = opts.checksums ?? false;
    const events: FragmentEvents = {
      overlap: (frames, message) => this.report('net.fragment-overlap', frames, message),
      incomplete: (frames, message) => {
        this.stats.fragmentsDropped++;
        this.report('net.fragment-incomplete', frames, message);
      },
    };
    this.frags = new FragmentReassembler(opts.maxFragmentBytes ?? DEFAULT_FRAGMENT_CAP, events);
  }

  /**
   * Whether IP fragments wait for the rest of their datagram. A decoder holding none decodes the
   * next frames as a new one would (the rest of its state is counters and an address cache).
   */
  get holdsFragments(): boolean {
    return this.frags.pending > 0;
  }

  /** Decodes one frame, calling onSegment for each TCP segment it yields (a completed IP datagram yields here too). */
  decode(p: PacketRecord, onSegment: (s: TcpSegment) => void): void {
    this.p = p;
    this.emit = onSegment;
    const b = p.data;
    const n = b.length;
    let et: number;
    let off: number;
    switch (p.linkType) {
      case LINKTYPE_ETHERNET:
        if (n < 14) return this.short('net.link-malformed', `Ethernet header truncated: ${n} of 14 bytes`);
        et = u16(b, 12);
        off = 14;
        break;
      case LINKTYPE_LINUX_SLL:
        if (n < 16) return this.short('net.link-malformed', `Linux cooked (SLL) header truncated: ${n} of 16 bytes`);
        et = u16(b, 14);
        off = 16;
        break;
      case LINKTYPE_LINUX_SLL2:
        if (n < 20)
          return this.short('net.link-malformed', `Linux cooked v2 (SLL2) header truncated: ${n} of 20 bytes`);
        et = u16(b, 0);
        off = 20;
        break;
      case LINKTYPE_NULL:
      case LINKTYPE_LOOP: {
        if (n < 4) return this.short('net.link-malformed', `loopback header truncated: ${n} of 4 bytes`);
        // NULL: the family in the capturing host's byte order; a value above 0xffff means the other order.
        let family = u32(b, 0);
        if (p.linkType === LINKTYPE_NULL) {
          const le = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
          family = le > 0xffff ? family : le;
        }
        if (family === 2) et = ETH_IPV4;
        else if (family === 24 || family === 28 || family === 30) et = ETH_IPV6;
        else {
          this.stats.nonTcp++;
          return;
        }
        off = 4;
        break;
      }
      case LINKTYPE_RAW:
      case LINKTYPE_RAW_12:
      case LINKTYPE_RAW_14: {
        if (n < 1) return this.short('net.link-malformed', 'raw IP frame with no bytes');
        const v = b[0]! >> 4;
        if (v === 4) return this.ipv4(b, 0);
        if (v === 6) return this.ipv6(b, 0);
        return this.malformed('net.link-malformed', `raw IP frame with IP version ${v}`);
      }
      case LINKTYPE_IPV4:
        return this.ipv4(b, 0);
      case LINKTYPE_IPV6:
        return this.ipv6(b, 0);
      default:
        return this.unknownLinkType(p);
    }
    // 802.1Q / 802.1ad tags, stacked to any depth: TCI (2), then the next ethertype.
    while (isVlanTag(et)) {
      if (off + 4 > n) return this.short('net.link-malformed', `VLAN tag truncated at byte ${off}`);
      et = u16(b, off + 2);
      off += 4;
    }
    if (et === ETH_IPV4) this.ipv4(b, off);
    else if (et === ETH_IPV6) this.ipv6(b, off);
    else this.stats.nonTcp++;
  }

  /** Gives up IP datagrams still waiting for fragments (reports each); call at the end of the capture. */
  finish(): void {
    this.frags.finish();
  }

  private unknownLinkType(p: PacketRecord): void {
    const m = this.stats.unknownLinkTypes;
    const seen = m.get(p.linkType) ?? 0;
    m.set(p.linkType, seen + 1);
    if (seen === 0) {
      this.report(
        'net.unknown-linktype',
        [p.frame],
        `link type ${p.linkType} is not decoded; its frames (first: frame ${p.frame}) are counted and skipped`,
      );
    }
  }

  private ipv4(b: Uint8Array, off: number): void {
    const p = this.p;
    const avail = b.length - off;
    if (avail < 20) return this.short('net.ipv4-malformed', `IPv4 header truncated: ${avail} of 20 bytes`);
    const version = b[off]! >> 4;
    if (version !== 4) return this.malformed('net.ipv4-malformed', `IPv4 packet with IP version ${version}`);
    const hl = (b[off]! & 15) * 4;
    if (hl < 20)
      return this.malformed(
        'net.ipv4-malformed',
        `IPv4 header length ${hl} bytes (IHL ${hl / 4}) is below the 20-byte minimum`,
      );
    if (hl > avail)
      return this.short('net.ipv4-malformed', `IPv4 header with options truncated: ${avail} of ${hl} bytes`);
    const cutBytes = Math.max(0, p.origLen - b.length);
    let total = u16(b, off + 2);
    // Total length 0: a segmentation-offload capture (the NIC fills it in); take the frame's length.
    if (total === 0 && avail > hl) total = avail + cutBytes;
    if (total < hl)
      return this.malformed('net.ipv4-malformed', `IPv4 total length ${total} is below its ${hl}-byte header`);
    let capEnd = off + total; // trims Ethernet padding and trailers
    if (total > avail) {
      if (total - avail > cutBytes) {
        return this.malformed(
          'net.ipv4-malformed',
          `IPv4 total length ${total} exceeds the ${avail + cutBytes} bytes the frame carried`,
        );
      }
      capEnd = b.length;
    }
    if (this.checksums) {
      const s = sum16(b, off, off + hl, 0);
      if (fold(s) !== 0xffff) {
        const field = u16(b, off + 10);
        this.report(
          'net.ipv4-checksum-bad',
          [p.frame],
          `IPv4 header checksum ${hex(field)} is wrong (should be ${hex(expectedChecksum(s - field))})`,
        );
      }
    }
    if (b[off + 9] !== PROTO_TCP) {
      this.stats.nonTcp++;
      return;
    }
    const src = this.addrs.ipv4(b, off + 12);
    const dst = this.addrs.ipv4(b, off + 16);
    const pseudo = this.checksums ? sum16(b, off + 12, off + 20, PROTO_TCP) : -1;
    const frag = u16(b, off + 6);
    const more = (frag & 0x2000) !== 0;
    const fragOff = (frag & 0x1fff) * 8;
    if (!more && fragOff === 0) {
      this.tcp(b, off + hl, capEnd, total - hl, 4, src, dst, pseudo);
      return;
    }
    const len = total - hl;
    const id = u16(b, off + 4);
    const label = `IPv4 ${src} -> ${dst} id ${hex(id)}`;
    if (len === 0 || (more && len % 8 !== 0)) {
      return this.malformed(
        'net.ipv4-malformed',
        `${label}: fragment of ${len} bytes at offset ${fragOff} (a fragment other than the last must hold a multiple of 8 bytes)`,
      );
    }
    if (hl + fragOff + len > 65535)
      return this.malformed(
        'net.ipv4-malformed',
        `${label}: fragment ends at ${hl + fragOff + len} bytes, past the 65535-byte IPv4 limit`,
      );
    const r = this.frags.add({
      key: `4 ${src} ${dst} ${id}`,
      label,
      frame: p.frame,
      tsSec: p.tsSec,
      offset: fragOff,
      data: b.subarray(off + hl, capEnd),
      wireLength: len,
      more,
      next: PROTO_TCP,
      aux: pseudo,
    });
    if (r === null) return;
    this.stats.fragmentsReassembled++;
    this.tcp(r.data, 0, r.captured, r.data.length, 4, src, dst, r.aux);
  }

  private ipv6(b: Uint8Array, off: number): void {
    const p = this.p;
    const avail = b.length - off;
    if (avail < 40) return this.short('net.ipv6-malformed', `IPv6 header truncated: ${avail} of 40 bytes`);
    const version = b[off]! >> 4;
    if (version !== 6) return this.malformed('net.ipv6-malformed', `IPv6 packet with IP version ${version}`);
    const cutBytes = Math.max(0, p.origLen - b.length);
    let plen = u16(b, off + 4);
    // Payload length 0: a jumbogram or an offload capture; take the frame's length.
    if (plen === 0 && avail > 40) plen = avail - 40 + cutBytes;
    let capEnd = off + 40 + plen;
    if (40 + plen > avail) {
      if (40 + plen - avail > cutBytes) {
        return this.malformed(
          'net.ipv6-malformed',
          `IPv6 payload length ${plen} exceeds the ${avail - 40 + cutBytes} bytes the frame carried`,
        );
      }
      capEnd = b.length;
    }
    const src = this.addrs.ipv6(b, off + 8);
    const dst = this.addrs.ipv6(b, off + 24);
    const pseudo = this.checksums ? sum16(b, off + 8, off + 40, PROTO_TCP) : -1;
    this.ipv6Walk(b, off + 40, capEnd, off + 40 + plen, b[off + 6]!, src, dst, pseudo, false);
  }

  /** Walks extension headers from b[pos] (next header nh) to TCP; wireEnd is where the payload ends on the wire. */
  private ipv6Walk(
    b: Uint8Array,
    pos: number,
    capEnd: number,
    wireEnd: number,
    nh: number,
    src: string,
    dst: string,
    pseudo: number,
    reassembled: boolean,
  ): void {
    for (;;) {
      if (nh === PROTO_TCP) {
        this.tcp(b, pos, capEnd, wireEnd - pos, 6, src, dst, pseudo);
        return;
      }
      if (nh === 44) {
        if (pos + 8 > wireEnd)
          return this.malformed('net.ipv6-malformed', `IPv6 fragment header runs past the payload`);
        if (pos + 8 > capEnd) return this.cut(`IPv6 fragment header cut by the snaplen`);
        if (reassembled)
          return this.malformed('net.ipv6-malformed', `IPv6 fragment header inside a reassembled datagram`);
        const fw = u16(b, pos + 2);
        const fragOff = fw & 0xfff8;
        const more = (fw & 1) !== 0;
        if (fragOff === 0 && !more) {
          // Atomic fragment (RFC 6946): not fragmented at all.
          nh = b[pos]!;
          pos += 8;
          continue;
        }
        return this.ipv6Fragment(b, pos, capEnd, wireEnd, src, dst, pseudo, fragOff, more);
      }
      const name = ipv6ExtName(nh);
      if (name === null) {
        this.stats.nonTcp++;
        return;
      }
      if (pos + 2 > wireEnd) return this.malformed('net.ipv6-malformed', `IPv6 ${name} header runs past the payload`);
      if (pos + 2 > capEnd) return this.cut(`IPv6 ${name} header cut by the snaplen`);
      const len = nh === 51 ? (b[pos + 1]! + 2) * 4 : (b[pos + 1]! + 1) * 8;
      if (pos + len > wireEnd)
        return this.malformed(
          'net.ipv6-malformed',
          `IPv6 ${name} header of ${len} bytes runs ${pos + len - wireEnd} bytes past the payload`,
        );
      if (pos + len > capEnd) return this.cut(`IPv6 ${name} header cut by the snaplen`);
      // With segments left, the TCP pseudo-header holds the final destination, not this one: do not check.
      if (nh === 43 && b[pos + 3] !== 0) pseudo = -1;
      nh = b[pos]!;
      pos += len;
    }
  }

  private ipv6Fragment(
    b: Uint8Array,
    pos: number,
    capEnd: number,
    wireEnd: number,
    src: string,
    dst: string,
    pseudo: number,
    fragOff: number,
    more: boolean,
  ): void {
    const p = this.p;
    const next = b[pos]!;
    if (next !== PROTO_TCP && ipv6ExtName(next) === null) {
      this.stats.nonTcp++;
      return;
    }
    const id = u32(b, pos + 4);
    const label = `IPv6 ${src} -> ${dst} id 0x${id.toString(16).padStart(8, '0')}`;
    const start = pos + 8;
    const len = wireEnd - start;
    if (len === 0 || (more && len % 8 !== 0)) {
      return this.malformed(
        'net.ipv6-malformed',
        `${label}: fragment of ${len} bytes at offset ${fragOff} (a fragment other than the last must hold a multiple of 8 bytes)`,
      );
    }
    if (fragOff + len > 65535)
      return this.malformed(
        'net.ipv6-malformed',
        `${label}: fragment ends at ${fragOff + len} bytes, past the 65535-byte limit`,
      );
    const r = this.frags.add({
      key: `6 ${src} ${dst} ${id}`,
      label,
      frame: p.frame,
      tsSec: p.tsSec,
      offset: fragOff,
      data: b.subarray(start, Math.max(start, capEnd)),
      wireLength: len,
      more,
      next,
      aux: pseudo,
    });
    if (r === null) return;
    this.stats.fragmentsReassembled++;
    this.ipv6Walk(r.data, 0, r.captured, r.data.length, r.next, src, dst, r.aux, true);
  }

  /**
   * TCP header at b[off]; capEnd ends the captured bytes, wireLen is the segment length the IP
   * header states. A shortfall of captured bytes was already checked to be the snaplen's doing.
   */
  private tcp(
    b: Uint8Array,
    off: number,
    capEnd: number,
    wireLen: number,
    ipVersion: 4 | 6,
    src: string,
    dst: string,
    pseudo: number,
  ): void {
    const cap = capEnd - off;
    if (wireLen < 20)
      return this.malformed(
        'net.tcp-malformed',
        `${src} -> ${dst}: TCP segment of ${wireLen} bytes is shorter than the 20-byte header`,
      );
    if (cap < 20) return this.cut(`TCP header cut by the snaplen (${Math.max(0, cap)} of 20 bytes)`);
    const srcPort = u16(b, off);
    const dstPort = u16(b, off + 2);
    const doff = b[off + 12]! >> 4;
    const hl = doff * 4;
    if (doff < 5)
      return this.malformed(
        'net.tcp-malformed',
        `${endpoint(src, srcPort)} -> ${endpoint(dst, dstPort)}: TCP data offset ${doff} (${hl} bytes) is below the minimum of 5`,
      );
    if (hl > wireLen) {
      return this.malformed(
        'net.tcp-malformed',
        `${endpoint(src, srcPort)} -> ${endpoint(dst, dstPort)}: TCP data offset ${doff} (${hl} bytes) reaches past the ${wireLen}-byte segment`,
      );
    }
    if (hl > cap) return this.cut(`TCP options cut by the snaplen (${cap} of ${hl} header bytes)`);
    const seg = this.seg;
    seg.options = null;
    if (hl > 20) {
      const opts = emptyOptions();
      const err = parseTcpOptions(b, off + 20, off + hl, opts);
      // The data offset is sound, so the payload is still delivered: dropping it would fake a gap downstream.
      if (err !== null)
        this.report(
          'net.tcp-option-malformed',
          [this.p.frame],
          `${endpoint(src, srcPort)} -> ${endpoint(dst, dstPort)}: ${err}`,
        );
      seg.options = opts;
    }
    if (pseudo >= 0 && cap >= wireLen) {
      const s = sum16(b, off, off + wireLen, pseudo + wireLen);
      if (fold(s) !== 0xffff) {
        const field = u16(b, off + 16);
        this.report(
          'net.tcp-checksum-bad',
          [this.p.frame],
          `${endpoint(src, srcPort)} -> ${endpoint(dst, dstPort)}: TCP checksum ${hex(field)} is wrong (should be ${hex(expectedChecksum(s - field))})`,
        );
      }
    }
    const p = this.p;
    seg.frame = p.frame;
    seg.tsSec = p.tsSec;
    seg.tsNsec = p.tsNsec;
    seg.ipVersion = ipVersion;
    seg.src = src;
    seg.dst = dst;
    seg.srcPort = srcPort;
    seg.dstPort = dstPort;
    seg.seq = u32(b, off + 4);
    seg.ack = u32(b, off + 8);
    seg.flags = b[off + 13]! | ((b[off + 12]! & 1) << 8);
    seg.window = u16(b, off + 14);
    seg.urgent = u16(b, off + 18);
    seg.payload = b.subarray(off + hl, capEnd);
    seg.missing = wireLen - cap;
    this.emit(seg);
  }

  /** A header does not fit the captured bytes: the snaplen's doing when the frame was cut, else malformed. */
  private short(rule: string, message: string): void {
    if (this.p.data.length < this.p.origLen) this.cut(message);
    else this.malformed(rule, message);
  }

  private cut(message: string): void {
    this.stats.headersCut++;
    if (this.cutReported) return;
    this.cutReported = true;
    this.report(
      'net.headers-cut',
      [this.p.frame],
      `${message}; frames whose headers the snaplen cut are skipped and counted, only this first one is reported`,
    );
  }

  private malformed(rule: string, message: string): void {
    this.stats.malformed++;
    this.report(rule, [this.p.frame], message);
  }

  private report(rule: string, frames: readonly number[], message: string): void {
    this.sink.report(rule, { flow: null, from: null, frames, seq: null, message });
  }
}
