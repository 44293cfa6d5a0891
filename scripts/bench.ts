/**
 * `npm run bench [-- --quick] [-- --runs N] [-- --extras] [-- --cases a,h]`: generates the captures of issue 11's
 * cases, then times the whole `mpa-dissect` process on each (start-up included, output to
 * /dev/null), side by side with a bare record walk in Node (scripts/bench-walk.ts) and tshark on a
 * prefix of the same file, and with `--threads 1` vs `--threads N` when this build has the option.
 * Prints a table and writes bench/results/<commit>.json. --quick uses smaller sizes (about a
 * minute); --extras also runs the older terminal-UI, stalled-pipe and one-segment-flows benches.
 *
 * Cases: (a) 1 GB one flow, markers + CRC both ways, 1448-octet segments cut across FPDUs;
 * (b) 1 GB of small FPDUs packed several per segment; (c) 10,000 concurrent flows; (d) 100,000
 * concurrently open flows (mostly startup, --json streamed); (e) heavy reordering and loss;
 * (f) 4 GB of (a), for linearity; (g) 100,000 short flows opened and closed along the capture (100
 * open at a time); (h) 1 GiB of SMB Direct (SMB2 READs and WRITEs through RDMA_V1 channels), timed
 * again with the upper layers off (`--ulp flow=all,proto=none`): what the upper layer costs;
 * (i) 1 GiB of NVMe/RDMA on 16 I/O queues (4 KiB and 128 KiB Reads and Writes), timed the same
 * way; (j) 10,000 NVMe/RDMA queues open at once (peak RSS under 400 MB).
 * `--cases` runs only the cases named. Each generated file is deleted once its case is measured.
 * Then the regression gate (bench-gate.ts): a case whose CPU time or peak RSS grew by more than 10 %
 * against the newest committed results of the same machine class fails the run (exit 1), named on
 * its own line; `--no-gate` reports without failing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  generateShapedCapture,
  MIXED_SIZES,
  SMALL_SIZES,
  type BenchCapture,
  type BenchShape,
} from './bench-generate.js';
import { generateSmbdCapture } from './bench-smbd-generate.js';
import { generateNvmeCapture, generateNvmeQueuesCapture } from './bench-nvme-generate.js';
import { writePrefix } from './bench-walk.js';
import { crc32cImplementation } from '../dissectors/mpa/crc32c.js';
import { committedResults, gate, type GateResults } from './bench-gate.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const CLI = join(here, '..', 'cli', 'main.js');
const WALK = join(here, 'bench-walk.js');
const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const extras = argv.includes('--extras');
const noGate = argv.includes('--no-gate');
const runsIdx = argv.indexOf('--runs');
const RUNS = runsIdx >= 0 ? Math.max(1, Number(argv[runsIdx + 1])) : 1;
const casesIdx = argv.indexOf('--cases');
/** Only these cases (`--cases a,h`), or all. */
const only = casesIdx >= 0 ? new Set((argv[casesIdx + 1] ?? '').split(',').filter(Boolean)) : null;
/** tshark is timed on this much of each capture (it runs at tens of MB/s) and extrapolated. */
const TSHARK_PREFIX = quick ? 10e6 : 30e6;
const TSHARK_TIMEOUT_MS = 120_000;

interface Case {
  id: string;
  name: string;
  bytes: number;
  shape: BenchShape;
  /** CLI arguments besides the file (the output goes to /dev/null). */
  args: string[];
  target: { mbps?: number; rssMB?: number; note?: string };
  threads: boolean;
  /** Writes the capture instead of generateShapedCapture (the shape is then unused). */
  generate?: (path: string, bytes: number) => BenchCapture;
  /** The same capture timed again with these arguments: our run's wall time over it at most maxRatio. */
  versus?: { label: string; args: string[]; maxRatio: number };
}

