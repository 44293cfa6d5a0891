/**
 * MPA as stacks sent it before and beside RFC 5044, as real pcap files: MPA enabled without startup
 * frames (at the stream's first octet, or after a streaming-mode Hello / Hello ACK / ACK exchange,
 * draft-elzur-iwarp-mpa-tcp-analysis-00 §8.1), beginning with a zero marker when markers are on and
 * counting FPDUPTR from the FPDU's first octet (draft-ietf-rddp-mpa-00 §7.1); one side not MPA-enabled
 * (the analysis draft's enablement error); and RDMA Consortium (Rev 0) startups with what each
 * RFC 5044 Appendix C outcome puts on the wire.
 */
import { encodeFpdus, startupFrame, type FpduSpec, type StartupSpec } from './mpa-encoder.js';
import { buildScenario, type ScenarioOptions, type ScenarioResult, type Send } from './scenario.js';

/** The ULP's streaming-mode negotiation (seed 002 §8.1: "MPA Hello", "MPA Hello ACK", "MPA ACK"). */
export const HELLO = Uint8Array.from(Buffer.from('ULP MPA-HELLO v1\r\n', 'latin1'));
export const HELLO_ACK = Uint8Array.from(Buffer.from('ULP MPA-HELLO-ACK v1\r\n', 'latin1'));
export const HELLO_FINAL_ACK = Uint8Array.from(Buffer.from('ULP MPA-ACK\r\n', 'latin1'));

export interface PrestandardSpec {
  /** A streaming-mode Hello (client), Hello ACK (server), ACK (client) before MPA; else MPA from the first octet. */
  hello?: boolean;
  /** Markers each side sends (client to server, server to client); default both. */
  markers?: [boolean, boolean];
  /** CRC (default on). */
  crc?: boolean;
  /** FPDUPTR rule the senders follow (default draft-00's, from the FPDU's first octet). */
  fpduptrFrom?: 'fpdu' | 'length';
  i2r?: FpduSpec[];
  r2i?: FpduSpec[];
  cutI2r?: Send['cut'];
  cutR2i?: Send['cut'];
  /** This side is not MPA-enabled: it sends these octets (streaming mode) instead of FPDUs. */
  notEnabled?: { dir: 0 | 1; bytes: Uint8Array };
  scenario?: ScenarioOptions;
}

export interface PrestandardConnection extends ScenarioResult {
  /** Absolute seq where each side enabled MPA (its zero marker, or its first ULPDU_Length without markers). */
  enableSeq: [number, number];
  /** Absolute seq of each FPDU's ULPDU_Length field, per direction. */
  fpduSeqs: [number[], number[]];
  /** Markers each direction carries. */
  markerCounts: [number, number];
}

export function buildPrestandardConnection(s: PrestandardSpec): PrestandardConnection {
  const markers = s.markers ?? [true, true];
  const crc = s.crc ?? true;
  const rule = s.fpduptrFrom ?? 'fpdu';
  const enc = [
    encodeFpdus(s.i2r ?? [], { markers: markers[0], crc, fpduptrFrom: rule }),
    encodeFpdus(s.r2i ?? [], { markers: markers[1], crc, fpduptrFrom: rule }),
  ] as const;
  const sends: Send[] = [];
  const pre: [number, number] = [0, 0];
  if (s.hello) {
    sends.push({ dir: 0, bytes: HELLO }, { dir: 1, bytes: HELLO_ACK }, { dir: 0, bytes: HELLO_FINAL_ACK });
    pre[0] = HELLO.length + HELLO_FINAL_ACK.length;
    pre[1] = HELLO_ACK.length;
  }
  const body = (dir: 0 | 1): Send | null => {
    if (s.notEnabled?.dir === dir) return { dir, bytes: s.notEnabled.bytes };
    const b = enc[dir].bytes;
    if (b.length === 0) return null;
    const cut = dir === 0 ? s.cutI2r : s.cutR2i;
    return { dir, bytes: b, ...(cut ? { cut } : {}) };
  };
  for (const dir of [0, 1] as const) {
    const x = body(dir);
    if (x) sends.push(x);
  }
  const res = buildScenario(sends, s.scenario);
  const en: [number, number] = [(res.dataSeq[0] + pre[0]) >>> 0, (res.dataSeq[1] + pre[1]) >>> 0];
  const seqs = (dir: 0 | 1) => (s.notEnabled?.dir === dir ? [] : enc[dir].fpdus.map((f) => (en[dir] + f.lenRel) >>> 0));
  const count = (dir: 0 | 1) => (s.notEnabled?.dir === dir ? 0 : enc[dir].fpdus.reduce((n, f) => n + f.markers, 0));
  return { ...res, enableSeq: en, fpduSeqs: [seqs(0), seqs(1)], markerCounts: [count(0), count(1)] };
}

