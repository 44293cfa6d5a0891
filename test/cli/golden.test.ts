/**
 * Golden outputs of the CLI on captures/golden.pcap (written by scripts/make-samples.ts): a Rev 2
 * connection with a non-zero PAD, a wrong FPDUPTR and a bad CRC, and a plain TCP connection.
 * Regenerate with UPDATE_GOLDEN=1 npx vitest run test/cli after an intended change, and review the diff.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { CAPTURES, cli, golden } from './helpers.js';

const CAPTURE = 'golden.pcap';
const FILTER = 'iwarp_mpa.crc_status == "bad" || finding.rule == "mpa.fpduptr-mismatch"';

describe('golden outputs (captures/golden.pcap)', () => {
  it('text: event lines, flow table, findings by rule', () => {
    const r = cli([CAPTURE]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    golden('text.txt', r.stdout);
  });

  it('-V: detail trees', () => {
    const r = cli(['-V', CAPTURE]);
    expect(r.code).toBe(1);
    golden('verbose.txt', r.stdout);
  });

  it('-x: octets with length, marker, PAD and CRC marked', () => {
    const r = cli(['-x', CAPTURE]);
    expect(r.code).toBe(1);
    golden('hex.txt', r.stdout);
  });

  it('-Y: only the matching event lines; the summary still covers the whole capture', () => {
    const r = cli(['-Y', FILTER, CAPTURE]);
    expect(r.code).toBe(1);
    golden('filtered.txt', r.stdout);
    const full = cli([CAPTURE]).stdout;
    const summary = (s: string) => s.slice(s.indexOf('Flows\n'));
    expect(summary(r.stdout)).toBe(summary(full));
  });

  it('-V -x -Y together', () => {
    const r = cli(['-V', '-x', '-Y', 'frame.number == 9', CAPTURE]);
    golden('verbose-hex-frame9.txt', r.stdout);
  });

  it('--json: the report document', () => {
    const r = cli(['--json', CAPTURE]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).schema).toBe('mpa-dissect/report/v1');
    golden('report.json', r.stdout);
  });

  it('--ndjson: one event per line, then flows and the summary', () => {
    const r = cli(['--ndjson', CAPTURE]);
    expect(r.code).toBe(1);
    const lines = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string });
    expect(lines.at(-1)!.type).toBe('summary');
    expect(new Set(lines.map((l) => l.type))).toEqual(new Set(['startup', 'fpdu', 'finding', 'flow', 'summary']));
    golden('events.ndjson', r.stdout);
  });

  it('--ndjson with -Y keeps only matching events (flows and summary always)', () => {
    const r = cli(['--ndjson', '-Y', FILTER, CAPTURE]);
    const types = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual(['fpdu', 'finding', 'fpdu', 'finding', 'flow', 'flow', 'summary']);
  });

  it('--stats: every table', () => {
    const r = cli([
      '-q',
      '-z',
      'conv,fpdu-sizes',
      '-z',
      'alignment',
      '--stats',
      'opcodes',
      '--stats',
      'rules',
      CAPTURE,
    ]);
    expect(r.code).toBe(1);
    golden('stats.txt', r.stdout);
  });

  it('--junit: parses as XML, one suite per flow, failures counted per --fail-on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-junit-'));
    const file = join(dir, 'junit.xml');
    const r = cli(['-q', '--junit', file, CAPTURE]);
    expect(r.code).toBe(1);
    const xml = readFileSync(file, 'utf8');
    expect(XMLValidator.validate(xml)).toBe(true);
    // The run's duration is the only thing that changes between runs.
    golden('junit.xml', xml.replace(/ time="[0-9.]+"/g, ' time="T"'));
    const doc = new XMLParser({ ignoreAttributes: false, isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(
      xml,
    ) as {
      testsuites: {
        '@_failures': string;
        '@_tests': string;
        testsuite: Array<{
          '@_name': string;
          '@_failures': string;
          testcase: Array<{ '@_name': string; failure?: { '#text': string } }>;
        }>;
      };
    };
    const suites = doc.testsuites.testsuite;
    expect(suites.map((s) => s['@_name'])).toEqual([
      'golden.pcap',
      'stream 0 10.0.0.1:40001 -> 10.0.0.2:4420',
      'stream 1 10.0.0.3:40002 -> 10.0.0.2:80',
    ]);
    expect(doc.testsuites['@_failures']).toBe('2');
    expect(suites.map((s) => s['@_failures'])).toEqual(['0', '2', '0']);
    const failed = suites[1]!.testcase.filter((c) => c.failure);
    expect(failed.map((c) => c['@_name']).sort()).toEqual(['mpa.crc-mismatch', 'mpa.fpduptr-mismatch']);
    const crc = failed.find((c) => c['@_name'] === 'mpa.crc-mismatch')!.failure!['#text'];
    expect(crc).toContain('frame 9 seq 1661');
    expect(crc).toContain('CRC 0x4d9d41ad on the wire');
    // --fail-on warning: the non-zero PAD fails too; never: nothing fails.
    cli(['-q', '--fail-on', 'warning', '--junit', file, CAPTURE]);
    expect(readFileSync(file, 'utf8')).toMatch(/<testsuites name="mpa-dissect" tests="\d+" failures="3"/);
    expect(cli(['-q', '--fail-on', 'never', '--junit', file, CAPTURE]).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toMatch(/<testsuites name="mpa-dissect" tests="\d+" failures="0"/);
  });

  it('standard input gives the same lines, -x included', () => {
    const input = readFileSync(join(CAPTURES, CAPTURE));
    expect(cli(['-x', '-'], { input }).stdout).toBe(cli(['-x', CAPTURE]).stdout);
    expect(cli(['-V', '-'], { input }).stdout).toBe(cli(['-V', CAPTURE]).stdout);
  });

  it("-Y '' shows everything, as tshark does", () => {
    expect(cli(['-Y', '', CAPTURE]).stdout).toBe(cli([CAPTURE]).stdout);
  });
});
