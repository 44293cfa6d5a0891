/**
 * MPA startup negotiation: what one startup frame breaks on its own, what a Request and a Reply
 * agree on together (markers per direction, CRC, the FPDUPTR rule, RFC 6581's enhanced block), and
 * which RFC 5044 Appendix C outcome a Rev 0 (RDMA Consortium) peer leads to. Pure functions over the
 * two startup records; MpaFlow pairs the frames and applies the result.
 */
import type { FramerParams } from './framer.js';
import { MAX_PD_LENGTH, isKnownRev, type StartupRecord } from './startup.js';

/** Reports one finding on the direction that sent `rec` (MpaFlow.find, without the flow plumbing). */
export type StartupReport = (rec: StartupRecord, rule: string, seq: number, frames: readonly number[], message: string) => void;

function frameName(rec: StartupRecord): string {
  return rec.kind === 'request' ? 'Request' : 'Reply';
}

/** Checks of one startup frame on its own (RFC 5044 §7.1.1, RFC 6581 §3, draft-00 §8.1.1 for Rev 0). */
export function checkStartupFrame(rec: StartupRecord, report: StartupReport): void {
  const what = frameName(rec);
  const { seq, frames } = rec;
  if (!rec.keyOk) {
    report(rec, 'mpa.bad-key', seq, frames, `MPA ${what} expected but the key is not "${rec.kind === 'request' ? 'MPA ID Req Frame' : 'MPA ID Rep Frame'}"`);
  }
  if (!isKnownRev(rec.rev)) {
    report(rec, 'mpa.unsupported-rev', seq, frames, `${what} Rev ${rec.rev}${rec.rev === 0x81 ? ' (Alibaba erdma extension)' : ''} is not 0, 1 or 2`);
  }
  // Rev 0 (draft-00 §8.1.1) allows Private Data up to 65535 octets.
  if (rec.rev !== 0 && rec.pdLength > MAX_PD_LENGTH) {
    report(rec, 'mpa.pd-length-too-long', seq, frames, `${what} PD_Length ${rec.pdLength} exceeds 512`);
  }
  if (rec.res !== 0) {
    report(rec, 'mpa.reserved-flags', seq, frames, `${what} reserved flag bits 0x${rec.res.toString(16).padStart(2, '0')} set${rec.vendor.length ? ` (${rec.vendor.filter((v) => v.startsWith('reserved')).join('; ')})` : ''}`);
  }
  if (rec.enhanced && rec.pdLength < 4) {
    report(rec, 'mpa.v2-pd-too-short', seq, frames, `${what} sets the enhanced bit but PD_Length is ${rec.pdLength} (< 4)`);
  }
}

/** RFC 6581 §3: a Rev 2 enhanced Request and the Reply that answers it. */
export function checkEnhanced(req: StartupRecord, rep: StartupRecord, report: StartupReport): void {
  const frames = [...req.frames, ...rep.frames];
  if (req.rev !== 2 || !req.enhanced) return;
  const v2 = rep.rev === 2 && rep.enhanced;
  const fallback = rep.rev === 1 && !rep.enhanced;
  // A Rev 0 Reply is the RDMA Consortium answer (Appendix C), judged there.
  if (!v2 && !fallback && rep.rev !== 0) {
    report(rep, 'mpa.v2-fallback-invalid', rep.seq, frames, `Rev 2 enhanced Request answered by a Rev ${rep.rev} Reply ${rep.enhanced ? 'with' : 'without'} the enhanced bit`);
  }
  const qb = req.enhancedBlock;
  const pb = rep.enhancedBlock;
  if (!v2 || !qb || !pb || rep.r) return;
  if (qb.p2p && !pb.p2p) report(rep, 'mpa.v2-p2p-not-echoed', rep.seq, frames, `Request sets peer-to-peer (A) but the Reply does not echo it`);
  if (qb.p2p && pb.p2p) {
    const chosen = (['send', 'write', 'read'] as const).filter((k) => pb.rtr[k]);
    const bad = chosen.filter((k) => !qb.rtr[k]);
    if (bad.length > 0 || chosen.length > 1) {
      const offered = (['send', 'write', 'read'] as const).filter((k) => qb.rtr[k]);
      report(rep, 'mpa.v2-rtr-not-offered', rep.seq, frames,
        `Reply chose RTR ${chosen.join('+') || 'none'}; the Request offered ${offered.join('+') || 'none'}${chosen.length > 1 ? ' (a Reply must choose exactly one)' : ''}`);
    }
  }
}

// ---------------------------------------------------------------- RFC 5044 Appendix C

/**
 * The Appendix C outcome of a startup in which a Rev 0 frame took part (report-schema addition
 * `Flow.mpa.rdmac`). `markers` is the negotiated receive Marker state X/Y of the Initiator and the
 * Responder, as the figures write it.
 */
export interface RdmacInterop {
  /** Figure 15 (RDMAC and a non-permissive IETF RNIC) or 16 (RDMAC and a permissive one). */
  figure: 15 | 16;
  initiator: 'rdmac' | 'ietf-permissive' | 'ietf-non-permissive' | 'ietf';
  responder: 'rdmac' | 'rdmac-or-ietf-permissive' | 'ietf-non-permissive';
  /** DDP/RDMAP version the outcome runs (null: the connection must close). */
  version: 0 | null;
  /** "1/1": Initiator receives markers / Responder receives markers (null when it must close). */
  markers: string | null;
  /** The combination cannot interoperate: the IETF RNIC must close the connection. */
  mustClose: boolean;
  /** Still open while the Initiator's answer to a Rev 0 Reply has not been seen. */
  decided: boolean;
}

