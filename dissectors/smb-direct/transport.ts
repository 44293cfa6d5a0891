/**
 * The SMB Direct transport state of one connection (MS-SMBD 3.1): negotiation, Send Credits per
 * direction, keepalives and fragment reassembly, driven by the Sends of both directions in capture
 * order. It reports the transport rules and hands complete upper-layer messages back.
 */
import type { Dir, SendMessage } from '../ddp-rdmap/ulp-contract.js';
import {
  DATA_TRANSFER_MIN_LEN,
  FLAG_RESPONSE_REQUESTED,
  MIN_MAX_FRAGMENTED_SIZE,
  MIN_MAX_RECEIVE_SIZE,
  NEGOTIATE_REQUEST_LEN,
  NEGOTIATE_RESPONSE_LEN,
  SMBD_VERSION_1,
  STATUS_NOT_SUPPORTED,
  dataPayload,
  decodeDataTransfer,
  isValidNegotiateRequest,
  decodeNegotiateRequest,
  decodeNegotiateResponse,
  versionRangeOk,
  type DataTransfer,
  type NegotiateRequest,
  type NegotiateResponse,
} from './decode.js';
import { R } from './rules.js';
import { SMB2_MAGIC } from './smb2.js';

/** Octets of one reassembled upper-layer message kept for decoding; the rest is counted only. */
export const REASSEMBLY_KEEP = 256 * 1024;

/** Where a finding points: the Send's first octet and frames. */
export type At = Pick<SendMessage, 'seq' | 'frames' | 'from'>;
export type Report = (rule: string, at: At, message: string) => void;

/** A complete upper-layer message (MS-SMBD 3.1.5.8: delivered when RemainingDataLength is 0). */
export interface Delivered {
  /**
   * The octets kept (at most REASSEMBLY_KEEP; fewer when octets were not captured). A message in
   * one Send is a view of that Send's payload, valid only during the call, like the payload.
   */
  readonly bytes: Uint8Array;
  /** The message's real length. */
  readonly length: number;
  readonly fragments: number;
  /** Every octet of the message is in `bytes`. */
  readonly complete: boolean;
  /** Invalidate STags of the Sends with Invalidate that carried it (3.1.5.8 InvalidatedToken). */
  readonly invalidateStags: readonly number[];
}

export interface SendOutcome {
  readonly kind: 'negotiate-request' | 'negotiate-response' | 'data' | 'short' | 'uncaptured';
  readonly request?: NegotiateRequest;
  readonly response?: NegotiateResponse;
  readonly data?: DataTransfer;
  /** Send credits of the sender and of the receiver after this message (null: unknown). */
  readonly sendCredits: number | null;
  readonly peerCredits: number | null;
  readonly maxSendSize: number | null;
  /** This Send answers the peer's keepalive. */
  readonly keepaliveAnswered?: { readonly frame: number; readonly latencyUs: number };
  /** A fragment that is not the last of its train. */
  readonly fragment?: { readonly index: number; readonly remaining: number };
  readonly delivered?: Delivered;
}

interface Reassembly {
  active: boolean;
  /** Octets still expected (the receiver's FragmentReassemblyRemaining). */
  remaining: number;
  parts: Uint8Array[];
  kept: number;
  total: number;
  fragments: number;
  complete: boolean;
  invalidates: number[];
  tooLargeTold: boolean;
  /** A message's header was not captured: the train position is unknown until a last fragment. */
  lost: boolean;
}

interface PendingKeepalive {
  readonly time: number;
  readonly frame: number;
  readonly at: At;
}

const newReassembly = (): Reassembly => ({
  active: false,
  remaining: 0,
  parts: [],
  kept: 0,
  total: 0,
  fragments: 0,
  complete: true,
  invalidates: [],
  tooLargeTold: false,
  lost: false,
});

const other = (d: Dir): Dir => (d === 0 ? 1 : 0);
const NO_STAGS: readonly number[] = [];

export class SmbdTransport {
  phase: 'start' | 'await-response' | 'established' | 'unknown' = 'start';
  request: NegotiateRequest | null = null;
  response: NegotiateResponse | null = null;
  /** Send Credits each direction holds (MS-SMBD Connection.SendCredits), null while unknown. */
  private readonly credits: [number | null, number | null] = [null, null];
  /** Connection.MaxSendSize of each direction as a sender. */
  private readonly maxSend: [number | null, number | null] = [null, null];
  /** MaxFragmentedSize the receiver of each direction announced. */
  private readonly fragLimit: [number | null, number | null] = [null, null];
  private readonly reasm: [Reassembly, Reassembly] = [newReassembly(), newReassembly()];
  private readonly keepalive: [PendingKeepalive | null, PendingKeepalive | null] = [null, null];

