/**
 * Scenarios of faults below MPA, built frame by frame: malformed link, IP and TCP headers, IP
 * fragments that overlap or never complete, headers cut by the snaplen, TCP retransmissions that
 * disagree, data after FIN, a reassembly buffer overrun, a FIN in the middle of an FPDU, a second
 * MPA Request after full operation, thresholds of a rules file. Each says which frames it built
 * wrong and so which findings it expects.
 */
import { ACK, FIN, PSH, ethernet, ipv4, tcpFrame, tcpSegment } from './frames.js';
import { encodeFpdus, patternBytes, sendUlpdu, startupFrame } from './mpa-encoder.js';
import { buildScenario } from './scenario.js';
import { buildKnobConnection, type Generated } from './knob-connection.js';
import { resolveKnobs } from './knobs.js';
import type { Scenario } from './scenario-table.js';
import { endpoint, sortFindings, type TruthFinding, type TruthFlow } from './truth.js';
import type { PcapFrame } from '../report/pcap-writer.js';

const T0 = 1_700_000_000;
const timed = (data: Uint8Array[]): PcapFrame[] =>
  data.map((d, i) => ({ tsSec: T0, tsNsec: (i + 1) * 10_000, data: d }));
const plainFlow = (client: string, cport: number, server: string, sport: number): TruthFlow => ({
  client: endpoint(client, cport),
  server: endpoint(server, sport),
  mpa: null,
});
const f = (rule: string, from: string | null = null, seq: number | null = null): TruthFinding => ({ rule, from, seq });

/** Malformed headers and fragments, one frame each; checksums wrong in two more (read with --checksums). */
function netFaults(): Generated {
  const A = '10.0.1.1';
  const B = '10.0.1.2';
  const good = (seq: number, payload: Uint8Array) =>
    tcpSegment({ src: A, dst: B, sport: 50000, dport: 80, seq, flags: ACK | PSH, payload });
  const frames: Uint8Array[] = [];
  frames.push(new Uint8Array([0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0])); // 10 octets: no room for an Ethernet header
  const badIhl = ipv4(A, B, good(1, new Uint8Array(4)));
  badIhl[0] = 0x43; // IHL 3 (12 octets), below the minimum 5
  frames.push(ethernet(badIhl));
  frames.push(ethernet(new Uint8Array([0x60, 0, 0, 0, 0, 40, 6, 64, 0, 0, 0, 0]), 0x86dd)); // 12 octets of a 40-octet IPv6 header
  const badOffset = good(1, new Uint8Array(4));
  badOffset[12] = 0x30; // data offset 3 words, below the minimum 5
  frames.push(ethernet(ipv4(A, B, badOffset)));
  // An MSS option of length 0: the option list cannot be walked past it.
  frames.push(
    tcpFrame({ src: A, dst: B, sport: 50001, dport: 80, seq: 1, flags: ACK, options: new Uint8Array([2, 0, 0, 0]) }),
  );
  // Two fragments of one datagram that overlap with different octets, then a lone first fragment.
  const dgram = good(100, patternBytes(48, 1));
  frames.push(ethernet(ipv4(A, B, dgram.subarray(0, 32), { id: 77, fragOffset: 0, moreFragments: true })));
  const clash = dgram.slice(24);
  clash[0]! ^= 0xff;
  frames.push(ethernet(ipv4(A, B, clash, { id: 77, fragOffset: 24 })));
  frames.push(
    ethernet(
      ipv4(A, B, good(200, patternBytes(64, 2)).subarray(0, 32), { id: 78, fragOffset: 0, moreFragments: true }),
    ),
  );
  // Checksums (reported with --checksums only): a wrong IPv4 header checksum, a wrong TCP checksum.
  const badIpSum = ipv4(A, B, good(300, new Uint8Array(4)));
  badIpSum[10]! ^= 0x55;
  frames.push(ethernet(badIpSum));
  const badTcpSum = good(304, new Uint8Array(4));
  badTcpSum[16]! ^= 0x55;
  frames.push(ethernet(ipv4(A, B, badTcpSum)));
  const pcap = timed(frames);
  // A frame the snaplen cut inside its IPv4 header (30 of 58 octets captured).
  const full = tcpFrame({ src: A, dst: B, sport: 50002, dport: 80, seq: 1, flags: ACK, payload: new Uint8Array(4) });
  pcap.push({ tsSec: T0, tsNsec: 900_000, data: full.slice(0, 30), origLen: full.length });
  return {
    frames: pcap,
    findings: sortFindings([
      f('net.link-malformed'),
      f('net.ipv4-malformed'),
      f('net.ipv6-malformed'),
      f('net.tcp-malformed'),
      f('net.tcp-option-malformed'),
      f('net.fragment-overlap'),
      f('net.fragment-incomplete'),
      f('net.ipv4-checksum-bad'),
      f('net.tcp-checksum-bad'),
      f('net.headers-cut'),
      // Flow 50000's first sound segment is the reassembled datagram (seq 100, 48 octets); the next is at 300.
      f('tcp.capture-loss', endpoint(A, 50000), 148),
    ]),
    flows: [plainFlow(A, 50001, B, 80), plainFlow(A, 50000, B, 80)],
    args: ['--checksums'],
  };
}

