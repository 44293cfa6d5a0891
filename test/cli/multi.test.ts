/**
 * Several captures in one run (cli/multi.ts) through the real CLI: each capture's output is what
 * it prints alone, under its header, in the order given whatever finishes first; one combined
 * summary; one exit status (the worst capture's); the options that make no sense refused.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { CAPTURES, cli, ROOT } from './helpers.js';

const REFERENCE = join(ROOT, '..', 'shared', 'captures', 'reference');
const reference = existsSync(REFERENCE)
  ? readdirSync(REFERENCE)
      .filter((n) => n.endsWith('.pcap'))
      .sort()
      .map((n) => join(REFERENCE, n))
  : [];
const samples = ['sample.pcap', 'errors.pcap', 'golden.pcap'];

/** Splits a multi-capture text output into its blocks: header title -> text under it. */
function blocks(stdout: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const re = /^==> (.*) <==$/gm;
  const heads = [...stdout.matchAll(re)];
  heads.forEach((m, i) => {
    const start = m.index! + m[0].length + 1;
    const end = i + 1 < heads.length ? heads[i + 1]!.index! - 1 : stdout.length; // the blank line before the next header
    out.push([m[1]!, stdout.slice(start, end)]);
  });
  return out;
}

let dir: string;
let big: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-multi-test-'));
  // A capture that takes far longer than the samples, given first: with several jobs it finishes last.
  const fpdus: FpduSpec[] = [];
  for (let i = 0; i < 12000; i++) fpdus.push({ ulpdu: sendUlpdu(i + 1, patternBytes(1400, i & 63)) });
  big = join(dir, 'big.pcap');
  writeFileSync(
    big,
    buildMpaConnection({
      request: { m: true, c: true },
      reply: { m: true, c: true },
      i2r: fpdus,
      cutI2r: { random: 1, seed: 3, max: 1448 },
    }).pcap,
  );
  // A capture cut in the middle of a record, and a file that is no capture.
  const golden = readFileSync(join(CAPTURES, 'golden.pcap'));
  writeFileSync(join(dir, 'truncated.pcap'), golden.subarray(0, 1000));
  writeFileSync(join(dir, 'garbage.pcap'), 'this is not a capture');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('several captures: each as alone, in the order given', () => {
  it("each block is byte for byte the capture's own output, headers in argument order, then the combined summary", () => {
    const list = [...samples, ...reference];
    if (reference.length === 0) console.warn(`${REFERENCE} is absent: reference captures left out of this test`);
    const r = cli(list);
    const b = blocks(r.stdout);
    expect(b.map(([t]) => t)).toEqual([...list, `combined summary: ${list.length} captures`]);
    for (const [name, text] of b.slice(0, -1)) {
      const alone = cli([name]);
      expect(text, name).toBe(alone.stdout);
    }
    expect(r.code).toBe(1); // errors.pcap and golden.pcap have errors; nothing unreadable
  });

  it('--progress: a line counting the captures done on standard error, erased; standard output unchanged', () => {
    const list = [big, 'sample.pcap', 'golden.pcap'];
    const r = cli(['-q', '--progress', ...list]);
    expect(r.stdout).toBe(cli(['-q', ...list]).stdout);
    expect(r.stderr).toMatch(/\r\[[#.]+\] [0-2] of 3 captures {2}[\d.]+ [kMG]?B of [\d.]+ MB/);
    expect(r.stderr.endsWith('\r\x1b[K')).toBe(true);
  });

  it('the order does not depend on which capture finishes first (--jobs 1 and --jobs 4 print the same)', () => {
    const list = [big, 'sample.pcap', 'golden.pcap', 'errors.pcap'];
    const one = cli(['-q', '--jobs', '1', ...list]);
    const four = cli(['-q', '--jobs', '4', ...list]);
    expect(four.stdout).toBe(one.stdout);
    expect(four.code).toBe(one.code);
    expect(blocks(four.stdout).map(([t]) => t)).toEqual([...list, 'combined summary: 4 captures']);
    // Reversed arguments: reversed blocks, each unchanged.
    const rev = cli(['-q', '--jobs', '4', ...[...list].reverse()]);
    expect(blocks(rev.stdout).slice(0, -1)).toEqual(blocks(four.stdout).slice(0, -1).reverse());
  });

  it('small captures run one after another on the main thread (no --jobs) and on workers (--jobs 2) alike', () => {
    // Under IN_THREAD_BYTES in all, and no --jobs: the main thread runs the same jobs the workers would.
    const list = ['sample.pcap', 'errors.pcap', 'golden.pcap', 'nope.pcap'];
    for (const mode of [[], ['--json'], ['--ndjson'], ['-V', '-x', '-z', 'conv,rules']]) {
      const main = cli([...mode, ...list]);
      const workers = cli([...mode, '--jobs', '2', ...list]);
      expect(main.code, mode.join(' ')).toBe(workers.code);
      expect(main.stderr, mode.join(' ')).toBe(workers.stderr);
      expect(main.stdout, mode.join(' ')).toBe(workers.stdout);
    }
  });

  it('a directory stands for its capture files sorted by name; other files are skipped with a note', () => {
    const r = cli(['-q', '.']);
    const names = readdirSync(CAPTURES)
      .filter((n) => n.endsWith('.pcap'))
      .sort();
    expect(blocks(r.stdout).map(([t]) => t)).toEqual([...names, `combined summary: ${names.length} captures`]);
    expect(r.stderr).toContain('mpa-dissect: .: skipped 1 file not named as a capture (README.md)');
    expect(r.stdout).toBe(cli(['-q', ...names]).stdout);
    // A file named explicitly is analysed whatever its name.
    const odd = join(dir, 'capture.bin');
    copyFileSync(join(CAPTURES, 'sample.pcap'), odd);
    const named = cli(['-q', odd, 'sample.pcap']);
    expect(named.code).toBe(0);
    expect(blocks(named.stdout)[0]![1]).toBe(cli(['-q', 'sample.pcap']).stdout);
  });

  it('the reference directory, when present', () => {
    if (reference.length === 0) {
      console.warn(`${REFERENCE} is absent: skipped`);
      return;
    }
    const r = cli(['-q', REFERENCE]);
    expect(blocks(r.stdout).map(([t]) => t)).toEqual([...reference, `combined summary: ${reference.length} captures`]);
    expect(r.stderr).toMatch(/skipped 2 files not named as a capture \(README\.md, expected\.json\)/);
  });

  it('standard input is one of the captures', () => {
    const r = cli(['-q', 'golden.pcap', '-'], { input: readFileSync(join(CAPTURES, 'sample.pcap')) });
    const b = blocks(r.stdout);
    expect(b.map(([t]) => t)).toEqual(['golden.pcap', '-', 'combined summary: 2 captures']);
    expect(b[1]![1]).toBe(cli(['-q', '-'], { input: readFileSync(join(CAPTURES, 'sample.pcap')) }).stdout);
  });
});

describe("one exit status: the worst capture's", () => {
  const summaryOf = (stdout: string): string => blocks(stdout).at(-1)![1];
  it('clean only: 0', () => {
    const r = cli(['-q', 'sample.pcap', 'sample.pcap']);
    expect(r.code).toBe(0);
    expect(summaryOf(r.stdout)).toMatch(/2 captures \(2 clean\).*exit status 0/);
  });
  it('clean + findings: 1, or 0 with --fail-on never', () => {
    const r = cli(['-q', 'sample.pcap', 'errors.pcap']);
    expect(r.code).toBe(1);
    expect(summaryOf(r.stdout)).toMatch(/errors\.pcap\s+findings\s+1/);
    expect(cli(['-q', '--fail-on', 'never', 'sample.pcap', 'errors.pcap']).code).toBe(0);
  });
  it('clean + truncated: 2, the clean one still reported; --allow-truncated judges it by its findings', () => {
    const t = join(dir, 'truncated.pcap');
    const r = cli(['-q', 'sample.pcap', t]);
    expect(r.code).toBe(2);
    const b = blocks(r.stdout);
    expect(b[0]![1]).toBe(cli(['-q', 'sample.pcap']).stdout);
    expect(summaryOf(r.stdout)).toMatch(/truncated\.pcap\s+truncated\s+2/);
    expect(r.stderr).toMatch(/truncated\.pcap: offset \d+, frame \d+: truncated record/);
    const allowed = cli(['-q', '--allow-truncated', 'sample.pcap', t]);
    expect(allowed.code).toBe(cli(['-q', '--allow-truncated', t]).code);
    expect(allowed.code).toBeLessThan(2);
  });
  it('unreadable and missing captures: 2, one line each, the others reported', () => {
    const r = cli(['-q', join(dir, 'garbage.pcap'), 'sample.pcap', 'no-such.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/garbage\.pcap: offset 0, frame 1: not a pcap or pcapng file/);
    expect(r.stderr).toMatch(/no-such\.pcap: no such file or directory/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const b = blocks(r.stdout);
    expect(b[1]![1]).toBe(cli(['-q', 'sample.pcap']).stdout);
    expect(summaryOf(r.stdout)).toMatch(/3 captures \(1 clean, 2 unreadable\)/);
  });
});

describe('output forms with several captures', () => {
  it('--json: one document whose captures are the single-capture reports unchanged, and the combined summary', () => {
    const r = cli(['--json', 'sample.pcap', 'errors.pcap', join(dir, 'garbage.pcap')]);
    expect(r.code).toBe(2);
    const doc = JSON.parse(r.stdout) as {
      schema: string;
      captures: unknown[];
      summary: { exit: number; captures: number; perCapture: Array<{ verdict: string }> };
    };
    expect(doc.schema).toBe('mpa-dissect/reports/v1');
    expect(doc.captures).toHaveLength(3);
    expect(doc.captures[0]).toEqual(JSON.parse(cli(['--json', 'sample.pcap']).stdout));
    expect(doc.captures[1]).toEqual(JSON.parse(cli(['--json', 'errors.pcap']).stdout));
    // The unreadable capture: what was read, with its error (alone, --json prints nothing for it).
    expect(doc.captures[2]).toMatchObject({
      schema: 'mpa-dissect/report/v1',
      capture: { packets: 0, error: expect.stringContaining('not a pcap') },
      flows: [],
    });
    expect(doc.summary.perCapture.map((c) => c.verdict)).toEqual(['clean', 'findings', 'unreadable']);
    expect(doc.summary.exit).toBe(2);
    // Formatted as JSON.stringify(doc, null, 1) formats it, though written piece by piece.
    expect(r.stdout).toBe(JSON.stringify(doc, null, 1) + '\n');
  });

  it('--ndjson: every line tagged with its capture, the lines otherwise those of the capture alone', () => {
    const r = cli(['--ndjson', 'golden.pcap', 'sample.pcap']);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const last = lines.pop()!;
    expect(last['type']).toBe('combined-summary');
    expect(last['captures']).toBe(2);
    for (const name of ['golden.pcap', 'sample.pcap']) {
      const mine = lines.filter((l) => l['capturePath'] === name).map(({ capturePath: _c, ...rest }) => rest);
      const alone = cli(['--ndjson', name])
        .stdout.trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
      expect(mine).toEqual(alone);
    }
    expect(lines.every((l) => typeof l['capturePath'] === 'string')).toBe(true);
  });

  it("--junit: one valid file, a testsuite per capture and per capture's flow", () => {
    const out = join(dir, 'multi.xml');
    const r = cli(['-q', '--junit', out, 'golden.pcap', 'sample.pcap']);
    expect(r.code).toBe(1);
    const xml = readFileSync(out, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml) as {
      testsuites: { failures: string; testsuite: Array<{ name: string; failures: string }> };
    };
    const names = doc.testsuites.testsuite.map((s) => s.name);
    expect(names).toEqual([
      'golden.pcap',
      'golden.pcap: stream 0 10.0.0.1:40001 -> 10.0.0.2:4420',
      'golden.pcap: stream 1 10.0.0.3:40002 -> 10.0.0.2:80',
      'sample.pcap',
      'sample.pcap: stream 0 10.0.0.1:40001 -> 10.0.0.2:4420',
    ]);
    expect(Number(doc.testsuites.failures)).toBeGreaterThan(0);
    expect(doc.testsuites.testsuite.filter((s) => s.name.startsWith('sample')).every((s) => s.failures === '0')).toBe(
      true,
    );
  });
});

describe('options that make no sense with several captures: one line, exit 2', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['-w', ['-w', 'x.pcap', 'sample.pcap', 'golden.pcap'], /-w: an option of one capture's output/],
    [
      '-T fields',
      ['-T', 'fields', '-e', 'frame.number', 'sample.pcap', 'golden.pcap'],
      /-T fields: an option of one capture's output/,
    ],
    ['-l', ['-l', 'sample.pcap', 'golden.pcap'], /-l: an option of one capture's output/],
    ['tui', ['tui', 'sample.pcap', 'golden.pcap'], /tui browses one capture; 2 captures given/],
    ['tui on a directory', ['tui', '.'], /tui browses one capture; a directory \(\.\) given/],
    ['-r and more', ['-r', 'sample.pcap', 'golden.pcap', 'errors.pcap'], /-r reads one capture/],
    ['-i and captures', ['-i', 'lo', 'sample.pcap', 'golden.pcap'], /-i lo captures live/],
    ['standard input twice', ['-', '-'], /standard input can be read once/],
    [
      'bad --jobs',
      ['--jobs', '0', 'sample.pcap', 'golden.pcap'],
      /--jobs: 0 is not a number of workers: give a whole number/,
    ],
    ['a directory with no capture', ['sample.pcap', '../src'], /\.\.\/src: is a directory holding no capture files/],
  ];
  for (const [name, args, msg] of cases) {
    it(name, () => {
      const r = cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    });
  }
  it('a bad filter is said once, as for one capture, before any capture is read', () => {
    const r = cli(['-Y', 'nosuch.field == 1', 'sample.pcap', 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(cli(['-Y', 'nosuch.field == 1', 'sample.pcap']).stderr);
  });
});
