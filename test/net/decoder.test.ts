import { describe, expect, it } from 'vitest';
import type { PacketRecord } from '../../src/capture/packet.js';
import { PacketDecoder, type DecoderOptions } from '../../src/net/decoder.js';
import { NET_RULES } from '../../src/net/rules.js';
import type { TcpSegment } from '../../src/net/segment.js';
import {
  ACK,
  PSH,
  SYN,
  ethernet,
  ipv4,
  ipv6,
  mssOption,
  tcpFrame,
  tcpSegment,
  type TcpSpec,
} from '../helpers/frames.js';
import {
  CollectSink,
  ah6,
  ethernetTagged,
  ext6,
  frag6,
  ipv4Packet,
  loopback,
  packet,
  sll,
  sll2,
} from '../helpers/net-frames.js';

interface Seg extends Omit<TcpSegment, 'payload'> {
  payload: number[];
}

function run(
  frames: PacketRecord | PacketRecord[],
  opts?: DecoderOptions,
): { segs: Seg[]; sink: CollectSink; dec: PacketDecoder } {
  const sink = new CollectSink();
  const dec = new PacketDecoder(sink, opts);
  const segs: Seg[] = [];
  for (const f of Array.isArray(frames) ? frames : [frames]) {
    dec.decode(f, (s) => segs.push({ ...s, payload: Array.from(s.payload) }));
  }
  return { segs, sink, dec };
}

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const V4: TcpSpec = {
  src: '10.0.0.1',
  dst: '10.0.0.2',
  sport: 40001,
  dport: 4420,
  seq: 0xfffffff0,
  ack: 2000,
  flags: ACK | PSH,
  window: 512,
  payload: enc('hello MPA'),
};
const V6: TcpSpec = { ...V4, src: 'fd00::1', dst: 'fd00::2:0:0:9' };
const HELLO = Array.from(enc('hello MPA'));

function big(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 8)) & 0xff;
  return b;
}

describe('link types', () => {
  const ip4 = ipv4(V4.src, V4.dst, tcpSegment(V4));
  const ip6 = ipv6(V6.src, V6.dst, tcpSegment(V6));
  const cases: Array<[string, number, Uint8Array, 4 | 6]> = [
    ['Ethernet', 1, ethernet(ip4), 4],
    ['Ethernet IPv6', 1, ethernet(ip6), 6],
    ['802.1Q', 1, ethernetTagged(ip4, 0x0800, [[0x8100, 100]]), 4],
    [
      '802.1ad QinQ',
      1,
      ethernetTagged(ip6, 0x86dd, [
        [0x88a8, 10],
        [0x8100, 20],
      ]),
      6,
    ],
    [
      '0x9100 stacked three deep',
      1,
      ethernetTagged(ip4, 0x0800, [
        [0x9100, 1],
        [0x9100, 2],
        [0x8100, 3],
      ]),
      4,
    ],
    ['Linux cooked v1', 113, sll(ip4, 0x0800), 4],
    ['Linux cooked v1 IPv6', 113, sll(ip6, 0x86dd), 6],
    ['Linux cooked v1 with a VLAN tag', 113, sll(Uint8Array.of(0, 5, 0x08, 0x00, ...ip4), 0x8100), 4],
    ['Linux cooked v2', 276, sll2(ip4, 0x0800), 4],
    ['Linux cooked v2 IPv6', 276, sll2(ip6, 0x86dd), 6],
    ['raw IP (101) v4', 101, ip4, 4],
    ['raw IP (101) v6', 101, ip6, 6],
    ['raw IP (12)', 12, ip4, 4],
    ['raw IP (14)', 14, ip6, 6],
    ['NULL little-endian AF_INET', 0, loopback(ip4, 2, true), 4],
    ['NULL big-endian AF_INET', 0, loopback(ip4, 2, false), 4],
    ['NULL AF_INET6 24', 0, loopback(ip6, 24, true), 6],
    ['NULL AF_INET6 28', 0, loopback(ip6, 28, false), 6],
    ['NULL AF_INET6 30', 0, loopback(ip6, 30, true), 6],
    ['LOOP AF_INET', 108, loopback(ip4, 2, false), 4],
    ['LOOP AF_INET6', 108, loopback(ip6, 30, false), 6],
    ['IPv4 (228)', 228, ip4, 4],
    ['IPv6 (229)', 229, ip6, 6],
  ];
  it.each(cases)('%s', (_name, linkType, data, version) => {
    const { segs, sink } = run(packet(linkType, data, { frame: 7, tsSec: 99 }));
    expect(sink.got).toEqual([]);
    expect(segs).toHaveLength(1);
    const t = version === 4 ? V4 : V6;
    expect(segs[0]).toMatchObject({
      frame: 7,
      tsSec: 99,
      ipVersion: version,
      src: t.src,
      dst: t.dst,
      srcPort: 40001,
      dstPort: 4420,
      seq: 0xfffffff0,
      ack: 2000,
      flags: ACK | PSH,
      window: 512,
      options: null,
      missing: 0,
    });
    expect(segs[0]!.payload).toEqual(HELLO);
  });

  it('reports an unknown link type once, counts its frames, never throws', () => {
    const { segs, sink, dec } = run([
      packet(147, Uint8Array.of(1, 2, 3), { frame: 3 }),
      packet(147, Uint8Array.of(1), { frame: 4 }),
      packet(1, tcpFrame(V4), { frame: 5 }),
    ]);
    expect(segs).toHaveLength(1);
    expect(dec.stats.unknownLinkTypes).toEqual(new Map([[147, 2]]));
    expect(sink.got).toEqual([
      {
        rule: 'net.unknown-linktype',
        flow: null,
        from: null,
        frames: [3],
        seq: null,
        message: 'link type 147 is not decoded; its frames (first: frame 3) are counted and skipped',
      },
    ]);
  });

  it('counts non-IP ethertypes, other IP protocols and address families as non-TCP, silently', () => {
    const arp = ethernet(new Uint8Array(28), 0x0806);
    const udp = ethernet(ipv4('10.0.0.1', '10.0.0.2', new Uint8Array(8), { protocol: 17 }));
    const icmp6 = ethernet(ipv6('fd00::1', 'fd00::2', new Uint8Array(8), 58));
    const llc = ethernet(new Uint8Array(40), 40); // 802.3 length field
    const fam = loopback(ipv4('10.0.0.1', '10.0.0.2', new Uint8Array(8)), 7, true);
    const { segs, sink, dec } = run([packet(1, arp), packet(1, udp), packet(1, icmp6), packet(1, llc), packet(0, fam)]);
    expect(segs).toEqual([]);
    expect(sink.got).toEqual([]);
    expect(dec.stats).toMatchObject({ nonTcp: 5, malformed: 0 });
  });
});

