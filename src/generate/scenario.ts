/**
 * Builds whole TCP connections carrying MPA as real pcap files: handshake, each side's byte stream
 * cut into segments by a policy, optional reordering, duplication and loss, FIN/RST.
 */
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../report/pcap-writer.js';
import { ACK, FIN, PSH, RST, SYN, mssOption, tcpFrame } from './frames.js';
import { rng } from './mpa-encoder.js';

export interface Endpoint {
  addr: string;
  port: number;
}

/** One send: `bytes` from side 0 (client) or 1 (server), cut into segments by `cut`. */
export interface Send {
  dir: 0 | 1;
  bytes: Uint8Array;
  /** Segment sizes; default: one segment per MSS. A function gets the bytes and returns sizes. */
  cut?: number[] | 'mss' | { random: number; seed: number; max?: number };
  /** Microseconds of capture time that pass before this send's first segment (default 0). */
  delayUs?: number;
  /** Each of its frames captured with this many octets only (a snaplen cut; the original length recorded). */
  snaplen?: number;
}

export interface ScenarioOptions {
  client?: Endpoint;
  server?: Endpoint;
  isn?: [number, number];
  mss?: number;
  /** Skip the handshake (mid-stream capture). */
  noHandshake?: boolean;
  /** How the connection ends. */
  close?: 'fin' | 'rst' | 'none';
  /** Instead of `close`: these FIN/RST segments in this order (e.g. FIN then two RSTs from the server). */
  closing?: ReadonlyArray<{ dir: 0 | 1; flag: 'fin' | 'rst' }>;
  /** Post-processing on the list of data frames (indexes in emission order): drop, duplicate, reorder. */
  drop?: (i: number, dir: 0 | 1) => boolean;
  duplicate?: (i: number) => boolean;
  /** Swap each data frame i with i+1 when it returns true. */
  swapWithNext?: (i: number, dirA: 0 | 1, dirB: 0 | 1) => boolean;
  /** Drop this many octets of stream from the start of each direction's capture (mid-stream start). */
  skipBytes?: [number, number];
  /**
   * After data frame i and its successor in the same direction: a retransmission of the second half
   * of i and the first half of the successor, the same octets again (an overlapping retransmission).
   */
  overlap?: (i: number) => boolean;
  /** Tag every frame with this IEEE 802.1Q VLAN ID. */
  vlan?: number;
}

export interface ScenarioResult {
  pcap: Uint8Array;
  frames: PcapFrame[];
  /** Absolute seq of each side's first payload octet (ISN + 1). */
  dataSeq: [number, number];
  /**
   * Per send (in `sends` order): the frame number (1-based) and capture time in µs of the frame
   * that carried its last octet, as scheduled here; null when that frame was dropped or skipped.
   */
  sendEnds: Array<{ frame: number; us: number } | null>;
}