  constructor(
    private readonly initiator: Dir,
    /** The MPA startup was captured: the first Send is the connection's first message. */
    private readonly startCaptured: boolean,
    private readonly report: Report,
    /** Called when octets needed by a check were not captured. */
    private readonly uncaptured: (what: string, at: At) => void,
  ) {}

  send(m: SendMessage): SendOutcome {
    const d = m.dir;
    if (this.phase === 'start') {
      if (!this.startCaptured) {
        // Joined mid-connection unless the first Send is exactly a Negotiate Request of the TCP client.
        if (d === this.initiator && m.length === NEGOTIATE_REQUEST_LEN && isValidNegotiateRequest(m.payload, m.length))
          return this.negotiateRequest(m);
        this.phase = 'unknown';
        return this.dataTransfer(m);
      }
      if (d === this.initiator) return this.negotiateRequest(m);
      this.report(
        R.wrongSide,
        m,
        'the Responder sent the first SMB Direct message; the Initiator sends the Negotiate Request',
      );
      this.phase = 'unknown';
      return this.misplaced(m);
    }
    if (this.phase === 'await-response') {
      if (d !== this.initiator) return this.negotiateResponse(m);
      const r = m.length === NEGOTIATE_RESPONSE_LEN ? decodeNegotiateResponse(m.payload) : null;
      // Flags (offset 4 of a Data Transfer) is never 0x0100: this is a Negotiate Response shape.
      if (r && r.minVersion === SMBD_VERSION_1 && r.negotiatedVersion === SMBD_VERSION_1) {
        this.report(
          R.wrongSide,
          m,
          'the Initiator sent a Negotiate Response; the Responder answers the Negotiate Request',
        );
        return this.misplaced(m);
      }
    }
    return this.dataTransfer(m);
  }

  /** A negotiation message from the wrong side: shown as what it looks like, not processed. */
  private misplaced(m: SendMessage): SendOutcome {
    const base = { sendCredits: null, peerCredits: null, maxSendSize: null };
    const rsp = m.length === NEGOTIATE_RESPONSE_LEN ? decodeNegotiateResponse(m.payload) : null;
    if (rsp) return { ...base, kind: 'negotiate-response', response: rsp };
    const req = m.length === NEGOTIATE_REQUEST_LEN ? decodeNegotiateRequest(m.payload) : null;
    if (req) return { ...base, kind: 'negotiate-request', request: req };
    return this.dataTransfer(m);
  }

  private negotiateRequest(m: SendMessage): SendOutcome {
    const b = m.payload;
    const base = { sendCredits: null, peerCredits: null, maxSendSize: null };
    if (m.length < NEGOTIATE_REQUEST_LEN) {
      this.report(R.reqShort, m, `Negotiate Request of ${m.length} octets; 20 are required`);
      this.phase = 'unknown';
      return { ...base, kind: 'short' };
    }
    const r = decodeNegotiateRequest(b);
    if (!r) {
      this.uncaptured('the Negotiate Request', m);
      this.phase = 'unknown';
      return { ...base, kind: 'uncaptured' };
    }
    if (!versionRangeOk(r.minVersion, r.maxVersion)) {
      // Not 20 octets and no version range with 0x0100: another message, not a Negotiate Request.
      if (m.length !== NEGOTIATE_REQUEST_LEN && this.startCaptured) {
        this.report(
          R.firstNotNegotiate,
          m,
          `first Send of the Initiator is ${m.length} octets with MinVersion 0x${hex4(r.minVersion)}, MaxVersion 0x${hex4(r.maxVersion)}; not a Negotiate Request`,
        );
        this.phase = 'unknown';
        return this.dataTransfer(m);
      }
      this.report(
        R.reqVersion,
        m,
        `MinVersion 0x${hex4(r.minVersion)} .. MaxVersion 0x${hex4(r.maxVersion)} does not include 0x0100`,
      );
    }
    if (r.creditsRequested === 0) this.report(R.reqCredits, m, 'Negotiate Request CreditsRequested is 0');
    if (r.maxReceiveSize < MIN_MAX_RECEIVE_SIZE)
      this.report(R.reqMaxReceive, m, `Negotiate Request MaxReceiveSize ${r.maxReceiveSize} < 128`);
    if (r.maxFragmentedSize < MIN_MAX_FRAGMENTED_SIZE)
      this.report(R.reqMaxFragmented, m, `Negotiate Request MaxFragmentedSize ${r.maxFragmentedSize} < 131072`);
    this.request = r;
    this.phase = 'await-response';
    // MS-SMBD 3.1.4.1 / 3.1.7.2: both sides start with no Send Credits.
    this.credits[0] = 0;
    this.credits[1] = 0;
    return { ...base, kind: 'negotiate-request', request: r, sendCredits: 0, peerCredits: 0 };
  }

