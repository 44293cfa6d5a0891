/**
 * The summary of several captures: what a multi-capture run prints after the captures' own
 * reports, and all that `mpa-dissect merge` prints from their --json reports. Both build it from
 * the captures' digests (capture-digest.ts) with combine(), so the two agree by construction.
 */
import { SEVERITY_RANK } from '../vocabulary/findings.js';
import { printable } from './printable.js';
import {
  COUNT_KEYS,
  verdictExit,
  verdictOf,
  type CaptureCounts,
  type CaptureDigest,
  type FailOn,
  type RuleCount,
  type Verdict,
} from './capture-digest.js';
import { TOOL } from './json-report.js';
import type { JUnitOptions } from './junit.js';
import { allRules } from '../analysis/rules-catalog.js';
import { plural, ruleCountLines, table, type Style } from './text.js';
import { compareRuleIds } from './rule-order.js';

/** The schema id of the document `--json` prints for several captures (and `merge --json`). */
export const COMBINED_SCHEMA = 'mpa-dissect/reports/v1';

export interface CaptureVerdictJson extends CaptureCounts {
  path: string;
  verdict: Verdict;
  exit: number;
  format: string | null;
  error: string | null;
}

export interface CombinedSummary extends CaptureCounts {
  captures: number;
  verdicts: Record<Verdict, number>;
  /** Findings by rule over every capture (counts of the findings the reports kept), errors first. */
  byRule: RuleCount[];
  perCapture: CaptureVerdictJson[];
  failOn: FailOn;
  /** merge: the inputs left out, one line each ("x.json: not JSON (...)"); always [] for a run over captures. */
  inputErrors: string[];
  /** The worst capture's exit status (2 when an input was left out): what the run (or merge) exits with. */
  exit: number;
}

const VERDICTS: readonly Verdict[] = ['clean', 'findings', 'truncated', 'read-error', 'unreadable'];

export function combine(
  digests: readonly CaptureDigest[],
  failOn: FailOn,
  allowTruncated: boolean,
  inputErrors: readonly string[] = [],
): CombinedSummary {
  const verdicts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  const rules = new Map<string, RuleCount>();
  const s: CombinedSummary = {
    captures: digests.length,
    verdicts,
    packets: 0,
    bytes: 0,
    flows: 0,
    mpaFlows: 0,
    fpdus: 0,
    errors: 0,
    warnings: 0,
    infos: 0,
    findingsOmitted: 0,
    byRule: [],
    perCapture: [],
    failOn,
    inputErrors: [...inputErrors],
    exit: inputErrors.length > 0 ? 2 : 0,
  };
  for (const d of digests) {
    const verdict = verdictOf(d, failOn, allowTruncated);
    const exit = verdictExit(verdict);
    verdicts[verdict]++;
    s.exit = Math.max(s.exit, exit);
    for (const k of COUNT_KEYS) s[k] += d[k];
    for (const r of d.byRule) {
      const c = rules.get(r.rule);
      if (!c) rules.set(r.rule, { ...r });
      else {
        c.count += r.count;
        // Runs with different rules files may disagree: the table shows the highest.
        if (SEVERITY_RANK[r.severity] > SEVERITY_RANK[c.severity]) c.severity = r.severity;
      }
    }
    s.perCapture.push({
      path: d.path,
      verdict,
      exit,
      format: d.format,
      packets: d.packets,
      bytes: d.bytes,
      flows: d.flows,
      mpaFlows: d.mpaFlows,
      fpdus: d.fpdus,
      errors: d.errors,
      warnings: d.warnings,
      infos: d.infos,
      findingsOmitted: d.findingsOmitted,
      error: d.error,
    });
  }
  s.byRule = [...rules.values()].sort(
    (a, b) =>
      SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.count - a.count || compareRuleIds(a.rule, b.rule),
  );
  return s;
}

/** The header line above each capture's output and above the combined summary (as `tail` heads files). */
export function headerLine(title: string, st: Style): string {
  return st.bold(`==> ${title} <==`);
}

const VERDICT_WORDS: Readonly<Record<Verdict, string>> = {
  clean: 'clean',
  findings: 'with findings',
  truncated: 'truncated',
  'read-error': 'with a read error',
  unreadable: 'unreadable',
};

/** "clean" alone would hide warnings (or errors under --fail-on never): the verdict says they were below the bar. */
function verdictCell(v: Verdict, c: { errors: number; warnings: number }, st: Style): string {
  if (v === 'clean') return st.green(c.errors + c.warnings > 0 ? 'clean (below --fail-on)' : v);
  return v === 'findings' ? st.yellow(v) : st.red(v);
}