describe('IPv4', () => {
  it('skips header options by IHL', () => {
    const opts = Uint8Array.of(1, 1, 1, 1, 0x94, 4, 0, 0); // NOPs and Router Alert
    const ip = ipv4Packet({ src: V4.src, dst: V4.dst, payload: tcpSegment(V4), options: opts });
    expect(ip[0]).toBe(0x47);
    const { segs, sink } = run(packet(1, ethernet(ip)), { checksums: true });
    expect(sink.got).toEqual([]);
    expect(segs[0]!.payload).toEqual(HELLO);
  });

  it('trims Ethernet padding and trailers by the total length', () => {
    const small = tcpFrame({ ...V4, payload: Uint8Array.of(0xaa, 0xbb) });
    const padded = new Uint8Array(60 + 4); // minimum frame plus an FCS
    padded.set(small);
    padded.fill(0xee, small.length);
    const { segs } = run(packet(1, padded), { checksums: true });
    expect(segs[0]!.payload).toEqual([0xaa, 0xbb]);
    expect(segs[0]!.missing).toBe(0);
  });

  it('takes the frame length when the total length is 0 (segmentation offload)', () => {
    const seg = tcpSegment({ ...V4, payload: big(3000) });
    const ip = ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, totalLength: 0 });
    const { segs, sink } = run(packet(1, ethernet(ip)));
    expect(sink.got).toEqual([]);
    expect(segs[0]!.payload.length).toBe(3000);
  });
});

describe('TCP header', () => {
  it('decodes every option kind', () => {
    const options = Uint8Array.of(
      ...mssOption(1460),
      1, // NOP
      3,
      3,
      7, // window scale
      4,
      2, // SACK permitted
      8,
      10,
      0,
      0,
      0,
      1,
      0xff,
      0xff,
      0xff,
      0xfe, // timestamps
      5,
      18,
      0,
      0,
      0,
      10,
      0,
      0,
      0,
      20,
      0xff,
      0xff,
      0xff,
      0xf0,
      0,
      0,
      0,
      4, // SACK, 2 blocks
      0, // EOL
    );
    const { segs, sink } = run(packet(1, tcpFrame({ ...V4, flags: SYN, options })));
    expect(sink.got).toEqual([]);
    expect(segs[0]!.options).toEqual({
      mss: 1460,
      windowScale: 7,
      sackPermitted: true,
      sack: [
        [10, 20],
        [0xfffffff0, 4],
      ],
      tsVal: 1,
      tsEcr: 0xfffffffe,
    });
    expect(segs[0]!.flags).toBe(SYN);
    expect(segs[0]!.payload).toEqual(HELLO);
  });

  it('reads the NS flag, the urgent pointer and the full window', () => {
    const f = tcpFrame({ ...V4, window: 65535 });
    f[14 + 20 + 12]! |= 1;
    f[14 + 20 + 18] = 0x12;
    f[14 + 20 + 19] = 0x34;
    const { segs } = run(packet(1, f));
    expect(segs[0]).toMatchObject({ flags: 0x100 | ACK | PSH, urgent: 0x1234, window: 65535 });
  });

  it('reports payload the snaplen cut as missing, and hands out what was captured', () => {
    for (const spec of [V4, V6]) {
      const f = tcpFrame({ ...spec, payload: big(1000) });
      const hdr = f.length - 1000;
      const { segs, sink } = run(packet(1, f.subarray(0, 128), { origLen: f.length }), { checksums: true });
      expect(sink.got).toEqual([]);
      expect(segs[0]!.payload).toEqual(Array.from(big(1000).subarray(0, 128 - hdr)));
      expect(segs[0]!.missing).toBe(1000 - (128 - hdr));
    }
  });

  it('skips frames whose headers the snaplen cut, reporting only the first', () => {
    const f = tcpFrame({ ...V4, options: new Uint8Array(20) });
    const { segs, sink, dec } = run([
      packet(1, f.subarray(0, 40), { origLen: f.length, frame: 1 }),
      packet(1, f.subarray(0, 60), { origLen: f.length, frame: 2 }),
      packet(1, f.subarray(0, 20), { origLen: f.length, frame: 3 }),
    ]);
    expect(segs).toEqual([]);
    expect(dec.stats).toMatchObject({ headersCut: 3, malformed: 0 });
    expect(sink.got).toHaveLength(1);
    expect(sink.got[0]).toMatchObject({ rule: 'net.headers-cut', frames: [1], flow: null, seq: null });
    expect(sink.got[0]!.message).toMatch(/^TCP header cut by the snaplen \(6 of 20 bytes\)/);
  });
});

