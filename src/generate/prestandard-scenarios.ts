/**
 * Scenarios of MPA before and beside RFC 5044 (builders in prestandard.ts): MPA enabled without
 * startup frames at the stream's first octet or after a streaming Hello exchange, markers on and
 * off (draft-ietf-rddp-mpa-00 §7.1, draft-elzur-iwarp-mpa-tcp-analysis-00 §8.1); a marker in host
 * byte order; one side not MPA-enabled (the analysis draft's enablement error, §8); and RDMA
 * Consortium (Rev 0) startups with each RFC 5044 Appendix C outcome (Figures 15, 16, 17). The
 * truth is what each builder put on the wire, never read back from the analyzer.
 */
import type { Scenario } from './scenario-table.js';
import type { Generated } from './knob-connection.js';
import {
  buildPrestandardConnection,
  buildRdmacConnection,
  type PrestandardSpec,
  type RdmacSpec,
} from './prestandard.js';
import { encodeFpdus, patternBytes, sendUlpdu, writeUlpdu, type FpduSpec, type StartupSpec } from './mpa-encoder.js';
import { endpoint, sortFindings, type TruthDirection, type TruthFinding } from './truth.js';

const EP = [endpoint('10.0.0.1', 40001), endpoint('10.0.0.2', 4420)] as const;
const f = (rule: string, dir: 0 | 1, seq: number): TruthFinding => ({ rule, from: EP[dir], seq: seq >>> 0 });

/** n Sends of DDP/RDMAP version dv, sizes around and above the 512-octet marker interval. */
const sends = (n: number, size: number, seed: number, dv = 1): FpduSpec[] =>
  Array.from({ length: n }, (_, i) => ({
    ulpdu: sendUlpdu(i + 1, patternBytes(size + ((i * 37) % 300), seed + i), { dv }),
  }));

/** Sends and one Write (the third message), version dv: RDMAC traffic (test/mpa/rdmac.test.ts). */
const traffic = (n: number, dv: number, seed: number): FpduSpec[] =>
  Array.from({ length: n }, (_, i) =>
    i === 2
      ? { ulpdu: writeUlpdu(0x1234, 0, patternBytes(1100, seed + i), { dv }) }
      : {
          ulpdu: sendUlpdu(i < 2 ? i + 1 : i, patternBytes(i === 0 ? 1000 : 200 + ((i * 211) % 1000), seed + i), {
            dv,
          }),
        },
  );

function dir(d: 0 | 1, markers: boolean, fpdus: number, markerCount: number, markerErrors = 0): TruthDirection {
  return { from: EP[d], to: EP[1 - d]!, markers, fpdus, markerCount, crcErrors: 0, markerErrors };
}

/** MPA without startup frames; `extra` adds the findings a fault brings. */
function prestandard(
  s: PrestandardSpec,
  extra: (c: ReturnType<typeof buildPrestandardConnection>) => TruthFinding[] = () => [],
): Generated {
  const c = buildPrestandardConnection({ ...s, scenario: { close: 'none', ...s.scenario } });
  const markers = s.markers ?? [true, true];
  const enabled = ([0, 1] as const).filter((d) => s.notEnabled?.dir !== d);
  const markerErrors = (d: 0 | 1) =>
    (d === 0 ? (s.i2r ?? []) : (s.r2i ?? [])).filter((x) => x.fault?.markerHostOrder || x.fault?.fpduptrHostOrder)
      .length;
  return {
    frames: c.frames,
    findings: sortFindings([...enabled.map((d) => f('mpa.enabled-without-startup', d, c.enableSeq[d])), ...extra(c)]),
    flows: [
      {
        client: EP[0],
        server: EP[1],
        mpa: {
          directions: [0, 1].map((d) =>
            dir(
              d as 0 | 1,
              markers[d]! && s.notEnabled?.dir !== d,
              c.fpduSeqs[d]!.length,
              c.markerCounts[d as 0 | 1],
              markerErrors(d as 0 | 1),
            ),
          ) as [TruthDirection, TruthDirection],
        },
      },
    ],
    args: [],
    fpduSeqs: { [EP[0]]: c.fpduSeqs[0], [EP[1]]: c.fpduSeqs[1] },
  };
}

function marked(fpdus: FpduSpec[], markers: boolean, fpduptrFrom: 'fpdu' | 'length'): number {
  return encodeFpdus(fpdus, { markers, crc: true, fpduptrFrom }).fpdus.reduce((n, x) => n + x.markers, 0);
}

/**
 * An Appendix C startup: the outcome finding (rdmac-interop or rdmac-must-close) on the Reply, from
 * the Responder, as RFC 5044 Appendix C.2 names it once the Reply (or the close after it) is seen.
 */
