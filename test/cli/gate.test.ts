/**
 * The CLI as a CI gate and as tshark users drive it (issue 8): standard input without "-",
 * output errors, back-pressure, gzip, one-line errors, -T fields, -G fields, -v, -z spellings,
 * the 100-column flow table with Wireshark's stream numbers, a quiet clean FIN, plurals.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { buildPcap } from '../../src/report/pcap-writer.js';
import { sharedCaptures } from '../helpers/analyze.js';
import { CAPTURES, CLI, cli, requireBuilt } from './helpers.js';
import { HAVE_TSHARK, wiresharkFields } from '../helpers/tools.js';

let dir = '';
const SAMPLE = join(CAPTURES, 'sample.pcap');
const sample = (): Buffer => readFileSync(SAMPLE);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mpa-gate-'));
  writeFileSync(join(dir, 'sample.pcap.gz'), gzipSync(sample()));
  writeFileSync(join(dir, 'notes.txt'), 'not a capture\n');
  writeFileSync(join(dir, 'empty.pcap'), new Uint8Array(0));
  writeFileSync(join(dir, 'cut.pcap'), sample().subarray(0, 24 + 16 + 10)); // unreadable at frame 1
});

/**
 * cli() for a command line that only reads captures of the repository and writes no file: run once
 * per file, however many tests read its output (a CLI run is a third of a CPU second).
 */
const known = new Map<string, ReturnType<typeof cli>>();
function ran(args: readonly string[], env?: Record<string, string>): ReturnType<typeof cli> {
  const key = JSON.stringify([args, env ?? null]);
  let r = known.get(key);
  if (r === undefined) known.set(key, (r = cli(args, env ? { env } : {})));
  return r;
}

