/** Messages between the main thread and a flow worker (flow-worker.ts), and their shared words. */
import type { ReassemblyOptions } from '../../tcp/reassembler.js';
import type { FlowResult, ForcedMpaSpec, ForcedTufSpec } from '../pipeline-types.js';

/** Given to each worker when it is created: the words it shares with the main thread. */
export interface WorkerData {
  /** Int32Array words below. */
  shared: SharedArrayBuffer;
}

/** Sent to a worker at the start of each capture it analyses (structured-cloned: data only). */
export interface WorkerStart {
  t: 'start';
  config: WorkerConfig;
}

/** One capture's settings, as a worker needs them. */
export interface WorkerConfig {
  reassembly: ReassemblyOptions | null;
  forced: ForcedMpaSpec[] | null;
  forcedTuf: ForcedTufSpec[] | null;
  /** Run the default layer above MPA (DDP/RDMAP). */
  upper: boolean;
  dissect: boolean;
  /** Rules turned off by the rules file: not worth sending back. */
  disabled: string[];
  /** Which records the main thread's callbacks want. */
  want: { flow: boolean; startup: boolean; fpdu: boolean; tuf: boolean };
}

/** Shared Int32Array words: how many ROW_MAYBE segments the worker has done, whether the last one opened a flow, and failure. */
export const SHARED_MAYBE_DONE = 0;
export const SHARED_OPENED = 1;
export const SHARED_FAILED = 2;
export const SHARED_WORDS = 3;

export type WorkerReply =
  /** Events of one batch; upTo is the slot of its last segment (-1 for an empty batch); the batch's buffers, back for reuse. */
  | { t: 'events'; upTo: number; events: unknown[]; rows: Float64Array; payload: Uint8Array }
  /** Events of closing the worker's flows at the end (tagged by flow id), and their results in id order. */
  | { t: 'finished'; events: unknown[]; flows: FlowResult[] }
  | { t: 'error'; message: string; stack: string };
