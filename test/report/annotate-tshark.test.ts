/**
 * Findings carried into Wireshark (issue 23), with tshark as the reader: `--annotate FILE.pcapng`
 * and `-w FILE.pcapng` give exactly our findings (the --ndjson stream of the same run) as
 * frame.comment on exactly their frames, and every other field of every frame is what tshark
 * shows for the input. Also -Y with -w, where tshark's own -Y -w is the oracle (issue 22).
 */
import { describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll } from 'vitest';
import { CAPTURES, cliAsync as cli } from '../cli/helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const CORPUS = join(CAPTURES, 'corpus');
/** Wireshark finds MPA by its TCP heuristic; as test/corpus/tshark.test.ts runs it. */
const TSHARK_MPA = ['-o', 'tcp.try_heuristic_first:TRUE', '--disable-heuristic', 'rpcrdma_iwarp'];

/** What tshark says of a capture of the repository (never rewritten during the run), by command line. */
const ofInputs = new Map<string, Promise<string>>();

/** tshark, without blocking the worker: the tests of this file run concurrently. */
function tshark(args: readonly string[]): Promise<string> {
  // tshark takes most of a CPU second to start: a corpus capture read the same way twice is read once.
  const input = args.some((a) => a.startsWith(CAPTURES)) && !args.includes('-w');
  const key = args.join('\0');
  const known = input ? ofInputs.get(key) : undefined;
  if (known !== undefined) return known;
  const run = new Promise<string>((resolve, reject) => {
    execFile('tshark', args, { encoding: 'utf8', maxBuffer: 256 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`tshark ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
  if (input) ofInputs.set(key, run);
  return run;
}

/** frame.number → its comments, as tshark reads them. */
async function commentsOf(file: string): Promise<Map<number, string[]>> {
  const doc = JSON.parse(
    (await tshark(['-r', file, '-Y', 'frame.comment', '-T', 'json', '-e', 'frame.number', '-e', 'frame.comment'])) ||
      '[]',
  ) as Array<{ _source: { layers: Record<string, string[]> } }>;
  const m = new Map<number, string[]>();
  for (const p of doc)
    m.set(Number(p._source.layers['frame.number']![0]), [...p._source.layers['frame.comment']!].sort());
  return m;
}

interface NdFinding {
  type: string;
  rule: string;
  severity: string;
  rfcErrorCode: number | null;
  flow: number | null;
  frames: number[];
  seq: number | null;
  message: string;
}

/** The comments our findings should give, from the --ndjson stream: the format the README documents. */
function expectedComments(ndjson: string, keep: (frame: number) => boolean = () => true): Map<number, string[]> {
  const m = new Map<number, string[]>();
  for (const line of ndjson.split('\n')) {
    if (!line.startsWith('{')) continue;
    const e = JSON.parse(line) as NdFinding;
    if (e.type !== 'finding') continue;
    const text =
      `mpa-dissect: ${e.severity} ${e.rule}` +
      (e.rfcErrorCode !== null ? ` [MPA error ${e.rfcErrorCode}]` : '') +
      (e.flow !== null ? ` stream ${e.flow - 1}` : '') +
      (e.seq !== null ? ` seq ${e.seq}` : '') +
      `: ${e.message}`;
    for (const f of new Set(e.frames)) {
      if (!keep(f)) continue;
      const l = m.get(f) ?? [];
      l.push(text);
      m.set(f, l);
    }
  }
  for (const l of m.values()) l.sort();
  return m;
}

/** tshark's PDML of a file, as read with MPA on. */
function pdml(file: string): Promise<string> {
  return tshark([...TSHARK_MPA, '-r', file, '-T', 'pdml']);
}

/**
 * Every field of every frame as tshark's PDML shows it, minus the comments we add and the fields
 * that describe the file rather than the frame (a classic pcap has no sections or interfaces).
 */
function framesPdml(doc: string): string[] {
  return doc
    .split('\n')
    .filter((l) => l.includes('<field') || l.includes('<proto'))
    .filter(
      (l) =>
        !/name="(frame\.comment|frame\.comment\.expert|_ws\.expert[.a-z]*|pkt_comment|frame\.section_number|frame\.interface_[a-z]+)"/.test(
          l,
        ),
    )
    .map((l) => l.replace(/ on interface [^"]*, id \d+"/, '"'));
}

/** XML attribute text as tshark's PDML escapes it, unescaped. */
const unescapeXml = (t: string): string =>
  t.replace(/&(#x[0-9a-f]+|#\d+|quot|amp|lt|gt|apos);/gi, (_, e: string) =>
    e[0] === '#'
      ? String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)))
      : ({ quot: '"', amp: '&', lt: '<', gt: '>', apos: "'" } as Record<string, string>)[e.toLowerCase()]!,
  );

/**
 * frame.number → its comments, from the same PDML (the frame.comment fields the comparison above
 * leaves out): what commentsOf() reads with a tshark run of its own.
 */
function commentsOfPdml(doc: string): Map<number, string[]> {
  const m = new Map<number, string[]>();
  // A packet's comments come before its frame number (pkt_comment precedes frame): taken per packet.
  for (const packet of doc.split('<packet>').slice(1)) {
    const frame = Number(/<field name="frame\.number" [^>]*show="(\d+)"/.exec(packet)?.[1]);
    const list = [...packet.matchAll(/<field name="frame\.comment" [^>]*show="([^"]*)"/g)].map((c) =>
      unescapeXml(c[1]!),
    );
    if (list.length > 0) m.set(frame, list.sort());
  }
  return m;
}

/**
 * The frames of a file as `time_epoch len cap_len protocols` (or without protocols), one line each.
 * Without protocols, the same tshark run with its last column dropped (one run serves both).
 */
async function frameList(file: string, protocols = true): Promise<string[]> {
  const lines = (
    await tshark([
      ...TSHARK_MPA,
      '-r',
      file,
      '-T',
      'fields',
      '-e',
      'frame.time_epoch',
      '-e',
      'frame.len',
      '-e',
      'frame.cap_len',
      '-e',
      'frame.protocols',
    ])
  )
    .trim()
    .split('\n')
    .filter((l) => l !== '');
  return protocols ? lines : withoutProtocols(lines);
}

/** A frame list without its protocols column. */
const withoutProtocols = (lines: readonly string[]): string[] => lines.map((l) => l.slice(0, l.lastIndexOf('\t')));

let dir = '';
/** A pcapng with two interfaces, one of them in nanoseconds: mergecap of a pcap and a nanosecond pcap shifted by 1000.000000123 s. */
let multi: string | null = null;

if (!HAVE_TSHARK)
  it.skip('tshark is not installed: annotated pcapng checks skipped (.ci/run installs it)', async () => {});

describe.skipIf(!HAVE_TSHARK)('annotated pcapng read by tshark', async () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'mpa-annotate-'));
    const ns = join(dir, 'ns.pcap');
    const m = join(dir, 'two-interfaces-ns.pcapng');
    const a = spawnSync('editcap', ['-F', 'nsecpcap', '-t', '1000.000000123', join(CORPUS, 'bad-fpduptr.pcap'), ns]);
    const b = a.status === 0 ? spawnSync('mergecap', ['-F', 'pcapng', '-w', m, join(CORPUS, 'bad-crc.pcap'), ns]) : a;
    if (b.status === 0) multi = m;
    writeFileSync(join(dir, 'bad-crc.pcap.gz'), gzipSync(readFileSync(join(CORPUS, 'bad-crc.pcap'))));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const files = [
    'bad-crc.pcap',
    'loss.pcap',
    'rule-read-unanswered.pcap',
    'nfsrdma-call-unanswered.pcap',
    'smbd-access-outside-buffer.pcap',
    'clean-rev2-markers-both-crc-on.pcapng',
  ];

  it.each([...files, 'multi', 'gzip'])(
    '--annotate %s: our findings as comments, every other field unchanged',
    async (name) => {
      const input = name === 'multi' ? multi : name === 'gzip' ? join(dir, 'bad-crc.pcap.gz') : join(CORPUS, name);
      if (input === null) return expect.fail('editcap/mergecap could not build the two-interface capture');
      const out = join(dir, `${name}.annotated.pcapng`);
      const r = await cli(['--ndjson', '--fail-on', 'never', '--annotate', out, input]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const want = expectedComments(r.stdout);
      if (name !== 'clean-rev2-markers-both-crc-on.pcapng') expect(want.size).toBeGreaterThan(0);
      // One PDML run gives both the comments and every other field (tshark costs most of a CPU second to start).
      const doc = await pdml(out);
      expect(commentsOfPdml(doc)).toEqual(want);
      // The command the issue names: the same frames, one row each.
      const rows = await tshark([
        '-r',
        out,
        '-Y',
        'frame.comment',
        '-T',
        'fields',
        '-e',
        'frame.number',
        '-e',
        'frame.comment',
      ]);
      expect(
        rows
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => Number(l.split('\t')[0])),
      ).toEqual([...want.keys()].sort((a, b) => a - b));
      const plain = name === 'gzip' ? join(CORPUS, 'bad-crc.pcap') : input;
      expect(framesPdml(doc)).toEqual(framesPdml(await pdml(plain)));
    },
  );

  it('a pcapng input keeps its interfaces, nanosecond timestamps and section layout', async () => {
    if (multi === null) return expect.fail('editcap/mergecap could not build the two-interface capture');
    const out = join(dir, 'multi-keep.pcapng');
    await cli(['-q', '--annotate', out, multi]);
    const fields = ['-T', 'fields', '-e', 'frame.interface_id', '-e', 'frame.interface_name', '-e', 'frame.time_epoch'];
    const a = await tshark(['-r', multi, ...fields]);
    expect(await tshark(['-r', out, ...fields])).toBe(a);
    expect(a).toMatch(/\t1700001000\.000\d+123\n/); // the nanosecond interface's digits survive
    expect(
      new Set(
        a
          .trim()
          .split('\n')
          .map((l) => l.split('\t')[0]),
      ),
    ).toEqual(new Set(['0', '1']));
  });

  it('standard input: the same comments; timestamps (ns), lengths and protocols unchanged', async () => {
    for (const input of [join(CORPUS, 'bad-crc.pcap'), multi!]) {
      const out = join(dir, 'stdin.pcapng');
      const r = await cli(['--ndjson', '--fail-on', 'never', '--annotate', out, '-'], { input: readFileSync(input) });
      expect(r.stderr).toBe('');
      expect(await commentsOf(out)).toEqual(expectedComments(r.stdout));
      expect(await frameList(out)).toEqual(await frameList(input));
    }
  });

  it("Wireshark's Expert Information lists them under Comments (tshark -z expert)", async () => {
    const out = join(dir, 'expert.pcapng');
    const r = await cli(['--ndjson', '--fail-on', 'never', '--annotate', out, join(CORPUS, 'bad-crc.pcap')]);
    const texts = [...expectedComments(r.stdout).values()].flat();
    const expert = await tshark(['-r', out, '-q', '-z', 'expert']);
    expect(expert).toContain(`Comments (${texts.length})`);
    for (const t of texts) expect(expert).toContain(`Comment              Frame  ${t}`);
  });

  it('-c N: the first N frames, as the analysis read them', async () => {
    const out = join(dir, 'c5.pcapng');
    await cli(['-q', '-c', '12', '--annotate', out, join(CORPUS, 'bad-crc.pcap')]);
    expect(await frameList(out)).toEqual((await frameList(join(CORPUS, 'bad-crc.pcap'))).slice(0, 12));
    expect([...(await commentsOf(out)).keys()]).toEqual([11, 12]);
  });

  it.each(['bad-crc.pcap', 'loss.pcap', 'rule-read-unanswered.pcap'])(
    '-w %s.pcapng: the frames -w picks (those of classic -w), each with its findings',
    async (name) => {
      const input = join(CORPUS, name);
      const classic = join(dir, `${name}.w.pcap`);
      const ng = join(dir, `${name}.w.pcapng`);
      const ng2 = join(dir, `${name}.w.F`);
      const r = await cli(['--ndjson', '--fail-on', 'never', '-w', ng, input]);
      await cli(['-q', '--fail-on', 'never', '-w', classic, input]);
      await cli(['-q', '--fail-on', 'never', '-w', ng2, '-F', 'pcapng', input]);
      const ngFrames = await frameList(ng);
      expect(ngFrames).toEqual(await frameList(classic));
      expect(readFileSync(ng2)).toEqual(readFileSync(ng));
      // Output frame numbers are renumbered: map them back through their timestamps (unique here).
      const times = new Map(
        (await tshark(['-r', input, '-T', 'fields', '-e', 'frame.time_epoch', '-e', 'frame.number']))
          .trim()
          .split('\n')
          .map((l) => l.split('\t') as [string, string]),
      );
      // frame.time_epoch of each frame written: the first column of its frame list.
      const outFrames = ngFrames.map((l) => Number(times.get(l.slice(0, l.indexOf('\t')))));
      const written = new Set(outFrames);
      const got = new Map([...(await commentsOf(ng))].map(([n, c]) => [outFrames[n - 1]!, c]));
      expect(got).toEqual(expectedComments(r.stdout, (f) => written.has(f)));
      expect(got.size).toBeGreaterThan(0);
    },
  );

  it('standard input, -w FILE.pcapng: the same frames and comments as from the file', async () => {
    const input = join(CORPUS, 'bad-crc.pcap');
    const a = join(dir, 'w-file.pcapng');
    const b = join(dir, 'w-stdin.pcapng');
    await cli(['-q', '-w', a, input]);
    await cli(['-q', '-w', b, '-'], { input: readFileSync(input) });
    expect(await frameList(b)).toEqual(await frameList(a));
    expect(await commentsOf(b)).toEqual(await commentsOf(a));
  });
});

describe.skipIf(!HAVE_TSHARK)('-Y FILTER -w FILE writes what -Y displays, as tshark -Y -w', async () => {
  const cases: Array<[string, string]> = [
    ['bad-crc.pcap', 'iwarp_mpa'],
    ['bad-crc.pcap', 'iwarp_rdma.opcode == 0'],
    ['all-messages.pcap', 'iwarp_mpa && tcp.srcport == 4420'],
    ['all-messages.pcap', 'iwarp_ddp'],
    ['packed.pcap', 'iwarp_mpa'],
    ['clean-rev1-markers-none-crc-on.pcap', 'iwarp_rdma.opcode == 0 && tcp.dstport == 4420'],
  ];
  it.each(cases)('%s, -Y %s: the frame set tshark writes', async (name, filter) => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-yw-'));
    try {
      const input = join(CORPUS, name);
      const theirs = join(d, 't.pcap');
      const ours = join(d, 'o.pcap');
      await tshark([...TSHARK_MPA, '-r', input, '-Y', filter, '-w', theirs]);
      await cli(['-q', '--fail-on', 'never', '-Y', filter, '-w', ours, input]);
      const mine = await frameList(ours);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine).toEqual(await frameList(theirs));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('our own fields: the frames of the records and findings -Y displays, and no startup frames added', async () => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-yw-'));
    try {
      for (const [name, filter] of [
        ['bad-crc.pcap', 'iwarp_mpa.crc_status == "bad"'],
        ['loss.pcap', 'finding.rule == "mpa.resync"'],
        ['all-messages.pcap', 'iwarp_rdma.opcode == 1'],
      ] as const) {
        const input = join(CORPUS, name);
        const ours = join(d, 'o.pcap');
        await cli(['-q', '--fail-on', 'never', '-Y', filter, '-w', ours, input]);
        const shown = (await cli(['--fail-on', 'never', '-Y', filter, '-T', 'fields', '-e', 'frame.number', input]))
          .stdout;
        const frames = new Set(shown.split(/[\n,]/).filter(Boolean).map(Number));
        // Without its flow's startup frames Wireshark does not see MPA in the output: compare frames, not protocols.
        const all = await frameList(input, false);
        expect(frames.size).toBeGreaterThan(0);
        expect(await frameList(ours, false)).toEqual([...frames].sort((a, b) => a - b).map((f) => all[f - 1]));
      }
      // Without -Y, -w keeps its documented default: the findings' connections, whole (bad-crc.pcap
      // is one connection: every frame), so that the file shows the same findings again.
      const def = join(d, 'def.pcap');
      await cli(['-q', '--fail-on', 'never', '-w', def, join(CORPUS, 'bad-crc.pcap')]);
      expect(await frameList(def)).toEqual(await frameList(join(CORPUS, 'bad-crc.pcap')));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!HAVE_TSHARK)("-Y '' -w FILE: an empty filter is no filter, as tshark takes it", async () => {
  it.each([
    ['bad-crc.pcap', 'o.pcap', 'file'],
    ['bad-crc.pcap', 'o.pcapng', 'file'],
    ['all-messages.pcap', 'o.pcap', 'stdin'],
  ])('%s to %s from %s: every frame, the set tshark -Y "" -w writes', async (name, out, from) => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-yw-'));
    try {
      const input = join(CORPUS, name);
      const theirs = join(d, 't.pcap');
      const ours = join(d, out);
      await tshark([...TSHARK_MPA, '-r', input, '-Y', '', '-w', theirs]);
      const r =
        from === 'stdin'
          ? await cli(['-q', '--fail-on', 'never', '-Y', '', '-w', ours, '-'], { input: readFileSync(input) })
          : await cli(['-q', '--fail-on', 'never', '-Y', '', '-w', ours, input]);
      expect(r.code, r.stderr).toBe(0);
      const theirFrames = await frameList(theirs);
      expect(await frameList(ours, false)).toEqual(withoutProtocols(theirFrames));
      // The default without -Y stays the findings' connections, whole: each capture here is one
      // connection with a finding (bad-crc.pcap's errors, all-messages.pcap's info), so every frame.
      const def = join(d, 'def.pcap');
      await cli(['-q', '--fail-on', 'never', '-w', def, input]);
      expect((await frameList(def)).length).toBe(theirFrames.length);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('annotate output errors: one line, exit 2', async () => {
  const cap = join(CORPUS, 'bad-crc.pcap');
  it.each([
    [['--annotate', '/dev/full', cap], /^mpa-dissect: --annotate \/dev\/full: cannot write: no space left on device$/],
    [['--annotate', '/dev/full', '-'], /^mpa-dissect: --annotate \/dev\/full: cannot write: no space left on device$/],
    [['-w', '/dev/full', '-F', 'pcapng', cap], /^mpa-dissect: -w \/dev\/full: cannot write: no space left on device$/],
    [
      ['--annotate', '/nonexistent/dir/x.pcapng', cap],
      /^mpa-dissect: --annotate \/nonexistent\/dir\/x\.pcapng: cannot write: no such file or directory$/,
    ],
    [['--annotate', cap, cap], /that is the capture being read/],
    [['--annotate', 'x.pcapng', '-w', 'x.pcapng', cap], /-w writes that file too/],
    [
      ['-w', 'x.pcap', '-F', 'erf', cap],
      /-F: "erf" is not a format written here: pcapng \(findings as packet comments\) or pcap/,
    ],
    [['-F', 'pcapng', cap], /-F chooses the format -w writes; give -w FILE too/],
  ])('%j', async (args, msg) => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-anerr-'));
    try {
      const r = await cli(args, { cwd: d, input: args.includes('-') ? readFileSync(cap) : new Uint8Array(0) });
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.replace(/^mpa-dissect: /, 'mpa-dissect: ')).toMatch(msg);
      expect(existsSync(join(d, 'x.pcapng'))).toBe(false);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('an existing file is left as it was when the run fails before writing', async () => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-anerr-'));
    try {
      copyFileSync(cap, join(d, 'keep.pcapng'));
      const r = await cli(['--annotate', 'keep.pcapng', '-Y', 'iwarp_mpa.crc_status ==', cap], { cwd: d });
      expect(r.code).toBe(2);
      expect(readFileSync(join(d, 'keep.pcapng'))).toEqual(readFileSync(cap));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
