/** PacketDecoder on broken headers: each becomes a finding and the frame is skipped; the rules it declares. */
import { describe, expect, it } from 'vitest';
import { NET_RULES } from '../../src/net/rules.js';
import { SYN, ethernet, ipv4, ipv6, mssOption, tcpFrame, tcpSegment } from '../helpers/frames.js';
import { ethernetTagged, ipv4Packet, packet, sll2 } from '../helpers/net-frames.js';
import { run, V4, V6, HELLO } from './decoder-harness.js';

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