const MB = 1e6;
const cases: Case[] = [
  {
    id: 'a',
    name: '1 flow, markers+CRC, 1448-octet segments',
    bytes: quick ? 200 * MB : 1000 * MB,
    shape: { sizes: MIXED_SIZES },
    args: ['-q'],
    target: { mbps: 1000, rssMB: 200 },
    threads: true,
  },
  {
    id: 'b',
    name: 'small FPDUs, several per segment',
    bytes: quick ? 100 * MB : 1000 * MB,
    shape: { sizes: SMALL_SIZES },
    args: ['-q'],
    target: {},
    threads: false,
  },
  {
    id: 'c',
    name: '10,000 concurrent flows',
    bytes: quick ? 150 * MB : 700 * MB,
    shape: { concurrent: 10_000, perConnection: ((quick ? 150 : 700) * MB * 1.2) / 10_000 },
    args: ['-q'],
    target: { mbps: 500, rssMB: 300 },
    threads: true,
  },
  {
    id: 'd',
    name: `${quick ? '20,000' : '100,000'} open flows, --json`,
    bytes: 1e12, // bounded by the flow count: every flow opens, carries a few FPDUs, closes at the end
    shape: { concurrent: quick ? 20_000 : 100_000, fpdusPerConnection: 6, closeAtEnd: true, sizes: SMALL_SIZES },
    args: ['--json'],
    target: { mbps: 100, rssMB: 1000 },
    threads: true,
  },
  {
    id: 'e',
    name: 'reordering (5%) and loss (0.2%)',
    bytes: quick ? 50 * MB : 200 * MB,
    shape: { reorder: 0.05, loss: 0.002, perConnection: 1e15 },
    args: ['-q'],
    target: {},
    threads: false,
  },
  {
    id: 'f',
    name: `${quick ? '800 MB' : '4 GB'} of (a), linearity`,
    bytes: quick ? 800 * MB : 4000 * MB,
    shape: { sizes: MIXED_SIZES },
    args: ['-q'],
    target: { note: 'MB/s as (a)' },
    threads: false,
  },
  // A storage test's pattern: connections opened and closed all along the capture. What a closed
  // flow keeps (its summary for the report) is what this case's peak RSS grows with.
  {
    id: 'g',
    name: `${quick ? '20,000' : '100,000'} flows, 100 open at a time`,
    bytes: quick ? 19 * MB : 94 * MB,
    shape: { concurrent: 100, fpdusPerConnection: 6, sizes: SMALL_SIZES },
    args: ['-q'],
    target: {},
    threads: false,
  },
  // The users' main workload: SMB Direct, the bulk in RDMA Writes and Read Responses. Timed with
  // the upper layers on (default) and off: the upper layer may cost at most 15% (issue 19).
  {
    id: 'h',
    name: 'SMB Direct, SMB2 READ/WRITE via RDMA_V1',
    bytes: quick ? 200 * MB : 1024 * 1024 * 1024,
    shape: {},
    args: ['-q'],
    target: {},
    threads: false,
    generate: (path, bytes) => generateSmbdCapture(path, bytes, 2),
    versus: { label: '--ulp flow=all,proto=none', args: ['-q', '--ulp', 'flow=all,proto=none'], maxRatio: 1.15 },
  },
  // NVMe/RDMA (issue 20): 16 I/O queues and their admin queue, 4 KiB and 128 KiB Reads and Writes,
  // 32 in flight per queue; the upper layer may cost at most 15%.
  {
    id: 'i',
    name: 'NVMe/RDMA, 16 I/O queues, 4 KiB and 128 KiB',
    bytes: quick ? 200 * MB : 1024 * 1024 * 1024,
    shape: {},
    args: ['-q'],
    target: {},
    threads: false,
    generate: (path, bytes) => generateNvmeCapture(path, bytes, 16, 32),
    versus: { label: '--ulp flow=all,proto=none', args: ['-q', '--ulp', 'flow=all,proto=none'], maxRatio: 1.15 },
  },
  // Many queues open at once (issue 24): each connection's NVMe/RDMA state in bounded memory.
  {
    id: 'j',
    name: `${quick ? '2,000' : '10,000'} concurrent NVMe/RDMA queues`,
    bytes: quick ? 40 * MB : 200 * MB,
    shape: {},
    args: ['-q'],
    target: { rssMB: 400 },
    threads: false,
    generate: (path, bytes) => generateNvmeQueuesCapture(path, bytes, quick ? 2_000 : 10_000),
    versus: { label: '--ulp flow=all,proto=none', args: ['-q', '--ulp', 'flow=all,proto=none'], maxRatio: 1.15 },
  },
];

