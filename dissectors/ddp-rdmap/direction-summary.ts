/**
 * The per-direction counts the report shows (report-schema DdpDirection): segments per opcode and
 * size statistics of complete messages, kept in DirState as flat number arrays (no object per
 * opcode), and the summary built from them when an output asks.
 */

import { opcodeKey, type OpcodeKey } from './fields.js';
import type { DirState } from './direction-state.js';
import type { DdpDirection, DdpSizeStats } from './types.js';

/** Index of an OpcodeKey in per-direction tables: the opcode, or UNKNOWN_KEY for 'unknown'. */
export const UNKNOWN_KEY = 12;
export const keyIndex = (opcode: number): number => (opcodeKey(opcode) === 'unknown' ? UNKNOWN_KEY : opcode);
const keyOf = (index: number): OpcodeKey => (index === UNKNOWN_KEY ? 'unknown' : opcodeKey(index));
/** Numbers per opcode in DirState.sizeStats: key index, messages, min, max, total. */
const SIZE_STRIDE = 5;

/** One more segment of opcode key index `key`. */
export function countSegment(st: DirState, key: number): void {
  const ops = st.opCounts;
  if (ops === null) {
    st.opCounts = [key, 1];
    return;
  }
  for (let i = 0; i < ops.length; i += 2) {
    if (ops[i] === key) {
      ops[i + 1]!++;
      return;
    }
  }
  ops.push(key, 1);
}

/** One more complete message of `opcode`, `length` payload octets long. */
export function countCompleteSize(st: DirState, opcode: number, length: number): void {
  const k = keyIndex(opcode);
  const t = st.sizeStats;
  let i = 0;
  if (t !== null) while (i < t.length && t[i] !== k) i += SIZE_STRIDE;
  if (t !== null && i < t.length) {
    t[i + 1]!++;
    t[i + 2] = Math.min(t[i + 2]!, length);
    t[i + 3] = Math.max(t[i + 3]!, length);
    t[i + 4] = t[i + 4]! + length;
  } else if (t !== null) t.push(k, 1, length, length, length);
  else st.sizeStats = [k, 1, length, length, length];
}

/** The report's summary of one direction (messages still open count as incomplete). */
export function summarizeDirection(st: DirState): DdpDirection {
  const byOpcode: Partial<Record<OpcodeKey, number>> = {};
  const ops = st.opCounts;
  if (ops) for (let i = 0; i < ops.length; i += 2) byOpcode[keyOf(ops[i]!)] = ops[i + 1]!;
  const sizes: Partial<Record<OpcodeKey, DdpSizeStats>> = {};
  const t = st.sizeStats;
  if (t)
    for (let i = 0; i < t.length; i += SIZE_STRIDE)
      sizes[keyOf(t[i]!)] = { messages: t[i + 1]!, min: t[i + 2]!, max: t[i + 3]!, total: t[i + 4]! };
  const open = st.openCount;
  return {
    segments: st.segments,
    messages: st.messagesComplete + st.messagesIncomplete + open,
    rtr: st.rtr,
    byOpcode,
    msnErrors: st.msnErrors,
    moErrors: st.moErrors,
    messagesComplete: st.messagesComplete,
    messagesIncomplete: st.messagesIncomplete + open,
    toErrors: st.toErrors,
    skipped: st.skipped,
    malformed: st.malformed,
    lossExplained: st.lossExplained,
    readRequests: st.readRequests,
    ...(st.readRequestsByteSwapped > 0 ? { readRequestsByteSwapped: st.readRequestsByteSwapped } : {}),
    readResponses: st.readResponses,
    terminates: st.terminates,
    sizes,
  };
}
