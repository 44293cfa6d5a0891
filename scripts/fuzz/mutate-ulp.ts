/**
 * Upper-layer mutations for the fuzzer's `ulp` target: the generator's clean SMB Direct and
 * NFS-over-RDMA connections (the exchanges of the smbd-clean and nfsrdma-clean corpus captures),
 * changed at the upper layer before they are framed, so MPA and DDP stay valid with good CRCs and
 * every mutation reaches the upper layer: random octets and extreme words in Send payloads,
 * truncated Sends, and the named hostile cases of issue 19 (Buffer Descriptor lists of 65535
 * octets, 4 GB lengths, chunk lists that never end, segment counts of millions, credits of 65535,
 * MessageIds and XIDs reused), plus RDMA Writes and Read Requests to random STags and offsets.
 * Every choice comes from `r`; the same choices give the same capture.
 */
import { captureFile } from '../../src/generate/capture-file.js';
import { resolveKnobs } from '../../src/generate/knobs.js';
import { NfsSession } from '../../src/generate/nfs-session.js';
import { nfsCleanExchange } from '../../src/generate/nfsrdma-scenarios.js';
import { smbdCleanExchange } from '../../src/generate/smbd-scenarios.js';
import { SmbdSession } from '../../src/generate/smbd-session.js';
import { buildUlpConnection, type UlpConnectionSpec, type UlpEvent } from '../../src/generate/ulp-connection.js';
import type { Rand } from './mutate-capture.js';

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

export type UlpBase = 'smb-direct' | 'rpc-rdma';
export const ULP_BASES: readonly UlpBase[] = ['smb-direct', 'rpc-rdma'];

export const ULP_MUTATIONS = [
  'send-octets',
  'send-words',
  'send-truncate',
  'send-extend',
  'rdma-targets',
  'drop-event',
  'duplicate-send',
  // SMB Direct (MS-SMBD 2.2.3, MS-SMB2 2.2.1, 2.2.19, 2.2.21)
  'smbd-channel-info-max',
  'smbd-4gb-length',
  'smbd-credits-65535',
  'smbd-messageid-reused',
  // RPC-over-RDMA (RFC 8166 §4.2, §5.4)
  'rpc-chunks-endless',
  'rpc-segment-count-millions',
  'rpc-credits-65535',
  'rpc-xid-reused',
] as const;
export type UlpMutation = (typeof ULP_MUTATIONS)[number];

/** The clean connection of `base` as the generator builds it (its events are copied before changes). */
export function ulpBaseSpec(base: UlpBase): UlpConnectionSpec {
  if (base === 'smb-direct') {
    const s = new SmbdSession();
    smbdCleanExchange(s);
    return s.spec();
  }
  const s = new NfsSession();
  nfsCleanExchange(s);
  return s.spec();
}

type Send = Extract<UlpEvent, { op: 'send' }>;
type Events = UlpEvent[];

const sends = (ev: Events): number[] => ev.flatMap((e, i) => (e.op === 'send' ? [i] : []));
const withPayload = (e: Send, payload: Uint8Array): Send => ({ ...e, payload });
const EXTREME = [0, 0xffffffff, 0x80000000, 0x7fffffff, 0xffff, 0x10000, 1] as const;

function setU32(b: Uint8Array, at: number, v: number, le: boolean): void {
  if (at + 4 > b.length) return;
  new DataView(b.buffer, b.byteOffset, b.byteLength).setUint32(at, v >>> 0, le);
}
function setU16(b: Uint8Array, at: number, v: number, le: boolean): void {
  if (at + 2 > b.length) return;
  new DataView(b.buffer, b.byteOffset, b.byteLength).setUint16(at, v & 0xffff, le);
}

/** MS-SMBD Data Transfer carrying an SMB2 header at DataOffset 24 (what SmbdSession sends). */
const SMB2_AT = 24;
const isSmb2 = (p: Uint8Array): boolean =>
  p.length >= SMB2_AT + 64 &&
  p[SMB2_AT] === 0xfe &&
  p[SMB2_AT + 1] === 0x53 &&
  p[SMB2_AT + 2] === 0x4d &&
  p[SMB2_AT + 3] === 0x42;
const smb2Command = (p: Uint8Array): number => p[SMB2_AT + 12]! | (p[SMB2_AT + 13]! << 8);
const isResponse = (p: Uint8Array): boolean => (p[SMB2_AT + 16]! & 1) !== 0;

