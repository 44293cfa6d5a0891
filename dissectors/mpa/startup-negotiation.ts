/**
 * MPA startup negotiation: what one startup frame breaks on its own, what a Request and a Reply
 * agree on together (markers per direction, CRC, the FPDUPTR rule, RFC 6581's enhanced block), and
 * which RFC 5044 Appendix C outcome a Rev 0 (RDMA Consortium) peer leads to: pure functions over the
 * two startup records, and StartupNegotiation, which collects and pairs one connection's frames for
 * the flow (NegotiationHost).
 */
import type { FlowHandle } from '../../src/tcp/stream.js';
import type { FramerParams } from './framer.js';
import type { MpaDirection } from './mpa-direction.js';
import type { MpaFlowSummary, RdmacInterop } from './mpa-types.js';
import { portOf } from '../../src/net/segment.js';
import {
  MAX_PD_LENGTH,
  STARTUP_HEADER_LEN,
  isKnownRev,
  parseEnhancedBlock,
  parseStartupHeader,
  vendorLabels,
  type StartupRecord,
} from './startup.js';

/** Reports one finding on the direction that sent `rec` (MpaFlow.find, without the flow plumbing). */
export type StartupReport = (
  rec: StartupRecord,
  rule: string,
  seq: number,
  frames: readonly number[],
  message: string,
) => void;

function frameName(rec: StartupRecord): string {
  return rec.kind === 'request' ? 'Request' : 'Reply';
}

/** Checks of one startup frame on its own (RFC 5044 §7.1.1, RFC 6581 §3, draft-00 §8.1.1 for Rev 0). */
export function checkStartupFrame(rec: StartupRecord, report: StartupReport): void {
  const what = frameName(rec);
  const { seq, frames } = rec;
  if (!rec.keyOk) {
    report(
      rec,
      'mpa.bad-key',
      seq,
      frames,
      `MPA ${what} expected but the key is not "${rec.kind === 'request' ? 'MPA ID Req Frame' : 'MPA ID Rep Frame'}"`,
    );
  }
  if (!isKnownRev(rec.rev)) {
    report(
      rec,
      'mpa.unsupported-rev',
      seq,
      frames,
      `${what} Rev ${rec.rev}${rec.rev === 0x81 ? ' (Alibaba erdma extension)' : ''} is not 0, 1 or 2`,
    );
  }
  // Rev 0 (draft-00 §8.1.1) allows Private Data up to 65535 octets.
  if (rec.rev !== 0 && rec.pdLength > MAX_PD_LENGTH) {
    report(rec, 'mpa.pd-length-too-long', seq, frames, `${what} PD_Length ${rec.pdLength} exceeds 512`);
  }
  if (rec.res !== 0) {
    report(
      rec,
      'mpa.reserved-flags',
      seq,
      frames,
      `${what} reserved flag bits 0x${rec.res.toString(16).padStart(2, '0')} set${rec.vendor.length ? ` (${rec.vendor.filter((v) => v.startsWith('reserved')).join('; ')})` : ''}`,
    );
  }
  if (rec.enhanced && rec.pdLength < 4) {
    report(
      rec,
      'mpa.v2-pd-too-short',
      seq,
      frames,
      `${what} sets the enhanced bit but PD_Length is ${rec.pdLength} (< 4)`,
    );
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
    report(
      rep,
      'mpa.v2-fallback-invalid',
      rep.seq,
      frames,
      `Rev 2 enhanced Request answered by a Rev ${rep.rev} Reply ${rep.enhanced ? 'with' : 'without'} the enhanced bit`,
    );
  }
  const qb = req.enhancedBlock;
  const pb = rep.enhancedBlock;
  if (!v2 || !qb || !pb || rep.r) return;
  if (qb.p2p && !pb.p2p)
    report(
      rep,
      'mpa.v2-p2p-not-echoed',
      rep.seq,
      frames,
      `Request sets peer-to-peer (A) but the Reply does not echo it`,
    );
  if (qb.p2p && pb.p2p) {
    const chosen = (['send', 'write', 'read'] as const).filter((k) => pb.rtr[k]);
    const bad = chosen.filter((k) => !qb.rtr[k]);
    if (bad.length > 0 || chosen.length > 1) {
      const offered = (['send', 'write', 'read'] as const).filter((k) => qb.rtr[k]);
      report(
        rep,
        'mpa.v2-rtr-not-offered',
        rep.seq,
        frames,
        `Reply chose RTR ${chosen.join('+') || 'none'}; the Request offered ${offered.join('+') || 'none'}${chosen.length > 1 ? ' (a Reply must choose exactly one)' : ''}`,
      );
    }
  }
}

