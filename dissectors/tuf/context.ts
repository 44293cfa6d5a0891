import type { Hold } from './hold.js';
import type { TufRecord } from './types.js';

/** What a framer of one direction needs from its owner: the held octets, names, and the outputs. */
export interface DirectionContext {
  readonly hold: Hold;
  readonly flow: number;
  readonly dir: 0 | 1;
  readonly from: string;
  readonly to: string;
  /** Absolute sequence number of a stream offset. */
  seqOf(offset: number): number;
  emit(rec: TufRecord): void;
  find(rule: string, seq: number | null, frames: readonly number[], message: string): void;
}

/** Up to this many first octets of a PDU are kept in its record (the detail view's preview). */
export const HEAD_BYTES = 32;