/** Applies one mutation to the events (in place, on copies of the payloads it changes). */
export function mutateUlp(r: Rand, ev: Events, kind: UlpMutation): void {
  const ss = sends(ev);
  const send = (i: number): Send => ev[i] as Send;
  const copy = (i: number): Uint8Array => {
    const p = send(i).payload.slice();
    ev[i] = withPayload(send(i), p);
    return p;
  };
  if (ss.length === 0) return;
  switch (kind) {
    case 'send-octets': {
      for (let n = 1 + int(r, 3); n > 0; n--) {
        const p = copy(pick(r, ss));
        for (let k = 1 + int(r, 16); k > 0 && p.length > 0; k--) p[int(r, p.length)] = int(r, 256);
      }
      return;
    }
    case 'send-words': {
      const p = copy(pick(r, ss));
      for (let k = 1 + int(r, 4); k > 0 && p.length >= 4; k--)
        setU32(p, int(r, p.length >> 2) << 2, pick(r, EXTREME), r() < 0.5);
      return;
    }
    case 'send-truncate': {
      const i = pick(r, ss);
      ev[i] = withPayload(send(i), send(i).payload.slice(0, int(r, send(i).payload.length)));
      return;
    }
    case 'send-extend': {
      const i = pick(r, ss);
      const p = send(i).payload;
      const extra = new Uint8Array(1 + int(r, 4096));
      for (let k = 0; k < extra.length; k++) extra[k] = int(r, 256);
      const out = new Uint8Array(p.length + extra.length);
      out.set(p);
      out.set(extra, p.length);
      ev[i] = withPayload(send(i), out);
      return;
    }
    case 'rdma-targets': {
      // Accesses to STags and offsets nobody advertised (lengths kept: the generator writes their octets).
      const ix = ev.flatMap((e, i) => (e.op === 'write' || e.op === 'read-request' ? [i] : []));
      for (let n = 1 + int(r, 3); n > 0 && ix.length > 0; n--) {
        const i = pick(r, ix);
        const e = ev[i]!;
        const stag = r() < 0.5 ? int(r, 0x100000000) : 0xffffffff;
        const to = r() < 0.5 ? BigInt(int(r, 0x100000000)) << 32n : 0xfffffffffffff000n;
        if (e.op === 'write') ev[i] = { ...e, stag, to };
        else if (e.op === 'read-request') ev[i] = { ...e, srcStag: stag, srcTo: to };
      }
      return;
    }
    case 'drop-event': {
      // A response, Write or Read Response never sent (a Read Response names its request: never dropped
      // alone, its request stays).
      const i = int(r, ev.length);
      if (ev[i]!.op === 'read-request') return;
      ev.splice(i, 1);
      for (let j = i; j < ev.length; j++) {
        const e = ev[j]!;
        if (e.op === 'read-response' && e.request > i) ev[j] = { ...e, request: e.request - 1 };
      }
      return;
    }
    case 'duplicate-send': {
      const i = pick(r, ss);
      ev.push({ ...send(i) });
      return;
    }
    case 'smbd-channel-info-max': {
      // MS-SMB2 2.2.19/2.2.21: ChannelInfoLength 65535 (4095 Buffer Descriptors announced).
      for (const i of ss) {
        const p = send(i).payload;
        if (!isSmb2(p) || isResponse(p)) continue;
        const cmd = smb2Command(p);
        if (cmd !== 8 && cmd !== 9) continue;
        const q = copy(i);
        setU16(q, SMB2_AT + 64 + (cmd === 8 ? 46 : 42), 0xffff, true);
        if (r() < 0.5) setU16(q, SMB2_AT + 64 + (cmd === 8 ? 44 : 40), int(r, 0x10000), true);
      }
      return;
    }
    case 'smbd-4gb-length': {
      // MS-SMBD 2.2.3 RemainingDataLength / DataLength and SMB2 READ Length, WRITE RemainingBytes of 4 GB.
      for (const i of ss) {
        const p = send(i).payload;
        if (p.length < 20 || r() < 0.5) continue;
        const q = copy(i);
        const which = int(r, 4);
        if (which === 0) setU32(q, 8, 0xffffffff, true);
        else if (which === 1) setU32(q, 16, 0xffffffff, true);
        else if (isSmb2(q) && !isResponse(q) && smb2Command(q) === 8) setU32(q, SMB2_AT + 64 + 4, 0xffffffff, true);
        else if (isSmb2(q) && !isResponse(q) && smb2Command(q) === 9) setU32(q, SMB2_AT + 64 + 36, 0xffffffff, true);
        else setU32(q, 8, 0xfffffff0, true);
      }
      return;
    }
    case 'smbd-credits-65535': {
      // MS-SMBD 2.2.3 CreditsRequested and CreditsGranted (and the Negotiate Response's) of 65535.
      for (const i of ss) {
        const q = copy(i);
        if (q.length === 20)
          setU16(q, 6, 0xffff, true); // Negotiate Request (2.2.1)
        else if (q.length === 32) {
          setU16(q, 8, 0xffff, true); // Negotiate Response (2.2.2)
          setU16(q, 10, 0xffff, true);
        } else if (q.length > 20) {
          setU16(q, 0, 0xffff, true);
          setU16(q, 2, 0xffff, true);
        }
      }
      return;
    }
    case 'smbd-messageid-reused': {
      // MS-SMB2 2.2.1: every request and response with the same MessageId.
      const mid = r() < 0.5 ? 0xffffffff : int(r, 8);
      for (const i of ss) {
        if (!isSmb2(send(i).payload)) continue;
        const q = copy(i);
        setU32(q, SMB2_AT + 24, mid, true);
        setU32(q, SMB2_AT + 28, r() < 0.2 ? 0xffffffff : 0, true);
      }
      return;
    }
    case 'rpc-chunks-endless': {
      // RFC 8166 §4.2: a read list whose entries never stop (every discriminator "present") to the
      // end of the Send, or past it.
      const i = pick(r, ss);
      const p = send(i).payload;
      const n = Math.max(p.length, 16) + int(r, 2048);
      const q = new Uint8Array(n + (4 - (n % 4)));
      q.set(p.subarray(0, Math.min(16, p.length)));
      for (let at = 16; at + 4 <= q.length; at += 4) setU32(q, at, 1, false);
      ev[i] = withPayload(send(i), q);
      return;
    }
    case 'rpc-segment-count-millions': {
      // RFC 8166 §4.2: no read list, a write chunk announcing millions of segments (or 2^32 - 1).
      const i = pick(r, ss);
      const p = send(i).payload;
      const q = new Uint8Array(16 + 12 + 16 * (1 + int(r, 8)));
      q.set(p.subarray(0, Math.min(16, p.length)));
      setU32(q, 12, 0, false); // RDMA_MSG
      setU32(q, 16, 0, false); // read list empty
      setU32(q, 20, 1, false); // write list: one chunk
      setU32(q, 24, r() < 0.5 ? 0xffffffff : 1_000_000 + int(r, 9_000_000), false);
      for (let at = 28; at + 4 <= q.length; at += 4) setU32(q, at, int(r, 0x100000000), false);
      ev[i] = withPayload(send(i), q);
      return;
    }
    case 'rpc-credits-65535': {
      // RFC 8166 §4.2.1 rdma_credit of 65535 (or 2^32 - 1) in every message.
      const v = r() < 0.5 ? 0xffff : 0xffffffff;
      for (const i of ss) setU32(copy(i), 8, v, false);
      return;
    }
    case 'rpc-xid-reused': {
      // Every Call and Reply with one XID: rdma_xid and the RPC XID after the chunk lists alike.
      const xids = new Set<number>();
      const dv = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
      for (const i of ss) if (send(i).payload.length >= 4) xids.add(dv(send(i).payload).getUint32(0, false));
      const one = r() < 0.5 ? 0 : [...xids][0]!;
      for (const i of ss) {
        const q = copy(i);
        const v = dv(q);
        for (let at = 0; at + 4 <= q.length; at += 4) if (xids.has(v.getUint32(at, false))) v.setUint32(at, one, false);
      }
      return;
    }
  }
}

