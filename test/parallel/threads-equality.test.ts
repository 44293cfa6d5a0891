/**
 * `--threads N` changes nothing a user sees: every sample, reference and real capture, and
 * generated many-flow captures (with port reuse, a retransmitted SYN, a capture cut mid-record),
 * run through the real CLI with one thread and with 2 and 3 workers, compared byte for byte in
 * each output mode (text, -V -x, --json, --ndjson, -T fields, -Y, --junit, -z, -w) with exit
 * status and standard error: each capture alone in the outputs of one capture (-T fields, -w), and
 * all of them in one run in the others. The runs are independent processes: tests run concurrently (describe.concurrent),
 * each with its one-thread and its N-thread run at once, so this long file keeps the cores busy.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, it, type ExpectStatic } from 'vitest';
import { CAPTURES, cliAsync, ROOT, type CliResult } from '../cli/helpers.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../../src/report/pcap-writer.js';
import { generateManyMpaFlows, interleave } from '../../scripts/bench-threads-generate.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-threads-'));
/**
 * Upper layers above RDMAP (SMB Direct, RPC-over-RDMA) are decoded on one thread only, so with them
 * on `--threads` runs one thread: every run here turns them off, on both sides, so the workers run.
 */
const NO_ULP = ['--ulp', 'flow=all,proto=none'];
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function pcapsIn(dir: string, recurse = true): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (recurse) out.push(...pcapsIn(p));
    } else if (/\.pcap(ng)?(\.gz)?$/.test(name)) out.push(p);
  }
  return out;
}

/**
 * Connections interleaved frame by frame, including a 4-tuple reused by a second connection after
 * the first closed (a new flow on a known tuple) and a retransmitted SYN (not a new flow).
 */
function reuseCapture(): Uint8Array {
  const conn = (i: number, port: number, isn: number, fpdus: number) =>
    buildMpaConnection({
      request: { m: true, c: true },
      reply: { m: i % 2 === 0, c: true },
      i2r: Array.from({ length: fpdus }, (_, k) => ({
        ulpdu: sendUlpdu(k + 1, patternBytes(100 + 700 * (k % 4), i + k)),
      })),
      r2i: Array.from({ length: fpdus >> 1 }, (_, k) => ({ ulpdu: sendUlpdu(k + 1, patternBytes(3000, i)) })),
      scenario: {
        client: { addr: `10.1.0.${1 + (i % 7)}`, port },
        server: { addr: '10.2.0.1', port: 4420 },
        isn: [isn, 700000 + i],
        mss: 1448,
      },
    }).frames;
  const groups: PcapFrame[][] = [];
  for (let i = 0; i < 24; i++) groups.push(conn(i, 30000 + i, 1000 + i, 6 + (i % 5)));
  // Flow 0's 4-tuple again after it closed, with a new ISN: a new connection (port reuse).
  groups[0] = [...groups[0]!, ...conn(0, 30000, 5_000_000, 4)];
  // Flow 3's SYN sent twice (a retransmission): still one flow.
  groups[3] = [groups[3]![0]!, ...groups[3]!];
  return buildPcap(LINKTYPE_ETHERNET, interleave(groups));
}

const many = join(tmp, 'many-flows.pcap');
generateManyMpaFlows(many, { flows: 40, concurrent: 20, fpdus: 6 });
// Big enough for several reads, batches per worker and the reader waiting on the workers.
const big = join(tmp, 'big.pcap');
generateManyMpaFlows(big, { flows: 200, concurrent: 100, fpdus: 30 });
const reuse = join(tmp, 'port-reuse.pcap');
writeFileSync(reuse, reuseCapture());
// The many-flow capture cut in the middle of a record: everything before the cut, then exit 2.
const cut = join(tmp, 'cut.pcap');
const whole = readFileSync(many);
writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));

interface Outcome {
  run: CliResult;
  files: Record<string, string>;
}

