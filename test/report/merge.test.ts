/**
 * `mpa-dissect merge` through the real CLI: reports made one capture at a time (as CI matrix
 * jobs, Kubernetes Jobs or `parallel` over ssh make them) merge into exactly the summary, JSON
 * document and exit status of one multi-capture run over the same captures; bad inputs are named
 * on one line each and left out, with exit status 2.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAPTURES, cli, ROOT } from '../cli/helpers.js';

const REFERENCE = join(ROOT, '..', 'shared', 'captures', 'reference');
const reference = existsSync(REFERENCE)
  ? readdirSync(REFERENCE)
      .filter((n) => n.endsWith('.pcap'))
      .sort()
      .map((n) => join(REFERENCE, n))
  : [];
const captures = ['sample.pcap', 'errors.pcap', 'golden.pcap', ...reference];

let dir: string;
let reports: string[];
beforeAll(() => {
  if (reference.length === 0) console.warn(`${REFERENCE} is absent: merging the shipped samples only`);
  dir = mkdtempSync(join(tmpdir(), 'mpa-merge-test-'));
  // One report per capture, each made by its own run, as a CI matrix job would.
  reports = captures.map((c, i) => {
    const r = cli(['--json', c]);
    expect(r.stderr).toBe('');
    const path = join(dir, `${String(i).padStart(2, '0')}.json`);
    writeFileSync(path, r.stdout);
    return path;
  });
  writeFileSync(join(dir, 'truncated.pcap'), readFileSync(join(CAPTURES, 'golden.pcap')).subarray(0, 1000));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A merge of the per-capture reports (never rewritten once made): run once per command line. */
const merges = new Map<string, ReturnType<typeof cli>>();
function mergeOnce(args: readonly string[]): ReturnType<typeof cli> {
  const key = args.join('\0');
  let r = merges.get(key);
  if (r === undefined) merges.set(key, (r = cli(['merge', ...args])));
  return r;
}

const combinedBlock = (stdout: string): string => stdout.slice(stdout.indexOf('==> combined summary:'));