/** Frames of a link type the decoder does not know (LINKTYPE_USER0). */
function unknownLinktype(): Generated {
  return {
    frames: timed([patternBytes(60, 3), patternBytes(60, 4)]),
    findings: [f('net.unknown-linktype')],
    flows: [],
    args: [],
    linkType: 147,
  };
}

/** A retransmission that disagrees with the first copy, then data after the FIN. */
function tcpFaults(): Generated {
  const A = '10.0.2.1';
  const B = '10.0.2.2';
  const seg = (seq: number, payload: Uint8Array, flags = ACK | PSH) =>
    tcpFrame({ src: A, dst: B, sport: 50010, dport: 80, seq, flags, payload });
  const data = patternBytes(100, 5);
  const changed = data.slice(40, 80);
  changed[5]! ^= 0xff;
  const frames = [
    seg(1000, data),
    seg(1040, changed),
    tcpFrame({ src: A, dst: B, sport: 50010, dport: 80, seq: 1100, flags: FIN | ACK }),
    seg(1101, patternBytes(20, 6)),
  ];
  return {
    frames: timed(frames),
    findings: sortFindings([
      f('tcp.overlap-conflict', endpoint(A, 50010), 1045),
      f('tcp.data-after-fin', endpoint(A, 50010), 1101),
    ]),
    flows: [plainFlow(A, 50010, B, 80)],
    args: [],
  };
}

/** Out-of-order data beyond a 1 KiB per-flow buffer (read with --tcp-buffer-flow 0.001). */
function bufferCap(): Generated {
  const A = '10.0.3.1';
  const B = '10.0.3.2';
  const seg = (seq: number, payload: Uint8Array) =>
    tcpFrame({ src: A, dst: B, sport: 50020, dport: 80, seq, flags: ACK | PSH, payload });
  // The first 100 octets are missing while 3 x 600 octets wait behind them.
  const frames = [
    seg(1000, patternBytes(50, 7)),
    seg(1150, patternBytes(600, 8)),
    seg(1750, patternBytes(600, 9)),
    seg(2350, patternBytes(600, 10)),
  ];
  return {
    frames: timed(frames),
    findings: sortFindings([f('tcp.buffer-cap', endpoint(A, 50020), 1050)]),
    flows: [plainFlow(A, 50020, B, 80)],
    args: ['--tcp-buffer-flow', '0.001'],
  };
}

/** The truth of one MPA flow without markers or errors: `n0` FPDUs from the client, `n1` from the server. */
function mpaFlow(a: string, b: string, n0: number, n1: number): TruthFlow {
  const dir = (from: string, to: string, fpdus: number) => ({
    from,
    to,
    markers: false,
    fpdus,
    markerCount: 0,
    crcErrors: 0,
    markerErrors: 0,
  });
  return { client: a, server: b, mpa: { directions: [dir(a, b, n0), dir(b, a, n1)] } };
}

