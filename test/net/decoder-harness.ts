/** What the PacketDecoder tests share: a runner collecting segments and findings, and sample TCP specs. */
import type { PacketRecord } from '../../src/capture/packet.js';
import { PacketDecoder, type DecoderOptions } from '../../src/net/decoder.js';
import type { TcpSegment } from '../../src/net/segment.js';
import { ACK, PSH, type TcpSpec } from '../helpers/frames.js';
import { CollectSink } from '../helpers/net-frames.js';

export interface Seg extends Omit<TcpSegment, 'payload'> {
  payload: number[];
}

export function run(
  frames: PacketRecord | PacketRecord[],
  opts?: DecoderOptions,
): { segs: Seg[]; sink: CollectSink; dec: PacketDecoder } {
  const sink = new CollectSink();
  const dec = new PacketDecoder(sink, opts);
  const segs: Seg[] = [];
  for (const f of Array.isArray(frames) ? frames : [frames]) {
    dec.decode(f, (s) => segs.push({ ...s, payload: Array.from(s.payload) }));
  }
  return { segs, sink, dec };
}

export const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
export const V4: TcpSpec = {
  src: '10.0.0.1',
  dst: '10.0.0.2',
  sport: 40001,
  dport: 4420,
  seq: 0xfffffff0,
  ack: 2000,
  flags: ACK | PSH,
  window: 512,
  payload: enc('hello MPA'),
};
export const V6: TcpSpec = { ...V4, src: 'fd00::1', dst: 'fd00::2:0:0:9' };
export const HELLO = Array.from(enc('hello MPA'));

export function big(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + (i >> 8)) & 0xff;
  return b;
}