// ---------------------------------------------------------------- RFC 5044 Appendix C

/**
 * Classifies a Request/Reply pair with a Rev 0 frame (null when neither is Rev 0: both IETF RNICs,
 * Figure 17, nothing to say). `initiatorFpdus` tells a permissive Initiator (it goes on in full
 * operation) from a non-permissive one (it closes: `closed`, the Initiator ended the connection with
 * no FPDU; a capture that just stops leaves it undecided).
 * The Reply's Rev tells the Responder's kind: a permissive IETF Responder to an RDMAC Request replies
 * Rev 0 with M=1 and is then indistinguishable from an RDMAC one.
 */
export function classifyRdmac(
  req: StartupRecord,
  rep: StartupRecord,
  initiatorFpdus: boolean,
  closed: boolean,
): RdmacInterop | null {
  // Only combinations with an RDMAC RNIC, as Figure 14 describes it (Rev 0, M=1), are Appendix C's;
  // a Rev 0 frame with M=0 is a draft-00 peer that honours M bits like any other.
  if (!isRdmac(req) && !isRdmac(rep)) return null;
  if (req.rev === 0 && rep.rev === 0) {
    // C.2.4 / Figure 15 and 16, RDMAC row and column: an RDMAC or permissive Responder answers Rev 0, M=1.
    return {
      figure: 16,
      initiator: 'rdmac',
      responder: 'rdmac-or-ietf-permissive',
      version: 0,
      markers: '1/1',
      mustClose: false,
      decided: true,
    };
  }
  if (req.rev === 0) {
    // C.2.1: a non-permissive IETF Responder cannot downgrade: it replies Rev 1 and closes.
    return {
      figure: 15,
      initiator: 'rdmac',
      responder: 'ietf-non-permissive',
      version: null,
      markers: null,
      mustClose: true,
      decided: true,
    };
  }
  // C.2.2 / C.2.5: Rev 1 (or 2) Request, Rev 0 Reply from an RDMAC Responder. A permissive Initiator
  // goes to version 0 with markers both ways; a non-permissive one closes.
  if (initiatorFpdus) {
    return {
      figure: 16,
      initiator: 'ietf-permissive',
      responder: 'rdmac',
      version: 0,
      markers: '1/1',
      mustClose: false,
      decided: true,
    };
  }
  return {
    figure: closed ? 15 : null,
    initiator: closed ? 'ietf-non-permissive' : 'ietf',
    responder: 'rdmac',
    version: null,
    markers: null,
    mustClose: closed,
    decided: closed,
  };
}

