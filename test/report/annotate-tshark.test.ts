/**
 * Findings carried into Wireshark (issue 23), with tshark as the reader: `--annotate FILE.pcapng`
 * and `-w FILE.pcapng` give exactly our findings (the --ndjson stream of the same run) as
 * frame.comment on exactly their frames, and every other field of every frame is what tshark
 * shows for the input. Also -Y with -w, where tshark's own -Y -w is the oracle (issue 22).
 *
 * tshark takes most of a CPU second to start, nearly all of it before the first packet. So the
 * CLI runs of every test come first (prepared() below, once for the file), and tshark then reads
 * all their outputs and inputs in a few runs (test/helpers/tshark-batch.ts: the captures appended
 * into one, each in addresses of its own, every frame given back to its file): the frame lists in
 * one, the comments in one, the PDML comparisons in two, the comment rows in one, and tshark's own
 * -Y -w files (the oracle for -Y -w) in one, each filter on its own capture's frames. Each test
 * then checks its own files as before. What a batch cannot hold is still one tshark per question:
 * interface fields (a batch merges interfaces), -z expert (one summary per file).
 */
import { describe, expect, it } from 'vitest';
import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll } from 'vitest';
import { CAPTURES, type CliResult, cliAsync as cli } from '../cli/helpers.js';
import {
  type PdmlPair,
  tsharkFieldsMany,
  tsharkJsonMany,
  tsharkPdmlPairs,
  tsharkWriteMany,
} from '../helpers/tshark-batch.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const CORPUS = join(CAPTURES, 'corpus');
/** Wireshark finds MPA by its TCP heuristic; as test/corpus/tshark.test.ts runs it. */
const TSHARK_MPA = ['-o', 'tcp.try_heuristic_first:TRUE', '--disable-heuristic', 'rpcrdma_iwarp'];