  private negotiateResponse(m: SendMessage): SendOutcome {
    const d = m.dir;
    const base = { sendCredits: null, peerCredits: null, maxSendSize: null };
    if (m.length < NEGOTIATE_RESPONSE_LEN) {
      this.report(R.rspShort, m, `Negotiate Response of ${m.length} octets; 32 are required`);
      this.phase = 'unknown';
      return { ...base, kind: 'short' };
    }
    const r = decodeNegotiateResponse(m.payload);
    if (!r) {
      this.uncaptured('the Negotiate Response', m);
      this.phase = 'unknown';
      return { ...base, kind: 'uncaptured' };
    }
    this.response = r;
    if (r.status !== 0) {
      const versionless = this.request && !versionRangeOk(this.request.minVersion, this.request.maxVersion);
      const expect =
        versionless && r.status !== STATUS_NOT_SUPPORTED
          ? ' (the request lacked 0x0100: STATUS_NOT_SUPPORTED expected)'
          : '';
      this.report(R.rspStatus, m, `Negotiate Response Status 0x${r.status.toString(16).padStart(8, '0')}${expect}`);
      this.phase = 'unknown';
      return { ...base, kind: 'negotiate-response', response: r };
    }
    const req = this.request!;
    if (r.negotiatedVersion !== SMBD_VERSION_1)
      this.report(R.rspVersion, m, `NegotiatedVersion 0x${hex4(r.negotiatedVersion)}`);
    if (r.maxReceiveSize < MIN_MAX_RECEIVE_SIZE)
      this.report(R.rspMaxReceive, m, `Negotiate Response MaxReceiveSize ${r.maxReceiveSize} < 128`);
    if (r.maxFragmentedSize < MIN_MAX_FRAGMENTED_SIZE)
      this.report(R.rspMaxFragmented, m, `Negotiate Response MaxFragmentedSize ${r.maxFragmentedSize} < 131072`);
    if (r.creditsGranted === 0) this.report(R.rspCreditsGranted, m, 'Negotiate Response CreditsGranted is 0');
    if (r.creditsRequested === 0) this.report(R.rspCreditsRequested, m, 'Negotiate Response CreditsRequested is 0');
    if (r.preferredSendSize > req.maxReceiveSize)
      this.report(
        R.rspPreferredSend,
        m,
        `PreferredSendSize ${r.preferredSendSize} > the Initiator's MaxReceiveSize ${req.maxReceiveSize}`,
      );
    const i = this.initiator;
    // 3.1.5.6 / 3.1.5.7: MaxSendSize = min(own PreferredSendSize, peer MaxReceiveSize), never below 128 at the receiver.
    this.maxSend[i] = Math.max(MIN_MAX_RECEIVE_SIZE, Math.min(req.preferredSendSize, r.maxReceiveSize));
    this.maxSend[d] = Math.max(MIN_MAX_RECEIVE_SIZE, Math.min(r.preferredSendSize, req.maxReceiveSize));
    this.fragLimit[i] = r.maxFragmentedSize;
    this.fragLimit[d] = req.maxFragmentedSize;
    // 3.1.5.7: the Initiator's SendCredits = CreditsGranted; the Responder holds none until granted.
    this.credits[i] = r.creditsGranted;
    this.credits[d] = 0;
    this.phase = 'established';
    return {
      kind: 'negotiate-response',
      response: r,
      sendCredits: 0,
      peerCredits: r.creditsGranted,
      maxSendSize: this.maxSend[d],
    };
  }