/** Exactly one line on stderr, the program's, no stack trace. */
function oneLine(stderr: string): void {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^mpa-dissect: /);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('standard input without "-"', () => {
  it('reads a capture piped in when no capture is named (never the sample)', () => {
    const r = cli(['-q'], { input: sample() });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('sample');
    expect(r.stdout).toMatch(/^25 packets, 1 TCP flow, 1 MPA/m);
  });
  it('an empty pipe is no capture: exit 2, one line', () => {
    const r = cli(['-q']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain('<stdin>');
    expect(r.stderr).toContain('no capture was named, so standard input was read');
    expect(r.stdout).toBe('');
  });
  it("a pipe of errors fails the gate: exit 1, not the sample's 0", () => {
    const r = cli(['-q'], { input: readFileSync(join(CAPTURES, 'errors.pcap')) });
    expect(r.code).toBe(1);
  });
  it('on a terminal, analyzes the sample and says so', () => {
    requireBuilt();
    // script(1) gives the command a real terminal as standard input.
    const r = spawnSync('script', ['-qec', `${process.execPath} ${CLI} -q`, '/dev/null'], {
      cwd: CAPTURES,
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1', TERM: 'dumb' },
      timeout: 20_000,
    });
    expect(r.stdout).toContain('standard input is a terminal; analyzing the shipped sample');
    expect(r.stdout).toMatch(/25 packets, 1 TCP flow/);
    expect(r.status).toBe(0);
  });
});

describe('output errors: one line naming the output, exit 2', () => {
  it('standard output on a full disk (/dev/full)', () => {
    requireBuilt();
    const full = openSync('/dev/full', 'w');
    try {
      for (const args of [
        ['sample.pcap'],
        ['--json', 'sample.pcap'],
        ['-V', '-x', 'sample.pcap'],
        ['--help'],
        ['rules'],
        ['-G', 'fields'],
      ]) {
        const r = spawnSync(process.execPath, [CLI, ...args], {
          cwd: CAPTURES,
          stdio: ['pipe', full, 'pipe'],
          encoding: 'utf8',
          env: { PATH: process.env['PATH'] ?? '' },
        });
        expect(r.status, args.join(' ')).toBe(2);
        oneLine(r.stderr);
        expect(r.stderr).toContain('standard output: cannot write: no space left on device');
      }
    } finally {
      closeSync(full);
    }
  });
  it('standard error on a full disk still gives the exit status', () => {
    requireBuilt();
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, [CLI, join(dir, 'no-such.pcap')], {
        cwd: CAPTURES,
        stdio: ['pipe', 'pipe', full],
        encoding: 'utf8',
      });
      expect(r.status).toBe(2);
    } finally {
      closeSync(full);
    }
  });
  it('--junit and -w on a full disk', () => {
    for (const [flag, name] of [
      ['--junit', '--junit /dev/full'],
      ['-w', '-w /dev/full'],
    ] as const) {
      const r = cli(['-q', flag, '/dev/full', 'errors.pcap']);
      expect(r.code, flag).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toContain(`${name}: cannot write: no space left on device`);
    }
  });
  it('--junit and -w in a place that cannot be written', () => {
    for (const flag of ['--junit', '-w']) {
      const r = cli(['-q', flag, join(dir, 'no-such-dir', 'out'), 'sample.pcap']);
      expect(r.code, flag).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toContain('no such file or directory');
    }
  });
  it('-w FILE with no capture on standard input leaves an existing FILE as it was', () => {
    const f = join(dir, 'precious.pcap');
    writeFileSync(f, sample());
    const r = cli(['-q', '-w', f]); // "-w" taken for "-r": standard input is an empty pipe
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(readFileSync(f).equals(sample())).toBe(true);
  });
  it('a reader that goes away (| head) is not an error', () => {
    const r = spawnSync('sh', ['-c', `${process.execPath} ${CLI} -V -x sample.pcap | head -1`], {
      cwd: CAPTURES,
      encoding: 'utf8',
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
  });
});

describe('unreadable or non-capture input: one line, exit 2, no report', () => {
  for (const [what, file] of [
    ['an empty file', 'empty.pcap'],
    ['a text file', 'notes.txt'],
    ['a capture cut in its first record', 'cut.pcap'],
  ] as const) {
    it(what, () => {
      for (const extra of [[], ['--json'], ['--ndjson'], ['-w', join(dir, 'out.pcap')]]) {
        const r = cli([...extra, join(dir, file)]);
        expect(r.code, extra.join(' ')).toBe(2);
        oneLine(r.stderr); // and no "selected frames were no longer available" before it with -w
        expect(r.stderr).toContain(file);
        expect(r.stdout).toBe('');
      }
    });
  }
});

describe('gzip-compressed captures, as tshark reads them', () => {
  it('from a file and from standard input, the same analysis as uncompressed', () => {
    const plain = ran(['--json', 'sample.pcap']);
    const fromFile = cli(['--json', join(dir, 'sample.pcap.gz')]);
    const fromStdin = cli(['--json'], { input: readFileSync(join(dir, 'sample.pcap.gz')) });
    const strip = (s: string) => {
      const d = JSON.parse(s) as { capture: Record<string, unknown>; flows: unknown; findings: unknown };
      return { packets: d.capture['packets'], flows: d.flows, findings: d.findings };
    };
    expect(fromFile.code).toBe(0);
    expect(strip(fromFile.stdout)).toEqual(strip(plain.stdout));
    expect(strip(fromStdin.stdout)).toEqual(strip(plain.stdout));
  });
  it('-x and -w work on a gzip file (frames kept as for a stream)', () => {
    const out = join(dir, 'gz-out.pcap');
    const r = cli(['-x', '-w', out, '--write-filter', 'frame.number == 9', join(dir, 'sample.pcap.gz')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('0000  ');
    expect(readFileSync(out).length).toBeGreaterThan(24);
  });
  it('a cut gzip stream is a truncated capture: exit 2, or its findings with --allow-truncated', () => {
    const gz = readFileSync(join(dir, 'sample.pcap.gz'));
    const cut = join(dir, 'cut.pcap.gz');
    writeFileSync(cut, gz.subarray(0, gz.length - 200));
    const r = cli(['-q', cut]);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain('truncated gzip stream');
    expect(cli(['-q', '--allow-truncated', cut]).code).toBe(0);
  });
  it('gzip garbage is one line, exit 2', () => {
    const bad = join(dir, 'bad.pcap.gz');
    writeFileSync(bad, Buffer.concat([Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), Buffer.alloc(100, 0xff)]));
    const r = cli([bad]);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain('gzip-compressed data is corrupt');
  });
});

describe('tshark habits', () => {
  it('-v prints the version', () => {
    const r = cli(['-v']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mpa-dissect \d+\.\d+\.\d+/);
  });
  it('-z conv,tcp and -z expert are our conv and rules tables; -q -z prints only the statistics', () => {
    const r = cli(['-q', '-z', 'conv,tcp', '-z', 'expert', 'golden.pcap']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^TCP conversations/);
    expect(r.stdout).toContain('Findings by rule\nRule ');
    expect(r.stdout).not.toContain('Flows');
    expect(r.stdout).not.toMatch(/\d+ packets,/);
    expect(cli(['-q', '-z', 'conv', 'golden.pcap']).stdout).toBe(r.stdout.split('\n\n')[0] + '\n');
  });
  it('-T fields -e ... -E separator=, -E header=y: one row per record, its findings aggregated in it', () => {
    const r = cli([
      '-T',
      'fields',
      '-e',
      'frame.number',
      '-e',
      'iwarp_mpa.ulpdulength',
      '-e',
      'finding.rule',
      '-E',
      'separator=,',
      '-E',
      'header=y',
      '-Y',
      'iwarp_mpa.ulpdulength > 400 || finding',
      'golden.pcap',
    ]);
    expect(r.code).toBe(1);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe('frame.number,iwarp_mpa.ulpdulength,finding.rule');
    // Frames 7 and 8, aggregated with "," as tshark does, quoted since "," is the separator.
    expect(rows).toContain('"7,8",418,mpa.fpduptr-mismatch');
    expect(rows).toContain('9,58,mpa.crc-mismatch');
    // One row per record: the FPDU of frame 9 is not repeated by a row for its finding.
    expect(rows.filter((r) => r.startsWith('9,'))).toHaveLength(1);
    expect(r.stdout).not.toContain('Flows');
  });
  it('-T fields: rows count records (findings about no record alone), and the JSON report agrees', () => {
    const r = cli(['-T', 'fields', '-e', 'frame.number', '-e', 'finding.rule', 'errors.pcap']);
    const rows = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    for (const [frames] of rows) expect(new Set(frames!.split(',')).size).toBe(frames!.split(',').length);
    // Two findings raised on one FPDU: one row naming both.
    expect(rows).toContainEqual(['9,10,11', 'mpa.after-error,ddp.after-crc-discard']);
    const { fpdus } = (JSON.parse(cli(['--json', 'errors.pcap']).stdout) as { summary: { fpdus: number } }).summary;
    expect(fpdus).toBeGreaterThan(5);
    const fpduRows = cli(['-T', 'fields', '-e', 'frame.number', '-Y', 'iwarp_mpa.ulpdulength', 'errors.pcap']);
    expect(fpduRows.stdout.trimEnd().split('\n')).toHaveLength(fpdus);
  });
  it('-T fields: -E quote=d and quote=s wrap every value; quote=n only one holding the separator', () => {
    const args = [
      '-T',
      'fields',
      '-e',
      'frame.number',
      '-e',
      'iwarp_mpa.ulpdulength',
      '-Y',
      'iwarp_mpa.ulpdulength == 418',
    ];
    expect(cli([...args, '-E', 'quote=d', 'golden.pcap']).stdout).toBe('"7,8"\t"418"\n');
    expect(cli([...args, '-E', 'quote=s', 'golden.pcap']).stdout).toBe("'7,8'\t'418'\n");
    expect(cli([...args, 'golden.pcap']).stdout).toBe('7,8\t418\n');
    expect(cli([...args, '-E', 'separator=;', '-E', 'aggregator=;', 'golden.pcap']).stdout).toBe('"7;8";418\n');
  });
  it('-T fields refuses unknown fields and -e without -T fields, as tshark does', () => {
    const a = cli(['-T', 'fields', '-e', 'iwarp_mpa.nope', 'golden.pcap']);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain("some fields aren't valid: iwarp_mpa.nope");
    expect(cli(['-e', 'frame.number', 'golden.pcap']).code).toBe(2);
    expect(cli(['-T', 'json', 'golden.pcap']).stderr).toMatch(/use --json/);
  });
  it('-n and -2 are accepted silently (no name resolution here, every record settled before it is shown)', () => {
    const plain = ran(['golden.pcap']);
    for (const args of [['-n'], ['-2'], ['-2', '-n'], ['-n', '-V'], ['-qn']]) {
      const r = cli([...args, 'golden.pcap']);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code).toBe(plain.code);
      if (!args.includes('-V') && !args.includes('-qn')) expect(r.stdout).toBe(plain.stdout);
    }
    // A value that happens to be "-2" stays a value.
    expect(cli(['-Y', '-2', 'golden.pcap']).stderr).toMatch(/-Y: column 1/);
  });
  it('-o tcp.relative_sequence_numbers:FALSE shows absolute sequence numbers; any other preference is one line', () => {
    const rel = ran(['golden.pcap']).stdout;
    const abs = cli(['-o', 'tcp.relative_sequence_numbers:FALSE', 'golden.pcap']).stdout;
    expect(rel).toContain('FPDU seq=181 len=418');
    expect(abs).toContain('FPDU seq=1181 len=418');
    expect(cli(['-o', 'tcp.relative_sequence_numbers:true', 'golden.pcap']).stdout).toBe(rel);
    for (const [o, why] of [
      ['gui.column.format:"No.","%m"', /only tcp\.relative_sequence_numbers is a preference here/],
      ['tcp.relative_sequence_numbers', /give a preference as NAME:VALUE/],
      ['tcp.relative_sequence_numbers:maybe', /is TRUE or FALSE/],
    ] as const) {
      const r = cli(['-o', o, 'golden.pcap']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });
  it("-t: the time column in tshark's formats; an unknown one is one line listing them", () => {
    const col = (args: string[]) =>
      ran([...args, '-Y', 'iwarp_mpa', 'golden.pcap'], { TZ: 'UTC' })
        .stdout.split('\n\n')[0]!
        .split('\n')
        .filter((l) => /^\s*\d/.test(l) && / → /.test(l))
        .map((l) => /^\s*\S+\s+(.+?)\s+10\.0\.0\./.exec(l)![1]!);
    const e = col(['-t', 'e']);
    expect(e[0]).toMatch(/^\d{10}\.\d{6}$/);
    expect(col([])).toEqual(col(['-t', 'r']));
    expect(col(['-t', 'ud'])[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
    expect(col(['-t', 'udoy'])[0]).toMatch(/^\d{4}\/\d{3} \d\d:\d\d:\d\d\.\d{6}$/);
    expect(col(['-t', 'u'])).toEqual(col(['-t', 'ud']).map((t) => t.split(' ')[1]));
    // dd: each line's time since the line before, from the epoch times of the same lines.
    const us = e.map((t) => Math.round(Number(t) * 1e6));
    const dd = col(['-t', 'dd']).map((t) => Math.round(Number(t) * 1e6));
    expect(dd[0]).toBe(0);
    for (let i = 1; i < us.length; i++) expect(dd[i]).toBe(us[i]! - us[i - 1]!);
    const bad = cli(['-t', 'x', 'golden.pcap']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/-t: invalid time stamp type "x"; it must be one of a \(absolute\), ad .* udoy/);
  });
  it.skipIf(!HAVE_TSHARK)('-t: each event line shows the time tshark shows for the frame it was completed in', () => {
    // tshark's time column in every format at once, one column per -t letter: the column formats
    // that -t chooses for its Time column (%t with -t e gives epoch, which has no format of its own);
    // each column is the string `tshark -t X` shows.
    const formats = [
      ['e', '%t'],
      ['r', '%Rt'],
      ['a', '%At'],
      ['ad', '%Yt'],
      ['adoy', '%YDOYt'],
      ['u', '%Aut'],
      ['ud', '%Yut'],
      ['udoy', '%YDOYut'],
      ['d', '%Tt'],
    ] as const;
    const ts = spawnSync(
      'tshark',
      [
        '-t',
        'e',
        '-o',
        `gui.column.format:${formats.map(([t, f]) => `"${t}","${f}"`).join(',')}`,
        '-r',
        'golden.pcap',
        '-T',
        'fields',
        '-e',
        'frame.number',
        ...formats.flatMap(([t]) => ['-e', `_ws.col.${t}`]),
      ],
      { cwd: CAPTURES, encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } },
    );
    const rows = ts.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    for (const [i, [t]] of formats.entries()) {
      const theirs = new Map(rows.map((r) => [r[0]!, r[i + 1]!]));
      expect(theirs.get('1'), `tshark's ${t} column`).toMatch(/\d/);
      // The FPDU lines -Y iwarp_mpa keeps are those checked (the lines of the -t test above: run once).
      const lines = ran(['-t', t, '-Y', 'iwarp_mpa', 'golden.pcap'], {
        TZ: 'UTC',
      }).stdout.split('\n');
      let n = 0;
      for (const l of lines) {
        const m = /^\s*(?:\d+-)?(\d+)\s+(.+?)\s+10\.0\.0\.\d+:\d+ → .*FPDU seq=/.exec(l);
        if (!m) continue;
        expect(m[2], `-t ${t}: ${l}`).toBe(theirs.get(m[1]!));
        n++;
      }
      expect(n).toBeGreaterThan(3);
    }
  });
  it("-G protocols and -G values: tshark's layouts, from the declared fields", () => {
    const p = cli(['-G', 'protocols']);
    expect(p.code).toBe(0);
    const protos = p.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    for (const row of protos) expect(row).toHaveLength(3);
    expect(protos).toContainEqual(['iWARP Marker Protocol data unit Aligned framing', 'IWARP_MPA', 'iwarp_mpa']);
    expect(protos).toContainEqual(['Expert Info', 'Expert', '_ws.expert']);
    const fieldsOut = ran(['-G', 'fields'])
      .stdout.trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    const fieldTypes = new Map(fieldsOut.filter((r) => r[0] === 'F').map((r) => [r[2]!, r[5]!]));
    // Every protocol -G fields names is listed by -G protocols, and no other.
    expect(new Set(protos.map((r) => r[2]))).toEqual(new Set(fieldsOut.filter((r) => r[0] === 'P').map((r) => r[2])));
    const v = cli(['-G', 'values']);
    expect(v.code).toBe(0);
    const values = v.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(values.length).toBeGreaterThan(20);
    for (const row of values) {
      expect(row[0]).toBe('V');
      expect(row).toHaveLength(4);
      expect(fieldTypes.has(row[1]!), row[1]).toBe(true);
      expect(row[2]).toMatch(fieldTypes.get(row[1]!) === 'BASE_HEX' ? /^0x[0-9a-f]+$/ : /^\d+$/);
    }
    // tshark's own opcode numbers are among ours.
    const opcodes = values.filter((r) => r[1] === 'iwarp_rdma.opcode').map((r) => r[2]);
    for (const n of ['0x0', '0x1', '0x2', '0x3', '0x7']) expect(opcodes).toContain(n);
    expect(cli(['-G', 'nope']).stderr).toMatch(/choose from fields, protocols, values/);
  });
  it("-G fields: tshark's tab-separated glossary (P and F lines)", () => {
    const r = ran(['-G', 'fields']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toContain('P\tiWARP Marker Protocol data unit Aligned framing\tiwarp_mpa');
    const crc = lines.find((l) => l.split('\t')[2] === 'iwarp_mpa.crc')!.split('\t');
    expect(crc.slice(0, 1).concat(crc.slice(3, 6))).toEqual(['F', 'FT_UINT32', 'iwarp_mpa', 'BASE_HEX']);
    for (const l of lines) expect(['P', 'F']).toContain(l.split('\t')[0]);
    // Every field tshark knows under the same name has tshark's type.
    const ts = wiresharkFields();
    if (ts !== null) {
      const theirs = new Map(
        ts
          .split('\n')
          .filter((l) => l.startsWith('F\t'))
          .map((l) => [l.split('\t')[2], l.split('\t')[3]]),
      );
      expect(theirs.get('iwarp_mpa.crc')).toBe('FT_UINT32');
    }
  });
  it('unknown options suggest the nearest one', () => {
    const r = cli(['--jsno', 'golden.pcap']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toContain('unknown option --jsno; did you mean --json?');
    expect(cli(['--wdie', 'golden.pcap']).stderr).toContain('did you mean --wide?');
    expect(cli(['-X', 'golden.pcap']).stderr).toContain('unknown option -X; did you mean -x?');
    // A second capture is not taken for an option: both are analysed (cli/multi.ts).
    const two = cli(['-q', 'golden.pcap', 'sample.pcap']);
    expect(two.code).toBe(1);
    expect(two.stderr).not.toContain('unknown option');
    expect(two.stdout).toContain('==> sample.pcap <==');
    // A word after a command that takes none is named as such.
    const extra = cli(['rules', 'sample.pcap']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toContain('unexpected argument "sample.pcap"');
  });
  it('a missing -w argument is a usage error, not "analyzing the sample"', () => {
    for (const args of [
      ['golden.pcap', '-w'],
      ['golden.pcap', '--junit'],
    ]) {
      const r = cli(args);
      expect(r.code).toBe(2);
      oneLine(r.stderr);
      expect(r.stderr).toMatch(/needs a file name/);
      expect(r.stderr).not.toContain('sample');
    }
  });
});

describe('the flow table', () => {
  it('fits 100 columns by default; --wide has every column', () => {
    for (const f of ['golden.pcap', 'sample.pcap', 'errors.pcap']) {
      const r = ran([f]);
      const table = r.stdout.slice(r.stdout.indexOf('Flows\n'), r.stdout.indexOf('Findings by rule'));
      for (const l of table.split('\n')) expect([...l].length, l).toBeLessThanOrEqual(100);
    }
    // Long IPv6 endpoints and large counts: the endpoints are shortened until it fits.
    const v6 = buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: Array.from({ length: 1200 }, () => ({ ulpdu: new Uint8Array(4) })),
      scenario: {
        client: { addr: 'fd00:1234:5678:9abc:def0:1234:5678:9abc', port: 40001 },
        server: { addr: 'fd00:1234:5678:9abc:def0:1234:5678:9abd', port: 4420 },
      },
    });
    const f6 = join(dir, 'v6.pcap');
    writeFileSync(f6, v6.pcap);
    const t6 = cli([f6]).stdout;
    const table6 = t6.slice(t6.indexOf('Flows\n'), t6.indexOf('Findings by rule'));
    expect(table6).toMatch(/1200\/0/);
    for (const l of table6.split('\n')) expect([...l].length, l).toBeLessThanOrEqual(100);
    expect(cli(['--wide', f6]).stdout).toContain('[fd00:1234:5678:9abc:def0:1234:5678:9abc]:40001');
    const wide = cli(['--wide', 'golden.pcap']).stdout;
    expect(wide).toMatch(/Frames +Bytes c→s\/s→c .* Aligned c→s\/s→c +Gaps +Closed/);
  });
  it("numbers flows as Wireshark's tcp.stream, from 0", () => {
    const r = ran(['golden.pcap']).stdout;
    expect(r).toMatch(/^Stream +Client → Server/m);
    expect(r).toMatch(/^ +0 +10\.0\.0\.1:40001 → 10\.0\.0\.2:4420/m);
    expect(r).toMatch(/^ +1 +10\.0\.0\.3:40002 → 10\.0\.0\.2:80/m);
    expect(r).toContain('mpa.crc-mismatch [MPA error 2] stream 0 frames 9');
    // The JSON report keeps its ids (a public contract).
    const doc = JSON.parse(ran(['--json', 'golden.pcap']).stdout) as { flows: Array<{ id: number }> };
    expect(doc.flows.map((f) => f.id)).toEqual([1, 2]);
  });
  it('a clean FIN between FPDUs is in the Closed column, not an event line; -V, --rules and the JSON keep it', () => {
    const plain = ran(['sample.pcap']);
    expect(plain.stdout).not.toMatch(/^\s+info\s+mpa\.tcp-closed-between/m);
    expect(plain.stdout).toMatch(/^ +0 .* fin\/fin$/m);
    expect(plain.stdout).toContain('2  info     mpa.tcp-closed-between'); // still counted by rule
    expect(cli(['-V', 'sample.pcap']).stdout).toMatch(/^\s+info\s+mpa\.tcp-closed-between/m);
    const rules = join(dir, 'fin.json');
    writeFileSync(rules, JSON.stringify({ rules: { 'mpa.tcp-closed-between': 'info' } }));
    expect(cli(['--rules', rules, 'sample.pcap']).stdout).toMatch(/^\s+info\s+mpa\.tcp-closed-between/m);
    expect(cli(['-Y', 'finding.rule == "mpa.tcp-closed-between"', 'sample.pcap']).stdout).toMatch(
      /^\s+info\s+mpa\.tcp-closed-between/m,
    );
    const doc = JSON.parse(ran(['--json', 'sample.pcap']).stdout) as { findings: Array<{ rule: string }> };
    expect(doc.findings.filter((f) => f.rule === 'mpa.tcp-closed-between')).toHaveLength(2);
  });
  it('plurals: 1 TCP flow, 1 warning; 2 TCP flows, 2 errors', () => {
    expect(ran(['sample.pcap']).stdout).toMatch(/^25 packets, 1 TCP flow, 1 MPA; 0 errors, 0 warnings, 2 infos$/m);
    expect(ran(['golden.pcap']).stdout).toMatch(/^19 packets, 2 TCP flows, 1 MPA; 2 errors, 1 warning, 3 infos$/m);
  });
});

describe('event lines in capture order', () => {
  const ref = sharedCaptures('reference');
  it.skipIf(!ref)(
    `a mid-stream capture shows frames 1-2 before frame 4 (r05-midstream-markers)${ref ? '' : ' (skipped: ../shared/captures/reference is absent)'}`,
    () => {
      const r = cli([join(ref!, 'r05-midstream-markers.pcap')]);
      const firstFrames = r.stdout
        .split('\n')
        .map((l) => /^ +(\d+)(?:-\d+)? +\d+\.\d{6} /.exec(l)?.[1])
        .filter((x): x is string => x !== undefined)
        .map(Number);
      expect(firstFrames.length).toBeGreaterThan(10);
      expect(firstFrames[0]).toBe(1);
      for (let i = 1; i < firstFrames.length; i++) expect(firstFrames[i]!).toBeGreaterThanOrEqual(firstFrames[i - 1]!);
    },
  );
  if (!ref) it.skip('../shared/captures/reference is absent: capture-order test on r05 skipped', () => {});
});

/** Peak resident memory of a running process (Linux), in MB. */
function peakMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Runs the CLI with a reader that does not read for `stallMs`, then reads everything; returns the
 * exit code and the peak memory seen. Output that ignores back-pressure grows while the reader stalls.
 */
function slowReader(args: string[], stallMs: number): Promise<{ code: number | null; peak: number; bytes: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: CAPTURES, stdio: ['ignore', 'pipe', 'ignore'] });
    let peak = 0;
    let bytes = 0;
    const timer = setInterval(() => (peak = Math.max(peak, peakMb(child.pid!))), 100);
    child.stdout.pause();
    setTimeout(() => {
      child.stdout.on('data', (b: Buffer) => {
        peak = Math.max(peak, peakMb(child.pid!));
        bytes += b.length;
      });
      child.stdout.resume();
    }, stallMs);
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ code, peak, bytes });
    });
  });
}