/**
 * Classifies a Request/Reply pair with a Rev 0 frame (null when neither is Rev 0: both IETF RNICs,
 * Figure 17, nothing to say). `initiatorFpdus` tells a permissive Initiator (it goes on in full
 * operation) from a non-permissive one (it closes); `ended` says no more will come.
 * The Reply's Rev tells the Responder's kind: a permissive IETF Responder to an RDMAC Request replies
 * Rev 0 with M=1 and is then indistinguishable from an RDMAC one.
 */
export function classifyRdmac(req: StartupRecord, rep: StartupRecord, initiatorFpdus: boolean, ended: boolean): RdmacInterop | null {
  // Only combinations with an RDMAC RNIC, as Figure 14 describes it (Rev 0, M=1), are Appendix C's;
  // a Rev 0 frame with M=0 is a draft-00 peer that honours M bits like any other.
  if (!isRdmac(req) && !isRdmac(rep)) return null;
  if (req.rev === 0 && rep.rev === 0) {
    // C.2.4 / Figure 15 and 16, RDMAC row and column: an RDMAC or permissive Responder answers Rev 0, M=1.
    return { figure: 16, initiator: 'rdmac', responder: 'rdmac-or-ietf-permissive', version: 0, markers: '1/1', mustClose: false, decided: true };
  }
  if (req.rev === 0) {
    // C.2.1: a non-permissive IETF Responder cannot downgrade: it replies Rev 1 and closes.
    return { figure: 15, initiator: 'rdmac', responder: 'ietf-non-permissive', version: null, markers: null, mustClose: true, decided: true };
  }
  // C.2.2 / C.2.5: Rev 1 (or 2) Request, Rev 0 Reply from an RDMAC Responder. A permissive Initiator
  // goes to version 0 with markers both ways; a non-permissive one closes.
  if (initiatorFpdus) {
    return { figure: 16, initiator: 'ietf-permissive', responder: 'rdmac', version: 0, markers: '1/1', mustClose: false, decided: true };
  }
  return { figure: 15, initiator: ended ? 'ietf-non-permissive' : 'ietf', responder: 'rdmac', version: null, markers: null, mustClose: ended, decided: ended };
}

/** The outcome in words, for the findings. */
export function describeRdmac(x: RdmacInterop, req: StartupRecord, rep: StartupRecord): string {
  const pair = `Rev ${req.rev} Request (M=${+req.m}) answered by a Rev ${rep.rev} Reply (M=${+rep.m})`;
  if (x.mustClose) {
    return x.initiator === 'rdmac'
      ? `${pair}: an RDMAC Initiator and a non-permissive IETF Responder cannot interoperate; the Responder must close the connection (RFC 5044 Appendix C.2.1, Figure 15)`
      : `${pair}: the Initiator is a non-permissive IETF RNIC facing an RDMAC Responder and must close the connection (RFC 5044 Appendix C.2.2, Figure 15)`;
  }
  const who = x.initiator === 'rdmac' ? 'RDMAC Initiator with an RDMAC or permissive IETF Responder (Appendix C.2.4)' : 'permissive IETF Initiator with an RDMAC Responder (Appendix C.2.5)';
  return `${pair}: ${who}; DDP/RDMAP version 0, markers both ways (M=1/1) and CRC (Figure 16)`;
}

/**
 * Negotiated framing of the direction whose sender sent `own` (RFC 5044 §7.1.1): the peer's M bit
 * asks for its markers, CRC when either side asked. Appendix C: an RDMAC sender (its own frame Rev 0)
 * always sends markers and CRC (Figure 14), whatever the peer's M bit, and a permissive IETF RNIC
 * facing it adjusts its receive Marker state to that (C.2.3). Senders of version 0 count FPDUPTR
 * from the FPDU's first octet, as draft-ietf-rddp-mpa-00 §7.1 (the Rev 0 specification) does.
 */
export function negotiatedParams(own: StartupRecord, peer: StartupRecord, markerBase: number): FramerParams {
  const rdmacSender = isRdmac(own);
  // A Rev 1/2 Initiator that goes on after a Rev 0 Reply speaks version 0 (permissive, C.2.5); a
  // Rev 1/2 Responder to a Rev 0 Request is non-permissive (a permissive one replies Rev 0).
  const versionZero = own.rev === 0 || (peer.rev === 0 && own.kind === 'request');
  const params: FramerParams = { markers: rdmacSender || peer.m, markerBase, crc: negotiatedCrc(own, peer) };
  if (versionZero) params.fpduptrFrom = 'fpdu';
  return params;
}

/**
 * CRC in use (RFC 5044 §7.1.1: when either frame sets C). An RDMAC RNIC always generates and checks
 * CRCs (Appendix C.1, Figure 14), so its frame implies CRC even with C clear.
 */
export function negotiatedCrc(a: StartupRecord, b: StartupRecord): boolean {
  return a.c || b.c || isRdmac(a) || isRdmac(b);
}

/**
 * An RDMAC RNIC's frame as Figure 14 describes it: Rev 0 with M=1 (it always asks for markers and
 * always sends them; its ULP sets M and C, C.2.1 and C.2.4).
 */
export function isRdmac(rec: StartupRecord): boolean {
  return rec.rev === 0 && rec.m;
}