  private dataTransfer(m: SendMessage): SendOutcome {
    const d = m.dir;
    const p = other(d);
    const st = this.reasm[d];
    const answered = this.answerKeepalive(m);
    if (m.length < DATA_TRANSFER_MIN_LEN) {
      this.report(R.dtShort, m, `Data Transfer message of ${m.length} octets; at least 20 are required`);
      return {
        kind: 'short',
        sendCredits: this.credits[d],
        peerCredits: this.credits[p],
        maxSendSize: this.maxSend[d],
        ...answered,
      };
    }
    const dt = decodeDataTransfer(m.payload);
    if (!dt) {
      // The header itself was not captured: credits and the fragment train can no longer be followed.
      this.uncaptured('Data Transfer headers (credit and fragment accounting stopped)', m);
      this.credits[0] = this.credits[1] = null;
      st.lost = true;
      st.active = false;
      return { kind: 'uncaptured', sendCredits: null, peerCredits: null, maxSendSize: this.maxSend[d], ...answered };
    }
    this.checkHeader(m, dt);
    this.spendCredit(m, dt);
    if ((dt.flags & FLAG_RESPONSE_REQUESTED) !== 0 && !this.keepalive[d])
      this.keepalive[d] = {
        time: m.time,
        frame: m.frames[0] ?? 0,
        at: { seq: m.seq, frames: [...m.frames], from: m.from },
      };
    const train = this.reassemble(m, dt);
    // Written out (no spreads): one object per Send on the bulk path.
    const out: { -readonly [K in keyof SendOutcome]: SendOutcome[K] } = {
      kind: 'data',
      data: dt,
      sendCredits: this.credits[d],
      peerCredits: this.credits[p],
      maxSendSize: this.maxSend[d],
    };
    if (answered.keepaliveAnswered) out.keepaliveAnswered = answered.keepaliveAnswered;
    if (train.fragment) out.fragment = train.fragment;
    if (train.delivered) out.delivered = train.delivered;
    return out;
  }

  /** MS-SMBD 3.1.5.8 receiver checks, and the sender's size limit (3.1.5.4). */
  private checkHeader(m: SendMessage, dt: DataTransfer): void {
    const d = m.dir;
    if (dt.creditsRequested === 0) this.report(R.dtCredits, m, 'Data Transfer CreditsRequested is 0');
    if (dt.dataOffset % 8 !== 0) this.report(R.dtOffset, m, `DataOffset ${dt.dataOffset} is not a multiple of 8`);
    if (dt.dataOffset + dt.dataLength > m.length)
      this.report(
        R.dtOutside,
        m,
        `DataOffset ${dt.dataOffset} + DataLength ${dt.dataLength} > message length ${m.length}`,
      );
    const limit = this.fragLimit[d];
    if (limit !== null && dt.dataLength + dt.remainingDataLength > limit)
      this.report(
        R.dtFragment,
        m,
        `DataLength ${dt.dataLength} + RemainingDataLength ${dt.remainingDataLength} > the receiver's MaxFragmentedSize ${limit}`,
      );
    if ((dt.flags & ~FLAG_RESPONSE_REQUESTED) !== 0) this.report(R.flagsUnknown, m, `Flags 0x${hex4(dt.flags)}`);
    const max = this.maxSend[d];
    if (max !== null && m.length > max)
      this.report(R.sendTooLarge, m, `Send of ${m.length} octets; the sender's MaxSendSize is ${max}`);
  }

  /** MS-SMBD 3.1.5.1: one credit per Data Transfer; the last only on a message granting credits. */
  private spendCredit(m: SendMessage, dt: DataTransfer): void {
    const d = m.dir;
    const c = this.credits[d];
    if (c !== null) {
      if (c === 0) {
        const why = this.phase === 'await-response' ? ' (before the Negotiate Response granted any)' : '';
        this.report(R.noCredits, m, `Data Transfer sent with 0 send credits${why}`);
      } else if (c === 1 && dt.creditsGranted === 0)
        this.report(R.lastCredit, m, 'last send credit spent on a message granting no credits');
      this.credits[d] = Math.max(0, c - 1);
    }
    const p = other(d);
    const pc = this.credits[p];
    if (pc !== null) this.credits[p] = pc + dt.creditsGranted;
  }

  /** Any Data Transfer from the peer answers a pending keepalive (3.1.5.8 "promptly send"). */
  private answerKeepalive(m: SendMessage): { keepaliveAnswered?: { frame: number; latencyUs: number } } {
    const k = this.keepalive[other(m.dir)];
    if (!k) return {};
    this.keepalive[other(m.dir)] = null;
    const us = Number.isFinite(m.time - k.time) ? Math.max(0, Math.round((m.time - k.time) * 1e6)) : 0;
    return { keepaliveAnswered: { frame: k.frame, latencyUs: us } };
  }

