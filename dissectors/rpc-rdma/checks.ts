/**
 * Checks of a Reply against the Call it answers (RFC 8166 §4.3.2, §4.3.3): the chunks the Reply
 * returns must be the Call's, and the lengths it reports must be what the responder's RDMA
 * Writes placed; the Call's read chunks must have been read whole. Pure: each returns the finding
 * texts, the dissector reports them.
 */
import type { LedgerEntry } from '../ddp-rdmap/buffer-ledger.js';
import type { ReadChunk, RdmaSegment, WriteChunk } from './decode.js';
import { hex32 } from './names.js';
import { pad4 } from './xdr.js';

/** One chunk of a Call as advertised to the ledger: its segments and their ledger entries. */
export interface AdvertisedChunk {
  readonly segments: readonly RdmaSegment[];
  readonly entries: readonly LedgerEntry[];
}

export interface AdvertisedReadChunk extends AdvertisedChunk {
  readonly chunk: ReadChunk;
}

const sum = (xs: readonly { length: number }[]): number => xs.reduce((n, s) => n + s.length, 0);
const moved = (es: readonly LedgerEntry[]): number => es.reduce((n, e) => n + e.moved, 0);

/** Returned chunk vs offered chunk: same handles, no more segments, none longer. */
function compareChunk(what: string, offered: AdvertisedChunk | undefined, returned: WriteChunk): string[] {
  if (!offered) return [`the Reply returns ${what}, which the Call did not offer`];
  const out: string[] = [];
  if (returned.segments.length > offered.segments.length) {
    out.push(`${what} has ${returned.segments.length} segments, the Call offered ${offered.segments.length}`);
  }
  returned.segments.forEach((s, i) => {
    const o = offered.segments[i];
    if (!o) return;
    if (s.handle !== o.handle) {
      out.push(`${what} segment ${i + 1} has handle ${hex32(s.handle)}, the Call offered ${hex32(o.handle)}`);
    } else if (s.length > o.length) {
      out.push(`${what} segment ${i + 1} reports ${s.length} octets, more than the ${o.length} the Call offered`);
    }
  });
  return out;
}

export function replyChunkMismatches(
  callWrites: readonly AdvertisedChunk[],
  callReply: AdvertisedChunk | null,
  writes: readonly WriteChunk[],
  reply: WriteChunk | null,
): string[] {
  const out: string[] = [];
  writes.forEach((c, i) => {
    out.push(...compareChunk(`write chunk ${i + 1}`, callWrites[i], c));
  });
  if (reply) out.push(...compareChunk('the reply chunk', callReply ?? undefined, reply));
  return out;
}

/**
 * Octets written vs lengths reported, per chunk. `known(e)` says whether an entry's `moved` is
 * still counted (false when the ledger forgot it at capacity): such chunks are skipped.
 * Written may exceed the reported length by the XDR pad of the last segment (up to 3 octets).
 */
export function writeLengthMismatches(
  callWrites: readonly AdvertisedChunk[],
  callReply: AdvertisedChunk | null,
  writes: readonly WriteChunk[],
  reply: WriteChunk | null,
  known: (e: LedgerEntry) => boolean,
): string[] {
  const out: string[] = [];
  const check = (what: string, offered: AdvertisedChunk, returned: WriteChunk | undefined | null): void => {
    if (!offered.entries.every(known)) return;
    const written = moved(offered.entries);
    if (!returned) {
      if (written > 0) out.push(`${written} octets were written into ${what}, which the Reply does not return`);
      return;
    }
    const reported = sum(returned.segments);
    if (written !== reported && written !== pad4(reported)) {
      out.push(`the Reply reports ${reported} octets in ${what}, the responder's RDMA Writes placed ${written}`);
    }
  };
  callWrites.forEach((c, i) => {
    check(`write chunk ${i + 1}`, c, writes[i]);
  });
  if (callReply) check('the reply chunk', callReply, reply);
  return out;
}

/** Read chunks whose octets read differ from their length. */
export function readChunkShortfalls(
  reads: readonly AdvertisedReadChunk[],
  known: (e: LedgerEntry) => boolean,
): string[] {
  const out: string[] = [];
  for (const r of reads) {
    if (!r.entries.every(known)) continue;
    const got = moved(r.entries);
    if (got !== r.chunk.length) {
      const how = got < r.chunk.length ? 'only ' : '';
      out.push(
        `read chunk at position ${r.chunk.position} (${r.chunk.length} octets in ${r.segments.length} segment${r.segments.length === 1 ? '' : 's'}): RDMA Read Requests covered ${how}${got} octets before the Reply`,
      );
    }
  }
  return out;
}