/** The outcome in words, for the findings. */
export function describeRdmac(x: RdmacInterop, req: StartupRecord, rep: StartupRecord): string {
  const pair = `Rev ${req.rev} Request (M=${+req.m}) answered by a Rev ${rep.rev} Reply (M=${+rep.m})`;
  if (x.mustClose) {
    return x.initiator === 'rdmac'
      ? `${pair}: an RDMAC Initiator and a non-permissive IETF Responder cannot interoperate; the Responder must close the connection (RFC 5044 Appendix C.2.1, Figure 15)`
      : `${pair}: the Initiator is a non-permissive IETF RNIC facing an RDMAC Responder and must close the connection (RFC 5044 Appendix C.2.2, Figure 15)`;
  }
  const who =
    x.initiator === 'rdmac'
      ? 'RDMAC Initiator with an RDMAC or permissive IETF Responder (Appendix C.2.4)'
      : 'permissive IETF Initiator with an RDMAC Responder (Appendix C.2.5)';
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
  const markers = rdmacSender || peer.m;
  const crc = negotiatedCrc(own, peer);
  // One object per distinct value for the usual SeqStart offsets (a startup frame and its Private
  // Data at the start of the stream): every open flow's directions keep their parameters, and the
  // connections of a capture mostly negotiate alike. Shared, so never changed: code that needs other
  // parameters makes a copy ({ ...params, ... }).
  const key =
    markerBase >= 0 && markerBase < SHARED_BASE_LIMIT && Number.isInteger(markerBase)
      ? markerBase * 8 + (markers ? 4 : 0) + (crc ? 2 : 0) + (versionZero ? 1 : 0)
      : -1;
  const have = key >= 0 ? sharedParams.get(key) : undefined;
  if (have) return have;
  const params: FramerParams = { markers, markerBase, crc };
  if (versionZero) params.fpduptrFrom = 'fpdu';
  if (key >= 0) sharedParams.set(key, params);
  return params;
}

/** SeqStart offsets below this share their parameter objects (a startup frame is at most 20 + 65535 octets; most are 20 + a few). */
const SHARED_BASE_LIMIT = 1024;
const sharedParams = new Map<number, FramerParams>();

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

/** Private Data of every startup frame without any (zero octets: nothing to share by mistake). */
const NO_PRIVATE_DATA = new Uint8Array(0);

// ---------------------------------------------------------------- the negotiation of one connection

/** What the negotiation needs of the flow it belongs to (MpaFlow). */
export interface NegotiationHost {
  readonly handle: FlowHandle;
  detection: MpaFlowSummary['detection'] | null;
  crc: boolean | null;
  direction(dir: 0 | 1): MpaDirection;
  find(d: MpaDirection, rule: string, seq: number | null, frames: readonly number[], message: string): void;
  emitStartup(rec: StartupRecord): void;
  /** Both frames are known: a direction waiting in 'await' can frame. */
  resolveAwait(d: MpaDirection, final: boolean): void;
}

/**
 * The startup of one connection (RFC 5044 §7.1; RFC 6581; Appendix C for Rev 0): collects each
 * direction's startup frame from its held octets, pairs Request and Reply, checks the startup rules,
 * and answers what each direction negotiated. Created with the first key seen on a connection.
 */
export class StartupNegotiation {
  request: StartupRecord | null = null;
  reply: StartupRecord | null = null;
  /**
   * The Responder's Request when both ends sent one (MPA error 4): no Reply will come, but its M and
   * C bits still say what its sender requires of the octets it receives (RFC 5044 §7.1.1), so each
   * direction frames as the two frames ask, as it would have after a Reply.
   */
  private secondRequest: StartupRecord | null = null;
  rejected = false;
  /** RFC 5044 Appendix C outcome when an RDMAC RNIC took part. */
  rdmac: RdmacInterop | null = null;
  private responderFirstChecked = false;
  /** The Initiator's direction ended with a FIN or RST (not with the capture). */
  initiatorClosed = false;

  constructor(private readonly host: NegotiationHost) {}

