/**
 * Per-frame facts for the fields scripts name most (frame.time*, frame.len, tcp.seq, tcp.ack,
 * tcp.len, tcp.flags.*), as tshark gives them: a record answers with the values of each frame that
 * carried it, in order, as it answers frame.number. Kept only when such a field is asked for, for
 * the most recent RECENT frames (typed arrays, nothing allocated per packet but the decoder's own
 * work); a record reaching further back than that has no value for them, never a wrong one.
 *
 * Sequence and acknowledgement numbers are relative by default, as Wireshark's (its preference
 * tcp.relative_sequence_numbers): per direction, the SYN's sequence number is the base (SYN 0, first
 * octet 1); without a SYN, one before the first sequence number seen; a direction first seen only
 * through its peer's ACK takes that ACK minus one. A SYN with another ISN starts a new connection.
 * tcp.seq_raw and tcp.ack_raw are always absolute (Wireshark's names).
 */
import type { PacketRecord } from '../capture/packet.js';
import { PacketDecoder } from '../net/decoder.js';
import { TCP_ACK, TCP_SYN, type TcpSegment } from '../net/segment.js';
import type { FieldValue } from '../vocabulary/fields.js';
import type { FindingSink } from '../vocabulary/findings.js';
import { deltaText, epochText, frameTimeText } from './time-format.js';

const RECENT = 1 << 16;

/** The names these facts answer; the flag bits of tcp.flags.* (Wireshark's masks). */
export const FRAME_FACT_FLAGS: Readonly<Record<string, number>> = {
  'tcp.flags.fin': 0x01,
  'tcp.flags.syn': 0x02,
  'tcp.flags.reset': 0x04,
  'tcp.flags.push': 0x08,
  'tcp.flags.ack': 0x10,
  'tcp.flags.urg': 0x20,
  'tcp.flags.ece': 0x40,
  'tcp.flags.cwr': 0x80,
};

const NAMES: ReadonlySet<string> = new Set([
  'frame.time',
  'frame.time_relative',
  'frame.time_epoch',
  'frame.time_delta',
  'frame.len',
  'frame.cap_len',
  'tcp.seq',
  'tcp.seq_raw',
  'tcp.ack',
  'tcp.ack_raw',
  'tcp.len',
  'tcp.flags',
  ...Object.keys(FRAME_FACT_FLAGS),
]);

/** Whether `name` is one of the per-frame facts. */
export function isFrameFact(name: string): boolean {
  return NAMES.has(name);
}

/** Whether a filter text or a field list names one of them (so the facts are kept only then). */
export function namesFrameFact(text: string): boolean {
  return /\b(frame\.(time|len|cap_len)|tcp\.(seq|ack|len|flags))/.test(text);
}

/** The analysis reports what the decoder finds; this second reading only takes the numbers. */
const NO_FINDINGS: FindingSink = { report: () => undefined };

interface DirBase {
  base: number;
  isn: number | null;
}

export class FrameFacts {
  private readonly frame = new Float64Array(RECENT).fill(-1);
  private readonly sec = new Float64Array(RECENT);
  private readonly nsec = new Uint32Array(RECENT);
  private readonly len = new Uint32Array(RECENT);
  private readonly capLen = new Uint32Array(RECENT);
  private readonly prevSec = new Float64Array(RECENT);
  private readonly prevNsec = new Uint32Array(RECENT);
  private readonly hasTcp = new Uint8Array(RECENT);
  private readonly seqRaw = new Uint32Array(RECENT);
  private readonly ackRaw = new Uint32Array(RECENT);
  private readonly seqRel = new Uint32Array(RECENT);
  private readonly ackRel = new Uint32Array(RECENT);
  private readonly flags = new Uint16Array(RECENT);
  private readonly tcpLen = new Uint32Array(RECENT);
  private readonly decoder = new PacketDecoder(NO_FINDINGS);
  /** Per direction ("src sport dst dport"), the base relative numbers count from. */
  private readonly bases = new Map<string, DirBase>();
  private t0Sec = Number.NaN;
  private t0Nsec = 0;
  private lastSec = Number.NaN;
  private lastNsec = 0;
  private slot = 0;

  /** `relative`: tcp.seq and tcp.ack relative (Wireshark's default), else absolute. */
  constructor(private readonly relative = true) {}

