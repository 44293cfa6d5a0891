/** PacketDecoder on IP datagrams in pieces: IPv4 fragments, IPv6 extension headers and fragments. */
import { describe, expect, it } from 'vitest';
import { ethernet, ipv6, tcpSegment } from '../helpers/frames.js';
import { ah6, ext6, frag6, ipv4Packet, packet } from '../helpers/net-frames.js';
import { run, V4, V6, HELLO, big } from './decoder-harness.js';

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
        frames: [1, 2, 3],
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
        [1, 2],
        'IPv4 10.0.0.1 -> 10.0.0.2 id 0x4242: fragment bytes 1000-1999 overlap 480 bytes already received with different data; the first copy is kept',
      ],
      [
        'net.fragment-overlap',
        [1, 2, 3],
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
      expect(sink.got.map((f) => [f.frames.at(-1), f.message])).toEqual(want);
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
        [1, 2],
        'IPv6 fd00::1 -> fd00::2:0:0:9 id 0xdeadbeef: fragment bytes 1400-1479 overlap 40 bytes already received with different data; the first copy is kept',
      ],
      [
        'net.fragment-overlap',
        [1, 2, 3],
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