  step(d: MpaDirection, final: boolean): void {
    const b = d.log.bytes;
    const at = d.startupOffset;
    if (b.length < STARTUP_HEADER_LEN) {
      if (final) this.startupCut(d, null);
      return;
    }
    const expected = this.request && this.request.dir !== d.dir ? 'reply' : 'request';
    const h = parseStartupHeader(b, 0, expected);
    if (!h.keyOk && !this.keyPlausible(d, at)) {
      // "MPA ID " in the middle of other data: not a startup frame; keep scanning after it.
      d.state = 'scan';
      d.log.dropBefore(at + 1);
      return;
    }
    const total = STARTUP_HEADER_LEN + h.pdLength;
    if (b.length < total) {
      if (final) this.startupCut(d, h.pdLength);
      return;
    }
    // Kept with the flow until its end: the record owns exactly what it needs (no empty buffer of
    // its own for absent Private Data, no spare room in the frames array).
    const pd = total === STARTUP_HEADER_LEN ? NO_PRIVATE_DATA : b.slice(STARTUP_HEADER_LEN, total);
    const frames = d.log.framesIn(at, at + total).slice();
    // Fields listed one by one, not spread: every record then shares one hidden class (a spread gave
    // each its own, and 10,000 flows spent more time on descriptor arrays than on the frames).
    const rec: StartupRecord = {
      kind: h.kind,
      keyOk: h.keyOk,
      m: h.m,
      c: h.c,
      r: h.r,
      enhanced: h.enhanced,
      res: h.res,
      rev: h.rev,
      pdLength: h.pdLength,
      flow: this.host.handle.id,
      dir: d.dir,
      from: d.info.from,
      to: d.info.to,
      frame: frames[0] ?? 0,
      frames,
      seq: d.seqOf(at),
      offset: at,
      privateData: pd,
      pdComplete: true,
      enhancedBlock: h.enhanced ? parseEnhancedBlock(pd) : null,
      vendor: vendorLabels(h, portOf(this.host.handle.server), pd),
    };
    const after = at + total;
    // Coalesced: the segment carrying the frame's last octet also carries bytes after it.
    if (d.log.end > after && d.log.frameAt(after) === d.log.frameAt(after - 1)) {
      this.host.find(
        d,
        'mpa.coalesced-startup',
        rec.seq,
        [d.log.frameAt(after)],
        `FPDU bytes follow the MPA ${h.kind === 'request' ? 'Request' : 'Reply'} in the same TCP segment (legal; Linux siw rejects it)`,
      );
    }
    d.startupRec = rec;
    d.seqStartOffset = after;
    d.seqStartExact = true;
    d.log.dropBefore(after);
    d.state = 'await';
    this.onStartup(d, rec);
  }

  /** A damaged key counts as a startup frame only where one was due. */
  private keyPlausible(d: MpaDirection, at: number): boolean {
    const p = this.host.direction(d.dir === 0 ? 1 : 0);
    return at === 0 || (p.startupRec !== null && d.startupRec === null);
  }

  private startupCut(d: MpaDirection, pdLength: number | null): void {
    const at = d.startupOffset;
    const frames = d.log.framesIn(at, d.log.end);
    if (pdLength !== null) {
      this.host.find(
        d,
        'mpa.pd-short',
        d.seqOf(at),
        frames,
        `stream ended with ${Math.max(0, d.log.length - STARTUP_HEADER_LEN)} of ${pdLength} Private Data octets`,
      );
    } else {
      this.host.find(
        d,
        'mpa.pd-short',
        d.seqOf(at),
        frames,
        `stream ended inside the startup frame header (${d.log.length} of 20 octets)`,
      );
    }
    d.state = 'ended';
  }