/** The combined summary as text: a row per capture, read errors, findings by rule, totals. */
export function combinedText(s: CombinedSummary, st: Style): string {
  const rows: string[][] = [['Capture', 'Verdict', 'Exit', 'Packets', 'Flows', 'MPA', 'FPDUs', 'Err/Warn/Info']];
  for (const c of s.perCapture) {
    rows.push([
      printable(c.path),
      verdictCell(c.verdict, c, st),
      String(c.exit),
      String(c.packets),
      String(c.flows),
      String(c.mpaFlows),
      String(c.fpdus),
      `${c.errors}/${c.warnings}/${c.infos}`,
    ]);
  }
  const out = [
    headerLine(`combined summary: ${plural(s.captures, 'capture')}`, st),
    st.bold('Captures'),
    table(rows, [false, false, true, true, true, true, true, false]),
  ];
  const errs = s.perCapture.filter((c) => c.error !== null);
  // Loops, not spreads: a merge of 125,000 reports or 150,000 rules overflows a spread's stack.
  if (errs.length) {
    out.push('', st.bold('Read errors'));
    for (const c of errs) out.push(`  ${printable(c.error ?? '')}`);
  }
  if (s.inputErrors.length) {
    out.push('', st.bold('Reports left out'));
    for (const e of s.inputErrors) out.push(`  ${printable(e)}`);
  }
  out.push('', st.bold('Findings by rule (all captures)'));
  for (const l of ruleCountLines(s.byRule, st)) out.push(l);
  const note = s.findingsOmitted
    ? ` (${s.findingsOmitted} not kept in the reports: counts by rule cover the others)`
    : '';
  const verdicts = VERDICTS.filter((v) => s.verdicts[v] > 0).map((v) => `${s.verdicts[v]} ${VERDICT_WORDS[v]}`);
  if (s.inputErrors.length) verdicts.push(`${plural(s.inputErrors.length, 'report')} left out`);
  out.push(
    '',
    `${plural(s.captures, 'capture')} (${verdicts.join(', ') || 'none'}): ${plural(s.packets, 'packet')}, ${plural(s.flows, 'TCP flow')}, ${s.mpaFlows} MPA, ${plural(s.fpdus, 'FPDU')}; ` +
      `${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')}, ${plural(s.infos, 'info')}${note}; exit status ${s.exit}`,
  );
  return out.join('\n');
}

/** The opening of the combined --json document, up to where the captures' reports go. */
export function combinedJsonHead(): string {
  return `{\n "schema": ${JSON.stringify(COMBINED_SCHEMA)},\n "tool": ${indentChunk(JSON.stringify({ ...TOOL }, null, 1), 1)},\n "captures": [`;
}

/**
 * A report document (as `--json` prints it: JSON.stringify(doc, null, 1) and a newline) becomes
 * element `index` of the captures array by this prefix and by indentChunk(part, 2) over its text
 * without the final newline, in as many parts as it comes in: the combined document then reads
 * exactly as JSON.stringify of it would, without any report ever held whole.
 */
export function combinedJsonElementStart(index: number): string {
  return index === 0 ? '\n  ' : ',\n  ';
}

/**
 * A whole report as element of the captures array: indentChunk(JSON.stringify(doc, null, 1), 2)
 * written by JSON.stringify itself, the report stringified where it sits in the document (two levels
 * in) and the two levels cut off, instead of a second pass over tens of MB to indent it.
 */
export function combinedJsonElement(doc: unknown): string {
  const text = JSON.stringify([[doc]], null, 1);
  return text.slice(ELEMENT_PREFIX.length, text.length - ELEMENT_SUFFIX.length);
}
const ELEMENT_PREFIX = '[\n [\n  ';
const ELEMENT_SUFFIX = '\n ]\n]';

export function indentChunk(text: string, n: number): string {
  return text.replace(/\n/g, '\n' + ' '.repeat(n));
}

/** The end of the combined --json document: the captures array closed, the summary, the brace. */
export function combinedJsonTail(s: CombinedSummary, anyCaptures: boolean): string {
  return `${anyCaptures ? '\n ]' : ']'},\n "summary": ${indentChunk(JSON.stringify(s, null, 1), 1)}\n}\n`;
}

/**
 * A capture's JUnit suites (buildJUnitCaptures) from its digest, named as a run of its own names
 * them: the capture ("<stdin>" for standard input), "stream N CLIENT -> SERVER" per flow.
 */
export function digestJUnit(
  d: CaptureDigest,
  failOn: FailOn,
  disabled: readonly string[] = [],
  seconds?: number,
): JUnitOptions {
  return {
    captureName: d.path === '-' ? '<stdin>' : d.path,
    flows: d.junitFlows.map((f) => ({ id: f.id, name: `stream ${f.id - 1} ${f.client} -> ${f.server}` })),
    rules: allRules(),
    findings: d.findings,
    failOn,
    disabled,
    ...(seconds !== undefined ? { timeSeconds: seconds } : {}),
  };
}
