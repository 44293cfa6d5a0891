/** PacketDecoder on sound frames: every link type, IPv4 and TCP header fields, and checksums when asked. */
import { describe, expect, it } from 'vitest';
import { ACK, PSH, SYN, ethernet, ipv4, ipv6, mssOption, tcpFrame, tcpSegment } from '../helpers/frames.js';
import { ethernetTagged, ipv4Packet, loopback, packet, sll, sll2 } from '../helpers/net-frames.js';
import { run, V4, V6, HELLO, big } from './decoder-harness.js';

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