export function buildScenario(sends: readonly Send[], o: ScenarioOptions = {}): ScenarioResult {
  const ep: [Endpoint, Endpoint] = [
    o.client ?? { addr: '10.0.0.1', port: 40001 },
    o.server ?? { addr: '10.0.0.2', port: 4420 },
  ];
  const isn = o.isn ?? [1000, 900000];
  const mss = o.mss ?? 1460;
  const seq: [number, number] = [(isn[0] + 1) >>> 0, (isn[1] + 1) >>> 0];
  const dataSeq: [number, number] = [seq[0], seq[1]];
  let t = 1_700_000_000 * 1e6;
  const frames: PcapFrame[] = [];
  const push = (data: Uint8Array, snaplen?: number) => {
    t += 10;
    const cut = snaplen !== undefined && data.length > snaplen;
    frames.push({
      tsSec: Math.floor(t / 1e6),
      tsNsec: (t % 1e6) * 1000,
      data: cut ? data.subarray(0, snaplen) : data,
      ...(cut ? { origLen: data.length } : {}),
    });
  };
  const seg = (dir: 0 | 1, flags: number, s: number, payload?: Uint8Array, options?: Uint8Array) =>
    tcpFrame(
      {
        src: ep[dir].addr,
        dst: ep[1 - dir]!.addr,
        sport: ep[dir].port,
        dport: ep[1 - dir]!.port,
        seq: s,
        ack: seq[1 - dir]!,
        flags,
        ...(payload ? { payload } : {}),
        ...(options ? { options } : {}),
      },
      o.vlan,
    );
  if (!o.noHandshake) {
    push(
      tcpFrame(
        {
          src: ep[0].addr,
          dst: ep[1].addr,
          sport: ep[0].port,
          dport: ep[1].port,
          seq: isn[0],
          flags: SYN,
          options: mssOption(mss),
        },
        o.vlan,
      ),
    );
    push(
      tcpFrame(
        {
          src: ep[1].addr,
          dst: ep[0].addr,
          sport: ep[1].port,
          dport: ep[0].port,
          seq: isn[1],
          ack: seq[0],
          flags: SYN | ACK,
          options: mssOption(mss),
        },
        o.vlan,
      ),
    );
    push(seg(0, ACK, seq[0]));
  }
  const data: {
    dir: 0 | 1;
    frame: Uint8Array;
    seq: number;
    payload: Uint8Array;
    delayUs: number;
    snaplen: number | undefined;
    /** Index of the send, and whether this segment carries its last octet. */
    send: number;
    last: boolean;
  }[] = [];
  const skip = o.skipBytes ? [...o.skipBytes] : [0, 0];
  for (const [sendIndex, s] of sends.entries()) {
    const sizes: number[] = [];
    const n = s.bytes.length;
    if (Array.isArray(s.cut)) {
      let rest = n;
      for (const c of s.cut) {
        if (rest <= 0) break;
        sizes.push(Math.min(c, rest));
        rest -= c;
      }
      if (rest > 0) sizes.push(rest);
    } else if (s.cut && typeof s.cut === 'object') {
      const r = rng(s.cut.seed);
      let rest = n;
      while (rest > 0) {
        const c = Math.min(rest, 1 + Math.floor(r() * (s.cut.max ?? mss)));
        sizes.push(c);
        rest -= c;
      }
    } else {
      for (let off = 0; off < n; off += mss) sizes.push(Math.min(mss, n - off));
    }
    let off = 0;
    let delayUs = s.delayUs ?? 0;
    for (const z of sizes) {
      const payload = s.bytes.subarray(off, off + z);
      const sq = seq[s.dir];
      seq[s.dir] = (seq[s.dir] + z) >>> 0;
      off += z;
      const sk = skip[s.dir]!;
      if (sk >= z) {
        skip[s.dir] = sk - z;
        continue;
      }
      if (sk > 0) {
        skip[s.dir] = 0;
        data.push({
          dir: s.dir,
          frame: seg(s.dir, ACK | PSH, (sq + sk) >>> 0, payload.subarray(sk)),
          seq: (sq + sk) >>> 0,
          payload: payload.subarray(sk),
          delayUs,
          snaplen: s.snaplen,
          send: sendIndex,
          last: off === n,
        });
        delayUs = 0;
        continue;
      }
      data.push({
        dir: s.dir,
        frame: seg(s.dir, ACK | PSH, sq, payload),
        seq: sq,
        payload,
        delayUs,
        snaplen: s.snaplen,
        send: sendIndex,
        last: off === n,
      });
      delayUs = 0;
    }
  }
  const sendEnds: ScenarioResult['sendEnds'] = sends.map(() => null);
  const kept = data.filter((d, i) => !(o.drop?.(i, d.dir) ?? false));
  for (let i = 0; i + 1 < kept.length; i++) {
    if (o.swapWithNext?.(i, kept[i]!.dir, kept[i + 1]!.dir)) {
      const a = kept[i]!;
      kept[i] = kept[i + 1]!;
      kept[i + 1] = a;
      i++;
    }
  }
  let overlapAfter: Uint8Array | null = null;
  kept.forEach((d, i) => {
    t += d.delayUs;
    push(d.frame, d.snaplen);
    if (d.last) sendEnds[d.send] = { frame: frames.length, us: t };
    if (o.duplicate?.(i)) push(d.frame);
    if (overlapAfter) push(overlapAfter);
    overlapAfter = null;
    const next = kept[i + 1];
    if (
      next &&
      o.overlap?.(i) &&
      next.dir === d.dir &&
      (d.seq + d.payload.length) >>> 0 === next.seq &&
      d.payload.length > 1 &&
      next.payload.length > 1
    ) {
      const a = d.payload.subarray(d.payload.length >> 1);
      const b = next.payload.subarray(0, next.payload.length >> 1);
      const both = new Uint8Array(a.length + b.length);
      both.set(a);
      both.set(b, a.length);
      overlapAfter = seg(d.dir, ACK | PSH, (d.seq + (d.payload.length >> 1)) >>> 0, both);
    }
  });
  if (o.closing) {
    const finSent = [false, false];
    for (const c of o.closing) {
      // A RST after the sender's FIN carries the sequence number after the FIN.
      const at = (seq[c.dir] + (finSent[c.dir] ? 1 : 0)) >>> 0;
      push(seg(c.dir, c.flag === 'fin' ? FIN | ACK : RST, at));
      if (c.flag === 'fin') finSent[c.dir] = true;
    }
  } else if (o.close === 'fin' || o.close === undefined) {
    push(seg(0, FIN | ACK, seq[0]));
    push(seg(1, FIN | ACK, seq[1]));
  } else if (o.close === 'rst') {
    push(seg(0, RST | ACK, seq[0]));
  }
  return { pcap: buildPcap(LINKTYPE_ETHERNET, frames), frames, dataSeq, sendEnds };
}
