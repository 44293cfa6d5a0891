/**
 * The iSCSI login, wherever the capture has it, and the iSER CM private data.
 *
 * Streaming mode (RFC 5046 §5.1, which older stacks follow): the initiator and target exchange
 * Login PDUs over plain TCP, negotiate RDMAExtensions=Yes, and only then does the MPA Request start
 * on the same connection. MPA keeps the octets each direction sent before its startup frame
 * (bounded: LEADING_KEEP); they are parsed here as a sequence of iSCSI PDUs (BHS, AHS, data
 * segment padded to 4; no digests, which login does not negotiate before it ends).
 *
 * iSER-assisted (RFC 7145 §5.1): the Login PDUs travel in iSER Sends after the RDMA connection is
 * up; the dissector follows them like every other control-type PDU, through `LoginState`.
 */
import type { LeadingOctets, UlpConnection } from '../ddp-rdmap/ulp-contract.js';
import { decodeBhs, decodeKeys, loginStages, pduLength, type Bhs } from './decode.js';
import { OP } from './names.js';

/** Login PDUs parsed from one direction's leading octets at most (the rest are counted). */
export const MAX_LEADING_PDUS = 64;

export interface LeadingPdu {
  readonly bhs: Bhs;
  /** Absolute TCP sequence number of the PDU's first octet. */
  readonly seq: number;
  readonly frames: readonly number[];
}

export interface LeadingLogin {
  readonly pdus: LeadingPdu[];
  /** PDUs past MAX_LEADING_PDUS, or octets that did not parse as PDUs. */
  readonly leftover: number;
  /** The octets the PDUs came from (kept by MPA; a view, not copied). */
  readonly bytes: Uint8Array;
  /** The direction sent more than MPA kept. */
  readonly cut: boolean;
  readonly seq: number;
  readonly frames: readonly number[];
}

function framesAt(l: LeadingOctets, from: number, to: number): number[] {
  const out: number[] = [];
  const f = l.frames;
  for (let i = 0; i < f.length; i += 2) {
    const s = f[i]!;
    const e = i + 2 < f.length ? f[i + 2]! : Number.POSITIVE_INFINITY;
    if (e > from && s < to) out.push(f[i + 1]!);
  }
  return out;
}

/** The iSCSI PDUs of a direction's leading octets, or null when they do not start with one. */
export function parseLeading(l: LeadingOctets | null | undefined): LeadingLogin | null {
  if (!l?.fromStart || l.bytes.length < 48) return null;
  const b = l.bytes;
  const pdus: LeadingPdu[] = [];
  let at = 0;
  while (at + 48 <= b.length && pdus.length < MAX_LEADING_PDUS) {
    const h = decodeBhs(b, at);
    if (!h) break;
    const len = pduLength(h);
    if (at + len > b.length) break;
    pdus.push({ bhs: h, seq: (l.seq + at) >>> 0, frames: framesAt(l, at, at + len) });
    at += len;
  }
  if (pdus.length === 0) return null;
  const first = pdus[0]!.bhs.opcode;
  if (first !== OP.loginRequest && first !== OP.loginResponse) return null;
  return {
    pdus,
    leftover: b.length - at,
    bytes: b,
    cut: l.length > b.length,
    seq: l.seq,
    frames: framesAt(l, 0, 1),
  };
}

/** The value of `key` in a Login/Text PDU's data segment, or null. */
export function keyValue(b: Uint8Array, h: Bhs, key: string): string | null {
  const from = h.at + 48 + h.ahsLength;
  for (const k of decodeKeys(b, from, from + h.dataLength).keys) if (k.key === key) return k.value;
  return null;
}

/** The login's progress, from its PDUs in order (RFC 7143 §6.3, §11.13). */
export class LoginState {
  requested = false;
  /** A Login Response of status Success with T=1 and NSG=3 (Full Feature Phase) was seen. */
  done = false;
  /** Last Login Response status that was not Success, or null. */
  failed: number | null = null;
  rdmaExtensions: { initiator: boolean; target: boolean } = { initiator: false, target: false };

  pdu(b: Uint8Array, h: Bhs): void {
    if (h.opcode === OP.loginRequest) {
      this.requested = true;
      if (keyValue(b, h, 'RDMAExtensions') === 'Yes') this.rdmaExtensions.initiator = true;
    } else if (h.opcode === OP.loginResponse) {
      if (keyValue(b, h, 'RDMAExtensions') === 'Yes') this.rdmaExtensions.target = true;
      const status = h.word36 >>> 16;
      const s = loginStages(h.flags);
      if (status !== 0) this.failed = status;
      else if (s.transit && s.nsg === 3) this.done = true;
    }
  }
}

/** iSER CM REQ private data (RFC 7145 §9.1; Linux struct iser_cm_hdr): 4 octets, flags in the first. */
export interface IserCm {
  readonly flags: number;
  readonly zbvaNotSupported: boolean;
  readonly sendInvalidateNotSupported: boolean;
  /** Reserved bits of the flags octet, or reserved octets 1-3, are set. */
  readonly reservedSet: boolean;
}

export function iserCmOf(pd: Uint8Array | null): IserCm | null {
  if (pd?.length !== 4) return null;
  const f = pd[0]!;
  return {
    flags: f,
    zbvaNotSupported: (f & 0x80) !== 0,
    sendInvalidateNotSupported: (f & 0x40) !== 0,
    reservedSet: (f & 0x3f) !== 0 || pd[1] !== 0 || pd[2] !== 0 || pd[3] !== 0,
  };
}

/** The initiator's leading octets carry a Login Request that asks for RDMAExtensions=Yes. */
export function streamingLoginAsksRdma(c: UlpConnection, initiator: 0 | 1): boolean {
  const l = parseLeading(c.leading?.[initiator]);
  if (!l) return false;
  return l.pdus.some((p) => p.bhs.opcode === OP.loginRequest && keyValue(l.bytes, p.bhs, 'RDMAExtensions') === 'Yes');
}
