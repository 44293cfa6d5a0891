/**
 * A small connection built to show chosen rules: startup frames as given, then each direction's
 * ULPDUs as FPDUs (one per TCP segment unless told), and the findings the case expects, named by
 * where they are (the Request, the Reply, FPDU k of a direction, the end of a direction). The
 * truth is what the case's author built in, never read back from the analyzer.
 */
import { buildMpaConnection, type MpaConnectionSpec } from './mpa-connection.js';
import { encodeFpdus, type FpduSpec } from './mpa-encoder.js';
import type { Generated } from './knob-connection.js';
import { endpoint, sortFindings, type TruthDirection, type TruthFinding } from './truth.js';

/** Where a finding is: a startup frame, FPDU k of the direction, the octet after the last, or no seq. */
export type At = 'request' | 'reply' | 'startup' | number | 'end' | 'none' | 'seqstart' | { seq: number };

export interface ExpectedFinding {
  rule: string;
  /** 0: Initiator's direction, 1: Responder's, null: no flow. */
  dir: 0 | 1 | null;
  at: At;
}

export interface RuleCase {
  spec: MpaConnectionSpec;
  expect: ExpectedFinding[];
  /** Per-direction counts when they differ from what was encoded (e.g. FPDUs never framed). */
  dirs?: [Partial<TruthDirection>?, Partial<TruthDirection>?];
  /** No MPA flow at all in the report. */
  noMpa?: boolean;
  args?: string[];
}

const CLIENT = { addr: '10.0.0.1', port: 40001 };
const SERVER = { addr: '10.0.0.2', port: 4420 };

/** One FPDU per segment: the cut sizes of an encoded direction. */
export function fpduCuts(fpdus: readonly FpduSpec[], markers: boolean, crc: boolean): number[] {
  return encodeFpdus(fpdus, { markers, crc }).fpdus.map((f) => f.endRel - f.startRel);
}

export function buildRuleCase(c: RuleCase): Generated {
  const s = c.spec;
  const crc = s.encodeCrc ?? !!(s.request?.c || s.reply?.c);
  const mI2r = s.encodeMarkers?.[0] ?? !!s.reply?.m;
  const mR2i = s.encodeMarkers?.[1] ?? !!s.request?.m;
  const spec: MpaConnectionSpec = {
    ...s,
    ...(s.cutI2r === undefined && s.i2r ? { cutI2r: fpduCuts(s.i2r, mI2r, crc) } : {}),
    ...(s.cutR2i === undefined && s.r2i ? { cutR2i: fpduCuts(s.r2i, mR2i, crc) } : {}),
    scenario: { client: CLIENT, server: SERVER, close: 'none', ...s.scenario },
  };
  const conn = buildMpaConnection(spec);
  const enc = [
    encodeFpdus(s.i2r ?? [], { markers: mI2r, crc }),
    encodeFpdus(s.r2i ?? [], { markers: mR2i, crc }),
  ] as const;
  const ep = [endpoint(CLIENT.addr, CLIENT.port), endpoint(SERVER.addr, SERVER.port)] as const;
  const seqAt = (dir: 0 | 1 | null, at: At): number | null => {
    if (typeof at === 'object') return at.seq >>> 0;
    if (at === 'none' || dir === null) return null;
    if (at === 'request' || at === 'reply' || at === 'startup')
      return conn.dataSeq[dir] + (s.streamingPrefix?.[dir].length ?? 0);
    if (at === 'seqstart') return conn.seqStart[dir];
    if (at === 'end') return (conn.seqStart[dir] + enc[dir].bytes.length) >>> 0;
    return conn.fpduSeqs[dir][at]!;
  };
  const findings: TruthFinding[] = c.expect.map((e) => ({
    rule: e.rule,
    from: e.dir === null ? null : ep[e.dir],
    seq: seqAt(e.dir, e.at),
  }));
  const dir = (d: 0 | 1): TruthDirection => ({
    from: ep[d],
    to: ep[1 - d]!,
    markers: d === 0 ? mI2r : mR2i,
    fpdus: enc[d].fpdus.length,
    markerCount: enc[d].fpdus.reduce((n, f) => n + f.markers, 0),
    crcErrors: c.expect.filter((e) => e.dir === d && (e.rule === 'mpa.crc-mismatch' || e.rule === 'mpa.crc-byte-order'))
      .length,
    markerErrors: c.expect.filter((e) => e.dir === d && e.rule === 'mpa.fpduptr-mismatch').length,
    ...c.dirs?.[d],
  });
  return {
    frames: conn.frames,
    findings: sortFindings(findings),
    flows: [{ client: ep[0], server: ep[1], mpa: c.noMpa ? null : { directions: [dir(0), dir(1)] } }],
    args: c.args ?? [],
  };
}
