/** What the Reassembler tests share: flag shorthands, a reassembler wired to recorders, a handshake. */
import { TCP_ACK, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN } from '../../src/net/segment.js';
import { Reassembler, type FlowHandle, type ReassemblyOptions } from '../../src/tcp/reassembler.js';
import { Conv, FlowRecorder, SinkRecorder, type StreamEvent } from '../helpers/tcp-stream.js';

export const SYN = TCP_SYN;
export const SYNACK = TCP_SYN | TCP_ACK;
export const ACK = TCP_ACK;
export const PA = TCP_PSH | TCP_ACK;
export const FA = TCP_FIN | TCP_ACK;
export const RA = TCP_RST | TCP_ACK;

export function setup(opts?: ReassemblyOptions) {
  const sink = new SinkRecorder();
  const recs: FlowRecorder[] = [];
  const handles: FlowHandle[] = [];
  const r = new Reassembler(
    sink,
    (h) => {
      const f = new FlowRecorder();
      recs.push(f);
      handles.push(h);
      return f;
    },
    opts,
  );
  return { r, sink, recs, handles, cv: new Conv() };
}

export type Data = Extract<StreamEvent, { kind: 'data' }>;
export const dataOf = (ev: readonly StreamEvent[]): Data[] => ev.filter((e): e is Data => e.kind === 'data');

/** SYN, SYN-ACK, ACK with client ISN ci and server ISN si. */
export function handshake(r: Reassembler, cv: Conv, ci: number, si: number): void {
  r.segment(cv.c({ seq: ci, flags: SYN, mss: 1460 }));
  r.segment(cv.s({ seq: si, ack: ci + 1, flags: SYNACK, mss: 1440 }));
  r.segment(cv.c({ seq: ci + 1, ack: si + 1, flags: ACK }));
}
