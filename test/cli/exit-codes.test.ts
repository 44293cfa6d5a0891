/**
 * Exit status, as CI jobs rely on it: 0 nothing at or above --fail-on, 1 something was, 2 usage
 * error or unreadable capture (one line on stderr, never a stack trace).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { CAPTURES, cli } from './helpers.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-exit-'));
  // Only a warning: a non-zero PAD.
  const warn = buildMpaConnection({
    request: { c: true },
    reply: { c: true },
    i2r: [
      { ulpdu: sendUlpdu(1, patternBytes(40, 1)) },
      { ulpdu: sendUlpdu(2, patternBytes(21, 2)), fault: { padByte: 0xaa } },
    ],
  });
  writeFileSync(join(dir, 'warning.pcap'), warn.pcap);
  const golden = readFileSync(join(CAPTURES, 'golden.pcap'));
  writeFileSync(join(dir, 'cut.pcap'), golden.subarray(0, 24 + 16 + 10)); // header, then a record cut short
  writeFileSync(join(dir, 'half.pcap'), golden.subarray(0, 700)); // some records, then a cut
  writeFileSync(join(dir, 'garbage.pcap'), new TextEncoder().encode('this is not a capture at all\n'));
  writeFileSync(join(dir, 'empty.pcap'), new Uint8Array(0));
});

/** One line on stderr, starting with the program name, and no stack trace. */
function oneLineError(stderr: string): void {
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr).toMatch(/^mpa-dissect: /);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('exit status 0 and 1 follow --fail-on', () => {
  it('a clean capture: 0', () => {
    expect(cli(['-q', 'sample.pcap']).code).toBe(0);
  });
  it('errors found: 1 (text, --json, --ndjson alike)', () => {
    expect(cli(['-q', 'golden.pcap']).code).toBe(1);
    expect(cli(['--json', 'golden.pcap']).code).toBe(1);
    expect(cli(['--ndjson', 'golden.pcap']).code).toBe(1);
  });
  it('--fail-on never: 0 even with errors', () => {
    expect(cli(['-q', '--fail-on', 'never', 'golden.pcap']).code).toBe(0);
  });
  it('only a warning: 0 by default, 1 with --fail-on warning', () => {
    const w = join(dir, 'warning.pcap');
    const r = cli(['-q', w]);
    expect(r.stdout).toContain('mpa.pad-not-zero');
    expect(r.code).toBe(0);
    expect(cli(['-q', '--fail-on', 'warning', w]).code).toBe(1);
  });
  it('a rules file that demotes the errors: 0; one that promotes the warning: 1', () => {
    const demote = join(dir, 'demote.json');
    writeFileSync(demote, JSON.stringify({ rules: { 'mpa.crc-mismatch': 'warning', 'mpa.fpduptr-mismatch': 'off' } }));
    expect(cli(['-q', '--rules', demote, 'golden.pcap']).code).toBe(0);
    const promote = join(dir, 'promote.json');
    writeFileSync(promote, JSON.stringify({ rules: { 'mpa.pad-not-zero': 'error' } }));
    expect(cli(['-q', '--rules', promote, join(dir, 'warning.pcap')]).code).toBe(1);
  });
  it('a threshold violation fails the run like any error', () => {
    const th = join(dir, 'align.json');
    writeFileSync(th, JSON.stringify({ thresholds: { 'alignment.minFpduAlignedPercent': 90 } }));
    const r = cli(['-q', '--rules', th, 'sample.pcap']);
    expect(r.stdout).toContain('threshold.fpdu-alignment');
    expect(r.code).toBe(1);
  });
});