  /** Fragment reassembly by RemainingDataLength (MS-SMBD 3.1.5.4 sender, 3.1.5.8 receiver). */
  private reassemble(m: SendMessage, dt: DataTransfer): Pick<SendOutcome, 'fragment' | 'delivered'> {
    const st = this.reasm[m.dir];
    const rdl = dt.remainingDataLength;
    if (dt.dataLength === 0) {
      if (rdl !== 0) this.report(R.train, m, `message without data carries RemainingDataLength ${rdl}; it must be 0`);
      else if (st.active) {
        this.report(
          R.interrupted,
          m,
          `message without data inside a fragment train (${st.remaining} octets still expected after ${st.fragments} fragments)`,
        );
      }
      return {};
    }
    if (st.lost) {
      // The train position is unknown since a header went uncaptured; resynchronise on a last fragment.
      if (rdl !== 0) return {};
      st.lost = false;
      const data = dataPayload(m.payload, dt);
      if (data.length < 4 || new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true) !== SMB2_MAGIC) return {};
    }
    if (!st.active && rdl === 0) return { delivered: this.whole(m, dt) };
    if (!st.active) {
      Object.assign(st, newReassembly());
      st.active = true;
      st.remaining = rdl;
    } else {
      const expected = st.remaining - dt.dataLength;
      if (expected < 0 || expected !== rdl) {
        this.report(
          R.train,
          m,
          `RemainingDataLength ${rdl}; the train expected ${Math.max(0, expected)} (${st.remaining} remaining less DataLength ${dt.dataLength})`,
        );
      }
      st.remaining = rdl;
    }
    st.fragments++;
    st.total += dt.dataLength;
    const limit = this.fragLimit[m.dir];
    if (limit !== null && st.total > limit && !st.tooLargeTold) {
      st.tooLargeTold = true;
      this.report(
        R.reassembledTooLarge,
        m,
        `reassembled message reached ${st.total} octets; the receiver's MaxFragmentedSize is ${limit}`,
      );
    }
    const data = dataPayload(m.payload, dt);
    if (data.length < dt.dataLength) {
      st.complete = false;
      // Missing for want of capture, or because the data lies outside the message (reported above).
      if (!m.payloadComplete) this.uncaptured('upper-layer message octets (SMB2 bodies and Buffer Descriptors)', m);
    }
    if (st.kept < REASSEMBLY_KEEP && data.length > 0) {
      const take = data.subarray(0, Math.min(data.length, REASSEMBLY_KEEP - st.kept));
      st.parts.push(take.slice()); // the payload is a view valid only during the call
      st.kept += take.length;
      if (take.length < data.length || data.length < dt.dataLength) st.complete = false;
    } else if (data.length > 0) st.complete = false;
    if (m.invalidateStag !== null && st.invalidates.length < 16) st.invalidates.push(m.invalidateStag);
    if (rdl !== 0) return { fragment: { index: st.fragments, remaining: rdl } };
    st.active = false;
    const bytes = concat(st.parts, st.kept);
    const delivered: Delivered = {
      bytes,
      length: st.total,
      fragments: st.fragments,
      complete: st.complete && bytes.length === st.total,
      invalidateStags: st.invalidates,
    };
    st.parts = [];
    return { delivered };
  }

  /**
   * A message in one Send (no train open, RemainingDataLength 0), the common case: delivered as a
   * view of the payload, with the checks of a train of one.
   */
  private whole(m: SendMessage, dt: DataTransfer): Delivered {
    const limit = this.fragLimit[m.dir];
    if (limit !== null && dt.dataLength > limit) {
      this.report(
        R.reassembledTooLarge,
        m,
        `reassembled message reached ${dt.dataLength} octets; the receiver's MaxFragmentedSize is ${limit}`,
      );
    }
    const data = dataPayload(m.payload, dt);
    let complete = true;
    if (data.length < dt.dataLength) {
      complete = false;
      if (!m.payloadComplete) this.uncaptured('upper-layer message octets (SMB2 bodies and Buffer Descriptors)', m);
    }
    const bytes = data.length > REASSEMBLY_KEEP ? data.subarray(0, REASSEMBLY_KEEP) : data;
    return {
      bytes,
      length: dt.dataLength,
      fragments: 1,
      complete: complete && bytes.length === dt.dataLength,
      invalidateStags: m.invalidateStag !== null ? [m.invalidateStag] : NO_STAGS,
    };
  }

  /**
   * A Data Transfer of `dir` may have been lost from the capture: Send Credits of both sides are no
   * longer known (a lost message spent one and granted some), and `dir`'s fragment train resumes
   * only at a message that ends one.
   */
  lose(dir: Dir): void {
    this.credits[0] = this.credits[1] = null;
    const st = this.reasm[dir];
    st.lost = true;
    st.active = false;
    st.parts = [];
  }

  /** Keepalives still waiting for an answer: [direction, the keepalive Send]. */
  pendingKeepalives(): Array<{ dir: Dir; at: At; time: number }> {
    const out: Array<{ dir: Dir; at: At; time: number }> = [];
    for (const d of [0, 1] as const) {
      const k = this.keepalive[d];
      if (k) out.push({ dir: d, at: k.at, time: k.time });
    }
    return out;
  }
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

export const hex4 = (n: number): string => n.toString(16).padStart(4, '0');