/** One CLI run; files it writes (named with @) are read back and compared too. */
async function run(args: string[], threads: number, files: string[] = []): Promise<Outcome> {
  // A directory of its own: runs of concurrent tests must not share their output files.
  mkdirSync(join(tmp, 'runs'), { recursive: true });
  const dir = mkdtempSync(join(tmp, 'runs', `t${threads}-`));
  const real = args.map((a) => (a.startsWith('@') ? join(dir, a.slice(1)) : a));
  const r = await cliAsync([...real, '--threads', String(threads), ...NO_ULP], { cwd: CAPTURES });
  const out: Record<string, string> = {};
  for (const f of files) {
    const p = join(dir, f);
    out[f] = existsSync(p) ? readFileSync(p).toString('base64') : '<absent>';
  }
  // Names of the per-thread directory never show in the output: compare without them.
  const clean = (s: string) => s.split(dir).join('<dir>');
  return { run: { code: r.code, stdout: clean(r.stdout), stderr: clean(r.stderr) }, files: out };
}

interface Mode {
  name: string;
  args: string[];
  files?: string[];
}

/** Every statistics table. */
const Z_ALL = ['-z', 'conv,fpdu-sizes,alignment,opcodes,rules'];

/**
 * What one capture's run compares: the outputs that are one capture's and cannot be given several
 * captures (-w, -T fields), with every other output that combines with them in the same run (the
 * statistics, JUnit, --fail-on warning's exit status), so each capture costs one process each way.
 * The fields are those of the stream, MPA and finding columns, and the per-frame facts that read
 * packet bytes in onPacket (copied across the workers' turn) and relative sequence numbers.
 */
const PER_CAPTURE: Mode = {
  name: '-T fields (stream, MPA, finding, frame and TCP facts) -z (all) --junit -w',
  args: [
    '-T',
    'fields',
    ...[
      'frame.number',
      'tcp.stream',
      'iwarp_mpa.ulpdu_length',
      'finding.rule',
      'tcp.seq',
      'tcp.ack',
      'frame.time_relative',
      '_ws.expert.severity',
    ].flatMap((f) => ['-e', f]),
    ...Z_ALL,
    '--junit',
    '@j.xml',
    '-w',
    '@w.pcap',
    '--fail-on',
    'warning',
  ],
  files: ['j.xml', 'w.pcap'],
};

/**
 * The modes a run over several captures takes (cli/multi.ts: each capture analysed as alone, its
 * output printed in turn), comparing every capture at once: one process each way instead of one
 * per capture, since starting a process costs more than analysing a small capture. -Y is a filter
 * of what the records say (evaluated on the main thread), shown here on the event lines.
 */
const MULTI_MODES: readonly Mode[] = [
  { name: 'text', args: [] },
  {
    name: '-V -x -z (all) --junit',
    args: ['-V', '-x', ...Z_ALL, '--junit', '@j.xml', '--fail-on', 'warning'],
    files: ['j.xml'],
  },
  { name: '--json', args: ['--json'] },
  { name: '--ndjson', args: ['--ndjson'] },
];
const ALL_AT_ONCE: readonly Mode[] = [...MULTI_MODES, { name: '-Y tcp.stream >= 1', args: ['-Y', 'tcp.stream >= 1'] }];

/** One-thread outcomes, computed once per command line (the 2- and 3-worker runs compare with the same). */
const oneThread = new Map<string, Promise<Outcome>>();

/**
 * Compares the one-thread and the N-thread run of a mode. Concurrent tests assert with their own
 * `expect` (the test context's). JUnit's time attribute is wall clock: it is blanked.
 */
async function same(expect: ExpectStatic, mode: Mode, threads: number): Promise<void> {
  const key = mode.args.join('\0');
  const oneRun = oneThread.get(key) ?? run(mode.args, 1, mode.files);
  oneThread.set(key, oneRun);
  const [one, n] = await Promise.all([oneRun, run(mode.args, threads, mode.files)]);
  const blankTime = (o: Outcome) => {
    const j = o.files['j.xml'];
    if (j && !j.startsWith('<'))
      o.files['j.xml'] = Buffer.from(j, 'base64')
        .toString('utf8')
        .replace(/time="[0-9.]+"/g, 'time=""');
  };
  blankTime(one);
  blankTime(n);
  expect(n.run.code).toBe(one.run.code);
  expect(n.run.stderr).toBe(one.run.stderr);
  expect(n.run.stdout).toBe(one.run.stdout);
  expect(n.files).toEqual(one.files);
}

// The samples, reference and real captures each alone and all in one run; the corpus
// (captures/corpus/, a few hundred small captures) as one directory run per mode.
const shipped = pcapsIn(CAPTURES, false);
const CORPUS = join(CAPTURES, 'corpus');
const reference = pcapsIn(resolve(ROOT, '../shared/captures/reference'));
const real = pcapsIn(resolve(ROOT, '../shared/captures/real'));