/** An MPA connection whose Initiator sends its Request twice, then one FPDU and half of the next, and FIN. */
function closeAndRestart(): Generated {
  const req = startupFrame({ kind: 'request', c: true });
  const rep = startupFrame({ kind: 'reply', c: true });
  const i2r = encodeFpdus(
    [{ ulpdu: sendUlpdu(1, patternBytes(100, 11)) }, { ulpdu: sendUlpdu(2, patternBytes(100, 12)) }],
    { markers: false, crc: true },
  );
  const r2i = encodeFpdus([{ ulpdu: sendUlpdu(1, patternBytes(60, 13)) }], { markers: false, crc: true });
  const half = i2r.fpdus[1]!.startRel + 40;
  const again = startupFrame({ kind: 'request', c: true });
  const s = buildScenario(
    [
      { dir: 0, bytes: req },
      { dir: 0, bytes: again },
      { dir: 1, bytes: rep },
      { dir: 0, bytes: i2r.bytes.subarray(0, i2r.fpdus[0]!.endRel) },
      { dir: 1, bytes: r2i.bytes },
      { dir: 0, bytes: i2r.bytes.subarray(i2r.fpdus[0]!.endRel, half) },
    ],
    { client: { addr: '10.0.4.1', port: 40004 }, server: { addr: '10.0.4.2', port: 4420 }, close: 'fin' },
  );
  const a = endpoint('10.0.4.1', 40004);
  const b = endpoint('10.0.4.2', 4420);
  const ss = [(s.dataSeq[0] + req.length) >>> 0, (s.dataSeq[1] + rep.length) >>> 0];
  return {
    frames: s.frames,
    findings: sortFindings([
      // The Request repeated before the Reply came; the FPDUs follow the second one.
      f('mpa.startup-after-mpa', a, ss[0]!),
      f('mpa.tcp-closed-mid-fpdu', a, (ss[0]! + again.length + i2r.fpdus[1]!.lenRel) >>> 0),
      f('mpa.tcp-closed-between', b, (ss[1]! + r2i.bytes.length) >>> 0),
    ]),
    flows: [mpaFlow(a, b, 1, 1)],
    args: [],
  };
}

/**
 * The Initiator sends its MPA Request again after the Reply arrived, where its FPDUs should begin
 * (RFC 5044 §7.1.2: FPDUs follow the startup frames); then two FPDUs, and both close with FIN. The
 * repeated frame is a startup frame, not an FPDU whose ULPDU_Length is the octets "MP" (0x4d50).
 */
function requestAfterReply(): Generated {
  const req = startupFrame({ kind: 'request', c: true });
  const rep = startupFrame({ kind: 'reply', c: true });
  const again = startupFrame({ kind: 'request', c: true });
  const i2r = encodeFpdus(
    [{ ulpdu: sendUlpdu(1, patternBytes(120, 21)) }, { ulpdu: sendUlpdu(2, patternBytes(90, 22)) }],
    { markers: false, crc: true },
  );
  const r2i = encodeFpdus([{ ulpdu: sendUlpdu(1, patternBytes(60, 23)) }], { markers: false, crc: true });
  const s = buildScenario(
    [
      { dir: 0, bytes: req },
      { dir: 1, bytes: rep },
      { dir: 0, bytes: again },
      { dir: 0, bytes: i2r.bytes },
      { dir: 1, bytes: r2i.bytes },
    ],
    { client: { addr: '10.0.5.1', port: 40005 }, server: { addr: '10.0.5.2', port: 4420 }, close: 'fin' },
  );
  const a = endpoint('10.0.5.1', 40005);
  const b = endpoint('10.0.5.2', 4420);
  const ss = [(s.dataSeq[0] + req.length) >>> 0, (s.dataSeq[1] + rep.length) >>> 0];
  return {
    frames: s.frames,
    findings: sortFindings([
      f('mpa.startup-after-mpa', a, ss[0]!),
      f('mpa.tcp-closed-between', a, (ss[0]! + again.length + i2r.bytes.length) >>> 0),
      f('mpa.tcp-closed-between', b, (ss[1]! + r2i.bytes.length) >>> 0),
    ]),
    flows: [mpaFlow(a, b, 2, 1)],
    args: [],
  };
}

/** Thresholds of a rules file broken: two MPA flows asked for, 100 % alignment asked for, segments cut at random. */
function thresholds(): Generated {
  const g = buildKnobConnection(resolveKnobs({ segmentation: 'random', count: '12' }).knobs, 3);
  const [a, b] = [g.flows[0]!.client, g.flows[0]!.server];
  return {
    ...g,
    findings: sortFindings([
      ...g.findings,
      f('threshold.min-mpa-flows'),
      f('threshold.fpdu-alignment', a),
      f('threshold.fpdu-alignment', b),
      f('threshold.header-alignment', a),
      f('threshold.header-alignment', b),
    ]),
    args: ['--rules', THRESHOLDS_FILE],
  };
}

