/**
 * The RDMAP messages of a knob-driven connection (knob-connection.ts), both directions, in rounds
 * (request/answer turns): the RTR (RFC 6581 §7), the Initiator's mix drawn message by message, the
 * Responder's answers (Read Responses, Atomic Responses) and its own messages, as DDP segments
 * (RFC 5041 §5, MO/TO advancing, L on the last). Planned as lengths and recipes (fpdu-list.ts): a
 * message's payload is drawn as a seed here and made when the stream reaches it.
 */
import {
  atomicRequest,
  atomicResponse,
  immediate,
  readRequest,
  send,
  sendSegments,
  taggedSegments,
  terminate,
} from './ddp-ulpdu.js';
import { FpduList, segmented } from './fpdu-list.js';
import { KnobError, type Knobs, type MessageKind } from './knobs.js';
import { patternBytes } from './mpa-encoder.js';

const TERMINATE_LAYER_RDMAP = 0;

export type LengthMistake = 'wrong-pad' | 'no-pad' | 'length-counts-header' | 'length-counts-crc' | 'length-le';

/** Largest ULPDU whose FPDU (length, PAD, CRC, every marker it can hold) fits one MSS. */
function ulpduFitting(mss: number): number {
  const markers = Math.ceil(mss / 512) + 1;
  return Math.max(32, ((mss - 2 - 3 - 4 - 4 * markers) >> 2) << 2);
}

/**
 * Both directions' FPDUs, drawing from `r` exactly as the capture is meant to (the order of draws
 * fixes the octets). Throws KnobError for a sender mistake the truth does not model.
 */