/** Bounds for tests that run at once with others on a small machine (a hang still ends them). */
const CONCURRENT = { timeout: 300_000 };
/** A run over the whole corpus with 2 threads per capture takes tens of CPU seconds. */
const CORPUS_RUN = { timeout: 600_000 };

const label = (c: string) =>
  c.startsWith(tmp) ? `generated ${c.slice(tmp.length + 1)}` : c.slice(resolve(ROOT, '..').length + 1);

/** Each capture alone in its run, and all of `together` in one run per mode of several captures. */
function compareAll(captures: string[], together: string[], threads: number): void {
  for (const c of captures)
    it(`${label(c)}: ${PER_CAPTURE.name}`, ({ expect }) =>
      same(expect, { ...PER_CAPTURE, args: [...PER_CAPTURE.args, c] }, threads));
  for (const m of ALL_AT_ONCE)
    it(
      `${together.length} captures (samples, reference, real, generated), one run: ${m.name}`,
      CORPUS_RUN,
      ({ expect }) => same(expect, { ...m, args: [...m.args, ...together] }, threads),
    );
}

const everyCapture = [...shipped, ...reference, ...real, many, reuse, cut];

describe.concurrent('--threads 2 gives byte-identical output', CONCURRENT, () => {
  compareAll(everyCapture, everyCapture, 2);
  if (existsSync(CORPUS))
    for (const m of MULTI_MODES)
      it(`captures/corpus/ (every capture, one run): ${m.name}`, CORPUS_RUN, ({ expect }) =>
        same(expect, { ...m, args: [...m.args, CORPUS] }, 2),
      );
  if (reference.length === 0)
    it.skip('../shared/captures/reference is absent: reference captures not compared', () => {});
  if (real.length === 0) it.skip('../shared/captures/real is absent: real captures not compared', () => {});
});

describe.concurrent('--threads 3 gives byte-identical output', CONCURRENT, () => {
  // Its one-thread runs are those of the 2-thread comparison (computed once): the runs over several
  // captures take them all, the captures alone the generated ones and two reference captures.
  compareAll([many, reuse, cut, ...reference.slice(0, 2)], everyCapture, 3);
});

describe.concurrent('the generated captures exercise what they are meant to', CONCURRENT, () => {
  it('port reuse opens a new flow; the retransmitted SYN does not', async ({ expect }) => {
    const r = await cliAsync(['--json', reuse, '--threads', '2', ...NO_ULP]);
    const doc = JSON.parse(r.stdout) as { flows: Array<{ client: string }> };
    expect(doc.flows.length).toBe(25);
    expect(doc.flows.filter((f) => f.client === '10.1.0.1:30000').length).toBe(2);
  });
  it('the cut capture exits 2 after reporting everything before the cut, with either thread count', async ({
    expect,
  }) => {
    const [one, two] = await Promise.all([
      cliAsync([cut, '-q', '--threads', '1', ...NO_ULP]),
      cliAsync([cut, '-q', '--threads', '2', ...NO_ULP]),
    ]);
    expect(one.code).toBe(2);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/^mpa-dissect: .*cut\.pcap: offset \d+, frame \d+: .*\n$/);
    expect(two.stdout).toBe(one.stdout);
    expect(one.stdout).toMatch(/MPA/);
  });
  it(`a capture of ${Math.round(statSync(big).size / 1e6)} MB read in several chunks: --json and -q alike`, async ({
    expect,
  }) => {
    for (const args of [['--json'], ['-q', '-z', 'conv']]) {
      const [one, two] = await Promise.all([
        cliAsync([...args, big, '--threads', '1', ...NO_ULP]),
        cliAsync([...args, big, '--threads', '2', ...NO_ULP]),
      ]);
      expect(two.code).toBe(one.code);
      expect(two.stdout).toBe(one.stdout);
      expect(two.stderr).toBe(one.stderr);
    }
  });
  it('-c stops at the same packet', async ({ expect }) => {
    const [two, one] = await Promise.all([
      cliAsync(['-c', '500', many, '--threads', '2', ...NO_ULP]),
      cliAsync(['-c', '500', many, '--threads', '1', ...NO_ULP]),
    ]);
    expect(two.stdout).toBe(one.stdout);
  });
});
