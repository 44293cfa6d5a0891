/**
 * MS-SMBD Appendix A (section 6): the 8-octet IRD/ORD Negotiate Header an iWARP provider without
 * RFC 6581 negotiation sends as the first octets of the MPA private data on port 5445. The block
 * is parsed by the DDP/RDMAP layer's labeller (upper-layer.ts); here it is checked and handed to
 * the buffer ledger as the peer's IRD.
 */
import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { BufferLedger } from '../ddp-rdmap/buffer-ledger.js';
import { PORT_SMB_DIRECT, parseSmbdLegacyIrdOrd, type SmbdLegacyIrdOrd } from '../ddp-rdmap/upper-layer.js';
import type { Dir, UlpConnection } from '../ddp-rdmap/ulp-contract.js';
import { R } from './rules.js';

export interface IrdOrdBlocks {
  readonly request: SmbdLegacyIrdOrd | null;
  readonly reply: SmbdLegacyIrdOrd | null;
}

/** The Appendix A blocks of the MPA Request and Reply (private data after the RFC 6581 block). */
export function irdOrdBlocks(c: UlpConnection): IrdOrdBlocks {
  return {
    request: c.requestPrivateData ? parseSmbdLegacyIrdOrd(c.requestPrivateData) : null,
    reply: c.replyPrivateData ? parseSmbdLegacyIrdOrd(c.replyPrivateData) : null,
  };
}

/**
 * True when the private data is SMB Direct's own: an Appendix A block on the SMB Direct port. Eight
 * octets of small numbers prove little on other ports (same policy as upper-layer.ts).
 */
export function hasSmbdPrivateData(c: UlpConnection): boolean {
  if (c.serverPort !== PORT_SMB_DIRECT) return false;
  const b = irdOrdBlocks(c);
  return b.request !== null || b.reply !== null;
}

/**
 * Checks the blocks (byte order, agreement with the RFC 6581 values of the same frame) and gives the
 * ledger each side's IRD: the Initiator's IRD limits the Read Requests the Responder may have in
 * flight, and the other way round. Appendix A 6.1 defines IRD/ORD from the sender's perspective
 * ("the Incoming RDMA Read Depth currently in use by the sending peer").
 */
export function applyIrdOrd(c: UlpConnection, initiator: Dir, sink: FindingSink, ledger: BufferLedger): void {
  const b = irdOrdBlocks(c);
  const responder: Dir = initiator === 0 ? 1 : 0;
  const sides = [
    { block: b.request, frame: 'MPA Request', mpaIrd: c.requestIrd, mpaOrd: c.requestOrd, reader: responder },
    { block: b.reply, frame: 'MPA Reply', mpaIrd: c.replyIrd, mpaOrd: c.replyOrd, reader: initiator },
  ] as const;
  for (const s of sides) {
    if (!s.block) continue;
    const report = (rule: string, message: string): void =>
      sink.report(rule, { flow: c.flow, from: null, frames: [], seq: null, message });
    if (s.block.byteOrder === 'little-endian') {
      report(
        R.irdOrdLe,
        `${s.frame} private data: MS-SMBD IRD/ORD block is little-endian (IRD ${s.block.ird}, ORD ${s.block.ord}); a big-endian reader sees IRD ${swap32(s.block.ird)}, ORD ${swap32(s.block.ord)}`,
      );
    }
    if (s.mpaIrd !== null && s.mpaOrd !== null && (s.mpaIrd !== s.block.ird || s.mpaOrd !== s.block.ord)) {
      report(
        R.irdOrdMpa,
        `${s.frame}: MS-SMBD IRD/ORD block says IRD ${s.block.ird}, ORD ${s.block.ord}; the RFC 6581 block says IRD ${s.mpaIrd}, ORD ${s.mpaOrd}`,
      );
    }
    ledger.setPeerIrd(s.reader, s.block.ird, `the MS-SMBD IRD/ORD block of the ${s.frame}`);
  }
}

function swap32(n: number): number {
  return (((n & 0xff) << 24) | ((n & 0xff00) << 8) | ((n >>> 8) & 0xff00) | (n >>> 24)) >>> 0;
}
