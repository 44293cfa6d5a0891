/**
 * `mpa-dissect merge` on hostile reports (issue: hostile input on the newer surfaces): each ends
 * in seconds and bounded memory with one line naming the file, never a JavaScript error's own
 * text, half a document, or terminal control sequences taken from the input.
 */
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../cli/helpers.js';

let dir: string;
let good: Record<string, unknown>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-merge-hostile-'));
  good = JSON.parse(cli(['--json', 'sample.pcap']).stdout) as Record<string, unknown>;
});
// 130,000 files to remove: longer than the default hook timeout on a loaded machine.
afterAll(() => rmSync(dir, { recursive: true, force: true }), 600_000);

const write = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const noStack = (s: string) => expect(s).not.toMatch(/Maximum call stack| {4}at |TypeError|RangeError/);

describe('merge on hostile reports', () => {
  it('150,000 distinct rule ids: the summary lists them all (no stack overflow), also as --json and --junit', () => {
    const f = (good['findings'] as object[])[0] ?? {};
    const findings = Array.from({ length: 150_000 }, (_, i) => ({ ...f, rule: `r${i}`, severity: 'warning' }));
    const p = write('rules.json', JSON.stringify({ ...good, findings }));
    const r = cli(['merge', p]);
    noStack(r.stderr);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\n\s+1\s+warning\s+r149999\b/);
    const j = cli(['merge', '--json', '--junit', join(dir, 'j.xml'), p]);
    noStack(j.stderr);
    expect(j.code).toBe(0);
    expect(() => JSON.parse(j.stdout)).not.toThrow();
  });

  it('a key nested 200,000 deep: refused before anything is parsed, and --json prints a whole document', () => {
    const deep = `${'{"k":'.repeat(200_000)}1${'}'.repeat(200_000)}`;
    const p = write('deep.json', JSON.stringify({ ...good, extra: 0 }).replace('"extra":0', `"extra":${deep}`));
    const r = cli(['merge', '--json', p]);
    noStack(r.stderr);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^mpa-dissect: merge: .*deep\.json: nested 200\d+ levels deep, where a report nests under 64/m,
    );
    expect(() => JSON.parse(r.stdout)).not.toThrow();
  });

  it('12 MB of "[": refused by its depth, in bounded memory', () => {
    const p = write('brackets.json', '['.repeat(12_000_000));
    const r = cli(['merge', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/brackets\.json: nested 12000000 levels deep/);
  });

  it('/dev/zero: refused past the size cap, with why', () => {
    const r = cli(['merge', '/dev/zero']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^mpa-dissect: merge: \/dev\/zero: larger than 256 MiB: not read \(merge holds a whole report in memory/m,
    );
  });

  it('control characters in capture.path, capture.error and rule ids are shown escaped, never sent to the terminal', () => {
    const cap = {
      ...(good['capture'] as object),
      path: 'x\u001b[2J\u0007\r\nFORGED line',
      error: 'e\u001b]0;title\u0007',
    };
    const f = (good['findings'] as object[])[0] ?? {};
    const p = write('ctl.json', JSON.stringify({ ...good, capture: cap, findings: [{ ...f, rule: 'r\u001b[31m' }] }));
    const r = cli(['merge', p]);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(r.stdout).toContain('x\\x1b[2J\\x07\\r\\nFORGED line');
    expect(r.stdout).toContain('e\\x1b]0;title\\x07');
    expect(r.stdout).toContain('r\\x1b[31m');
  });

  it('control characters in tool.version are shown escaped in the note on differing versions', () => {
    const forged = write(
      'ver.json',
      JSON.stringify({ ...good, tool: { ...(good['tool'] as object), version: 'x\u001b[2J\u0007\r\nFORGED' } }),
    );
    const r = cli(['merge', forged, write('plain.json', JSON.stringify(good))]);
    expect(r.stderr).toMatch(/different versions of mpa-dissect/);
    expect(r.stderr).toContain('x\\x1b[2J\\x07\\r\\nFORGED');
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
  });

  it('counts that are not whole numbers from 0 are refused with the file and the field', () => {
    for (const [name, mutate, field] of [
      ['neg.json', (d: Record<string, any>) => (d['summary'].errors = -1), 'summary.errors'],
      ['str.json', (d: Record<string, any>) => (d['summary'].warnings = 'many'), 'summary.warnings'],
      ['obj.json', (d: Record<string, any>) => (d['capture'].packets = {}), 'capture.packets'],
      ['huge.json', (d: Record<string, any>) => (d['summary'].fpdus = 1e300), 'summary.fpdus'],
    ] as const) {
      const d = structuredClone(good) as Record<string, any>;
      mutate(d);
      const r = cli(['merge', write(name, JSON.stringify(d))]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(
        `${name}: not a valid mpa-dissect/report/v1 document: ${field} is not a whole number from 0`,
      );
      expect(r.stdout).not.toMatch(/many|object Object|-1 error/);
    }
  });

  it('a directory of 130,000 reports: every one read (no stack overflow in the walk)', () => {
    const d = join(dir, 'many');
    mkdirSync(d);
    // The smallest report the schema allows: the walk is what is tested, not the parsing.
    const text = JSON.stringify({
      schema: 'mpa-dissect/report/v1',
      capture: { path: 'x.pcap', packets: 0 },
      summary: { flows: 0, mpaFlows: 0, fpdus: 0, errors: 0, warnings: 0, infos: 0 },
      flows: [],
      findings: [],
    });
    // Hard links to a few files (ext4 allows 65,000 links to one): each entry is a regular file
    // holding the report, as a file of its own would be, for a tenth of the system time of writing
    // 130,000 files (about 10 s here, and as much again to remove them).
    const sources = [0, 1, 2].map((k) => write(`source-${k}.json`, text));
    for (let i = 0; i < 130_000; i++)
      linkSync(sources[Math.floor(i / 50_000)]!, join(d, `${String(i).padStart(6, '0')}.json`));
    const r = cli(['merge', d]);
    noStack(r.stderr);
    expect(r.stdout).toMatch(/130000 captures \(130000 clean\)/);
  }, 600_000);
});
