/**
 * A scenario and knob values to a capture file and its ground truth (what `mpa-dissect generate`
 * writes). Deterministic: the same scenario, knobs and seed give the same octets.
 */
import { captureFile, type CaptureFormat } from './capture-file.js';
import { buildKnobConnection } from './knob-connection.js';
import { KnobError, resolveKnobs } from './knobs.js';
import { allScenarios, findScenario } from './registry.js';
import { TRUTH_SCHEMA, type GroundTruth } from './truth.js';

export interface GenerateResult {
  capture: Uint8Array;
  truth: GroundTruth;
}

export function generate(
  name: string,
  options: Readonly<Record<string, string>>,
  seed: number,
  format: CaptureFormat,
): GenerateResult {
  const sc = findScenario(name);
  if (!sc)
    throw new KnobError(
      `unknown scenario "${name.slice(0, 40)}" (generate --list names them: ${allScenarios()
        .slice(0, 6)
        .map((s) => s.name)
        .join(', ')}, ...)`,
    );
  const { knobs, raw } = resolveKnobs(sc.knobs ?? {}, options);
  const g = (sc.build ?? buildKnobConnection)(knobs, seed);
  const shown = sc.uses ? Object.fromEntries(Object.entries(raw).filter(([k]) => sc.uses!.includes(k))) : raw;
  return {
    capture: (g.post ?? ((b: Uint8Array) => b))(captureFile(g.frames, format, g.linkType)),
    truth: {
      schema: TRUTH_SCHEMA,
      scenario: name,
      seed,
      knobs: shown,
      args: g.args,
      findings: g.findings,
      flows: g.flows,
      ...(g.fpduSeqs ? { fpduSeqs: g.fpduSeqs } : {}),
    },
  };
}