/** The rules file thresholds() is read with (scripts/make-corpus.ts writes it next to the capture). */
export const THRESHOLDS_FILE = 'thresholds.rules.json';
export const THRESHOLDS_RULES = {
  thresholds: {
    'alignment.minFpduAlignedPercent': 100,
    'alignment.minHeaderAlignedPercent': 100,
    'capture.minMpaFlows': 2,
  },
};

/** A clean connection whose capture file is cut 10 octets into its last record (read with --allow-truncated). */
function truncated(): Generated {
  const g = buildKnobConnection(resolveKnobs({ count: '4' }).knobs, 5);
  const last = g.frames[g.frames.length - 1]!;
  return {
    ...g,
    findings: sortFindings([...g.findings, f('capture.truncated')]),
    flows: lastFpduLost(g),
    args: ['--allow-truncated'],
    post: (file) => file.subarray(0, file.length - last.data.length + 10),
  };
}

/** A clean connection whose last pcap record claims 2 GiB of captured octets: the file cannot be read to its end. */
function readError(): Generated {
  const g = buildKnobConnection(resolveKnobs({ count: '4' }).knobs, 6);
  const last = g.frames[g.frames.length - 1]!;
  return {
    ...g,
    findings: sortFindings([...g.findings, f('capture.read-error')]),
    flows: lastFpduLost(g),
    post: (file) => {
      const out = file.slice();
      // classic pcap record header: ts_sec, ts_usec, incl_len, orig_len (little-endian)
      new DataView(out.buffer).setUint32(out.length - last.data.length - 8, 0x7fffffff, true);
      return out;
    },
  };
}

/** The flows of g without the last record: the Responder's last FPDU (it answers last, one FPDU per segment). */
function lastFpduLost(g: Generated): TruthFlow[] {
  return g.flows.map((fl) =>
    fl.mpa
      ? {
          ...fl,
          mpa: {
            directions: [fl.mpa.directions[0], { ...fl.mpa.directions[1], fpdus: fl.mpa.directions[1].fpdus - 1 }],
          },
        }
      : fl,
  );
}

export const CAPTURE_FAULT_SCENARIOS: readonly Scenario[] = [
  {
    name: 'rule-thresholds',
    summary: 'Segments cut at random, read with a rules file asking for 100 % alignment and two MPA flows',
    uses: [],
    build: () => thresholds(),
  },
  {
    name: 'rule-capture-truncated',
    summary: 'A capture file cut in the middle of its last record (read with --allow-truncated)',
    uses: [],
    build: () => truncated(),
  },
  {
    name: 'rule-capture-read-error',
    summary: 'A pcap whose last record header claims 2 GiB: the file cannot be read to its end (exit 2)',
    uses: [],
    build: () => readError(),
  },
  {
    name: 'rule-net-faults',
    summary:
      'Malformed link, IPv4, IPv6, TCP headers and options, overlapping and incomplete IP fragments, bad checksums (--checksums), headers cut by the snaplen',
    uses: [],
    build: () => netFaults(),
  },
  {
    name: 'rule-unknown-linktype',
    summary: 'Frames of link type 147 (USER0), which the decoder does not know',
    uses: [],
    build: () => unknownLinktype(),
  },
  {
    name: 'rule-tcp-faults',
    summary: 'A TCP retransmission whose octets differ from the first copy, then data after the FIN',
    uses: [],
    build: () => tcpFaults(),
  },
  {
    name: 'rule-tcp-buffer-cap',
    summary: 'Out-of-order data beyond the per-flow reassembly buffer (read with --tcp-buffer-flow 0.001)',
    uses: [],
    build: () => bufferCap(),
  },
  {
    name: 'rule-close-and-restart',
    summary: 'The Initiator sends its MPA Request twice, then closes in the middle of an FPDU',
    uses: [],
    build: () => closeAndRestart(),
  },
  {
    name: 'rule-request-after-reply',
    summary: 'The Initiator sends its MPA Request again after the Reply, where its FPDUs should begin; then its FPDUs',
    uses: [],
    build: () => requestAfterReply(),
  },
];