function rdmac(s: RdmacSpec, outcome: 'mpa.rdmac-interop' | 'mpa.rdmac-must-close' | null): Generated {
  const rule = s.fpduptrFrom ?? ((s.request.rev ?? 1) === 0 || (s.reply.rev ?? 1) === 0 ? 'fpdu' : 'length');
  const i2r = s.i2r ?? [];
  const r2i = s.r2i ?? [];
  // One FPDU per segment, as an RNIC sends them: where Wireshark frames MPA reliably (test/corpus/tshark.test.ts).
  const cut = (x: FpduSpec[], m: boolean) =>
    encodeFpdus(x, { markers: m, crc: true, fpduptrFrom: rule }).fpdus.map((e) => e.endRel - e.startRel);
  const c = buildRdmacConnection({
    cutI2r: cut(i2r, s.markers[0]),
    cutR2i: cut(r2i, s.markers[1]),
    ...s,
    scenario: { close: 'none', ...s.scenario },
  });
  // The Reply is the Responder's first octets.
  const replySeq = c.dataSeq[1];
  const findings = outcome ? [f(outcome, 1, replySeq)] : [];
  if (s.closer !== undefined) {
    // Both sides close after the startup, no FPDU in full operation: a clean close in each direction.
    findings.push(f('mpa.tcp-closed-between', 0, c.seqStart[0]), f('mpa.tcp-closed-between', 1, c.seqStart[1]));
  }
  return {
    frames: c.frames,
    findings: sortFindings(findings),
    flows: [
      {
        client: EP[0],
        server: EP[1],
        mpa: {
          directions: [
            dir(0, s.markers[0], i2r.length, marked(i2r, s.markers[0], rule)),
            dir(1, s.markers[1], r2i.length, marked(r2i, s.markers[1], rule)),
          ],
        },
      },
    ],
    args: [],
    fpduSeqs: { [EP[0]]: c.fpduSeqs[0], [EP[1]]: c.fpduSeqs[1] },
  };
}

const RDMAC: Omit<StartupSpec, 'kind'> = { rev: 0, m: true, c: true };
const HOST_ORDER = 2; // the third Initiator FPDU carries its markers little-endian

function sc(name: string, summary: string, build: () => Generated): Scenario {
  return { name, summary, uses: [], build };
}