describe('merge equals the multi-capture run over the same captures', () => {
  it('text: the combined summary, byte for byte, and the exit status', () => {
    const multi = cli(['-q', ...captures]);
    const merged = mergeOnce(reports);
    expect(merged.stderr).toBe('');
    expect(merged.stdout).toBe(combinedBlock(multi.stdout));
    expect(merged.code).toBe(multi.code);
    expect(merged.code).toBe(1);
    expect(merged.stdout).toMatch(new RegExp(`${captures.length} captures \\(`));
  });

  it('--json: the same combined document, byte for byte', () => {
    const multi = cli(['--json', ...captures]);
    const merged = mergeOnce(['--json', ...reports]);
    expect(merged.stdout).toBe(multi.stdout);
    const doc = JSON.parse(merged.stdout) as {
      captures: unknown[];
      summary: { captures: number; fpdus: number; byRule: Array<{ rule: string; count: number }> };
    };
    expect(doc.captures).toHaveLength(captures.length);
    // The totals are the reports' summaries added up.
    const parts = reports.map(
      (p) => JSON.parse(readFileSync(p, 'utf8')) as { summary: { fpdus: number }; findings: Array<{ rule: string }> },
    );
    expect(doc.summary.fpdus).toBe(parts.reduce((n, p) => n + p.summary.fpdus, 0));
    const crc = parts.reduce((n, p) => n + p.findings.filter((f) => f.rule === 'mpa.crc-mismatch').length, 0);
    expect(doc.summary.byRule.find((r) => r.rule === 'mpa.crc-mismatch')?.count ?? 0).toBe(crc);
  });

  it('a combined document merges like its parts, and a directory like its *.json files', () => {
    const combined = join(dir, 'combined.json.txt');
    writeFileSync(combined, mergeOnce(['--json', ...reports]).stdout);
    expect(cli(['merge', combined]).stdout).toBe(mergeOnce(reports).stdout);
    expect(cli(['merge', dir]).stdout).toBe(mergeOnce(reports).stdout);
  });

  it('a report on standard input (-), and a combined document holding an unreadable capture', () => {
    const r = cli(['merge', reports[0]!, '-'], { input: readFileSync(reports[1]!) });
    expect(r.stdout).toBe(mergeOnce([reports[0]!, reports[1]!]).stdout);
    const garbage = join(dir, 'garbage.pcap');
    writeFileSync(garbage, 'no capture here');
    const multi = cli(['--json', 'sample.pcap', garbage]);
    expect(multi.code).toBe(2);
    const combined = join(dir, 'with-unreadable.combined');
    writeFileSync(combined, multi.stdout);
    const merged = cli(['merge', combined]);
    expect(merged.code).toBe(2);
    expect(merged.stdout).toBe(combinedBlock(cli(['-q', 'sample.pcap', garbage]).stdout));
    expect(merged.stdout).toMatch(/garbage\.pcap\s+unreadable\s+2/);
  });

  it('a truncated capture: the same verdict and exit status 2 from both, and --allow-truncated in both', () => {
    const t = join(dir, 'truncated.pcap');
    const rep = join(dir, 'truncated.report');
    const alone = cli(['--json', t]);
    expect(alone.code).toBe(2);
    writeFileSync(rep, alone.stdout);
    const multi = cli(['-q', 'sample.pcap', t]);
    const merged = cli(['merge', reports[0]!, rep]);
    expect(merged.stdout).toBe(combinedBlock(multi.stdout));
    expect(merged.code).toBe(2);
    expect(merged.stdout).toMatch(/truncated\.pcap\s+truncated\s+2/);
    const allowed = cli(['merge', '--allow-truncated', reports[0]!, rep]);
    expect(allowed.stdout).toBe(combinedBlock(cli(['-q', '--allow-truncated', 'sample.pcap', t]).stdout));
    expect(allowed.code).toBeLessThan(2);
  });

  it('--fail-on applies to the merged reports as to the run', () => {
    expect(mergeOnce(['--fail-on', 'never', ...reports]).code).toBe(0);
    expect(cli(['merge', reports[0]!]).code).toBe(0);
    expect(cli(['merge', '--fail-on', 'warning', reports[0]!]).code).toBe(
      cli(['-q', '--fail-on', 'warning', 'sample.pcap', 'sample.pcap']).code,
    );
  });

  it('a capture with warnings below --fail-on is "clean (below --fail-on)", one without any just "clean"', () => {
    // Warnings only: exit 0 under the default --fail-on error, but not silently "clean".
    const rows = (out: string) => out.split('\n').filter((l) => /^\S+\.pcap\s/.test(l));
    const plain = mergeOnce(['--fail-on', 'never', ...reports]);
    expect(rows(plain.stdout).length).toBe(reports.length);
    for (const row of rows(plain.stdout)) {
      const [errs, warns] = row.trim().split(/\s+/).at(-1)!.split('/').map(Number);
      if (errs! + warns! > 0) expect(row).toContain('clean (below --fail-on)');
      else expect(row).toMatch(/ clean\s/);
    }
    expect(plain.stdout).toContain('clean (below --fail-on)');
  });

  it('--junit: one valid file with the suites of the multi-capture run', () => {
    const a = join(dir, 'merge.xml');
    const b = join(dir, 'multi.xml');
    cli(['merge', '--junit', a, ...reports]);
    cli(['-q', '--junit', b, ...captures]);
    const parse = (p: string) => {
      const xml = readFileSync(p, 'utf8');
      expect(XMLValidator.validate(xml)).toBe(true);
      return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml) as {
        testsuites: {
          tests: string;
          failures: string;
          testsuite: Array<{ name: string; tests: string; failures: string }>;
        };
      };
    };
    const m = parse(a).testsuites;
    const r = parse(b).testsuites;
    const shape = (t: typeof m) => ({
      tests: t.tests,
      failures: t.failures,
      suites: t.testsuite.map((s) => [s.name, s.tests, s.failures]),
    });
    expect(shape(m)).toEqual(shape(r));
    expect(Number(m.failures)).toBeGreaterThan(0);
  });
});