// ---------------------------------------------------------------- RFC 5044 Appendix C

export interface RdmacSpec {
  request: Omit<StartupSpec, 'kind'>;
  reply: Omit<StartupSpec, 'kind'>;
  /**
   * What each side really sends after the startup: markers (an RDMAC RNIC always sends them, a
   * permissive IETF RNIC facing one too) and the FPDUPTR rule (default draft-00's when either frame is Rev 0).
   */
  markers: [boolean, boolean];
  fpduptrFrom?: 'fpdu' | 'length';
  i2r?: FpduSpec[];
  r2i?: FpduSpec[];
  cutI2r?: Send['cut'];
  cutR2i?: Send['cut'];
  /** Who closes after the startup (the IETF side of a combination that must close), else both at the end. */
  closer?: 0 | 1;
  scenario?: ScenarioOptions;
}

export interface RdmacConnection extends ScenarioResult {
  seqStart: [number, number];
  fpduSeqs: [number[], number[]];
}

export function buildRdmacConnection(s: RdmacSpec): RdmacConnection {
  const req = startupFrame({ kind: 'request', ...s.request });
  const rep = startupFrame({ kind: 'reply', ...s.reply });
  // Appendix C.1: an RDMAC RNIC always requests CRC, so both sides generate it.
  const crc = !!(s.request.c || s.reply.c);
  const rule = s.fpduptrFrom ?? ((s.request.rev ?? 1) === 0 || (s.reply.rev ?? 1) === 0 ? 'fpdu' : 'length');
  const i2r = encodeFpdus(s.i2r ?? [], { markers: s.markers[0], crc, fpduptrFrom: rule });
  const r2i = encodeFpdus(s.r2i ?? [], { markers: s.markers[1], crc, fpduptrFrom: rule });
  const sends: Send[] = [
    { dir: 0, bytes: req },
    { dir: 1, bytes: rep },
  ];
  if (i2r.bytes.length) sends.push({ dir: 0, bytes: i2r.bytes, ...(s.cutI2r ? { cut: s.cutI2r } : {}) });
  if (r2i.bytes.length) sends.push({ dir: 1, bytes: r2i.bytes, ...(s.cutR2i ? { cut: s.cutR2i } : {}) });
  const scenario: ScenarioOptions =
    s.closer !== undefined
      ? {
          ...s.scenario,
          closing: [
            { dir: s.closer, flag: 'fin' },
            { dir: (1 - s.closer) as 0 | 1, flag: 'fin' },
          ],
        }
      : { ...s.scenario };
  const res = buildScenario(sends, scenario);
  const ss: [number, number] = [(res.dataSeq[0] + req.length) >>> 0, (res.dataSeq[1] + rep.length) >>> 0];
  return {
    ...res,
    seqStart: ss,
    fpduSeqs: [i2r.fpdus.map((f) => (ss[0] + f.lenRel) >>> 0), r2i.fpdus.map((f) => (ss[1] + f.lenRel) >>> 0)],
  };
}