describe('exit status 2: usage errors and unreadable input', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['missing capture', ['no-such.pcap'], /no-such\.pcap: no such file or directory/],
    ['a directory with no capture in it', ['../src'], /..\/src: is a directory holding no capture files/],
    ['unknown option', ['--frobnicate', 'golden.pcap'], /unknown option --frobnicate/],
    ['unknown option near a known one', ['--jsno', 'golden.pcap'], /unknown option --jsno; did you mean --json\?/],
    ['-w without its file name', ['golden.pcap', '-w'], /^mpa-dissect: -w needs a file name/],
    ['bad --fail-on', ['--fail-on', 'sometimes', 'golden.pcap'], /Invalid values/],
    ['--json with --ndjson', ['--json', '--ndjson', 'golden.pcap'], /choose one/],
    ['--json with -Y', ['--json', '-Y', 'finding', 'golden.pcap'], /--json report always describes the whole capture/],
    ['--write-filter without -w', ['--write-filter', 'finding', 'golden.pcap'], /give -w FILE too/],
    ['unknown statistic', ['-z', 'plen', 'golden.pcap'], /unknown statistic "plen"/],
    ['bad --mpa', ['--mpa', 'flow=nowhere', 'golden.pcap'], /--mpa: flow "nowhere"/],
    ['-w onto the capture itself', ['-w', 'golden.pcap', 'golden.pcap'], /that is the capture being read/],
    ['bad --tcp-buffer-flow', ['--tcp-buffer-flow', '0', 'golden.pcap'], /--tcp-buffer-flow: 0 is not a size/],
    [
      '-w into a missing directory',
      ['-w', '/no/such/dir/x.pcap', 'golden.pcap'],
      /cannot write: no such file or directory/,
    ],
  ];
  for (const [name, args, msg] of cases) {
    it(name, () => {
      const r = cli(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stdout).toBe('');
    });
  }

  it('garbage and empty files: one line naming the file', () => {
    for (const f of ['garbage.pcap', 'empty.pcap']) {
      const r = cli(['-q', join(dir, f)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(f);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a capture cut inside its first record: 2, with file, offset and frame', () => {
    const r = cli(['-q', join(dir, 'cut.pcap')]);
    expect(r.code).toBe(2);
    oneLineError(r.stderr);
    expect(r.stderr).toMatch(/cut\.pcap: offset 24, frame 1: /);
  });

  it('a capture cut later: the frames before are analyzed and reported, then the cut: exit 2 whatever --fail-on says', () => {
    for (const failOn of ['error', 'never']) {
      const r = cli(['-q', '--fail-on', failOn, join(dir, 'half.pcap')]);
      expect(r.stderr).toMatch(/^mpa-dissect: .*half\.pcap: offset \d+, frame \d+: truncated /);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/^\d+ packets/m);
    }
  });

  it('--allow-truncated: a capture stopped mid-record exits by its findings', () => {
    const r = cli(['-q', '--allow-truncated', '--fail-on', 'never', join(dir, 'half.pcap')]);
    expect(r.stderr).toMatch(/half\.pcap: offset \d+, frame \d+: truncated /);
    expect(r.code).toBe(0);
  });

  it('a bad display filter: 2, pointing at the column', () => {
    const r = cli(['-Y', 'iwarp_mpa.crc_status == "bad" &&', 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('-Y: column 31:');
    expect(r.stderr).toContain('"&&" needs an expression on its right.');
    // tshark's caret under the offending token, below the filter text
    const lines = r.stderr.split('\n');
    const caret = lines.find((l) => /^\s+\^/.test(l))!;
    const shown = lines[lines.indexOf(caret) - 1]!;
    expect(shown.slice(caret.indexOf('^'), caret.indexOf('^') + 2)).toBe('&&');
    expect(r.stdout).toBe('');
  });

  it('an unknown field in -Y or --write-filter: 2, naming it', () => {
    const a = cli(['-Y', 'iwarp_mpa.crc_stat == "bad"', 'golden.pcap']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain('"iwarp_mpa.crc_stat" is neither a field nor a protocol name.');
    expect(a.stderr).toContain('-Y: column 1:');
    const b = cli(['-w', join(dir, 'x.pcap'), '--write-filter', 'finding.rule ==', 'golden.pcap']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--write-filter: column 14:');
  });

  it('bad rules files: 2, naming the file and the problem', () => {
    const bad: Array<[string, string, RegExp]> = [
      [
        'typo.json',
        JSON.stringify({ rules: { 'mpa.crc-mistmatch': 'off' } }),
        /typo\.json: unknown rule "mpa\.crc-mistmatch".*did you mean "mpa\.crc-mismatch"/,
      ],
      [
        'sev.json',
        JSON.stringify({ rules: { 'mpa.crc-mismatch': 'fatal' } }),
        /sev\.json: rule "mpa\.crc-mismatch": "fatal" is not one of/,
      ],
      ['json.json', '{ "rules": { ', /json\.json: not valid JSON/],
      [
        'th.json',
        JSON.stringify({ thresholds: { 'alignment.minFpduAlignedPercent': 120 } }),
        /th\.json: threshold "alignment\.minFpduAlignedPercent": 120 must be a number from 0 to 100/,
      ],
      ['key.json', JSON.stringify({ rule: {} }), /key\.json: unknown key "rule"/],
    ];
    for (const [name, text, msg] of bad) {
      const p = join(dir, name);
      writeFileSync(p, text);
      const r = cli(['-q', '--rules', p, 'golden.pcap']);
      expect(r.code, name).toBe(2);
      oneLineError(r.stderr);
      expect(r.stderr).toMatch(msg);
    }
    const r = cli(['--rules', join(dir, 'none.json'), 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/none\.json: cannot read the rules file: no such file/);
  });
});