  /** Every packet, in capture order. */
  note(p: PacketRecord): void {
    const i = p.frame % RECENT;
    this.slot = i;
    this.frame[i] = p.frame;
    this.sec[i] = p.tsSec;
    this.nsec[i] = p.tsNsec;
    this.len[i] = p.origLen;
    this.capLen[i] = p.data.length;
    if (Number.isNaN(this.t0Sec)) {
      this.t0Sec = p.tsSec;
      this.t0Nsec = p.tsNsec;
      this.lastSec = p.tsSec;
      this.lastNsec = p.tsNsec;
    }
    this.prevSec[i] = this.lastSec;
    this.prevNsec[i] = this.lastNsec;
    this.lastSec = p.tsSec;
    this.lastNsec = p.tsNsec;
    this.hasTcp[i] = 0;
    this.decoder.decode(p, this.onSegment);
  }

  private readonly onSegment = (s: TcpSegment): void => {
    const i = this.slot;
    const fwd = this.dirBase(`${s.src} ${s.srcPort} ${s.dst} ${s.dstPort}`);
    const rev = this.dirBase(`${s.dst} ${s.dstPort} ${s.src} ${s.srcPort}`);
    if ((s.flags & TCP_SYN) !== 0) {
      if (fwd.isn !== null && fwd.isn !== s.seq && (s.flags & TCP_ACK) === 0) {
        // A new connection on the same 4-tuple: both directions start again.
        rev.isn = null;
        rev.base = Number.NaN;
      }
      fwd.isn = s.seq;
      fwd.base = s.seq;
    } else if (Number.isNaN(fwd.base)) fwd.base = (s.seq - 1) >>> 0;
    if ((s.flags & TCP_ACK) !== 0 && Number.isNaN(rev.base)) rev.base = (s.ack - 1) >>> 0;
    this.hasTcp[i] = 1;
    this.seqRaw[i] = s.seq;
    this.ackRaw[i] = s.ack;
    this.seqRel[i] = (s.seq - fwd.base) >>> 0;
    this.ackRel[i] = (s.flags & TCP_ACK) !== 0 ? (s.ack - rev.base) >>> 0 : s.ack;
    this.flags[i] = s.flags & 0xfff;
    this.tcpLen[i] = s.payload.length + s.missing;
  };

  private dirBase(key: string): DirBase {
    let b = this.bases.get(key);
    if (!b) {
      b = { base: Number.NaN, isn: null };
      this.bases.set(key, b);
    }
    return b;
  }

  /** The values of `name` for these frames (those still kept), or undefined when none has one. */
  values(name: string, frames: readonly number[]): FieldValue[] | undefined {
    let out: FieldValue[] | undefined;
    for (const fr of frames) {
      const v = this.value(name, fr);
      if (v === undefined) continue;
      (out ??= []).push(v);
    }
    return out;
  }

  private value(name: string, fr: number): FieldValue | undefined {
    const i = fr % RECENT;
    if (this.frame[i] !== fr) return undefined;
    switch (name) {
      case 'frame.time':
        return frameTimeText(this.sec[i]!, this.nsec[i]!);
      case 'frame.time_epoch':
        return epochText(this.sec[i]!, this.nsec[i]!);
      case 'frame.time_relative':
        return deltaText(this.sec[i]!, this.nsec[i]!, this.t0Sec, this.t0Nsec, 9);
      case 'frame.time_delta':
        return deltaText(this.sec[i]!, this.nsec[i]!, this.prevSec[i]!, this.prevNsec[i]!, 9);
      case 'frame.len':
        return this.len[i]!;
      case 'frame.cap_len':
        return this.capLen[i]!;
    }
    if (this.hasTcp[i] === 0) return undefined;
    switch (name) {
      case 'tcp.seq':
        return this.relative ? this.seqRel[i]! : this.seqRaw[i]!;
      case 'tcp.seq_raw':
        return this.seqRaw[i]!;
      case 'tcp.ack':
        return this.relative ? this.ackRel[i]! : this.ackRaw[i]!;
      case 'tcp.ack_raw':
        return this.ackRaw[i]!;
      case 'tcp.len':
        return this.tcpLen[i]!;
      case 'tcp.flags':
        return this.flags[i]!;
    }
    const bit = FRAME_FACT_FLAGS[name];
    return bit === undefined ? undefined : (this.flags[i]! & bit) !== 0;
  }
}