describe('malformed headers become findings (flow null, the frame, seq null) and skip the frame', () => {
  const seg = tcpSegment(V4);
  function malformed(data: Uint8Array, rule: string, message: string | RegExp, linkType = 1): void {
    const { segs, sink, dec } = run(packet(linkType, data, { frame: 42 }));
    expect(segs).toEqual([]);
    expect(dec.stats.malformed).toBe(1);
    expect(sink.got).toHaveLength(1);
    expect(sink.got[0]).toMatchObject({ rule, flow: null, from: null, frames: [42], seq: null });
    expect(sink.got[0]!.message).toMatch(message);
  }

  it('link layer', () => {
    malformed(new Uint8Array(10), 'net.link-malformed', 'Ethernet header truncated: 10 of 14 bytes');
    malformed(
      ethernetTagged(new Uint8Array(0), 0x8100, []).subarray(0, 16),
      'net.link-malformed',
      'VLAN tag truncated at byte 14',
    );
    malformed(new Uint8Array(12), 'net.link-malformed', 'Linux cooked (SLL) header truncated: 12 of 16 bytes', 113);
    malformed(new Uint8Array(12), 'net.link-malformed', 'Linux cooked v2 (SLL2) header truncated: 12 of 20 bytes', 276);
    malformed(Uint8Array.of(2, 0), 'net.link-malformed', 'loopback header truncated: 2 of 4 bytes', 0);
    malformed(Uint8Array.of(0x50, 0, 0, 20), 'net.link-malformed', 'raw IP frame with IP version 5', 101);
  });

  it('IPv4', () => {
    malformed(ethernet(ipv6(V6.src, V6.dst, seg), 0x0800), 'net.ipv4-malformed', 'IPv4 packet with IP version 6');
    malformed(
      ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, ihl: 4 })),
      'net.ipv4-malformed',
      'IPv4 header length 16 bytes (IHL 4) is below the 20-byte minimum',
    );
    malformed(
      ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, ihl: 15 })).subarray(0, 14 + 40),
      'net.ipv4-malformed',
      'IPv4 header with options truncated: 40 of 60 bytes',
    );
    malformed(
      ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, totalLength: 12 })),
      'net.ipv4-malformed',
      'IPv4 total length 12 is below its 20-byte header',
    );
    malformed(
      ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, totalLength: 2000 })),
      'net.ipv4-malformed',
      `IPv4 total length 2000 exceeds the ${20 + seg.length} bytes the frame carried`,
    );
    malformed(ethernet(new Uint8Array(12)), 'net.ipv4-malformed', 'IPv4 header truncated: 12 of 20 bytes');
    malformed(
      ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg, version: 6 }),
      'net.ipv4-malformed',
      'IPv4 packet with IP version 6',
      228,
    );
  });

  it('IPv6', () => {
    malformed(
      ethernet(ipv4(V4.src, V4.dst, seg), 0x86dd),
      'net.ipv6-malformed',
      /^IPv6 header truncated|^IPv6 packet with IP version 4/,
    );
    const ip6 = ipv6(V6.src, V6.dst, tcpSegment(V6));
    const longer = ip6.slice();
    longer[5] = longer[5]! + 100;
    malformed(
      ethernet(longer),
      'net.ipv6-malformed',
      `IPv6 payload length ${ip6.length - 40 + 100} exceeds the ${ip6.length - 40} bytes the frame carried`,
    );
    const badExt = ipv6(V6.src, V6.dst, Uint8Array.of(6, 200, 0, 0, 0, 0, 0, 0), 60);
    malformed(
      ethernet(badExt),
      'net.ipv6-malformed',
      'IPv6 destination options header of 1608 bytes runs 1600 bytes past the payload',
    );
    const v4in6 = ipv4(V4.src, V4.dst, seg);
    malformed(v4in6, 'net.ipv6-malformed', /^IPv6 header truncated|^IPv6 packet with IP version 4/, 229);
  });

  it('TCP', () => {
    const short = ipv4(V4.src, V4.dst, new Uint8Array(10));
    malformed(
      ethernet(short),
      'net.tcp-malformed',
      '10.0.0.1 -> 10.0.0.2: TCP segment of 10 bytes is shorter than the 20-byte header',
    );
    const low = seg.slice();
    low[12] = 4 << 4;
    malformed(
      ethernet(ipv4(V4.src, V4.dst, low)),
      'net.tcp-malformed',
      '10.0.0.1:40001 -> 10.0.0.2:4420: TCP data offset 4 (16 bytes) is below the minimum of 5',
    );
    const high = tcpSegment({ ...V4, payload: new Uint8Array(0) });
    high[12] = 15 << 4;
    malformed(
      ethernet(ipv4(V4.src, V4.dst, high)),
      'net.tcp-malformed',
      '10.0.0.1:40001 -> 10.0.0.2:4420: TCP data offset 15 (60 bytes) reaches past the 20-byte segment',
    );
    const ip6 = tcpSegment({ ...V6, payload: new Uint8Array(0) });
    ip6[12] = 6 << 4;
    malformed(
      ethernet(ipv6(V6.src, V6.dst, ip6)),
      'net.tcp-malformed',
      '[fd00::1]:40001 -> [fd00::2:0:0:9]:4420: TCP data offset 6 (24 bytes) reaches past the 20-byte segment',
    );
  });

  it('a bad TCP option list is reported but the segment, whose data offset is sound, is still delivered', () => {
    const cases: Array<[Uint8Array, string]> = [
      [Uint8Array.of(2, 3, 0, 0), 'option kind 2 has length 3, should be 4'],
      [Uint8Array.of(1, 1, 8, 40), 'option kind 8 of length 40 runs 38 bytes past the header'],
      [Uint8Array.of(1, 1, 1, 30), 'option kind 30 at header offset 23 has no room for its length byte'],
      [Uint8Array.of(30, 1, 0, 0), 'option kind 30 has length 1, below the minimum of 2'],
      [Uint8Array.of(5, 6, 0, 0, 0, 0, 1, 1), 'SACK option has length 6, should be 2 + 8 per block'],
      [Uint8Array.of(2, 4, 5, 0xb4, 3, 2, 0, 0), 'option kind 3 has length 2, should be 3'],
    ];
    for (const [options, msg] of cases) {
      const { segs, sink, dec } = run(packet(1, tcpFrame({ ...V4, options }), { frame: 9 }));
      expect(segs).toHaveLength(1);
      expect(segs[0]!.payload).toEqual(HELLO);
      expect(dec.stats.malformed).toBe(0);
      expect(sink.got).toEqual([
        {
          rule: 'net.tcp-option-malformed',
          flow: null,
          from: null,
          frames: [9],
          seq: null,
          message: `10.0.0.1:40001 -> 10.0.0.2:4420: ${msg}`,
        },
      ]);
    }
    const { segs } = run(packet(1, tcpFrame({ ...V4, options: Uint8Array.of(2, 4, 5, 0xb4, 3, 2, 0, 0) })));
    expect(segs[0]!.options?.mss).toBe(1460); // decoded before the fault
  });

  it('clean frames of every kind stay silent', () => {
    const frames = [
      packet(1, tcpFrame(V4)),
      packet(1, tcpFrame(V6)),
      packet(1, tcpFrame({ ...V4, flags: SYN, options: mssOption(9000) })),
      packet(276, sll2(ipv6(V6.src, V6.dst, tcpSegment(V6)), 0x86dd)),
      packet(1, ethernet(new Uint8Array(46), 0x0806)),
    ];
    for (const checksums of [false, true]) {
      const { segs, sink, dec } = run(frames, { checksums });
      expect(sink.got).toEqual([]);
      expect(segs).toHaveLength(4);
      expect(dec.stats).toMatchObject({ malformed: 0, headersCut: 0, nonTcp: 1 });
    }
  });
});