describe.skipIf(process.platform !== 'linux')('bounded memory', () => {
  it('-V -x into a stalled pipe: the output waits for the reader (64k zero-length FPDUs)', async () => {
    requireBuilt();
    const n = 65536;
    const conn = buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: Array.from({ length: n }, () => ({ ulpdu: new Uint8Array(0) })),
    });
    const f = join(dir, 'zero-fpdus.pcap');
    writeFileSync(f, conn.pcap);
    const r = await slowReader(['-V', '-x', f], 3000);
    expect(r.code).toBe(1);
    expect(r.bytes).toBeGreaterThan(30_000_000); // the output is far larger than the memory it took
    expect(r.peak).toBeLessThan(300);
  }, 120_000);
  it('1,000,000 empty records: findings are not held, --ndjson and text stay small', async () => {
    requireBuilt();
    // Ethernet records of 0 octets: each a net.link-malformed finding with no flow.
    const none = new Uint8Array(0); // one empty view for all (a million of them cost a second)
    const frames = Array.from({ length: 1_000_000 }, (_, i) => ({ tsSec: i, tsNsec: 0, data: none }));
    const f = join(dir, 'empty-records.pcap');
    writeFileSync(f, buildPcap(1, frames));
    for (const args of [['--ndjson', f], [f]]) {
      const r = await slowReader(args, 1000);
      expect(r.code, args.join(' ')).not.toBe(null);
      expect(r.peak, args.join(' ')).toBeLessThan(300);
    }
  }, 180_000);
});

