/**
 * A scenario and knob values to a capture file and its ground truth (what `mpa-dissect generate`
 * writes). Deterministic: the same scenario, knobs and seed give the same octets. The knob-driven
 * scenarios are written as a stream (frames made as the file is written: memory does not grow with
 * the capture); scenarios with their own builder are small and made whole.
 */
import type { CaptureFormat } from './capture-file.js';
import { CaptureWriter, collectCapture } from './capture-writer.js';
import { planKnobConnection } from './knob-connection.js';
import { KnobError, resolveKnobs } from './knobs.js';
import { allScenarios, findScenario } from './registry.js';
import { TRUTH_SCHEMA, type GroundTruth } from './truth.js';
import { LINKTYPE_ETHERNET } from '../report/pcap-writer.js';

export interface GenerateResult {
  capture: Uint8Array;
  truth: GroundTruth;
}

export interface GenerateStream {
  /** Known before any frame is made (asked for after write(), it is not held while the frames are written). */
  readonly truth: GroundTruth;
  /** Makes the capture file and hands it to `sink` block by block (each valid during the call only); once. */
  write(sink: (block: Uint8Array) => void): void;
}

/** The scenario's truth, and its capture to be written; a bad knob is a KnobError before anything is made. */
export function generateStream(
  name: string,
  options: Readonly<Record<string, string>>,
  seed: number,
  format: CaptureFormat,
): GenerateStream {
  const sc = findScenario(name);
  if (!sc)
    throw new KnobError(
      `unknown scenario "${name.slice(0, 40)}" (generate --list names them: ${allScenarios()
        .slice(0, 6)
        .map((s) => s.name)
        .join(', ')}, ...)`,
    );
  const { knobs, raw } = resolveKnobs(sc.knobs ?? {}, options);
  const g = sc.build ? sc.build(knobs, seed) : planKnobConnection(knobs, seed);
  const shown = sc.uses ? Object.fromEntries(Object.entries(raw).filter(([k]) => sc.uses!.includes(k))) : raw;
  const linkType = g.linkType ?? LINKTYPE_ETHERNET;
  let truth: GroundTruth | null = null;
  return {
    // Made when first asked for: its per-FPDU lists are not held while the frames are written.
    get truth() {
      truth ??= {
        schema: TRUTH_SCHEMA,
        scenario: name,
        seed,
        knobs: shown,
        args: g.args,
        findings: g.findings,
        flows: g.flows,
        ...(g.fpduSeqs ? { fpduSeqs: g.fpduSeqs } : {}),
      };
      return truth;
    },
    write(sink) {
      const frames = Array.isArray(g.frames) ? g.frames : g.frames();
      // Damage to the finished file (a capture cut short) needs the whole file.
      if ('post' in g && g.post) return sink(g.post(collectCapture(frames, format, linkType)));
      const w = new CaptureWriter(format, linkType, sink);
      for (const f of frames) w.write(f);
      w.end();
    },
  };
}

/** The whole capture in memory (tests, the corpus). */
export function generate(
  name: string,
  options: Readonly<Record<string, string>>,
  seed: number,
  format: CaptureFormat,
): GenerateResult {
  const s = generateStream(name, options, seed, format);
  const parts: Uint8Array[] = [];
  s.write((b) => parts.push(b.slice()));
  const capture = parts.length === 1 ? parts[0]! : new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  if (parts.length > 1) {
    let o = 0;
    for (const p of parts) {
      capture.set(p, o);
      o += p.length;
    }
  }
  return { capture, truth: s.truth };
}