describe('checksums (only when asked)', () => {
  it('reports a wrong IPv4 header checksum and still decodes', () => {
    const f = tcpFrame(V4);
    f[14 + 10]! ^= 0xff;
    const off = run(packet(1, f));
    expect(off.sink.got).toEqual([]);
    const on = run(packet(1, f, { frame: 5 }), { checksums: true });
    expect(on.segs).toHaveLength(1);
    expect(on.sink.got).toHaveLength(1);
    expect(on.sink.got[0]).toMatchObject({ rule: 'net.ipv4-checksum-bad', frames: [5], flow: null });
    const good = tcpFrame(V4);
    const want = ((good[14 + 10]! << 8) | good[14 + 11]!).toString(16).padStart(4, '0');
    expect(on.sink.got[0]!.message).toBe(
      `IPv4 header checksum 0x${(((good[14 + 10]! ^ 0xff) << 8) | good[14 + 11]!).toString(16).padStart(4, '0')} is wrong (should be 0x${want})`,
    );
  });

  it('reports a wrong TCP checksum over the IPv4 and IPv6 pseudo-headers', () => {
    for (const spec of [V4, V6]) {
      const f = tcpFrame(spec);
      f[f.length - 1]! ^= 0x01;
      expect(run(packet(1, f)).sink.got).toEqual([]);
      const on = run(packet(1, f), { checksums: true });
      expect(on.segs).toHaveLength(1);
      expect(on.sink.rules()).toEqual(['net.tcp-checksum-bad']);
      expect(on.sink.got[0]!.message).toMatch(/TCP checksum 0x[0-9a-f]{4} is wrong \(should be 0x[0-9a-f]{4}\)$/);
    }
  });

  it('does not check what the snaplen cut', () => {
    const f = tcpFrame({ ...V4, payload: big(500) });
    f[f.length - 1]! ^= 0x01;
    expect(run(packet(1, f.subarray(0, 100), { origLen: f.length }), { checksums: true }).sink.got).toEqual([]);
  });
});