interface Timed {
  /** Wall seconds, start to exit. */
  seconds: number;
  /** User + system CPU seconds: what the run cost when other work shares the cores. */
  cpuSeconds: number;
  rssMB: number;
  code: number | null;
}

/** One whole-process run under /usr/bin/time (peak RSS), standard output to /dev/null. */
function timed(cmd: string[], dir: string, timeoutMs = 600_000): Timed {
  const tf = join(dir, 'time.txt');
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', tf, ...cmd], {
    stdio: ['ignore', 'ignore', 'ignore'],
    timeout: timeoutMs,
    env: { ...process.env, NO_COLOR: '1' },
  });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  let fields = [0, 0, 0];
  try {
    fields = readFileSync(tf, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  } catch {
    fields = [0, 0, 0];
  }
  return { seconds, cpuSeconds: (fields[1] ?? 0) + (fields[2] ?? 0), rssMB: (fields[0] ?? 0) / 1024, code: r.status };
}

function median(xs: Timed[]): Timed {
  const s = [...xs].sort((p, q) => p.seconds - q.seconds);
  return s[Math.floor((s.length - 1) / 2)]!;
}

function repeat(cmd: string[], dir: string, runs = RUNS): Timed {
  return median(Array.from({ length: runs }, () => timed(cmd, dir)));
}

const hasTshark = spawnSync('tshark', ['--version'], { stdio: 'ignore' }).status === 0;
const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' }).stdout ?? '';
const hasThreads = /--threads\b/.test(help);
const cores = availableParallelism();

function commit(): string {
  try {
    const id = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).trim() !==
      '';
    return dirty ? `${id}-dirty` : id;
  } catch {
    return 'unknown';
  }
}

interface CaseResult {
  id: string;
  name: string;
  file: { bytes: number; packets: number; fpdus: number; connections: number; generateSeconds: number };
  run: Timed & { mbps: number; fpdusPerSec: number };
  walk: Timed & { mbps: number };
  /** Our time / the bare walk's. */
  walkRatio: number;
  tshark: { prefixBytes: number; seconds: number; mbps: number; ratio: number; note: string } | null;
  tsharkNote: string | null;
  threads: { n: number; one: Timed; many: Timed; speedup: number } | null;
  threadsNote: string | null;
  /** The run with Case.versus's arguments, and our wall (and CPU) time over it. */
  versus: { label: string; run: Timed; ratio: number; cpuRatio: number; maxRatio: number; met: boolean } | null;
  target: Case['target'];
  met: { mbps: boolean | null; rss: boolean | null };
}

