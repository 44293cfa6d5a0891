/**
 * Terminate handling (RFC 5040 §7): a Terminate is reported with its fields, linked to the peer's
 * segment whose DDP header it copies (header-history.ts), and an LLP Terminate is explained by the
 * MPA error (or wrong RTR) on the peer's half connection that caused it.
 */

import type { Ulpdu } from '../mpa/ulpdu.js';
import type { TerminateMessage, UntaggedPdu } from './decode.js';
import type { DirState, NotedError } from './direction-state.js';
import { DDP_TAGGED_HEADER_LEN, DDP_UNTAGGED_HEADER_LEN, TERM_LAYER } from './fields.js';
import { framesText, other, type FlowCore } from './flow-core.js';
import type { HistoryHit } from './header-history.js';
import { ddpSummary, hex32, hex64 } from './tree.js';
import type { DdpSegmentRecord, Dir, SegmentFinding } from './types.js';

/** How a Terminate's explanation names a noted MPA error (worded only when a Terminate needs it). */
function notedText(e: NotedError): string {
  return `MPA error code ${e.code} at seq ${e.seq} (${framesText(e.frames)})`;
}

export function handleTerminate(
  a: FlowCore,
  u: Ulpdu,
  st: DirState,
  p: UntaggedPdu,
  t: TerminateMessage,
  rec: DdpSegmentRecord,
): void {
  st.terminates++;
  const peerDir = other(u.dir);
  const peer = a.dir(peerDir);
  const parts: string[] = [ddpSummary(p)];
  parts[0] += ` (layer 0x${t.layer.toString(16)}, etype 0x${t.etype.toString(16)}, code 0x${t.code.toString(16).padStart(2, '0')}; M=${+t.m} D=${+t.d} R=${+t.r})`;
  if (t.ddpSegmentLength !== null) parts.push(`DDP segment length ${t.ddpSegmentLength}`);
  if (t.ddpHeader) {
    const hit = matchHistory(peer, t.ddpHeader.bytes);
    if (hit) {
      rec.terminated = { seq: hit.seq, frames: hit.frames };
      let s = `it terminates the peer's segment at seq ${hit.seq} (${framesText(hit.frames)})`;
      const rules = [...new Set(hit.findings.map((f) => f.rule))];
      if (rules.length) s += `, which mpa-dissect flagged: ${rules.join(', ')}`;
      parts.push(s);
    } else {
      parts.push(`its copied DDP header matches none of the peer's last ${peer.history.length} segments`);
    }
  }
  if (t.rdmapHeader?.readRequest) {
    const rr = t.rdmapHeader.readRequest;
    parts.push(`copied Read Request: sink ${hex32(rr.sinkStag)}/${hex64(rr.sinkTo)} size ${rr.size}`);
  }
  for (const pr of t.problems) if (!pr.startsWith('D ') && !pr.startsWith('M ')) parts.push(pr);
  const announced =
    4 + (t.ddpSegmentLength !== null ? 2 : 0) + (t.ddpHeader?.bytes.length ?? 0) + (t.rdmapHeader?.bytes.length ?? 0);
  if (t.bodyLength > announced) parts.push(`${t.bodyLength - announced} trailing octets not announced by M/D/R`);
  if (u.crc === 'bad') parts.push('its own CRC does not verify');

  let unexplained = false;
  if (t.layer === TERM_LAYER.LLP) {
    const cause = findCause(a, peerDir, u.dir, t.code);
    if (cause) parts.push(`explained by ${cause}`);
    else unexplained = true;
  }
  a.emit('rdmap.terminate', u, rec, parts.join('; '));
  if (unexplained) {
    const local = t.code === 5 ? ' (a local catastrophic error is by nature not visible on the wire)' : '';
    a.emit(
      'rdmap.terminate-unexplained',
      u,
      rec,
      `Terminate LLP/MPA code 0x${t.code.toString(16).padStart(2, '0')} (${t.codeName ?? 'unregistered'}): no such MPA error was seen on the peer's half connection${local}`,
    );
  }
  if (t.codeName === null) {
    a.emit(
      'rdmap.terminate-unknown-code',
      u,
      rec,
      `Terminate layer 0x${t.layer.toString(16)} etype 0x${t.etype.toString(16)} code 0x${t.code.toString(16).padStart(2, '0')} is not a registered error`,
    );
  }
  if (!st.terminated) st.terminated = { seq: u.seq, frames: rec.frames };
}

function matchHistory(peer: DirState, bytes: Uint8Array): HistoryHit<SegmentFinding[]> | null {
  const want = (bytes[0] ?? 0) & 0x80 ? DDP_TAGGED_HEADER_LEN : DDP_UNTAGGED_HEADER_LEN;
  if (bytes.length < Math.min(want, 2)) return null;
  return peer.history.match(bytes);
}

/** The MPA error (or wrong RTR) that explains an LLP Terminate with `code`. */
function findCause(a: FlowCore, peerDir: Dir, ownDir: Dir, code: number): string | null {
  // Prefer the peer's half connection (the receiver terminates); accept the own one too, in case
  // the MPA layer attributed the error to the receiving direction.
  for (const d of [peerDir, ownDir]) {
    const list = a.dir(d).mpaErrors;
    for (let i = list.length - 1; i >= 0; i--) {
      const e = list[i]!;
      if (e.code === code)
        return `${notedText(e)}${d === ownDir ? " noted on the terminating side's own direction" : " on the peer's half connection"}`;
    }
  }
  if (code === 7) {
    const mm = a.dir(peerDir).rtrMismatch;
    if (mm)
      return `the Initiator's first FPDU at seq ${mm.seq} (${framesText(mm.frames)}) not being the negotiated RTR (rdmap.rtr-mismatch)`;
  }
  return null;
}