export const PRESTANDARD_SCENARIOS: readonly Scenario[] = [
  sc(
    'prestd-first-octet-markers',
    "Pre-standard MPA (draft-00) from the stream's first octet: no startup frames, a zero marker first, markers and CRC both ways",
    () => prestandard({ i2r: sends(10, 800, 1), r2i: sends(8, 600, 40) }),
  ),
  sc('prestd-first-octet-no-markers', "Pre-standard MPA from the stream's first octet, markers off, CRC on", () =>
    prestandard({ markers: [false, false], i2r: sends(10, 300, 1), r2i: sends(8, 500, 20) }),
  ),
  sc(
    'prestd-hello-markers',
    'Pre-standard MPA enabled after a streaming Hello / Hello ACK / ACK exchange (draft-elzur §8.1), markers both ways',
    () => prestandard({ hello: true, i2r: sends(10, 700, 3), r2i: sends(8, 1000, 70) }),
  ),
  sc('prestd-hello-no-markers', 'Pre-standard MPA enabled after a streaming Hello exchange, markers off', () =>
    prestandard({ hello: true, markers: [false, false], i2r: sends(10, 300, 5), r2i: sends(8, 500, 25) }),
  ),
  sc(
    'prestd-marker-byte-order',
    "Pre-standard MPA with markers: one Initiator FPDU's markers sent in host (little-endian) byte order",
    () => {
      const i2r = sends(6, 1000, 9);
      i2r[HOST_ORDER] = { ...i2r[HOST_ORDER]!, fault: { markerHostOrder: true } };
      // The FPDU after it is flagged as following an MPA error on the same half connection (RFC 5044 §8).
      return prestandard({ i2r, r2i: sends(3, 300, 60) }, (c) => [
        f('mpa.marker-byte-order', 0, c.fpduSeqs[0][HOST_ORDER]!),
        f('mpa.after-error', 0, c.fpduSeqs[0][HOST_ORDER + 1]!),
      ]);
    },
  ),
  sc(
    'prestd-enablement-error',
    'The Initiator enables MPA after a Hello exchange; the Responder answers in octet-stream mode (draft-elzur §8, Figure 5)',
    () =>
      prestandard(
        {
          hello: true,
          i2r: sends(6, 400, 11),
          notEnabled: { dir: 1, bytes: new TextEncoder().encode('ERR unknown command\r\n') },
        },
        (c) => [f('mpa.enablement-error', 1, c.enableSeq[1])],
      ),
  ),
  sc(
    'rdmac-fig16-rev0',
    'RFC 5044 Appendix C, Figure 16: RDMAC (Rev 0) Initiator and Responder; DDP/RDMAP version 0, markers and CRC both ways (C.2.4)',
    () =>
      rdmac(
        { request: RDMAC, reply: RDMAC, markers: [true, true], i2r: traffic(6, 0, 1), r2i: traffic(5, 0, 50) },
        'mpa.rdmac-interop',
      ),
  ),
  sc(
    'rdmac-fig16-permissive',
    'RFC 5044 Appendix C, Figure 16: a permissive IETF Initiator (Rev 1, M=0) and an RDMAC Responder (Rev 0); both run version 0 with markers (C.2.3, C.2.5)',
    () =>
      rdmac(
        {
          request: { rev: 1, m: false, c: true },
          reply: RDMAC,
          markers: [true, true],
          i2r: traffic(6, 0, 3),
          r2i: traffic(6, 0, 90),
        },
        'mpa.rdmac-interop',
      ),
  ),
  sc(
    'rdmac-fig15-rdmac-initiator',
    'RFC 5044 Appendix C, Figure 15: an RDMAC Initiator and a non-permissive IETF Responder (Rev 1 Reply), which closes (C.2.1)',
    () =>
      // The Request's M=1 asks the Responder for markers (RFC 5044 §7.1.1): that direction is marked, though no FPDU follows.
      rdmac(
        { request: RDMAC, reply: { rev: 1, m: false, c: true }, markers: [true, true], closer: 1 },
        'mpa.rdmac-must-close',
      ),
  ),
  sc(
    'rdmac-fig15-ietf-initiator',
    "RFC 5044 Appendix C, Figure 15: a non-permissive IETF Initiator (Rev 1) closes after an RDMAC Responder's Rev 0 Reply (C.2.2)",
    () =>
      rdmac(
        { request: { rev: 1, m: true, c: true }, reply: RDMAC, markers: [true, true], closer: 0 },
        'mpa.rdmac-must-close',
      ),
  ),
  sc(
    'rdmac-fig17-ietf',
    'RFC 5044 Appendix C, Figure 17: two IETF RNICs (Rev 1, M=1/0): RFC 5044 markers as negotiated, no Appendix C outcome',
    () =>
      rdmac(
        {
          request: { rev: 1, m: true, c: true },
          reply: { rev: 1, m: false, c: true },
          markers: [false, true],
          i2r: traffic(6, 1, 7),
          r2i: traffic(5, 1, 8),
        },
        null,
      ),
  ),
];

/**
 * What OSC iWarp (a real draft-00 stack, ../shared/captures/real/osc-iwarp) does wrong, at other
 * sizes and places than in its capture. Its own table, registered after the others: the round
 * trip's settings of the scenarios before it stay as they were.
 */
export const PRESTANDARD_LATE_SCENARIOS: readonly Scenario[] = [
  sc(
    'prestd-fpduptr-host-order',
    "Pre-standard MPA with markers: one Initiator FPDU's markers carry FPDUPTR alone in host (little-endian) byte order, Reserved zero (a marker built as two 16-bit host-order fields)",
    () => {
      const i2r = sends(6, 1000, 13);
      i2r[HOST_ORDER] = { ...i2r[HOST_ORDER]!, fault: { fpduptrHostOrder: true } };
      return prestandard({ i2r, r2i: sends(3, 300, 64) }, (c) => [
        f('mpa.marker-byte-order', 0, c.fpduSeqs[0][HOST_ORDER]!),
        f('mpa.after-error', 0, c.fpduSeqs[0][HOST_ORDER + 1]!),
      ]);
    },
  ),
  sc(
    'prestd-markers-stop',
    'Pre-standard MPA with markers and CRC: the Initiator stops inserting markers in its last FPDU (draft-00 section 7.1 wants one every 512 octets); a receiver loses framing there, the FPDU frames by its length without them',
    () => {
      const i2r = sends(4, 1100, 17);
      const last = i2r.length - 1;
      i2r[last] = { ...i2r[last]!, fault: { noMarkers: true } };
      return prestandard({ i2r, r2i: sends(3, 300, 66) }, (c) => [
        f('mpa.framing-lost', 0, c.fpduSeqs[0][last]!),
        f('mpa.markers-missing', 0, c.fpduSeqs[0][last]!),
      ]);
    },
  ),
];
