/**
 * JUnit XML (--junit FILE), so a CI system shows protocol rules as tests: one <testsuite> per
 * flow, one <testcase> per rule, and a <failure> where that flow broke that rule at or above
 * the --fail-on severity.
 *
 * Layout choices:
 * - A first suite, named after the capture, always exists. It holds the findings that belong
 *   to no flow (read errors, a truncated file) and keeps the report non-empty for captures
 *   with no flows, which CI tools such as Jenkins otherwise treat as "no test results".
 * - Every suite lists every rule passed in `rules`, in that order, so each run has the same
 *   shape. A finding whose rule is not in `rules` still gets a test case (appended, in order of
 *   first appearance) and a finding whose flow is not in `flows` gets a suite ("stream N", Wireshark's tcp.stream):
 *   nothing is dropped.
 * - Findings below the threshold (all of them with failOn 'never') are listed in the test
 *   case's <system-out>, so they are visible without failing the build.
 * - Rules listed in `disabled` are reported as <skipped/>. Callers that pass only the enabled
 *   rules (and no `disabled`) get skipped="0" everywhere.
 * - Severity is the finding's own (after --rules overrides), not the catalog default.
 * - `time` is timeSeconds on the root and on the capture suite (the run analysed the capture
 *   as a whole); flow suites and test cases report 0.
 */
import { SEVERITY_RANK, type Finding, type RuleDef, type Severity } from '../vocabulary/findings.js';

export interface JUnitFlow {
  id: number;
  /** Suite name, e.g. "stream 0 10.0.0.1:40001 -> 10.0.0.2:4420". */
  name: string;
}

export interface JUnitOptions {
  captureName: string;
  flows: readonly JUnitFlow[];
  rules: readonly RuleDef[];
  findings: readonly Finding[];
  failOn: 'error' | 'warning' | 'never';
  timeSeconds?: number;
  /** Ids of rules turned off for this run; their test cases are <skipped/>. */
  disabled?: readonly string[];
}

interface RuleCase {
  readonly id: string;
  readonly rule: RuleDef | undefined;
  /** Its `<testcase` opening with attributes, made once for all the suites that list it. */
  head?: string;
  /** Its whole line when it has no finding and is not turned off, made once too. */
  empty?: string;
}

interface Counts {
  tests: number;
  failures: number;
  skipped: number;
}

/**
 * XML 1.0 cannot carry most control characters even as references, nor lone surrogates or
 * U+FFFE/U+FFFF; hostile bytes in a capture can put any of them in a message, so drop them.
 * C1 controls and DEL are legal but invisible and confuse viewers: dropped too.
 */
const INVALID_XML =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function clean(s: string): string {
  return s.replace(INVALID_XML, '');
}

/**
 * Any character escapeText or escapeAttr changes or drops (a superset: every surrogate): text
 * without one is returned as it is, with one test instead of eight replaces (a merge of 150,000
 * rules writes hundreds of thousands of attributes).
 */