/** Mutations that apply to a base: its own named cases and the generic ones. */
export function mutationsFor(base: UlpBase): UlpMutation[] {
  return ULP_MUTATIONS.filter((m) =>
    m.startsWith('smbd-') ? base === 'smb-direct' : m.startsWith('rpc-') ? base === 'rpc-rdma' : true,
  );
}

export interface UlpCase {
  name: string;
  capture: Uint8Array;
}

/** One fuzz case: a base connection with 1 to 3 mutations, framed with random segmentation and markers. */
export function ulpCase(r: Rand, base: UlpBase = pick(r, ULP_BASES), kinds?: readonly UlpMutation[]): UlpCase {
  const spec = ulpBaseSpec(base);
  const ev: Events = [...spec.events];
  const chosen = kinds ?? Array.from({ length: 1 + int(r, 3) }, () => pick(r, mutationsFor(base)));
  for (const k of chosen) mutateUlp(r, ev, k);
  const seg = pick(r, ['mss', 'packed', 'one-per-segment', 'random'] as const);
  const markers = pick(r, ['none', 'both'] as const);
  const { knobs } = resolveKnobs({ segmentation: seg, markers, crc: 'on' });
  const g = buildUlpConnection({ ...spec, events: ev, expect: [] }, knobs, 1 + int(r, 1000));
  return {
    name: `${base} ${chosen.join('+')} (${seg}, markers ${markers})`,
    capture: captureFile(g.frames, 'pcap', g.linkType),
  };
}
