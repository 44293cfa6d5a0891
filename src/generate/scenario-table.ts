/**
 * What a scenario is, for the registry (src/generate/registry.ts): a name, a line saying what it
 * shows, knob presets, and optionally its own builder. Scenario tables live one per file (this
 * project's MPA scenarios in scenarios.ts; Rev 0 and TUF tables join the registry the same way).
 */
import type { Knobs } from './knobs.js';
import type { Generated } from './knob-connection.js';

export interface Scenario {
  readonly name: string;
  /** One line: what the capture shows. */
  readonly summary: string;
  /** Knob values the scenario sets; the user's options override them. */
  readonly knobs?: Readonly<Record<string, string>>;
  /** Builds the capture and its truth; default: the knob-driven connection (knob-connection.ts). */
  readonly build?: (k: Knobs, seed: number) => Generated;
  /** For a scenario with its own builder: the knobs it reads (the rest are ignored); default: all. */
  readonly uses?: readonly string[];
}