const dir = mkdtempSync(join(tmpdir(), 'mpa-bench-'));
const results: CaseResult[] = [];
const started = Date.now();
const fmt = (n: number, d = 0): string => n.toFixed(d);
try {
  // Start-up is short and the machine shared: a median of 9 runs each, wall and CPU.
  const startup = repeat([process.execPath, CLI, '--json', join(root, 'captures', 'sample.pcap')], dir, 9);
  const bare = repeat([process.execPath, '-e', '0'], dir, 9);
  const fixedMs = (startup.seconds - bare.seconds) * 1000;
  const fixedCpuMs = (startup.cpuSeconds - bare.cpuSeconds) * 1000;
  console.log(
    `start-up: --json captures/sample.pcap ${fmt(startup.seconds * 1000)} ms (CPU ${fmt(startup.cpuSeconds * 1000)}), node -e 0 ${fmt(bare.seconds * 1000)} ms (CPU ${fmt(bare.cpuSeconds * 1000)}): ` +
      `fixed cost ${fmt(fixedMs)} ms wall, ${fmt(fixedCpuMs)} ms CPU (target <= 60 ms)`,
  );
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} on ${cores} cores (wall figures stretch with it; CPU figures less)`,
  );
  console.log(
    `CRC32c: ${crc32cImplementation() === 'native' ? 'native (@node-rs/crc32)' : 'JS (slicing-by-16)'}; ${cores} cores; runs per figure: ${RUNS}${quick ? '; --quick sizes' : ''}`,
  );
  for (const c of cases) {
    if (only && !only.has(c.id)) continue;
    const file = join(dir, `case-${c.id}.pcap`);
    const g0 = Date.now();
    const g = c.generate ? c.generate(file, c.bytes) : generateShapedCapture(file, c.bytes, c.shape);
    const size = statSync(file).size;
    const file_ = {
      bytes: size,
      packets: g.packets,
      fpdus: g.fpdus,
      connections: g.connections,
      generateSeconds: (Date.now() - g0) / 1000,
    };
    // The file was just written: its pages are still being written back, which the first timed run
    // would pay for (in system time and wall time). Flush them first, then read it once untimed.
    spawnSync('sync', [], { stdio: 'ignore' });
    spawnSync(process.execPath, [WALK, file], { stdio: 'ignore' });
    const run = repeat([process.execPath, CLI, ...c.args, file], dir);
    const walk = repeat([process.execPath, WALK, file], dir);
    let tshark: CaseResult['tshark'] = null;
    let tsharkNote: string | null = null;
    if (!hasTshark) tsharkNote = 'tshark not installed';
    else {
      const prefix = join(dir, 'prefix.pcap');
      const pb = size > TSHARK_PREFIX ? writePrefix(file, prefix, TSHARK_PREFIX) : size;
      const pf = size > TSHARK_PREFIX ? prefix : file;
      const t = timed(
        [
          'tshark',
          '-o',
          'tcp.try_heuristic_first:TRUE',
          '--disable-heuristic',
          'rpcrdma_iwarp',
          '-r',
          pf,
          '-Y',
          'iwarp_mpa',
          '-T',
          'fields',
          '-e',
          'iwarp_mpa.crc_check',
        ],
        dir,
        TSHARK_TIMEOUT_MS,
      );
      if (t.code === null) tsharkNote = `tshark did not finish ${fmt(pb / MB)} MB within ${TSHARK_TIMEOUT_MS / 1000} s`;
      else {
        const mbps = pb / MB / t.seconds;
        tshark = {
          prefixBytes: pb,
          seconds: t.seconds,
          mbps,
          ratio: size / MB / run.seconds / mbps,
          note: pb < size ? `first ${fmt(pb / MB)} MB, extrapolated` : 'whole file',
        };
      }
      rmSync(prefix, { force: true });
    }
    let threads: CaseResult['threads'] = null;
    let threadsNote: string | null = null;
    if (!c.threads) threadsNote = 'not a many-flow case';
    else if (!hasThreads) threadsNote = 'this build has no --threads';
    else {
      const one = repeat([process.execPath, CLI, '--threads', '1', ...c.args, file], dir);
      const many = repeat([process.execPath, CLI, '--threads', String(cores), ...c.args, file], dir);
      threads = { n: cores, one, many, speedup: one.seconds / many.seconds };
    }
    let versus: CaseResult['versus'] = null;
    if (c.versus) {
      const v = repeat([process.execPath, CLI, ...c.versus.args, file], dir);
      const ratio = run.seconds / v.seconds;
      versus = {
        label: c.versus.label,
        run: v,
        ratio,
        cpuRatio: run.cpuSeconds / v.cpuSeconds,
        maxRatio: c.versus.maxRatio,
        met: ratio <= c.versus.maxRatio,
      };
    }
    rmSync(file, { force: true });
    const mbps = size / MB / run.seconds;
    const r: CaseResult = {
      id: c.id,
      name: c.name,
      file: file_,
      run: { ...run, mbps, fpdusPerSec: g.fpdus / run.seconds },
      walk: { ...walk, mbps: size / MB / walk.seconds },
      walkRatio: run.seconds / walk.seconds,
      tshark,
      tsharkNote,
      threads,
      threadsNote,
      versus,
      target: c.target,
      met: {
        mbps: c.target.mbps === undefined ? null : mbps >= c.target.mbps,
        rss: c.target.rssMB === undefined ? null : run.rssMB < c.target.rssMB,
      },
    };
    results.push(r);
    console.log(
      `(${c.id}) ${c.name}: ${fmt(size / MB)} MB, ${g.connections} flows, ${g.fpdus} FPDUs (generated in ${fmt(file_.generateSeconds, 1)} s): ` +
        `${fmt(run.seconds, 2)} s (CPU ${fmt(run.cpuSeconds, 2)} s), ${fmt(mbps)} MB/s, ${fmt(r.run.fpdusPerSec / 1e3)} k FPDUs/s, peak RSS ${fmt(run.rssMB)} MB, exit ${run.code}; ` +
        `bare walk ${fmt(walk.seconds, 2)} s (x${fmt(r.walkRatio, 1)}); ` +
        (tshark
          ? `tshark ${fmt(tshark.mbps, 1)} MB/s on the ${tshark.note} (we are x${fmt(tshark.ratio, 1)} faster)`
          : `tshark: ${tsharkNote}`) +
        (threads
          ? `; --threads 1 ${fmt(threads.one.seconds, 2)} s, --threads ${threads.n} ${fmt(threads.many.seconds, 2)} s (x${fmt(threads.speedup, 2)})`
          : '') +
        (versus
          ? `; ${versus.label} ${fmt(versus.run.seconds, 2)} s (CPU ${fmt(versus.run.cpuSeconds, 2)} s): upper layers cost x${fmt(versus.ratio, 3)} wall, x${fmt(versus.cpuRatio, 3)} CPU`
          : ''),
    );
  }
  const lin = results.find((r) => r.id === 'f');
  const base = results.find((r) => r.id === 'a');

  // The table (DEVELOPING.md's Benchmarks section is copied from it).
  const verdict = (r: CaseResult): string => {
    const t = r.target;
    const parts: string[] = [];
    if (t.mbps !== undefined)
      parts.push(`>= ${t.mbps} MB/s: ${r.met.mbps ? 'met' : `not met (${fmt((100 * r.run.mbps) / t.mbps)}%)`}`);
    if (t.rssMB !== undefined) parts.push(`RSS < ${t.rssMB} MB: ${r.met.rss ? 'met' : 'not met'}`);
    if (r.id === 'f' && base) parts.push(`${fmt((100 * r.run.mbps) / base.run.mbps)}% of (a)'s MB/s`);
    if (r.versus)
      parts.push(
        `x${fmt(r.versus.ratio, 3)} of ${r.versus.label} (CPU x${fmt(r.versus.cpuRatio, 3)}), at most x${fmt(r.versus.maxRatio, 2)}: ${r.versus.met ? 'met' : 'not met'}`,
      );
    return parts.join('; ') || '-';
  };
  console.log(
    '\n| case | size | wall (CPU) | MB/s wall (CPU) | FPDUs/s | peak RSS | x bare walk | x tshark | --threads 1 / N | target (wall) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(
      `| (${r.id}) ${r.name} | ${fmt(r.file.bytes / MB)} MB | ${fmt(r.run.seconds, 2)} s (${fmt(r.run.cpuSeconds, 2)} s) | ${fmt(r.run.mbps)} (${fmt(r.file.bytes / MB / r.run.cpuSeconds)}) | ${fmt(r.run.fpdusPerSec / 1e3)} k | ${fmt(r.run.rssMB)} MB | ` +
        `${fmt(r.walkRatio, 1)} | ${r.tshark ? `${fmt(r.tshark.ratio, 1)}${r.tshark.prefixBytes < r.file.bytes ? '*' : ''}` : 'n/a'} | ` +
        `${r.threads ? `${fmt(r.threads.one.seconds, 2)} / ${fmt(r.threads.many.seconds, 2)} s (x${fmt(r.threads.speedup, 2)})` : r.threadsNote} | ${verdict(r)} |`,
    );
  }
  console.log(
    `\n* tshark timed on the first ${fmt(TSHARK_PREFIX / MB)} MB and extrapolated; "x tshark" is our MB/s over tshark's.`,
  );
  console.log(
    `start-up fixed cost: ${fmt(fixedMs)} ms wall, ${fmt(fixedCpuMs)} ms CPU (target <= 60 ms: ${fixedMs <= 60 ? 'met' : 'not met'} on the wall clock)`,
  );
  if (lin && base) console.log(`linearity: (f) runs at ${fmt(lin.run.mbps)} MB/s, (a) at ${fmt(base.run.mbps)} MB/s`);
  const id = commit();
  const outDir = join(root, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const out = join(outDir, `${id}${quick ? '-quick' : ''}${only ? `-cases-${[...only].join('')}` : ''}.json`);
  const doc = {
    commit: id,
    date: new Date().toISOString(),
    quick,
    runs: RUNS,
    node: process.versions.node,
    loadAverage: loadavg(),
    cores,
    crc32c: crc32cImplementation(),
    startup: {
      seconds: startup.seconds,
      cpuSeconds: startup.cpuSeconds,
      nodeSeconds: bare.seconds,
      nodeCpuSeconds: bare.cpuSeconds,
      fixedMs,
      fixedCpuMs,
      rssMB: startup.rssMB,
    },
    threadsOption: hasThreads,
    tshark: hasTshark,
    cases: results,
    totalSeconds: (Date.now() - started) / 1000,
  };
  writeFileSync(out, JSON.stringify(doc, null, 1) + '\n');
  console.log(`wrote ${out} (whole bench ${fmt((Date.now() - started) / 1000)} s)`);

  // The regression gate: against the newest committed results of this machine class.
  const gated = gate(doc as GateResults, committedResults(root));
  for (const n of gated.notes) console.log(`gate: ${n}`);
  for (const line of gated.regressions) console.error(line);
  if (gated.regressions.length > 0) {
    console.error(
      `bench: ${gated.regressions.length} regression(s) over 10% against the committed results${noGate ? ' (--no-gate: not failing)' : ''}`,
    );
    if (!noGate) process.exitCode = 1;
  } else console.log('gate: no case regressed by more than 10%');

  if (extras) {
    // The older benches: terminal UI model, output into a stalled pipe, 100,000 one-segment flows.
    const tuiFile = join(dir, 'tui.pcap');
    generateShapedCapture(tuiFile, quick ? 200 * MB : 1000 * MB, { sizes: MIXED_SIZES });
    const tui = JSON.parse(
      execFileSync(process.execPath, [join(here, 'bench-tui.js'), tuiFile], { encoding: 'utf8' }),
    ) as {
      readSeconds: number;
      firstFlowMs: number | null;
      maxStallMs: number;
      items: number;
      indexMB: number;
      middlePduMs: number;
      maxRssMB: number;
    };
    rmSync(tuiFile, { force: true });
    console.log(
      `terminal UI: read in ${fmt(tui.readSeconds, 1)} s, first flow after ${tui.firstFlowMs?.toFixed(0) ?? '-'} ms, longest event-loop stall ${fmt(tui.maxStallMs)} ms, ` +
        `${tui.items} items in a ${fmt(tui.indexMB)} MB index, a PDU rebuilt from the file in ${fmt(tui.middlePduMs)} ms, peak RSS ${fmt(tui.maxRssMB)} MB`,
    );
    spawnSync(process.execPath, [join(here, 'bench-output.js')], { stdio: 'inherit' });
    spawnSync(process.execPath, [join(here, 'bench-flows.js')], { stdio: 'inherit' });
  }
} finally {
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
}