/** tshark, without blocking the worker (the CLI runs of prepared() go on meanwhile). */
function tshark(args: readonly string[]): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    execFile('tshark', args, { encoding: 'utf8', maxBuffer: 256 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`tshark ${args.join(' ')}: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
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
 * frame.number (less the frames before the file's in its batch) → its comments, from the same PDML
 * (the frame.comment fields the comparison above leaves out).
 */
function commentsOfPdml(doc: string, base: number): Map<number, string[]> {
  const m = new Map<number, string[]>();
  // A packet's comments come before its frame number (pkt_comment precedes frame): taken per packet.
  for (const packet of doc.split('<packet>').slice(1)) {
    const frame = Number(/<field name="frame\.number" [^>]*show="(\d+)"/.exec(packet)?.[1]) - base;
    const list = [...packet.matchAll(/<field name="frame\.comment" [^>]*show="([^"]*)"/g)].map((c) =>
      unescapeXml(c[1]!),
    );
    if (list.length > 0) m.set(frame, list.sort());
  }
  return m;
}

/** A frame list without its protocols column. */
const withoutProtocols = (lines: readonly string[]): string[] => lines.map((l) => l.slice(0, l.lastIndexOf('\t')));

/** Runs the tasks, `width` at a time (the machine's cores are shared with the rest of the suite). */
async function pool<T>(tasks: ReadonlyArray<() => Promise<T>>, width = 2): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < tasks.length; i = next++) out[i] = await tasks[i]!();
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

/** The files annotated from each capture with --annotate, and the capture each is compared with. */
const ANNOTATED = [
  'bad-crc.pcap',
  'loss.pcap',
  'rule-read-unanswered.pcap',
  'nfsrdma-call-unanswered.pcap',
  'smbd-access-outside-buffer.pcap',
  'clean-rev2-markers-both-crc-on.pcapng',
  'multi',
  'gzip',
] as const;
const W_CASES = ['bad-crc.pcap', 'loss.pcap', 'rule-read-unanswered.pcap'] as const;
const YW_CASES: Array<[string, string]> = [
  ['bad-crc.pcap', 'iwarp_mpa'],
  ['bad-crc.pcap', 'iwarp_rdma.opcode == 0'],
  ['all-messages.pcap', 'iwarp_mpa && tcp.srcport == 4420'],
  ['all-messages.pcap', 'iwarp_ddp'],
  ['packed.pcap', 'iwarp_mpa'],
  ['clean-rev1-markers-none-crc-on.pcap', 'iwarp_rdma.opcode == 0 && tcp.dstport == 4420'],
];
const OWN_FIELDS = [
  ['bad-crc.pcap', 'iwarp_mpa.crc_status == "bad"'],
  ['loss.pcap', 'finding.rule == "mpa.resync"'],
  ['all-messages.pcap', 'iwarp_rdma.opcode == 1'],
] as const;
const EMPTY_Y: Array<[string, string, string]> = [
  ['bad-crc.pcap', 'o.pcap', 'file'],
  ['bad-crc.pcap', 'o.pcapng', 'file'],
  ['all-messages.pcap', 'o.pcap', 'stdin'],
];

let dir = '';
/** A pcapng with two interfaces, one of them in nanoseconds: mergecap of a pcap and a nanosecond pcap shifted by 1000.000000123 s. */
let multi: string | null = null;

interface Prepared {
  /** Each CLI run and tshark -w, by a name of the test's own. */
  runs: Map<string, CliResult>;
  /** Output files, by the same names. */
  path: (name: string) => string;
  /** tshark's `frame.time_epoch frame.len frame.cap_len frame.protocols` rows of a file, as frameList() gives them. */
  frames: Map<string, string[]>;
  /** tshark's frame.number → comments of a file (-Y frame.comment -T json). */
  comments: Map<string, Map<number, string[]>>;
  /** The --annotate cases: PDML of the annotated file (a) and of its input (b). */
  pdml: Map<string, PdmlPair>;
  /** The --annotate cases: frame numbers of `-Y frame.comment -T fields -e frame.number -e frame.comment`. */
  rows: Map<string, number[]>;
}

let preparing: Promise<Prepared> | null = null;
/** Every test's CLI runs, then tshark over all their files at once: made on first use, once. */
const prepared = (): Promise<Prepared> => (preparing ??= prepare());

async function prepare(): Promise<Prepared> {
  dir = mkdtempSync(join(tmpdir(), 'mpa-annotate-'));
  const ns = join(dir, 'ns.pcap');
  const m = join(dir, 'two-interfaces-ns.pcapng');
  const a = spawnSync('editcap', ['-F', 'nsecpcap', '-t', '1000.000000123', join(CORPUS, 'bad-fpduptr.pcap'), ns]);
  const b = a.status === 0 ? spawnSync('mergecap', ['-F', 'pcapng', '-w', m, join(CORPUS, 'bad-crc.pcap'), ns]) : a;
  if (b.status === 0) multi = m;
  writeFileSync(join(dir, 'bad-crc.pcap.gz'), gzipSync(readFileSync(join(CORPUS, 'bad-crc.pcap'))));

  /** Output files another command line of the same arguments writes: that run's file. */
  const same = new Map<string, string>();
  const path = (name: string) => join(dir, same.get(name) ?? name);
  const runs = new Map<string, CliResult>();
  /** Files whose frame lists and comments tshark reads (inputs too). */
  const listed = new Set<string>();
  const commented = new Set<string>();
  const tasks: Array<() => Promise<void>> = [];
  const run = (name: string, args: readonly string[], o: { input?: Uint8Array } = {}) =>
    tasks.push(async () => {
      runs.set(name, await cli(args, o));
    });
  /**
   * tshark -Y FILTER -w by input and filter: the same command line writes the same file, once;
   * all of them in one tshark (tsharkWriteMany: each filter on its own capture's frames of a batch).
   */
  const oracles = new Map<string, string>();
  const writes: Array<{ input: string; filter: string; output: string }> = [];
  const oracle = (name: string, input: string, filter: string) => {
    const key = `${input}\0${filter}`;
    const written = oracles.get(key);
    if (written !== undefined) {
      same.set(name, written);
      return;
    }
    oracles.set(key, name);
    writes.push({ input, filter, output: path(name) });
  };
  const annotatedInput = (name: string) =>
    name === 'multi' ? multi : name === 'gzip' ? path('bad-crc.pcap.gz') : join(CORPUS, name);
  const plainOf = (name: string) => (name === 'gzip' ? join(CORPUS, 'bad-crc.pcap') : annotatedInput(name));

  for (const name of ANNOTATED) {
    const input = annotatedInput(name);
    if (input !== null)
      run(`annotate ${name}`, [
        '--ndjson',
        '--fail-on',
        'never',
        '--annotate',
        path(`${name}.annotated.pcapng`),
        input,
      ]);
  }
  if (multi !== null) run('multi-keep', ['-q', '--annotate', path('multi-keep.pcapng'), multi]);
  for (const input of [join(CORPUS, 'bad-crc.pcap'), multi]) {
    if (input === null) continue;
    const name = `stdin ${input === multi ? 'multi' : 'bad-crc'}`;
    run(name, ['--ndjson', '--fail-on', 'never', '--annotate', path(`${name}.pcapng`), '-'], {
      input: readFileSync(input),
    });
    listed.add(path(`${name}.pcapng`)).add(input);
    commented.add(path(`${name}.pcapng`));
  }
  run('c12', ['-q', '-c', '12', '--annotate', path('c12.pcapng'), join(CORPUS, 'bad-crc.pcap')]);
  listed.add(path('c12.pcapng')).add(join(CORPUS, 'bad-crc.pcap'));
  commented.add(path('c12.pcapng'));
  for (const name of W_CASES) {
    const input = join(CORPUS, name);
    run(`${name}.w.pcapng`, ['--ndjson', '--fail-on', 'never', '-w', path(`${name}.w.pcapng`), input]);
    run(`${name}.w.pcap`, ['-q', '--fail-on', 'never', '-w', path(`${name}.w.pcap`), input]);
    run(`${name}.w.F`, ['-q', '--fail-on', 'never', '-w', path(`${name}.w.F`), '-F', 'pcapng', input]);
    listed
      .add(path(`${name}.w.pcapng`))
      .add(path(`${name}.w.pcap`))
      .add(input);
    commented.add(path(`${name}.w.pcapng`));
  }
  const badCrc = join(CORPUS, 'bad-crc.pcap');
  run('w-file.pcapng', ['-q', '-w', path('w-file.pcapng'), badCrc]);
  run('w-stdin.pcapng', ['-q', '-w', path('w-stdin.pcapng'), '-'], { input: readFileSync(badCrc) });
  for (const f of ['w-file.pcapng', 'w-stdin.pcapng']) {
    listed.add(path(f));
    commented.add(path(f));
  }
  YW_CASES.forEach(([name, filter], i) => {
    const input = join(CORPUS, name);
    oracle(`yw${i}.t.pcap`, input, filter);
    run(`yw${i}.o.pcap`, ['-q', '--fail-on', 'never', '-Y', filter, '-w', path(`yw${i}.o.pcap`), input]);
    listed.add(path(`yw${i}.t.pcap`)).add(path(`yw${i}.o.pcap`));
  });
  OWN_FIELDS.forEach(([name, filter], i) => {
    const input = join(CORPUS, name);
    run(`own${i}.o.pcap`, ['-q', '--fail-on', 'never', '-Y', filter, '-w', path(`own${i}.o.pcap`), input]);
    run(`own${i}.fields`, ['--fail-on', 'never', '-Y', filter, '-T', 'fields', '-e', 'frame.number', input]);
    listed.add(path(`own${i}.o.pcap`)).add(input);
  });
  // The default -w (no -Y) of a capture: one run serves every test that asks for it, the classic
  // -w run above where there is one (the same arguments).
  for (const name of new Set(['bad-crc.pcap', ...EMPTY_Y.map(([n]) => n)])) {
    if ((W_CASES as readonly string[]).includes(name)) same.set(`def-${name}`, `${name}.w.pcap`);
    else run(`def ${name}`, ['-q', '--fail-on', 'never', '-w', path(`def-${name}`), join(CORPUS, name)]);
    listed.add(path(`def-${name}`)).add(join(CORPUS, name));
  }
  EMPTY_Y.forEach(([name, out, from], i) => {
    const input = join(CORPUS, name);
    oracle(`empty${i}.t.pcap`, input, '');
    const ours = path(`empty${i}.${out}`);
    if (from === 'stdin')
      run(`empty${i}`, ['-q', '--fail-on', 'never', '-Y', '', '-w', ours, '-'], { input: readFileSync(input) });
    else run(`empty${i}`, ['-q', '--fail-on', 'never', '-Y', '', '-w', ours, input]);
    listed.add(path(`empty${i}.t.pcap`)).add(ours);
  });
  tasks.push(async () => {
    await tsharkWriteMany(writes, TSHARK_MPA);
    for (const name of oracles.values()) runs.set(name, { code: 0, stdout: '', stderr: '' });
  });
  await pool(tasks);
  for (const [name, as] of same) runs.set(name.startsWith('def-') ? `def ${name.slice(4)}` : name, runs.get(as)!);

  const annotated = ANNOTATED.filter((n) => annotatedInput(n) !== null);
  const outs = annotated.map((n) => path(`${n}.annotated.pcapng`));
  const [lists, notes, pairs, rowLines] = await Promise.all([
    tsharkFieldsMany([...listed], TSHARK_MPA, ['frame.time_epoch', 'frame.len', 'frame.cap_len', 'frame.protocols']),
    tsharkJsonMany([...commented], ['-Y', 'frame.comment'], ['frame.comment']),
    tsharkPdmlPairs(
      annotated.map((n) => [path(`${n}.annotated.pcapng`), plainOf(n)!] as const),
      TSHARK_MPA,
    ),
    tsharkFieldsMany(outs, ['-Y', 'frame.comment'], ['frame.comment']),
  ]);
  const frames = new Map(
    [...lists].map(([f, rows]) => [f, rows.map((r) => r.text.slice(r.text.indexOf('\t') + 1))] as const),
  );
  const comments = new Map(
    [...notes].map(
      ([f, packets]) =>
        [f, new Map(packets.map((p) => [Number(p['frame.number']![0]), [...p['frame.comment']!].sort()]))] as const,
    ),
  );
  const pdml = new Map(annotated.map((n, i) => [n, pairs[i]!] as const));
  const rows = new Map(
    annotated.map((n) => [n, (rowLines.get(path(`${n}.annotated.pcapng`)) ?? []).map((r) => r.frame)]),
  );
  return { runs, path, frames, comments, pdml, rows };
}

/** A CLI run (or tshark -w) of prepared(), by name. */
async function ran(name: string): Promise<CliResult> {
  const r = (await prepared()).runs.get(name);
  if (r === undefined)
    return expect.fail(`${name}: not run (editcap/mergecap could not build the two-interface capture?)`);
  return r;
}

/**
 * The frames of a file as `time_epoch len cap_len protocols` (or without protocols), one line each.
 * Without protocols, the same rows with their last column dropped.
 */
async function frameList(file: string, protocols = true): Promise<string[]> {
  const lines = (await prepared()).frames.get(file);
  if (lines === undefined) return expect.fail(`${file}: not in the frame lists tshark read`);
  return protocols ? lines : withoutProtocols(lines);
}

/** frame.number → its comments, as tshark reads them. */
async function commentsOf(file: string): Promise<Map<number, string[]>> {
  const m = (await prepared()).comments.get(file);
  if (m === undefined) return expect.fail(`${file}: not in the comments tshark read`);
  return m;
}

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

if (!HAVE_TSHARK)
  it.skip('tshark is not installed: annotated pcapng checks skipped (.ci/run installs it)', async () => {});

describe.skipIf(!HAVE_TSHARK)('annotated pcapng read by tshark', async () => {
  it.each([...ANNOTATED])('--annotate %s: our findings as comments, every other field unchanged', async (name) => {
    const r = await ran(`annotate ${name}`);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const want = expectedComments(r.stdout);
    if (name !== 'clean-rev2-markers-both-crc-on.pcapng') expect(want.size).toBeGreaterThan(0);
    // One PDML run gives both the comments and every other field; the input's PDML is read at the
    // same place of a batch of its own, so that frame numbers, streams and times line up.
    const { a, b, base } = (await prepared()).pdml.get(name)!;
    expect(commentsOfPdml(a, base)).toEqual(want);
    // The command the issue names: the same frames, one row each.
    expect((await prepared()).rows.get(name)).toEqual([...want.keys()].sort((x, y) => x - y));
    expect(framesPdml(a).length).toBeGreaterThan(0);
    expect(framesPdml(a)).toEqual(framesPdml(b));
  });

  it('a pcapng input keeps its interfaces, nanosecond timestamps and section layout', async () => {
    if (multi === null) await prepared();
    if (multi === null) return expect.fail('editcap/mergecap could not build the two-interface capture');
    await ran('multi-keep');
    const out = (await prepared()).path('multi-keep.pcapng');
    // Interfaces are what a batch merges: one tshark each.
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
    const { path } = await prepared();
    for (const [name, input] of [
      ['bad-crc', join(CORPUS, 'bad-crc.pcap')],
      ['multi', multi!],
    ] as const) {
      const out = path(`stdin ${name}.pcapng`);
      const r = await ran(`stdin ${name}`);
      expect(r.stderr).toBe('');
      expect(await commentsOf(out)).toEqual(expectedComments(r.stdout));
      expect(await frameList(out)).toEqual(await frameList(input));
    }
  });

  it("Wireshark's Expert Information lists them under Comments (tshark -z expert)", async () => {
    // The same run as --annotate bad-crc.pcap's above: its file.
    const r = await ran('annotate bad-crc.pcap');
    const out = (await prepared()).path('bad-crc.pcap.annotated.pcapng');
    const texts = [...expectedComments(r.stdout).values()].flat();
    const expert = await tshark(['-r', out, '-q', '-z', 'expert']);
    expect(expert).toContain(`Comments (${texts.length})`);
    for (const t of texts) expect(expert).toContain(`Comment              Frame  ${t}`);
  });

  it('-c N: the first N frames, as the analysis read them', async () => {
    await ran('c12');
    const out = (await prepared()).path('c12.pcapng');
    expect(await frameList(out)).toEqual((await frameList(join(CORPUS, 'bad-crc.pcap'))).slice(0, 12));
    expect([...(await commentsOf(out)).keys()]).toEqual([11, 12]);
  });

  it.each([...W_CASES])(
    '-w %s.pcapng: the frames -w picks (those of classic -w), each with its findings',
    async (name) => {
      const { path } = await prepared();
      const input = join(CORPUS, name);
      const ng = path(`${name}.w.pcapng`);
      const r = await ran(`${name}.w.pcapng`);
      await ran(`${name}.w.pcap`);
      await ran(`${name}.w.F`);
      const ngFrames = await frameList(ng);
      expect(ngFrames).toEqual(await frameList(path(`${name}.w.pcap`)));
      expect(readFileSync(path(`${name}.w.F`))).toEqual(readFileSync(ng));
      // Output frame numbers are renumbered: map them back through their timestamps (unique here),
      // the first column of the input's frame list, whose row n is frame n.
      const times = new Map((await frameList(input)).map((l, i) => [l.slice(0, l.indexOf('\t')), i + 1]));
      // frame.time_epoch of each frame written: the first column of its frame list.
      const outFrames = ngFrames.map((l) => Number(times.get(l.slice(0, l.indexOf('\t')))));
      const written = new Set(outFrames);
      const got = new Map([...(await commentsOf(ng))].map(([n, c]) => [outFrames[n - 1]!, c]));
      expect(got).toEqual(expectedComments(r.stdout, (f) => written.has(f)));
      expect(got.size).toBeGreaterThan(0);
    },
  );

  it('standard input, -w FILE.pcapng: the same frames and comments as from the file', async () => {
    const { path } = await prepared();
    await ran('w-file.pcapng');
    await ran('w-stdin.pcapng');
    const [a, b] = [path('w-file.pcapng'), path('w-stdin.pcapng')];
    expect(await frameList(b)).toEqual(await frameList(a));
    expect(await commentsOf(b)).toEqual(await commentsOf(a));
  });
});

describe.skipIf(!HAVE_TSHARK)('-Y FILTER -w FILE writes what -Y displays, as tshark -Y -w', async () => {
  it.each(YW_CASES.map(([n, f], i) => [n, f, i] as const))(
    '%s, -Y %s: the frame set tshark writes',
    async (_n, _f, i) => {
      const { path } = await prepared();
      await ran(`yw${i}.t.pcap`);
      await ran(`yw${i}.o.pcap`);
      const mine = await frameList(path(`yw${i}.o.pcap`));
      expect(mine.length).toBeGreaterThan(0);
      expect(mine).toEqual(await frameList(path(`yw${i}.t.pcap`)));
    },
  );

  it('our own fields: the frames of the records and findings -Y displays, and no startup frames added', async () => {
    const { path } = await prepared();
    for (const [i, [name]] of OWN_FIELDS.entries()) {
      const input = join(CORPUS, name);
      await ran(`own${i}.o.pcap`);
      const shown = (await ran(`own${i}.fields`)).stdout;
      const frames = new Set(shown.split(/[\n,]/).filter(Boolean).map(Number));
      // Without its flow's startup frames Wireshark does not see MPA in the output: compare frames, not protocols.
      const all = await frameList(input, false);
      expect(frames.size).toBeGreaterThan(0);
      expect(await frameList(path(`own${i}.o.pcap`), false)).toEqual(
        [...frames].sort((a, b) => a - b).map((f) => all[f - 1]),
      );
    }
    // Without -Y, -w keeps its documented default: the findings' connections, whole (bad-crc.pcap
    // is one connection: every frame), so that the file shows the same findings again.
    await ran('def bad-crc.pcap');
    expect(await frameList(path('def-bad-crc.pcap'))).toEqual(await frameList(join(CORPUS, 'bad-crc.pcap')));
  });
});

describe.skipIf(!HAVE_TSHARK)("-Y '' -w FILE: an empty filter is no filter, as tshark takes it", async () => {
  it.each(EMPTY_Y.map(([n, o, f], i) => [n, o, f, i] as const))(
    '%s to %s from %s: every frame, the set tshark -Y "" -w writes',
    async (name, out, _from, i) => {
      const { path } = await prepared();
      await ran(`empty${i}.t.pcap`);
      const r = await ran(`empty${i}`);
      expect(r.code, r.stderr).toBe(0);
      const theirFrames = await frameList(path(`empty${i}.t.pcap`));
      expect(await frameList(path(`empty${i}.${out}`), false)).toEqual(withoutProtocols(theirFrames));
      // The default without -Y stays the findings' connections, whole: each capture here is one
      // connection with a finding (bad-crc.pcap's errors, all-messages.pcap's info), so every frame.
      await ran(`def ${name}`);
      expect((await frameList(path(`def-${name}`))).length).toBe(theirFrames.length);
    },
  );
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
