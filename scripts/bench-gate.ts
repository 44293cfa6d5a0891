/**
 * The bench's regression gate (issue 24): each case measured now against the same case in the
 * newest committed results file of the same machine class (cores, Node major version, --quick or
 * not, the same capture size within 1 %). A case whose CPU time or peak RSS grew by more than 10 %
 * is a regression: `npm run bench` prints one line per regression naming the case and exits 1
 * (`--no-gate` reports them without failing). CPU time is compared, not wall time: on a shared
 * machine the wall clock stretches with other work, CPU time much less.
 */
import { execFileSync } from 'node:child_process';

/** The fields of a results file (bench/results/*.json) the gate reads. */
export interface GateResults {
  commit: string;
  date: string;
  quick: boolean;
  node: string;
  cores: number;
  cases: Array<{
    id: string;
    name: string;
    file: { bytes: number };
    run: { seconds: number; cpuSeconds: number; rssMB: number };
  }>;
}

export interface GateVerdict {
  /** One line per case worse by more than the tolerance (empty: the gate passes). */
  regressions: string[];
  /** Cases compared, or why a case was not. */
  notes: string[];
}

/** Worse by more than this fraction fails the gate. */
export const GATE_TOLERANCE = 0.1;

const major = (v: string): string => v.split('.')[0] ?? v;

/** Same machine class: cores, Node major version and --quick alike. */
function sameClass(a: GateResults, b: GateResults): boolean {
  return a.cores === b.cores && major(a.node) === major(b.node) && a.quick === b.quick;
}

/**
 * Compares `now` with `committed` (any order): for each case of `now`, the newest committed file
 * of the same class that measured that case on a capture of the same size.
 */
export function gate(now: GateResults, committed: readonly GateResults[]): GateVerdict {
  const regressions: string[] = [];
  const notes: string[] = [];
  const newestFirst = committed.filter((c) => sameClass(c, now)).sort((a, b) => b.date.localeCompare(a.date));
  for (const c of now.cases) {
    let base: { file: GateResults; c: GateResults['cases'][number] } | null = null;
    for (const f of newestFirst) {
      const p = f.cases.find((x) => x.id === c.id);
      if (p && Math.abs(p.file.bytes - c.file.bytes) <= 0.01 * Math.max(p.file.bytes, c.file.bytes)) {
        base = { file: f, c: p };
        break;
      }
    }
    if (base === null) {
      notes.push(`(${c.id}): no committed results of this machine class and size to compare with`);
      continue;
    }
    const p = base.c;
    const cpu = p.run.cpuSeconds > 0 ? c.run.cpuSeconds / p.run.cpuSeconds : 1;
    const rss = p.run.rssMB > 0 ? c.run.rssMB / p.run.rssMB : 1;
    const against = `against ${base.file.commit} (${base.file.date.slice(0, 10)})`;
    notes.push(`(${c.id}): CPU x${cpu.toFixed(2)}, peak RSS x${rss.toFixed(2)} ${against}`);
    if (cpu > 1 + GATE_TOLERANCE)
      regressions.push(
        `REGRESSION (${c.id}) ${c.name}: CPU ${c.run.cpuSeconds.toFixed(2)} s, was ${p.run.cpuSeconds.toFixed(2)} s (x${cpu.toFixed(2)}, over x${(1 + GATE_TOLERANCE).toFixed(2)}) ${against}`,
      );
    if (rss > 1 + GATE_TOLERANCE)
      regressions.push(
        `REGRESSION (${c.id}) ${c.name}: peak RSS ${c.run.rssMB.toFixed(0)} MB, was ${p.run.rssMB.toFixed(0)} MB (x${rss.toFixed(2)}, over x${(1 + GATE_TOLERANCE).toFixed(2)}) ${against}`,
      );
  }
  return { regressions, notes };
}

/** The results files git tracks under bench/results (what was committed), read; unreadable ones skipped. */
export function committedResults(root: string): GateResults[] {
  let names: string[];
  try {
    names = execFileSync('git', ['ls-files', 'bench/results'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  const out: GateResults[] = [];
  for (const n of names) {
    try {
      // The committed content, not the working copy: a run's own fresh file is not its baseline.
      const text = execFileSync('git', ['show', `HEAD:${n}`], { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
      const r = JSON.parse(text) as GateResults;
      if (Array.isArray(r.cases) && typeof r.date === 'string') out.push(r);
    } catch {
      // staged but not committed, or not a results file: skipped
    }
  }
  return out;
}