describe('-l: no one-event lag', () => {
  it("each frame's event line is out before the next frame is written", async () => {
    requireBuilt();
    const conn = buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: [1, 2, 3].map((i) => ({ ulpdu: new Uint8Array(20 + i) })),
    });
    const child = spawn(process.execPath, [CLI, '-l', '--fail-on', 'never'], {
      cwd: CAPTURES,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
    });
    let out = '';
    const waiters: Array<() => void> = [];
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      for (const w of waiters.splice(0)) w();
    });
    const waitFor = (re: RegExp, ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (re.test(out)) resolve(true);
          else waiters.push(check);
        };
        setTimeout(() => resolve(re.test(out)), ms);
        check();
      });
    // The pcap header, then one frame at a time; the stream stays open between frames.
    child.stdin.write(conn.pcap.subarray(0, 24));
    let off = 24;
    const seen: number[] = [];
    for (const f of conn.frames) {
      const len = 16 + f.data.length;
      child.stdin.write(conn.pcap.subarray(off, off + len));
      off += len;
      const frame = seen.length + 1;
      seen.push(frame);
      if (frame === 4 || frame === 5 || frame === 6) {
        // The MPA Request (4), Reply (5) and the first FPDU (6) each show while the capture is still open.
        expect(await waitFor(new RegExp(`^ +${frame} +\\d+\\.\\d{6} `, 'm'), 10_000), `frame ${frame}:\n${out}`).toBe(
          true,
        );
      }
    }
    child.stdin.end();
    await new Promise((r) => child.on('exit', r));
  }, 60_000);
});

describe('standard input that stops early', () => {
  it('a bad record on standard input ends the run at once, though the writer keeps the pipe open', async () => {
    requireBuilt();
    const child = spawn(process.execPath, [CLI, '-q'], { cwd: CAPTURES, stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.stdin.on('error', () => {}); // the reader is gone: EPIPE is expected
    child.stdin.write(sample().subarray(0, 24));
    child.stdin.write(Buffer.alloc(64, 0xff)); // a record header promising 4 GB
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => resolve(-1), 15_000);
      child.on('exit', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    child.stdin.destroy();
    expect(code).toBe(2);
    oneLine(err);
  }, 30_000);
});