const TOUCHED = /[\u0000-\u001f\u007f-\u009f\ufffe\uffff\ud800-\udfff&<>"']/;

/** Escapes element text; \r as a reference, since parsers fold a bare \r into \n. */
export function escapeText(s: string): string {
  return TOUCHED.test(s) ? escapeTouched(s) : s;
}

/** escapeText past its quick test (TOUCHED): the whole chain of replaces. */
function escapeTouched(s: string): string {
  return clean(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;');
}

/** Escapes an attribute value; whitespace as references, since parsers turn it into spaces. */
export function escapeAttr(s: string): string {
  if (!TOUCHED.test(s)) return s;
  return escapeTouched(s).replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
}

function attrs(a: Readonly<Record<string, string | number>>): string {
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${escapeAttr(String(v))}"`)
    .join('');
}

function seconds(t: number | undefined): string {
  return t !== undefined && Number.isFinite(t) && t > 0 ? t.toFixed(3) : '0';
}

/** "mpa.crc-mismatch" → "mpa": CI tools group test cases by class. */
function classOf(ruleId: string): string {
  const dot = ruleId.indexOf('.');
  return dot > 0 ? ruleId.slice(0, dot) : ruleId;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One line per finding: severity, frames, sequence number, sender, message. */
function findingLine(f: Finding): string {
  const frames =
    f.frames.length === 0 ? 'no frame' : `${f.frames.length === 1 ? 'frame' : 'frames'} ${f.frames.join(', ')}`;
  const seq = f.seq === null ? '' : ` seq ${f.seq}`;
  const from = f.from === null ? '' : ` from ${f.from}`;
  return `[${f.severity}] ${frames}${seq}${from}: ${f.message}`;
}

function highest(fs: readonly Finding[]): Severity {
  return fs.reduce<Severity>((m, f) => (SEVERITY_RANK[f.severity] > SEVERITY_RANK[m] ? f.severity : m), 'info');
}

function testCase(
  rc: RuleCase,
  fs: readonly Finding[],
  failOn: JUnitOptions['failOn'],
  disabled: boolean,
  counts: Counts,
): string {
  counts.tests++;
  const head = (rc.head ??= `<testcase${attrs({ classname: classOf(rc.id), name: rc.id, time: '0' })}`);
  // Most cases of most suites have no finding: said at once, without the arrays below.
  if (fs.length === 0 && !disabled) return (rc.empty ??= `    ${head}/>`);
  const fails = (f: Finding): boolean =>
    failOn !== 'never' && !disabled && SEVERITY_RANK[f.severity] >= SEVERITY_RANK[failOn];
  const failing = fs.filter(fails);
  const other = fs.filter((f) => !fails(f));
  const body: string[] = [];
  if (disabled) {
    counts.skipped++;
    body.push(`<skipped${attrs({ message: 'rule turned off for this run' })}/>`);
  }
  if (failing.length > 0) {
    counts.failures++;
    const about = rc.rule ? `${rc.id}: ${rc.rule.summary}${rc.rule.ref ? ` (${rc.rule.ref})` : ''}` : rc.id;
    const text = [about, ...failing.map(findingLine)].join('\n');
    body.push(
      `<failure${attrs({ message: `${plural(failing.length, 'finding')}: ${failing[0]!.message}`, type: highest(failing) })}>` +
        `${escapeText(text)}</failure>`,
    );
  }
  if (other.length > 0) body.push(`<system-out>${escapeText(other.map(findingLine).join('\n'))}</system-out>`);
  if (body.length === 0) return `    ${head}/>`;
  return [`    ${head}>`, ...body.map((b) => `      ${b}`), '    </testcase>'].join('\n');
}

/** One capture's suites: the capture's own, then one per flow; `prefix` goes before flow suite names. */
function captureSuites(opts: JUnitOptions, prefix: string, total: Counts): string[] {
  const disabled = new Set(opts.disabled ?? []);

  const cases: RuleCase[] = opts.rules.map((r) => ({ id: r.id, rule: r }));
  const seenRules = new Set(cases.map((c) => c.id));
  for (const f of opts.findings) {
    if (!seenRules.has(f.rule)) {
      seenRules.add(f.rule);
      cases.push({ id: f.rule, rule: undefined });
    }
  }

  // Findings by scope (null = the capture) and rule, keeping their order.
  const byScope = new Map<number | null, Map<string, Finding[]>>();
  for (const f of opts.findings) {
    let m = byScope.get(f.flow);
    if (!m) byScope.set(f.flow, (m = new Map()));
    let l = m.get(f.rule);
    if (!l) m.set(f.rule, (l = []));
    l.push(f);
  }

  const suites: Array<{ name: string; scope: number | null; time: string }> = [
    { name: opts.captureName, scope: null, time: seconds(opts.timeSeconds) },
    ...opts.flows.map((fl) => ({ name: prefix + fl.name, scope: fl.id, time: '0' })),
  ];
  const listed = new Set(opts.flows.map((fl) => fl.id));
  const strays = [...byScope.keys()].filter((k): k is number => k !== null && !listed.has(k)).sort((a, b) => a - b);
  for (const id of strays) suites.push({ name: `${prefix}stream ${id - 1}`, scope: id, time: '0' });

  const out: string[] = [];
  for (const s of suites) {
    const c: Counts = { tests: 0, failures: 0, skipped: 0 };
    const found = byScope.get(s.scope);
    const body = cases.map((rc) => testCase(rc, found?.get(rc.id) ?? [], opts.failOn, disabled.has(rc.id), c));
    total.tests += c.tests;
    total.failures += c.failures;
    total.skipped += c.skipped;
    const head = attrs({
      name: s.name,
      tests: c.tests,
      failures: c.failures,
      errors: 0,
      skipped: c.skipped,
      time: s.time,
    });
    out.push(
      body.length === 0 ? `  <testsuite${head}/>` : [`  <testsuite${head}>`, ...body, '  </testsuite>'].join('\n'),
    );
  }
  return out;
}

function document(suites: string[], total: Counts, timeSeconds: number | undefined): string {
  const root = attrs({
    name: 'mpa-dissect',
    tests: total.tests,
    failures: total.failures,
    errors: 0,
    skipped: total.skipped,
    time: seconds(timeSeconds),
  });
  return ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites${root}>`, ...suites, '</testsuites>', ''].join('\n');
}

/** Builds the whole JUnit document (UTF-8, with XML declaration, ending in a newline). */
export function buildJUnit(opts: JUnitOptions): string {
  const total: Counts = { tests: 0, failures: 0, skipped: 0 };
  return document(captureSuites(opts, '', total), total, opts.timeSeconds);
}

/**
 * One document for several captures (a multi-capture run, `mpa-dissect merge`): each capture's
 * suites as buildJUnit lays them out, in the order given, flow suites named "CAPTURE: stream N
 * A -> B" so that suites of different captures never share a name.
 */
export function buildJUnitCaptures(captures: readonly JUnitOptions[], timeSeconds?: number): string {
  const total: Counts = { tests: 0, failures: 0, skipped: 0 };
  const suites = captures.flatMap((c) => captureSuites(c, `${c.captureName}: `, total));
  return document(suites, total, timeSeconds);
}