  private onStartup(d: MpaDirection, rec: StartupRecord): void {
    this.host.detection = 'startup';
    this.host.emitStartup(rec);
    const seq = rec.seq;
    const frames = rec.frames;
    checkStartupFrame(rec, this.report);
    if (rec.kind === 'request') {
      if (this.request && this.request.dir !== d.dir) {
        this.host.find(
          d,
          'mpa.initiator-initiator',
          seq,
          [...this.request.frames, ...frames],
          `both ends sent an MPA Request (frames ${this.request.frame} and ${rec.frame})`,
        );
        this.secondRequest ??= rec;
      } else if (this.request) {
        this.host.find(d, 'mpa.startup-after-mpa', seq, frames, `second MPA Request in the same direction`);
      } else this.request = rec;
    } else {
      if (!this.request || this.request.dir === d.dir) {
        if (this.reply && this.reply.dir !== d.dir) {
          this.host.find(
            d,
            'mpa.responder-responder',
            seq,
            [...this.reply.frames, ...frames],
            `both ends sent an MPA Reply (frames ${this.reply.frame} and ${rec.frame})`,
          );
        } else {
          this.host.find(
            d,
            'mpa.reply-without-request',
            seq,
            frames,
            `MPA Reply in frame ${rec.frame} with no Request from the peer before it`,
          );
        }
      }
      if (!this.reply) this.reply = rec;
      if (this.request && this.request.dir !== d.dir) {
        checkEnhanced(this.request, rec, this.report);
        this.checkRdmac(false);
      }
      if (rec.r) {
        this.rejected = true;
        this.host.find(
          d,
          'mpa.rejected',
          seq,
          frames,
          `MPA Reply rejects the connection (R=1); what follows is streaming data, not FPDUs`,
        );
      }
    }
    // Negotiation: once both frames are known, both directions can frame.
    const answer = this.reply ?? this.secondRequest;
    if (this.request && answer && this.request.dir !== answer.dir) {
      this.host.crc = negotiatedCrc(this.request, answer);
      for (const x of [this.host.direction(0), this.host.direction(1)]) {
        if (x.state === 'await') this.host.resolveAwait(x, false);
      }
    }
  }

  /** Negotiated framing parameters of a direction, or null while unknown. */
  negotiated(d: MpaDirection): FramerParams | null {
    const answer = this.reply ?? this.secondRequest;
    if (!this.request || !answer || this.request.dir === answer.dir || d.seqStartOffset === null) return null;
    const own = d.dir === this.request.dir ? this.request : answer;
    const peer = own === this.request ? answer : this.request;
    return negotiatedParams(own, peer, d.seqStartOffset);
  }

  /**
   * Reports one startup-frame finding on the direction that sent the frame. A function made when a
   * startup frame is checked (rare), not a closure kept by every flow.
   */
  private get report(): StartupReport {
    return (rec, rule, seq, frames, message) =>
      this.host.find(this.host.direction(rec.dir), rule, seq, frames, message);
  }

  /**
   * RFC 5044 Appendix C: names the outcome of a startup with a Rev 0 frame once it is known (the
   * Reply, or for a Rev 0 Reply to a Rev 1 Request the Initiator's first FPDU or the end).
   */
  checkRdmac(ended: boolean): void {
    const req = this.request;
    const rep = this.reply;
    if (this.rdmac?.decided || !req || !rep || req.dir === rep.dir) return;
    const x = classifyRdmac(req, rep, this.host.direction(req.dir).fpdus > 0, ended && this.initiatorClosed);
    this.rdmac = x;
    if (!x?.decided) return;
    this.host.find(
      this.host.direction(rep.dir),
      x.mustClose ? 'mpa.rdmac-must-close' : 'mpa.rdmac-interop',
      rep.seq,
      [...req.frames, ...rep.frames],
      describeRdmac(x, req, rep),
    );
  }

  /** Decided once both first FPDUs are known (capture order, not processing order), or at the end. */
  checkResponderFirst(final = false): void {
    if (this.responderFirstChecked || !this.request || !this.reply || this.request.dir === this.reply.dir) return;
    const ini = this.host.direction(this.request.dir);
    const res = this.host.direction(this.reply.dir);
    if (res.firstFpduFirstFrame === null) return;
    const iniDone = ini.firstFpduLastFrame;
    if (iniDone === null && !final) return;
    this.responderFirstChecked = true;
    if (iniDone === null || res.firstFpduFirstFrame < iniDone) {
      const p2p = !!(this.request.enhancedBlock?.p2p && this.reply.enhancedBlock?.p2p);
      this.host.find(
        res,
        'mpa.responder-first',
        res.firstFpduSeq,
        [res.firstFpduFirstFrame],
        `Responder's first FPDU (frame ${res.firstFpduFirstFrame}) was sent before the Initiator's first FPDU${p2p ? ' (the RTR)' : ''} ${iniDone === null ? 'was seen at all' : `reached it (frame ${iniDone})`}`,
      );
    }
  }
}