describe('IPv4 fragments', () => {
  const payload = big(3000);
  const seg = tcpSegment({ ...V4, payload });
  function frags(sizes: number[], id = 0x4242, data = seg): Uint8Array[] {
    const out: Uint8Array[] = [];
    let off = 0;
    sizes.forEach((n, i) => {
      const last = i === sizes.length - 1;
      const len = last ? data.length - off : n;
      out.push(
        ethernet(
          ipv4Packet({
            src: V4.src,
            dst: V4.dst,
            payload: data.subarray(off, off + len),
            id,
            fragOffset: off,
            more: !last,
          }),
        ),
      );
      off += len;
    });
    return out;
  }
  const three = frags([1480, 1480, 0]);

  for (const [name, order] of [
    ['in order', [0, 1, 2]],
    ['reversed', [2, 1, 0]],
    ['middle first', [1, 2, 0]],
  ] as const) {
    it(`reassembles ${name}`, () => {
      const { segs, sink, dec } = run(
        order.map((i, k) => packet(1, three[i]!, { frame: k + 1 })),
        { checksums: true },
      );
      expect(sink.got).toEqual([]);
      expect(segs).toHaveLength(1);
      expect(segs[0]).toMatchObject({ frame: 3, seq: V4.seq, missing: 0 });
      expect(segs[0]!.payload).toEqual(Array.from(payload));
      expect(dec.stats.fragmentsReassembled).toBe(1);
    });
  }

  it('keeps the first copy of overlapping bytes and reports the overlap', () => {
    // A duplicate of the middle fragment: identical data.
    const dup = run([
      packet(1, three[0]!, { frame: 1 }),
      packet(1, three[1]!, { frame: 2 }),
      packet(1, three[1]!, { frame: 3 }),
      packet(1, three[2]!, { frame: 4 }),
    ]);
    expect(dup.segs[0]!.payload).toEqual(Array.from(payload));
    expect(dup.sink.got).toEqual([
      {
        rule: 'net.fragment-overlap',
        flow: null,
        from: null,
        frames: [3],
        seq: null,
        message:
          'IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242: fragment bytes 1480-2959 overlap 1480 bytes already received; the first copy is kept',
      },
    ]);
    // A fragment overlapping with different data: first copy kept.
    const evil = seg.slice(1000, 2000).fill(0x55);
    const bad = ethernet(
      ipv4Packet({ src: V4.src, dst: V4.dst, payload: evil, id: 0x4242, fragOffset: 1000, more: true }),
    );
    const r = run([
      packet(1, three[0]!, { frame: 1 }),
      packet(1, bad, { frame: 2 }),
      packet(1, three[1]!, { frame: 3 }),
      packet(1, three[2]!, { frame: 4 }),
    ]);
    expect(r.segs).toHaveLength(1);
    // Datagram bytes 1000-1479 came first from the first fragment, 1480-1999 from the overlapping one.
    expect(r.segs[0]!.payload.slice(0, 1460)).toEqual(Array.from(payload.subarray(0, 1460)));
    expect(r.segs[0]!.payload.slice(1460, 1980)).toEqual(new Array(520).fill(0x55));
    expect(r.segs[0]!.payload.slice(1980)).toEqual(Array.from(payload.subarray(1980)));
    expect(r.sink.got.map((f) => [f.rule, f.frames, f.message])).toEqual([
      [
        'net.fragment-overlap',
        [2],
        'IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242: fragment bytes 1000-1999 overlap 480 bytes already received with different data; the first copy is kept',
      ],
      [
        'net.fragment-overlap',
        [3],
        'IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242: fragment bytes 1480-2959 overlap 520 bytes already received with different data; the first copy is kept',
      ],
    ]);
  });

  it('reports fragments that disagree on where the datagram ends, keeping the first word', () => {
    const frag = (offset: number, data: Uint8Array, more: boolean): Uint8Array =>
      ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: data, id: 0x4242, fragOffset: offset, more }));
    const tail = Uint8Array.of(...seg.subarray(2960), ...new Uint8Array(20));
    const label = 'IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242';
    const cases: Array<[Uint8Array[], Array<[number, string]>]> = [
      // A middle fragment reaching past the end the last fragment set.
      [
        [three[0]!, three[2]!, frag(2960, tail, true), three[1]!],
        [
          [
            3,
            `${label}: fragment bytes 2960-3039 reach past the datagram end (3020) set by its last fragment; ignored`,
          ],
          [3, `${label}: fragment bytes 2960-3019 overlap 60 bytes already received; the first copy is kept`],
        ],
      ],
      // Bytes that arrived before the last fragment set a shorter end.
      [
        [frag(2960, tail, true), three[2]!, three[0]!, three[1]!],
        [
          [2, `${label}: 20 bytes received earlier lie past the datagram end (3020) set by its last fragment; ignored`],
          [2, `${label}: fragment bytes 2960-3019 overlap 60 bytes already received; the first copy is kept`],
        ],
      ],
      // A second last fragment with another end.
      [
        [three[0]!, three[2]!, frag(2960, seg.subarray(2960, 3000), false), three[1]!],
        [
          [
            3,
            `${label}: a second last fragment ends the datagram at 3000 bytes, the first said 3020; the first is kept`,
          ],
          [3, `${label}: fragment bytes 2960-2999 overlap 40 bytes already received; the first copy is kept`],
        ],
      ],
    ];
    for (const [frames, want] of cases) {
      const { segs, sink } = run(frames.map((f, i) => packet(1, f, { frame: i + 1 })));
      expect(sink.got.map((f) => [f.frames[0], f.message])).toEqual(want);
      expect(sink.rules().every((r) => r === 'net.fragment-overlap')).toBe(true);
      expect(segs).toHaveLength(1);
      expect(segs[0]!.payload).toEqual(Array.from(payload));
    }
  });

  it('reassembles when the first fragment carries IP options', () => {
    const first = ethernet(
      ipv4Packet({
        src: V4.src,
        dst: V4.dst,
        payload: seg.subarray(0, 1480),
        id: 7,
        fragOffset: 0,
        more: true,
        options: Uint8Array.of(1, 1, 1, 0),
      }),
    );
    const rest = ethernet(
      ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg.subarray(1480), id: 7, fragOffset: 1480 }),
    );
    const { segs } = run([packet(1, rest), packet(1, first)], { checksums: true });
    expect(segs[0]!.payload).toEqual(Array.from(payload));
  });

  it('keeps datagrams apart by id and addresses', () => {
    const a = frags([1480, 0], 1);
    const b = frags([1480, 0], 2);
    const { segs } = run([packet(1, a[0]!), packet(1, b[1]!), packet(1, b[0]!), packet(1, a[1]!)]);
    expect(segs).toHaveLength(2);
  });

  it('hands out what was captured of a snaplen-cut fragment as payload, the rest as missing', () => {
    const last = three[2]!;
    const { segs, sink } = run(
      [packet(1, three[0]!), packet(1, three[1]!), packet(1, last.subarray(0, 60), { origLen: last.length })],
      { checksums: true },
    );
    expect(sink.got).toEqual([]);
    // Two whole fragments and 26 of the third's 60 bytes (after Ethernet and IPv4 headers), minus the TCP header.
    const got = 2960 + (60 - 34) - 20;
    expect(segs[0]!.payload).toEqual(Array.from(payload.subarray(0, got)));
    expect(segs[0]!.missing).toBe(3000 - got);
  });

  it('does not hold fragments of other protocols', () => {
    const udp = ethernet(
      ipv4Packet({ src: V4.src, dst: V4.dst, payload: new Uint8Array(800), protocol: 17, more: true, fragOffset: 0 }),
    );
    const { dec, sink } = run(packet(1, udp));
    dec.finish();
    expect(sink.got).toEqual([]);
    expect(dec.stats.nonTcp).toBe(1);
  });

  it('rejects fragments that break the rules', () => {
    const odd = ethernet(ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg.subarray(0, 1001), id: 9, more: true }));
    const far = ethernet(
      ipv4Packet({ src: V4.src, dst: V4.dst, payload: seg.subarray(0, 800), id: 9, fragOffset: 65000 }),
    );
    const { sink, dec } = run([packet(1, odd, { frame: 1 }), packet(1, far, { frame: 2 })]);
    expect(dec.stats.malformed).toBe(2);
    expect(sink.got.map((f) => [f.rule, f.frames, f.message])).toEqual([
      [
        'net.ipv4-malformed',
        [1],
        'IPv4 10.0.0.1 -> 10.0.0.2 id 0x0009: fragment of 1001 bytes at offset 0 (a fragment other than the last must hold a multiple of 8 bytes)',
      ],
      [
        'net.ipv4-malformed',
        [2],
        'IPv4 10.0.0.1 -> 10.0.0.2 id 0x0009: fragment ends at 65820 bytes, past the 65535-byte IPv4 limit',
      ],
    ]);
  });

  it('reports datagrams still incomplete at the end of the capture', () => {
    const { sink, dec, segs } = run([packet(1, three[2]!, { frame: 8 }), packet(1, three[0]!, { frame: 6 })]);
    expect(segs).toEqual([]);
    expect(sink.got).toEqual([]);
    dec.finish();
    expect(sink.got).toEqual([
      {
        rule: 'net.fragment-incomplete',
        flow: null,
        from: null,
        frames: [6, 8],
        seq: null,
        message: `IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242: 2 fragments holding ${1480 + seg.length - 2960} of ${seg.length} bytes dropped: the capture ended before it was complete`,
      },
    ]);
    expect(dec.stats.fragmentsDropped).toBe(1);
  });

  it('drops datagrams not completed within 60 s of capture time', () => {
    const other = frags([1480, 0], 77);
    const { sink, segs } = run([
      packet(1, three[0]!, { frame: 1, tsSec: 1000 }),
      packet(1, other[0]!, { frame: 2, tsSec: 1061 }),
      packet(1, other[1]!, { frame: 3, tsSec: 1062 }),
    ]);
    expect(segs).toHaveLength(1);
    expect(sink.got.map((f) => [f.rule, f.frames])).toEqual([['net.fragment-incomplete', [1]]]);
    expect(sink.got[0]!.message).toMatch(
      /id 0x4242: 1 fragment holding 1480 of an unknown number of bytes dropped: not completed within 60 s$/,
    );
  });

  it('bounds the memory held: the oldest incomplete datagrams are given up at the cap', () => {
    const dgrams = [1, 2, 3, 4, 5].map((id) => frags([1480, 0], id));
    const firsts = dgrams.map((d, i) => packet(1, d[0]!, { frame: i + 1 }));
    const { sink, dec, segs } = run([...firsts, packet(1, dgrams[4]![1]!, { frame: 6 })], {
      maxFragmentBytes: 4 * 1024,
    });
    expect(segs).toHaveLength(1); // the newest survives
    const dropped = sink.got.filter((f) => f.rule === 'net.fragment-incomplete');
    expect(dropped.length).toBeGreaterThanOrEqual(3);
    expect(dropped[0]!.frames).toEqual([1]);
    expect(dropped[0]!.message).toMatch(/dropped: the 4 KiB fragment memory cap was reached$/);
    expect(dec.stats.fragmentsDropped).toBe(dropped.length);
  });
});

