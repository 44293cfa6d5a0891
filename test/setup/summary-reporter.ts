/**
 * Printed after vitest's own summary, whatever other reporters are chosen (vitest.config.ts adds
 * it to them): the ten slowest test files, and every skipped test with why it was skipped.
 *
 * A file's time is its wall time in its worker: importing it (and what it imports), its hooks
 * and its tests. For a file of the e2e project, which runs in a process of its own, the CPU time
 * of that process and of the processes it started follows (test/setup/cpu-time.ts): on a machine
 * shared with other work, the wall time says how busy the machine was, the CPU time what the file
 * costs. The reason of a skip is the note given to `ctx.skip(note)`, else what the test's
 * or a suite's name says after "skipped" (the tests here name the reason when they skip: "(skipped:
 * tmux is not installed)", "... (skipped as root, which reads anything)", "... is absent: ..."), else
 * what a skipped test beside it in its suite says (a suite skipped as a whole names the reason in
 * one `it.skip` of its own).
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CPU_DIR_ENV } from './cpu-dir.js';
import type { Reporter, TestCase, TestModule, TestSuite, Vitest } from 'vitest/node';

const SLOWEST = 10;

/** Why a test was skipped, from its note or its names (innermost first). */
export function skipReason(test: TestCase): string {
  const result = test.result();
  if (result.state === 'skipped' && result.note) return result.note;
  const names: string[] = [];
  for (let t: TestCase | TestSuite | TestModule = test; t.type !== 'module'; t = t.parent) names.push(t.name);
  for (const n of names) {
    const m = /\((skipped[^)]*)\)/.exec(n);
    if (m) return m[1]!;
  }
  for (const n of names) if (REASON.test(n)) return n;
  if (test.options.mode === 'todo') return 'todo';
  // A suite skipped as a whole says why in a skipped test of its own, in it or in a suite of the
  // same name ("... is absent: ... skipped", "skipped: tmux is not installed").
  const suite = (t: TestCase) => (t.parent.type === 'suite' ? t.parent.fullName : '');
  const mine = suite(test);
  for (const other of test.module.children.allTests('skipped')) {
    if (other === test || !REASON.test(other.name)) continue;
    const theirs = suite(other);
    if (theirs === '' || theirs === mine || mine.startsWith(`${theirs} > `)) return other.name;
  }
  return 'skipped with no reason in its name';
}

const REASON = /absent|not installed|not root|as root|skipped/;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export default class SummaryReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  /** CPU seconds per e2e file, as test/setup/cpu-time.ts left them. */
  private cpuTimes(): Map<string, number> {
    const dir = process.env[CPU_DIR_ENV];
    const m = new Map<string, number>();
    if (!dir || !existsSync(dir)) return m;
    for (const f of readdirSync(dir)) {
      try {
        const { file, cpu } = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { file: string; cpu: number };
        m.set(file, cpu);
      } catch {
        // A file half written by a worker that was killed: no CPU figure for it.
      }
    }
    rmSync(dir, { recursive: true, force: true });
    return m;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const out: string[] = [];
    const cpu = this.cpuTimes();
    const name = (m: TestModule) => relative(this.root, m.moduleId);
    const timed = modules
      .map((m) => {
        const d = m.diagnostic();
        return {
          m,
          ms: d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration,
        };
      })
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    if (timed.length > 0) {
      out.push(
        '',
        ` Slowest ${timed.length} test files (wall time in their worker; CPU time with the processes it started):`,
      );
      const w = Math.max(...timed.map((t) => seconds(t.ms).length));
      for (const t of timed) {
        const project = t.m.project.name ? ` [${t.m.project.name}]` : '';
        const c = cpu.get(t.m.moduleId);
        const cpuText = c === undefined ? '' : `, ${c.toFixed(1)} CPU s`;
        out.push(
          `   ${seconds(t.ms).padStart(w)}  ${name(t.m)}${project} (${[...t.m.children.allTests()].length} tests${cpuText})`,
        );
      }
    }
    const skipped = modules.flatMap((m) =>
      [...m.children.allTests()].filter((t) => t.result().state === 'skipped').map((t) => ({ m, t })),
    );
    if (skipped.length > 0) {
      out.push('', ` Skipped tests (${skipped.length}):`);
      for (const { m, t } of skipped) out.push(`   ${name(m)} > ${t.fullName}`, `       reason: ${skipReason(t)}`);
    }
    if (out.length > 0) process.stdout.write(`${out.join('\n')}\n\n`);
  }
}
