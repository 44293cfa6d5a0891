/**
 * Whole MPA connections as pcap bytes: Request, Reply, then FPDUs each way, with markers placed
 * per direction as negotiated (RFC 5044 §7.1.1) and CRC when either side asked for it.
 */
import { encodeFpdus, startupFrame, type FpduSpec, type SenderMistakeSpec, type StartupSpec } from './mpa-encoder.js';
import { buildScenario, type ScenarioOptions, type ScenarioResult, type Send } from './scenario.js';

export interface MpaConnectionSpec {
  request?: Omit<StartupSpec, 'kind'> | null;
  reply?: Omit<StartupSpec, 'kind'> | null;
  /** Initiator (client) to Responder FPDUs, and back. */
  i2r?: FpduSpec[];
  r2i?: FpduSpec[];
  /** Segmentation of each direction's FPDU bytes. */
  cutI2r?: Send['cut'];
  cutR2i?: Send['cut'];
  /** Send the Responder's FPDUs before the Initiator's (rule 4 violation). */
  responderFirst?: boolean;
  /** Put the first FPDU bytes in the same segment as the startup frame. */
  coalesce?: boolean;
  /** Override markers/CRC used by the encoder (to build streams that disagree with negotiation). */
  encodeMarkers?: [boolean, boolean];
  encodeCrc?: boolean;
  /** A sender mistake per direction (Initiator's, Responder's); marker phase by origin name. */
  senderMistake?: [MistakeOption | undefined, MistakeOption | undefined];
  /** Bytes sent in streaming mode before the startup frames (delayed startup). */
  streamingPrefix?: [Uint8Array, Uint8Array];
  scenario?: ScenarioOptions;
}

export type MistakeOption = Omit<SenderMistakeSpec, 'markerOrigin'> & {
  markerOrigin?: 'stream-start' | 'startup-start';
};

export interface MpaConnection extends ScenarioResult {
  /** Absolute SeqStart per direction (client, server). */
  seqStart: [number, number];
  /** Absolute seq of each FPDU's ULPDU_Length field, per direction. */
  fpduSeqs: [number[], number[]];
}

export function buildMpaConnection(s: MpaConnectionSpec): MpaConnection {
  const req = s.request === null ? null : startupFrame({ kind: 'request', ...(s.request ?? {}) });
  const rep = s.reply === null ? null : startupFrame({ kind: 'reply', ...(s.reply ?? {}) });
  const crc = s.encodeCrc ?? !!(s.request?.c || s.reply?.c);
  const mI2r = s.encodeMarkers?.[0] ?? !!s.reply?.m;
  const mR2i = s.encodeMarkers?.[1] ?? !!s.request?.m;
  const pre = s.streamingPrefix ?? [new Uint8Array(0), new Uint8Array(0)];
  const mistake = (dir: 0 | 1): { mistake?: SenderMistakeSpec } => {
    const m = s.senderMistake?.[dir];
    if (!m) return {};
    const startup = (dir === 0 ? req : rep)?.length ?? 0;
    const { markerOrigin, ...rest } = m;
    const origin =
      markerOrigin === 'stream-start'
        ? -(pre[dir].length + startup)
        : markerOrigin === 'startup-start'
          ? -startup
          : undefined;
    return { mistake: { ...rest, ...(origin !== undefined ? { markerOrigin: origin } : {}) } };
  };
  const i2r = encodeFpdus(s.i2r ?? [], { markers: mI2r, crc, ...mistake(0) });
  const r2i = encodeFpdus(s.r2i ?? [], { markers: mR2i, crc, ...mistake(1) });
  const sends: Send[] = [];
  if (pre[0].length) sends.push({ dir: 0, bytes: pre[0] });
  if (pre[1].length) sends.push({ dir: 1, bytes: pre[1] });
  const join = (a: Uint8Array, b: Uint8Array) => {
    const o = new Uint8Array(a.length + b.length);
    o.set(a);
    o.set(b, a.length);
    return o;
  };
  if (s.coalesce) {
    if (req) sends.push({ dir: 0, bytes: req });
    if (rep) sends.push({ dir: 1, bytes: join(rep, r2i.bytes.subarray(0, Math.min(r2i.bytes.length, 64))) });
    if (i2r.bytes.length) sends.push({ dir: 0, bytes: i2r.bytes, ...(s.cutI2r ? { cut: s.cutI2r } : {}) });
    if (r2i.bytes.length > 64)
      sends.push({ dir: 1, bytes: r2i.bytes.subarray(64), ...(s.cutR2i ? { cut: s.cutR2i } : {}) });
  } else {
    if (req) sends.push({ dir: 0, bytes: req });
    if (rep) sends.push({ dir: 1, bytes: rep });
    const a: Send = { dir: 0, bytes: i2r.bytes, ...(s.cutI2r ? { cut: s.cutI2r } : {}) };
    const b: Send = { dir: 1, bytes: r2i.bytes, ...(s.cutR2i ? { cut: s.cutR2i } : {}) };
    for (const x of s.responderFirst ? [b, a] : [a, b]) if (x.bytes.length) sends.push(x);
  }
  const res = buildScenario(sends, s.scenario);
  const ss: [number, number] = [
    (res.dataSeq[0] + pre[0].length + (req?.length ?? 0)) >>> 0,
    (res.dataSeq[1] + pre[1].length + (rep?.length ?? 0)) >>> 0,
  ];
  return {
    ...res,
    seqStart: ss,
    fpduSeqs: [i2r.fpdus.map((f) => (ss[0] + f.lenRel) >>> 0), r2i.fpdus.map((f) => (ss[1] + f.lenRel) >>> 0)],
  };
}