describe('IPv6', () => {
  it('walks hop-by-hop, routing, destination options and AH headers', () => {
    const tcp = tcpSegment(V6);
    const chain = Uint8Array.of(...ext6(43, 8), ...ext6(60, 24), ...ext6(51, 16), ...ah6(6, 24), ...tcp);
    chain[8 + 3] = 0; // routing: segments left 0
    const { segs, sink } = run(packet(1, ethernet(ipv6(V6.src, V6.dst, chain, 0))), { checksums: true });
    expect(sink.got).toEqual([]);
    expect(segs).toHaveLength(1);
    expect(segs[0]!.payload).toEqual(HELLO);
  });

  it('does not check the TCP checksum through a routing header with segments left', () => {
    const tcp = tcpSegment(V6);
    tcp[16]! ^= 0xff;
    const rh = ext6(6, 24);
    rh[2] = 0; // routing type 0, segments left 1
    rh[3] = 1;
    const { segs, sink } = run(packet(1, ethernet(ipv6(V6.src, V6.dst, Uint8Array.of(...rh, ...tcp), 43))), {
      checksums: true,
    });
    expect(segs).toHaveLength(1);
    expect(sink.got).toEqual([]);
  });

  it('treats an atomic fragment as unfragmented', () => {
    const data = Uint8Array.of(...frag6(6, 0, false, 99), ...tcpSegment(V6));
    const { segs, dec } = run(packet(1, ethernet(ipv6(V6.src, V6.dst, data, 44))));
    expect(segs[0]!.payload).toEqual(HELLO);
    expect(dec.stats.fragmentsReassembled).toBe(0);
  });

  const payload = big(4000);
  const tcp = tcpSegment({ ...V6, payload });
  /** Fragmentable part: a destination-options header, then TCP. */
  const fragmentable = Uint8Array.of(...ext6(6, 16), ...tcp);
  function frags6(sizes: number[], id = 0xdeadbeef): Uint8Array[] {
    const out: Uint8Array[] = [];
    let off = 0;
    sizes.forEach((n, i) => {
      const last = i === sizes.length - 1;
      const len = last ? fragmentable.length - off : n;
      // Hop-by-hop in the unfragmentable part, then the fragment header.
      const body = Uint8Array.of(
        ...ext6(44, 8),
        ...frag6(60, off, !last, id),
        ...fragmentable.subarray(off, off + len),
      );
      out.push(ethernet(ipv6(V6.src, V6.dst, body, 0)));
      off += len;
    });
    return out;
  }
  const fr = frags6([1440, 1440, 0]);

  for (const [name, order] of [
    ['in order', [0, 1, 2]],
    ['reversed', [2, 1, 0]],
  ] as const) {
    it(`reassembles fragments ${name}, with extension headers on both sides of the fragment header`, () => {
      const { segs, sink, dec } = run(
        order.map((i, k) => packet(1, fr[i]!, { frame: k + 1 })),
        { checksums: true },
      );
      expect(sink.got).toEqual([]);
      expect(segs).toHaveLength(1);
      expect(segs[0]).toMatchObject({ frame: 3, ipVersion: 6, src: V6.src, dst: V6.dst, missing: 0 });
      expect(segs[0]!.payload).toEqual(Array.from(payload));
      expect(dec.stats.fragmentsReassembled).toBe(1);
    });
  }

  it('reports overlapping IPv6 fragments and keeps the first copy', () => {
    const overlapping = Uint8Array.of(...frag6(60, 1400, true, 0xdeadbeef), ...new Uint8Array(80).fill(0x77));
    const { segs, sink } = run([
      packet(1, fr[0]!, { frame: 1 }),
      packet(1, ethernet(ipv6(V6.src, V6.dst, overlapping, 44)), { frame: 2 }),
      packet(1, fr[1]!, { frame: 3 }),
      packet(1, fr[2]!, { frame: 4 }),
    ]);
    expect(segs).toHaveLength(1);
    expect(sink.got.map((f) => [f.rule, f.frames, f.message])).toEqual([
      [
        'net.fragment-overlap',
        [2],
        'IPv6 fd00::1 -> fd00::2:0:0:9 id 0xdeadbeef: fragment bytes 1400-1479 overlap 40 bytes already received with different data; the first copy is kept',
      ],
      [
        'net.fragment-overlap',
        [3],
        'IPv6 fd00::1 -> fd00::2:0:0:9 id 0xdeadbeef: fragment bytes 1440-2879 overlap 40 bytes already received with different data; the first copy is kept',
      ],
    ]);
    // Bytes 1440..1479 came first from the overlapping fragment (0x77).
    const p = segs[0]!.payload;
    const at = 1440 - 16 - 20; // fragmentable offset -> TCP payload offset
    expect(p.slice(at, at + 40)).toEqual(new Array(40).fill(0x77));
    expect(p.slice(0, at)).toEqual(Array.from(payload.subarray(0, at)));
  });

  it('reports an incomplete IPv6 datagram at the end', () => {
    const { sink, dec } = run([packet(1, fr[1]!, { frame: 4 })]);
    dec.finish();
    expect(sink.got.map((f) => [f.rule, f.frames])).toEqual([['net.fragment-incomplete', [4]]]);
    expect(sink.got[0]!.message).toBe(
      'IPv6 fd00::1 -> fd00::2:0:0:9 id 0xdeadbeef: 1 fragment holding 1440 of an unknown number of bytes dropped: the capture ended before it was complete',
    );
  });

  it('counts fragments of other protocols as non-TCP without holding them', () => {
    const udp = Uint8Array.of(...frag6(17, 0, true, 5), ...new Uint8Array(64));
    const { dec, sink } = run(packet(1, ethernet(ipv6(V6.src, V6.dst, udp, 44))));
    dec.finish();
    expect(dec.stats.nonTcp).toBe(1);
    expect(sink.got).toEqual([]);
  });
});

describe('rules', () => {
  it('declares every rule the decoder reports', () => {
    const ids = new Set(NET_RULES.map((r) => r.id));
    for (const id of [
      'net.unknown-linktype',
      'net.link-malformed',
      'net.ipv4-malformed',
      'net.ipv6-malformed',
      'net.tcp-malformed',
      'net.tcp-option-malformed',
      'net.ipv4-checksum-bad',
      'net.tcp-checksum-bad',
      'net.fragment-overlap',
      'net.fragment-incomplete',
      'net.headers-cut',
    ]) {
      expect(ids.has(id)).toBe(true);
    }
    expect(NET_RULES.find((r) => r.id === 'net.unknown-linktype')!.severity).toBe('info');
    expect(NET_RULES.find((r) => r.id === 'net.ipv4-malformed')!.severity).toBe('warning');
  });
});
