/**
 * File order: the long suites first, so that on a small machine the run does not end with one of
 * them alone on one core while the others idle. Vitest's own order (files that failed last time,
 * then the longest last time, then the largest) follows for the rest, and for these when a run's
 * cache says otherwise it is overridden: this list holds also on a fresh clone, which has no cache.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files, longest first (about what `npm test`'s slowest-files list shows). */
export const LONG_FIRST = [
  'test/parallel/threads-equality.test.ts',
  'test/cli/gate.test.ts',
  'test/report/annotate-tshark.test.ts',
  'test/live/live-capture.test.ts',
  'test/tui/tui-tmux.test.ts',
  'test/cli/multi.test.ts',
  'test/cli/doc-examples.test.ts',
  'test/robustness/hostile-scale.test.ts',
  'test/report/merge-hostile.test.ts',
  'test/report/merge.test.ts',
  'test/tui/tui-live.test.ts',
  'test/cli/exit-codes.test.ts',
  'test/parallel/threads-failures.test.ts',
  'test/robustness/many-flows.test.ts',
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (s: TestSpecification): number => {
      const i = LONG_FIRST.findIndex((f) => s.moduleId.endsWith(`/${f}`));
      return i === -1 ? LONG_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the base order stays among files of the same rank.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
