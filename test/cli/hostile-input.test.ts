/**
 * Hostile inputs to the CLI's files and names (issue: hostile input, part A): a directory walk
 * takes regular files only and says what it skipped; text taken from an input is printed with its
 * control characters escaped. Each is a real run of the built CLI.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-hostile-input-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const noJsError = (s: string) => expect(s).not.toMatch(/ {4}at |TypeError|RangeError|Maximum call stack|NaN/);

describe('directory walk', () => {
  it('a FIFO named *.pcap and a symbolic-link loop in a directory: skipped with one note, the run ends', () => {
    const d = join(tmp, 'walk');
    mkdirSync(d);
    copyFileSync(join(CAPTURES, 'sample.pcap'), join(d, 'a.pcap'));
    execFileSync('mkfifo', [join(d, 'b.pcap')]);
    symlinkSync('loop2.pcap', join(d, 'loop1.pcap'));
    symlinkSync('loop1.pcap', join(d, 'loop2.pcap'));
    const t0 = Date.now();
    const r = cli(['-q', d]);
    expect(Date.now() - t0).toBeLessThan(20_000);
    noJsError(r.stderr);
    expect(r.code).toBe(0);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      `mpa-dissect: ${d}: skipped 3 entries that are no regular file (FIFO, socket, device, dangling link or link loop: b.pcap, loop1.pcap, loop2.pcap)`,
    ]);
    expect(r.stdout).toMatch(/25 packets, 1 TCP flow/);
  });

  it('merge DIR: a FIFO named *.json is skipped with one note; with nothing else there it is a usage error', () => {
    const d = join(tmp, 'merge-walk');
    mkdirSync(d);
    execFileSync('mkfifo', [join(d, 'r.json')]);
    const empty = cli(['merge', d]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/holding no \*\.json reports/);
    writeFileSync(join(d, 'a.json'), cli(['--json', 'sample.pcap']).stdout);
    const r = cli(['merge', d]);
    noJsError(r.stderr);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      `mpa-dissect: merge: ${d}: skipped 1 entry that is no regular file (FIFO, socket, device, dangling link or link loop: r.json)\n`,
    );
  });
});

describe('control characters from inputs are shown escaped', () => {
  it('a capture file name in an error line', () => {
    const r = cli(['-q', join(tmp, 'x\u001b[2J\u0007\ry.pcap')]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stderr).toContain('x\\x1b[2J\\x07\\ry.pcap');
  });

  it('a capture file name in a multi-capture header and the directory note', () => {
    const d = join(tmp, 'names\u001b[31m');
    mkdirSync(d);
    copyFileSync(join(CAPTURES, 'sample.pcap'), join(d, 'a\u0007.pcap'));
    writeFileSync(join(d, 'notes\u009b.txt'), '');
    const r = cli(['-q', d, join(CAPTURES, 'sample.pcap')]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    expect(r.stderr).not.toMatch(CONTROL);
    expect(r.stdout).toContain('names\\x1b[31m/a\\x07.pcap <==');
    expect(r.stderr).toContain('notes\\x9b.txt');
  });

  it('merge of NUL bytes: one line naming the file, no raw NUL and no JSON.parse text', () => {
    const p = join(tmp, 'nul.json');
    writeFileSync(p, Buffer.from([0, 0, 0, 0x61, 0x62, 0x63]));
    const r = cli(['merge', p]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('\u0000');
    expect(r.stdout).not.toContain('\u0000');
    expect(r.stderr).toBe(`mpa-dissect: merge: ${p}: not JSON (it begins "\\u0000\\u0000\\u0000abc")\n`);
    const q = join(tmp, 'late.json');
    writeFileSync(q, '{"a":1} x');
    expect(cli(['merge', q]).stderr).toBe(`mpa-dissect: merge: ${q}: not JSON (invalid at character 9)\n`);
  });
});

describe('--mpa and --tuf strings', () => {
  const oneLine = (r: { code: number | null; stderr: string }, code: number, re: RegExp) => {
    expect(r.code).toBe(code);
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(re);
    noJsError(r.stderr);
  };

  it('a sequence number past 2^32-1 is refused (never wrapped), in seqstart and start alike', () => {
    for (const v of ['seqstart=4294967297:', 'seqstart=:99999999999', 'start=4294967296', 'start=1:4294967296'])
      oneLine(cli(['-q', '--mpa', `flow=all,${v}`, 'sample.pcap']), 2, /from 0 to 4294967295/);
    oneLine(cli(['-q', '--tuf', 'flow=all,key=1,start=4294967296', 'sample.pcap']), 2, /from 0 to 4294967295/);
    // The largest is taken.
    expect(cli(['-q', '--mpa', 'flow=all,seqstart=4294967295:', 'sample.pcap']).code).not.toBe(2);
  });

  it('a port that is no TCP port is refused; a selector matching no flow is one warning', () => {
    oneLine(cli(['-q', '--mpa', 'flow=port:99999999', 'sample.pcap']), 2, /port "99999999" is not a TCP port/);
    oneLine(cli(['-q', '--tuf', 'flow=10.0.0.1:70000,key=1', 'sample.pcap']), 2, /port "70000" is not a TCP port/);
    oneLine(
      cli(['-q', '--mpa', 'flow=port:5555', 'sample.pcap']),
      0,
      /^mpa-dissect: warning: --mpa flow=port:5555: matched no flow in this capture\n$/,
    );
    oneLine(
      cli(['-q', '--tuf', 'flow=7,key=1', 'sample.pcap']),
      0,
      /^mpa-dissect: warning: --tuf flow=7: matched no flow in this capture\n$/,
    );
    // A selector that matches stays silent.
    expect(cli(['-q', '--mpa', 'flow=port:4420,markers=both', 'sample.pcap']).stderr).toBe('');
  });

  it('a key given twice is refused, naming both values', () => {
    oneLine(
      cli(['-q', '--mpa', 'flow=port:4420,markers=both,markers=none', 'sample.pcap']),
      2,
      /^mpa-dissect: --mpa: markers is given twice \("both", then "none"\): give it once\n$/,
    );
    oneLine(cli(['-q', '--tuf', 'key=1,key=2', 'sample.pcap']), 2, /--tuf: key is given twice/);
    oneLine(cli(['-q', '--ulp', 'proto=none,proto=iser', 'sample.pcap']), 2, /--ulp: proto is given twice/);
  });

  it('--mpa and --tuf on the same flows: refused; meeting on one flow: a warning that --mpa is not applied there', () => {
    oneLine(
      cli(['-q', '--mpa', 'flow=port:4420', '--tuf', 'flow=port:4420,key=1a2b3c4d5e6f', 'sample.pcap']),
      2,
      /--mpa flow=port:4420 and --tuf flow=port:4420 name the same flows/,
    );
    oneLine(
      cli(['-q', '--mpa', 'flow=all', '--tuf', 'flow=all,key=1', 'sample.pcap', 'golden.pcap']),
      2,
      /--mpa flow=all and --tuf flow=all name the same flows/,
    );
    oneLine(
      cli(['-q', '--mpa', 'flow=port:4420', '--tuf', 'flow=0,key=1a2b3c4d5e6f', 'sample.pcap']),
      0,
      /^mpa-dissect: warning: --mpa flow=port:4420: not applied to stream 0: --tuf flow=0 frames it as TUF\n$/,
    );
  });
});

describe('one file named twice', () => {
  it('generate -o X --truth LINK-TO-X (X not there yet): refused, nothing written', () => {
    const d = join(tmp, 'gen-link');
    mkdirSync(d);
    symlinkSync('x.pcap', join(d, 'link.json'));
    const r = cli(['generate', 'clean', '-o', join(d, 'x.pcap'), '--truth', join(d, 'link.json')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: generate: -o and --truth name the same file .*: give two files\n$/);
    expect(existsSync(join(d, 'x.pcap'))).toBe(false);
  });

  it('-w onto a hard link or a symbolic link of the capture being read: refused', () => {
    const d = join(tmp, 'w-links');
    mkdirSync(d);
    const cap = join(d, 'c.pcap');
    copyFileSync(join(CAPTURES, 'sample.pcap'), cap);
    linkSync(cap, join(d, 'hard.pcap'));
    symlinkSync('c.pcap', join(d, 'soft.pcap'));
    for (const w of ['hard.pcap', 'soft.pcap']) {
      const r = cli(['-q', '-w', join(d, w), cap]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`mpa-dissect: -w ${join(d, w)}: that is the capture being read; choose another file\n`);
    }
    expect(readFileSync(cap)).toEqual(readFileSync(join(CAPTURES, 'sample.pcap')));
  });
});

describe('capture filter (-f)', () => {
  it('a 100 KB BPF expression: one line, exit 2, with either backend, before libpcap sees it', () => {
    const f = Array.from({ length: 8000 }, (_, i) => `tcp port ${i}`)
      .join(' or ')
      .slice(0, 100_000);
    for (const backend of ['cap', 'tcpdump']) {
      const t0 = Date.now();
      const r = cli(['-q', '-i', 'lo', '--capture-backend', backend, '-a', 'duration:1', '-f', f]);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(
        "mpa-dissect: -f: the capture filter is 100000 characters long, over the 4096 accepted: libpcap's optimiser needs time and memory growing much faster than a filter's length (16 KB takes 20 s); filter less, or with -Y after the capture\n",
      );
    }
  });
});

describe('merge checks every field it prints', () => {
  it('a finding without message or frames (merge --junit printed them): refused naming the field, no TypeError', () => {
    const good = JSON.parse(cli(['--json', 'sample.pcap']).stdout) as Record<string, unknown>;
    const f = (good['findings'] as Array<Record<string, unknown>>)[0]!;
    for (const [name, finding, field] of [
      [
        'nomsg.json',
        { rule: 'r', severity: 'warning', frames: [1], flow: 1, seq: 1, rfcErrorCode: null },
        'message is not a string',
      ],
      ['noframes.json', { ...f, frames: undefined }, 'frames is not an array of frame numbers'],
      ['badseq.json', { ...f, seq: -5 }, 'seq is not a whole number from 0 or null'],
    ] as const) {
      const p = join(tmp, name);
      writeFileSync(p, JSON.stringify({ ...good, findings: [f, finding] }));
      const r = cli(['merge', '--junit', join(tmp, 'j.xml'), p]);
      expect(r.code).toBe(2);
      noJsError(r.stderr);
      expect(r.stderr).toBe(
        `mpa-dissect: merge: ${p}: not a valid mpa-dissect/report/v1 document: findings[1].${field}\n`,
      );
    }
  });
});

describe('gzip with junk after the compressed data', () => {
  it('read as gunzip -c reads it, then one warning naming the file; on standard input too', () => {
    const plain = cli(['-q', 'sample.pcap']);
    const gz = Buffer.concat([gzipSync(readFileSync(join(CAPTURES, 'sample.pcap'))), Buffer.from('JUNKJUNKJUNK')]);
    const p = join(tmp, 'junk.pcap.gz');
    writeFileSync(p, gz);
    const r = cli(['-q', p]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
    const warning =
      ': 12 bytes after the end of the gzip-compressed data ignored (not gzip: the decompressed capture before them was read)\n';
    expect(r.stderr).toBe(`mpa-dissect: warning: ${p}${warning}`);
    const s = cli(['-q'], { input: gz });
    expect(s.stdout).toBe(plain.stdout);
    expect(s.stderr).toBe(`mpa-dissect: warning: <stdin>${warning}`);
  });
});

describe('a .pcap.gz of empty records', () => {
  it('the progress bar follows the compressed octets (a total, a percentage); the end says how many records were empty', () => {
    const hdr = Buffer.alloc(24);
    hdr.writeUInt32LE(0xa1b2c3d4, 0);
    hdr.writeUInt16LE(2, 4);
    hdr.writeUInt16LE(4, 6);
    hdr.writeUInt32LE(65535, 16);
    hdr.writeUInt32LE(1, 20);
    const n = 400_000;
    const p = join(tmp, 'empty.pcap.gz');
    writeFileSync(p, gzipSync(Buffer.concat([hdr, Buffer.alloc(16 * n)]), { level: 9 }));
    const r = cli(['-q', '--progress', p]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\r\[[#.]{30}\] +\d+% +\d+ packets +\d+ (B|kB) of \d+ (B|kB) /);
    expect(
      r.stderr.endsWith(`\r\u001b[Kmpa-dissect: ${p}: ${n} of ${n} records were empty (no captured octets)\n`),
    ).toBe(true);
  });
});