export function planMessages(
  k: Knobs,
  r: () => number,
  impair: ReadonlySet<string>,
  mark: readonly [boolean, boolean],
  midStream: boolean,
): { i2r: FpduList; r2i: FpduList; rtr: Knobs['rtr']; lengthMistake: LengthMistake | undefined } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const room = k.segmentation === 'large' ? k.maxUlpdu : Math.min(k.maxUlpdu, ulpduFitting(k.mss));
  const i2r = new FpduList();
  const r2i = new FpduList();
  const msn = [
    [0, 0, 0, 0],
    [0, 0, 0, 0],
  ] as number[][];
  const nextMsn = (dir: 0 | 1, qn: number) => ++msn[dir]![qn]!;
  // The Initiator's first message is never empty: a zero-length Send or Write first is an RTR
  // (RFC 6581), which without peer-to-peer mode is a finding of its own.
  const size = () => Math.max(i2r.length === 0 ? 1 : 0, Math.floor(r() * (k.size + 1)));
  /** A payload's seed, drawn where the whole-capture build drew its octets' seed. */
  const seedOf = () => Math.floor(r() * 1e9);
  const bytes = (n: number) => patternBytes(n, seedOf());
  const rtr = k.rev === 2 ? k.rtr : 'none';
  // The Responder speaks before the Initiator's first FPDU (RFC 5044 §7.1.2 rule 4): a Send, first of all.
  if (impair.has('responder-first')) r2i.addOne(send(nextMsn(1, 0), bytes(16)), -1, 'send');
  if (rtr === 'send') i2r.addOne(send(nextMsn(0, 0)), 0, 'rtr');
  if (rtr === 'write') i2r.addOne(taggedSegments(0x0, 0, 0, new Uint8Array(0), 1)[0]!, 0, 'rtr');
  if (rtr === 'read') {
    i2r.addOne(readRequest({ msn: nextMsn(0, 1), sinkStag: 0, sinkTo: 0, size: 0, srcStag: 0, srcTo: 0 }), 0, 'rtr');
    r2i.addOne(taggedSegments(0x2, 0, 0, new Uint8Array(0), 1)[0]!, 0, 'rtr');
  }
  // A sender mistake shows from the first FPDU on when its ULPDU_Length is 265 (or 769): (2+L) mod 4 = 3,
  // so every PAD rule and length miscount gives another FPDU size than RFC 5044 §4.2.
  const lengthMistake = (
    ['wrong-pad', 'no-pad', 'length-counts-header', 'length-counts-crc', 'length-le'] as const
  ).find((x) => impair.has(x));
  if (midStream && lengthMistake)
    throw new KnobError(
      `--impair ${lengthMistake}: a sender mistake is diagnosed from the startup on (--start startup)`,
    );
  if (lengthMistake && mark[0])
    throw new KnobError(
      `--impair ${lengthMistake}: the truth of a length mistake is modelled without markers from the Initiator (--markers none or r2i)`,
    );
  if (lengthMistake) {
    if (rtr !== 'none')
      throw new KnobError(
        `--impair ${lengthMistake}: modelled on the Initiator's first FPDU, which an RTR would be (--rtr none)`,
      );
    if (k.messages.some((m) => m === 'read' || m === 'atomic'))
      throw new KnobError(
        `--impair ${lengthMistake}: needs a --messages mix without read and atomic (requests held while framing is diagnosed reach DDP after their answers)`,
      );
    // Little-endian: 769 = 0x0301 read as 0x0103 = 259, an end inside the FPDU itself.
    const L = lengthMistake === 'length-le' ? 769 : 265;
    i2r.addOne(send(nextMsn(0, 0), bytes(L - 18)), 0, 'send');
  }
  const own = k.messages.filter((m) => m !== 'read' && m !== 'atomic' && m !== 'terminate');
  const mix = k.messages.filter((m) => m !== 'terminate');
  const responderOwn: Array<{ round: number; kind: MessageKind }> = [];
  const rounds = k.count;
  for (let i = 0; i < Math.ceil(k.count / 2) && own.length > 0; i++)
    responderOwn.push({ round: 1 + Math.floor(r() * Math.max(1, rounds)), kind: pick(own) });
  responderOwn.sort((a, b) => a.round - b.round);
  const max = Math.max(1, room - 18);
  const maxTagged = Math.max(1, room - 14);
  const message = (dir: 0 | 1, list: FpduList, kind: MessageKind, round: number, idx: number) => {
    switch (kind) {
      case 'send':
      case 'send-se':
      case 'send-inv': {
        const o = kind === 'send-se' ? { se: true } : kind === 'send-inv' ? { invalidate: 0x5000 + idx } : {};
        const m = nextMsn(dir, 0);
        const n = size();
        const seed = seedOf();
        list.add(...segmented(18, n, max), round, kind, () => sendSegments(m, patternBytes(n, seed), max, o));
        return;
      }
      case 'immediate':
        list.addOne(immediate({ msn: nextMsn(dir, 0), data: BigInt(idx) * 0x1000001n }), round, kind);
        return;
      case 'write': {
        const n = size();
        const seed = seedOf();
        list.add(...segmented(14, n, maxTagged), round, kind, () =>
          taggedSegments(0x0, 0x100 + idx, BigInt(idx) << 20n, patternBytes(n, seed), maxTagged),
        );
        return;
      }
      case 'read': {
        const n = Math.max(1, size());
        const sinkStag = 0x2000 + idx;
        const sinkTo = BigInt(idx) << 24n;
        list.addOne(
          readRequest({ msn: nextMsn(dir, 1), sinkStag, sinkTo, size: n, srcStag: 0x3000 + idx, srcTo: 0n }),
          round,
          kind,
        );
        const seed = seedOf();
        r2i.add(...segmented(14, n, maxTagged), round, 'read-response', () =>
          taggedSegments(0x2, sinkStag, sinkTo, patternBytes(n, seed), maxTagged),
        );
        return;
      }
      case 'atomic':
        list.addOne(
          atomicRequest({
            msn: nextMsn(dir, 1),
            atomicOpcode: 0,
            requestId: idx + 1,
            remoteStag: 0x4000 + idx,
            remoteTo: BigInt(idx) * 8n,
            data: 1n,
          }),
          round,
          kind,
        );
        r2i.addOne(
          atomicResponse({ msn: nextMsn(1, 3), originalRequestId: idx + 1, value: BigInt(idx) }),
          round,
          'atomic-response',
        );
        return;
      case 'terminate':
        list.addOne(terminate({ layer: TERMINATE_LAYER_RDMAP, etype: 2, code: 0xff }), round, kind);
        return;
    }
  };
  let ro = 0;
  for (let i = 0; i < rounds; i++) {
    const round = i + 1;
    if (mix.length > 0) message(0, i2r, pick(mix), round, i);
    // The Responder's own messages of this round follow its answers.
    while (ro < responderOwn.length && responderOwn[ro]!.round <= round)
      message(1, r2i, responderOwn[ro++]!.kind, round, 1000 + ro);
  }
  while (ro < responderOwn.length) message(1, r2i, responderOwn[ro++]!.kind, rounds + 1, 1000 + ro);
  if (k.messages.includes('terminate')) message(0, i2r, 'terminate', rounds + 2, rounds);
  return { i2r, r2i, rtr, lengthMistake };
}