describe('merge input errors: one line naming the file, the rest merged, exit 2', () => {
  const bad = (name: string, text: string): string => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  it('not JSON, truncated, not ours, another schema version, empty, missing', () => {
    const whole = readFileSync(reports[0]!, 'utf8');
    const inputs: Array<[string, RegExp]> = [
      [bad('text.json', 'hello\nworld\n'), /text\.json: not JSON \(/],
      [
        bad('cut.json', whole.slice(0, Math.floor(whole.length / 2))),
        /cut\.json: truncated: the JSON ends before the document does/,
      ],
      [
        bad('other.json', '{"name": "something else"}'),
        /other\.json: not an mpa-dissect report \(no "schema": "mpa-dissect\/report\/v1"\)/,
      ],
      [
        bad('v2.json', whole.replace('"mpa-dissect/report/v1"', '"mpa-dissect/report/v2"')),
        /v2\.json: schema mpa-dissect\/report\/v2 is another version/,
      ],
      [
        bad('broken.json', JSON.stringify({ schema: 'mpa-dissect/report/v1', capture: { path: 'x' } })),
        /broken\.json: not a valid mpa-dissect\/report\/v1 document: capture\.packets is not a whole number from 0/,
      ],
      [bad('empty.json', ''), /empty\.json: empty \(no report/],
      [join(dir, 'missing.json'), /missing\.json: cannot read: no such file or directory/],
    ];
    const r = cli(['merge', reports[0]!, ...inputs.map(([p]) => p), reports[1]!]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(inputs.length);
    inputs.forEach(([, re], i) => {
      expect(lines[i]).toMatch(re);
    });
    for (const l of lines) expect(l).toMatch(/^mpa-dissect: merge: /);
    // The good reports are merged all the same; the summary names the ones left out and exit status 2.
    const good = mergeOnce([reports[0]!, reports[1]!]).stdout;
    expect(r.stdout).toContain(good.slice(good.indexOf('Findings by rule'), good.lastIndexOf('\n\n')));
    expect(r.stdout).toContain(
      `Reports left out\n${lines.map((l) => `  ${l.replace(/^mpa-dissect: merge: /, '')}`).join('\n')}\n`,
    );
    expect(r.stdout).toMatch(/2 captures \(1 clean, 1 with findings, 7 reports left out\).*exit status 2\n$/);
    const json = JSON.parse(cli(['merge', '--json', reports[0]!, ...inputs.map(([p]) => p), reports[1]!]).stdout) as {
      summary: { inputErrors: string[]; exit: number };
    };
    expect(json.summary.inputErrors).toHaveLength(inputs.length);
    expect(json.summary.exit).toBe(2);
  });

  it('a generator truth file is named as one, not just "not an mpa-dissect report"', () => {
    const truth = join(ROOT, 'captures', 'corpus', 'bad-crc.json');
    const r = cli(['merge', reports[0]!, truth]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /bad-crc\.json: a generator truth file \(schema mpa-dissect\/truth\/v1[^\n]*not an mpa-dissect report; run mpa-dissect --json on its capture/,
    );
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('reports of different tool versions: one note, merged, the exit status from the captures', () => {
    const whole = readFileSync(reports[0]!, 'utf8');
    const other = bad('newer.json', whole.replace('"version": "0.1.0"', '"version": "9.9.9"'));
    const r = cli(['merge', reports[0]!, other]);
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/different versions of mpa-dissect \(0\.1\.0: .*00\.json, 9\.9\.9: .*newer\.json\)/);
    expect(r.stdout).toMatch(/2 captures \(2 clean\)/);
  });

  it('usage: no report, an unknown option', () => {
    expect(cli(['merge']).stderr).toMatch(/^mpa-dissect: merge: give the --json reports to merge/);
    expect(cli(['merge']).code).toBe(2);
    const u = cli(['merge', '--frobnicate', reports[0]!]);
    expect(u.code).toBe(2);
    expect(u.stderr).toMatch(/frobnicate/);
    expect(u.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});
