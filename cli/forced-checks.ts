/**
 * `--mpa` and `--tuf` checked against each other and against the capture's flows. A flow is framed
 * by MPA or by TUF, never both (--tuf wins: flow-stage.ts), so the same selector given to both is
 * a contradiction (one line, exit 2); selectors that differ but meet on a flow, and a selector
 * that matched no flow at all, leave a run that can honestly go on: one warning line each.
 */
import type { ForcedMpaSpec, ForcedTufSpec, FlowSelector } from '../src/analysis/pipeline-types.js';
import { selects } from '../src/analysis/flow-selector.js';
import type { FlowHandle } from '../src/tcp/stream.js';
import { printable } from '../src/report/printable.js';
import { selectorText, UsageError } from './options.js';

const sameSelector = (a: FlowSelector, b: FlowSelector): boolean => selectorText(a) === selectorText(b);

/** Before the run: --mpa and --tuf naming the very same flows. */
export function checkForcedOverlap(mpa: readonly ForcedMpaSpec[], tuf: readonly ForcedTufSpec[]): void {
  for (const m of mpa)
    for (const t of tuf)
      if (sameSelector(m.selector, t.selector))
        throw new UsageError(
          `--mpa flow=${printable(selectorText(m.selector))} and --tuf flow=${printable(selectorText(t.selector))} name the same flows: a flow is framed by MPA or by TUF, not both; drop one`,
        );
}

/** After the run: the warning lines (each ending in a newline) about selectors that did nothing. */
export function forcedNotes(
  mpa: readonly ForcedMpaSpec[],
  tuf: readonly ForcedTufSpec[],
  flows: readonly Pick<FlowHandle, 'id' | 'client' | 'server'>[],
): string[] {
  if (mpa.length === 0 && tuf.length === 0) return [];
  const notes: string[] = [];
  const none = (flag: string, sel: FlowSelector) =>
    notes.push(`mpa-dissect: warning: ${flag} flow=${printable(selectorText(sel))}: matched no flow in this capture\n`);
  for (const t of tuf) if (!flows.some((f) => selects(t.selector, f))) none('--tuf', t.selector);
  for (const m of mpa) {
    let matched = 0;
    let taken = 0;
    let example: { flow: number; by: FlowSelector } | null = null;
    for (const f of flows) {
      if (!selects(m.selector, f)) continue;
      matched++;
      // The first --mpa that selects a flow is the one applied there, and only when no --tuf does.
      if (mpa.find((x) => selects(x.selector, f)) !== m) continue;
      const t = tuf.find((x) => selects(x.selector, f));
      if (t) {
        taken++;
        example ??= { flow: f.id, by: t.selector };
      }
    }
    if (matched === 0) none('--mpa', m.selector);
    else if (example !== null)
      notes.push(
        `mpa-dissect: warning: --mpa flow=${printable(selectorText(m.selector))}: not applied to ${taken === 1 ? `stream ${example.flow - 1}` : `${taken} flows (stream ${example.flow - 1}, …)`}: --tuf flow=${printable(selectorText(example.by))} frames ${taken === 1 ? 'it' : 'them'} as TUF\n`,
      );
  }
  return notes;
}
