/**
 * The MPA connection as its state steps see it (scan and hunt, await, FPDU checks, break diagnosis,
 * gaps and ends): what they read of it and call on it. MpaFlow implements it; the steps import this
 * file, never mpa-flow.ts, so the flow's files form no import cycle (layers.json).
 */
import type { EnablementHost } from './enablement.js';
import type { DirectionHost, MpaDirection } from './mpa-direction.js';
import type { MpaFramingOptions, MpaOutputs, UpperLayer } from './mpa-types.js';
import type { NegotiationHost, StartupNegotiation } from './startup-negotiation.js';

export interface FlowHost extends DirectionHost, EnablementHost, NegotiationHost {
  /** The options every flow shares (no copy per flow). */
  readonly opts: MpaFramingOptions;
  readonly out: MpaOutputs;
  /** Held-bytes cap per direction while hunting or waiting for negotiation. */
  readonly holdBytes: number;
  /** Bytes a direction without startup frames is searched for mid-stream FPDUs. */
  readonly huntBudget: number;
  readonly rejected: boolean;
  readonly isMpa: boolean;
  /** Each direction's framer keeps the tagged octets the layer above now wants (UpperLayer.taggedBytes). */
  setTaggedBounds(upper: UpperLayer): void;
  /** The startup negotiation once a startup key was seen, else null (not created by reading it). */
  readonly negotiation: StartupNegotiation | null;
  /** The RST that aborted the connection was reported (once per connection). */
  abortReported: boolean;
  /** Injected by the pipeline: could this ULPDU start a DDP segment at all (checked on every FPDU). */
  framingPlausible: (head: Uint8Array, length: number) => boolean;
  /** Injected by the pipeline: DDP header plausibility (MPA itself knows nothing of DDP). */
  plausible: (head: Uint8Array, length: number) => boolean;
  /** The other direction of `d`'s connection (created if needed). */
  peer(d: MpaDirection): MpaDirection;
  /** Steps `d`'s startup frame (startup-negotiation.ts), creating the negotiation if needed. */
  stepStartup(d: MpaDirection, final: boolean): void;
  /** The layer above MPA, created on first use once the startup is known. */
  upperLayer(): UpperLayer | null;
  /** The layer above MPA if already created, else null. */
  readonly upperInstance: UpperLayer | null;
}

/** Shared default for the injected checks and for forced searches (no function object per flow). */
export function ACCEPT_ALL(): boolean {
  return true;
}
