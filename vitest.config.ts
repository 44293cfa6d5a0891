import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import type { Plugin } from 'vite';
import SummaryReporter from './test/setup/summary-reporter.js';
import LongFirstSequencer from './test/setup/sequencer.js';
import { CPU_DIR_ENV } from './test/setup/cpu-dir.js';
import { localImports } from './test/setup/local-imports.js';

// Where each e2e file leaves the CPU time it took (test/setup/cpu-time.ts); the summary prints it.
process.env[CPU_DIR_ENV] ??= mkdtempSync(join(tmpdir(), 'mpa-dissect-cpu-'));

/**
 * Two projects share one pool of workers:
 *
 * - e2e: the suites that run real processes (the built CLI, tshark, tcpdump, tmux) or capture
 *   live on lo. Their workers spend most of their time waiting for those processes, so there is
 *   one worker more than cores (vitest's default is one less: on 2 cores, every file one after
 *   the other). Each file in its own process (forks, isolated): they spawn, set V8 flags, measure
 *   memory. The longest start first (test/setup/sequencer.ts).
 * - unit: everything else, in process. Worker threads, not isolated: a worker imports the sources
 *   once and runs file after file, instead of a fresh process importing them again per file. Their
 *   imports are read as local constants, not through Vitest's getters (test/setup/local-imports.ts).
 *
 * A test file that starts processes belongs in E2E below; in unit it still passes, but holds a
 * worker thread while it waits.
 */
const E2E = [
  'test/capture/stdin.test.ts',
  'test/cli/*.test.ts',
  'test/corpus/*.test.ts',
  'test/generate/{cli,streaming}.test.ts',
  'test/live/*.test.ts',
  'test/mpa/{crc-tshark,rdmac,tshark}.test.ts',
  'test/parallel/threads-{equality,failures}.test.ts',
  'test/report/{annotate-tshark,filter-hostile,filter-tshark,merge,merge-hostile,rules-file-hostile}.test.ts',
  'test/helpers/tshark-batch.test.ts',
  'test/report/html/*.test.ts',
  'test/robustness/*.test.ts',
  'test/scripts/screenshots.test.ts',
  'test/tuf/cli.test.ts',
  'test/ulp/tshark-ulp.test.ts',
  'test/ulp/latency-tshark.test.ts',
  'test/ulp/tshark-nvme.test.ts',
  'test/iser/tshark-iscsi.test.ts',
  'test/tui/tui-*.test.ts',
];

const workers = Math.max(2, availableParallelism() + 1);

/** Adds the summary (slowest files, skipped tests and why) to the reporters, also to those given with --reporter. */
const summary: Plugin = {
  name: 'mpa-dissect:test-summary',
  configureVitest({ vitest }) {
    const reporters = vitest.config.reporters as unknown[];
    if (!reporters.some((r) => r instanceof SummaryReporter)) reporters.push(new SummaryReporter());
  },
};

const shared = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
} as const;

const projects: TestProjectInlineConfiguration[] = [
  {
    plugins: [summary],
    // A test's time bound is for hangs: these wait on processes that share the cores with the rest.
    test: {
      ...shared,
      testTimeout: 180_000,
      name: 'e2e',
      include: E2E,
      setupFiles: ['test/setup/cpu-time.ts'],
      pool: 'forks',
      isolate: false,
      maxConcurrency: 3,
    },
  },
  {
    plugins: [summary, localImports(import.meta.dirname)],
    test: { ...shared, name: 'unit', include: ['test/**/*.test.ts'], exclude: E2E, pool: 'threads', isolate: false },
  },
];

export default defineConfig({
  test: {
    ...shared,
    globalSetup: ['test/setup/global-setup.ts'],
    maxWorkers: workers,
    sequence: { sequencer: LongFirstSequencer },
    // Transformed test and source files kept on disk (node_modules/.experimental-vitest-cache,
    // keyed by content): a second run does not transform them again.
    experimental: { fsModuleCache: true },
    projects,
  },
});
