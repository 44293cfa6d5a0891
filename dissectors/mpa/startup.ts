/**
 * MPA startup frames (RFC 5044 §7.1.1; RFC 6581 §3 for the enhanced block; draft-00 §8.1.1 for Rev 0).
 *
 *   off 0  16  Key  "MPA ID Req Frame" | "MPA ID Rep Frame"
 *   off 16  1  M 0x80 | C 0x40 | R 0x20 | enhanced 0x10 | Res 0x0F
 *   off 17  1  Rev
 *   off 18  2  PD_Length (big-endian)
 *   off 20     Private Data
 */

export const KEY_REQ = Uint8Array.from(Buffer.from('MPA ID Req Frame', 'latin1'));
export const KEY_REP = Uint8Array.from(Buffer.from('MPA ID Rep Frame', 'latin1'));
/** What every key starts with: the scanner looks for this, then classifies the rest. */
export const KEY_PREFIX = Uint8Array.from(Buffer.from('MPA ID ', 'latin1'));
export const STARTUP_HEADER_LEN = 20;
/** Rev 1 and 2 limit: RFC 5044 §7.1.1. */
export const MAX_PD_LENGTH = 512;

export type StartupKind = 'request' | 'reply';

export interface StartupHeader {
  kind: StartupKind;
  /** True when the key is exactly the one for its kind. */
  keyOk: boolean;
  m: boolean;
  c: boolean;
  r: boolean;
  enhanced: boolean;
  res: number;
  rev: number;
  pdLength: number;
}

export interface EnhancedBlock {
  ird: number;
  ord: number;
  p2p: boolean;
  rtr: { send: boolean; write: boolean; read: boolean };
}

/** Startup frame as recorded for reports (report-schema StartupFrame plus where it was). */
export interface StartupRecord extends StartupHeader {
  flow: number;
  dir: 0 | 1;
  from: string;
  to: string;
  frame: number;
  frames: number[];
  seq: number;
  /** Stream offset of the key's first octet (optional: records built elsewhere may leave it out). */
  offset?: number;
  privateData: Uint8Array;
  /** PD octets actually present (less than pdLength when the stream ended early). */
  pdComplete: boolean;
  enhancedBlock: EnhancedBlock | null;
  /** Known vendor extensions recognised in this frame, in words. */
  vendor: string[];
}

function sameBytes(b: Uint8Array, off: number, key: Uint8Array): boolean {
  for (let i = 0; i < key.length; i++) if (b[off + i] !== key[i]) return false;
  return true;
}

/** Classifies a 16-octet key: exact Request, exact Reply, or null. */
export function classifyKey(b: Uint8Array, off: number): StartupKind | null {
  if (sameBytes(b, off, KEY_REQ)) return 'request';
  if (sameBytes(b, off, KEY_REP)) return 'reply';
  return null;
}

/** Decodes the 20-octet header; `kind` is what the caller expects when the key is damaged. */
export function parseStartupHeader(b: Uint8Array, off: number, expected: StartupKind): StartupHeader {
  const k = classifyKey(b, off);
  const flags = b[off + 16]!;
  const rev = b[off + 17]!;
  // Rev 0 (draft-ietf-rddp-mpa-00 §8.1.1, RDMA Consortium): the flags octet is M | C | Res (6 bits);
  // the R bit (RFC 5044) and the enhanced bit (RFC 6581) do not exist there.
  const rev0 = rev === 0;
  return {
    kind: k ?? expected,
    keyOk: k !== null,
    m: (flags & 0x80) !== 0,
    c: (flags & 0x40) !== 0,
    r: !rev0 && (flags & 0x20) !== 0,
    enhanced: !rev0 && (flags & 0x10) !== 0,
    res: flags & (rev0 ? 0x3f : 0x0f),
    rev,
    pdLength: (b[off + 18]! << 8) | b[off + 19]!,
  };
}

/** RFC 6581 IRD/ORD block: the first 4 Private Data octets when the enhanced bit is set. */
export function parseEnhancedBlock(pd: Uint8Array): EnhancedBlock | null {
  if (pd.length < 4) return null;
  const irdWord = (pd[0]! << 8) | pd[1]!;
  const ordWord = (pd[2]! << 8) | pd[3]!;
  return {
    ird: irdWord & 0x3fff,
    ord: ordWord & 0x3fff,
    p2p: (irdWord & 0x8000) !== 0,
    rtr: { send: (irdWord & 0x4000) !== 0, write: (ordWord & 0x8000) !== 0, read: (ordWord & 0x4000) !== 0 },
  };
}

const NO_LABELS: readonly string[] = Object.freeze([]);

/** Names the vendor extensions SPEC-NOTES lists, so a user sees what a non-standard field means. */
export function vendorLabels(h: StartupHeader, serverPort: number, pd: Uint8Array): string[] {
  const out: string[] = [];
  if ((h.res & 0x0c) === 0x0c) out.push('reserved bits 0x0C: 2020 proposal to negotiate a maximum FPDU size');
  else if (h.res & 0x08) out.push('reserved flag 0x08: Linux siw GSO_EXP (FPDUs larger than the MSS)');
  if (h.rev === 0x81) out.push('Rev 0x81: Alibaba erdma extension');
  if (h.rev === 0) out.push('Rev 0: draft-ietf-rddp-mpa-00 / RDMA Consortium RNIC (DDP/RDMAP version 0)');
  if (serverPort === 5445) {
    const ulp = h.enhanced ? pd.subarray(4) : pd;
    if (ulp.length >= 8) out.push('MS-SMBD legacy IRD/ORD negotiate header (port 5445)');
  }
  // Most frames name none: they share one empty list (records keep it for the whole flow).
  return out.length === 0 ? (NO_LABELS as string[]) : out;
}

/** True for the Revs we decode: 0 (RDMAC), 1 (RFC 5044), 2 (RFC 6581), 0x81 (erdma, labelled). */
export function isKnownRev(rev: number): boolean {
  return rev === 0 || rev === 1 || rev === 2;
}
