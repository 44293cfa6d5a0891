/**
 * `npm run fuzz -- --seconds N [--seed S] [--targets captures,filters,rules,ulp,peer,generate,merge,dirs,specs,tui] [--timeout S] [--max-rss MB] [--jobs 1|2]`
 *
 * Attacks the built CLI (dist/cli/main.js) as a CI gate is attacked: mutated captures (the sample
 * captures, ../shared/captures/reference and ../shared/captures/real when present: bit flips,
 * truncation, hostile length fields, spliced and duplicated records), hostile display filters (-Y,
 * --write-filter), hostile rules files (--rules) and upper-layer input (`ulp`: the generator's SMB
 * Direct and NFS-over-RDMA connections changed at the upper layer and framed with good CRCs, so the
 * mutation reaches SMB Direct, SMB2, RPC-over-RDMA and RPC; scripts/fuzz/mutate-ulp.ts), the MPA peer against a hostile other side and
 * `generate` with random knobs (scripts/fuzz/peer-generate.ts), `merge` inputs (mutated, huge, deep and
 * garbage reports), directories (many files, FIFOs, link loops) and --mpa/--tuf/--ulp strings
 * (scripts/fuzz/hostile-surfaces.ts), and the terminal UI (`tui`: random
 * keys, hostile pastes at the / and w prompts and resizes under tmux, then q, Ctrl-C or SIGTERM;
 * scripts/fuzz/tui-prompt.ts; skipped, saying so, without tmux). Each run must exit 0, 1 or 2, print no stack
 * trace, end within the time limit and stay under the RSS limit. Seeded: the same seed and targets
 * give the same cases. Failing inputs are kept (with a repro.sh) under a temp directory; the exit
 * status is 1 when anything failed.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng } from '../src/generate/mpa-encoder.js';
import { CAPTURE_MUTATIONS, mutateCapture, type Rand } from './fuzz/mutate-capture.js';
import { DEFAULT_FIELDS, hostileFilter, hostileRules } from './fuzz/hostile-inputs.js';
import { runCase, type RunOutcome } from './fuzz/run-case.js';
import { ulpCase } from './fuzz/mutate-ulp.js';
import {
  generateCase,
  PEER_MARGIN_S,
  PEER_TIMEOUT_S,
  peerCase,
  withHostileSide,
  type PeerCase,
} from './fuzz/peer-generate.js';
import { dirCase, mergeCase, specCase, type SurfaceCase } from './fuzz/hostile-surfaces.js';

import { haveTmux, runTuiCase, tuiCase } from './fuzz/tui-prompt.js';

type Target = 'captures' | 'filters' | 'rules' | 'ulp' | 'peer' | 'generate' | 'merge' | 'dirs' | 'specs' | 'tui';
const ALL_TARGETS: readonly Target[] = [
  'captures',
  'filters',
  'rules',
  'ulp',
  'peer',
  'generate',
  'merge',
  'dirs',
  'specs',
  'tui',
];

/** The TUI target runs one of every TUI_TURN of its turns when other targets share the run. */
const TUI_TURN = 4;

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..'); // dist/scripts -> project
const mainJs = join(root, 'dist/cli/main.js');

function usage(msg: string): never {
  process.stderr.write(
    `fuzz: ${msg}\nusage: npm run fuzz -- --seconds N [--seed S] [--targets ${ALL_TARGETS.join(',')}] [--timeout S] [--max-rss MB] [--jobs 1|2]\n`,
  );
  process.exit(2);
}

function parseArgs(argv: readonly string[]) {
  const o = {
    seconds: 60,
    seed: (Date.now() % 0x7fffffff) | 1,
    targets: [...ALL_TARGETS],
    timeout: 20,
    maxRss: 300,
    jobs: 2,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    const num = () => {
      const n = Number(v);
      if (v === undefined || !Number.isFinite(n) || n <= 0) usage(`${a} needs a positive number`);
      i++;
      return n;
    };
    if (a === '--seconds') o.seconds = num();
    else if (a === '--seed') o.seed = Math.floor(num());
    else if (a === '--timeout') o.timeout = num();
    else if (a === '--max-rss') o.maxRss = num();
    else if (a === '--jobs') o.jobs = Math.min(2, Math.max(1, Math.floor(num())));
    else if (a === '--targets') {
      if (v === undefined) usage('--targets needs a list');
      const ts = v.split(',').map((t) => t.trim());
      for (const t of ts)
        if (!ALL_TARGETS.includes(t as Target)) usage(`unknown target "${t}" (${ALL_TARGETS.join(', ')})`);
      o.targets = ts as Target[];
      i++;
    } else usage(`unknown option ${a}`);
  }
  return o;
}

/** Capture files of a directory, recursively; large ones are left out (a mutation copies the whole file). */
function captures(dir: string, out: string[]): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) captures(p, out);
    else if (/\.(pcap|pcapng)$/.test(e.name) && statSync(p).size <= 8 * 1024 * 1024) out.push(p);
  }
}

/** Scenario names (`mpa-dissect generate --list`). */
function scenarioNames(): string[] {
  try {
    const out = execFileSync(process.execPath, [mainJs, 'generate', '--list'], { encoding: 'utf8', timeout: 20000 });
    return [...out.matchAll(/^ {2}([a-z0-9][a-z0-9-]*) /gm)].map((m) => m[1]!);
  } catch {
    return ['clean', 'markers'];
  }
}

/** Field names the filter language knows (`mpa-dissect fields`), else a built-in list. */
function fieldNames(): string[] {
  try {
    const out = execFileSync(process.execPath, [mainJs, 'fields'], { encoding: 'utf8', timeout: 20000 });
    const names = [...out.matchAll(/(?:^|\t)([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+)(?=\t|\s|$)/gm)].map((m) => m[1]!);
    return names.length > 0 ? [...new Set([...names, ...DEFAULT_FIELDS])] : DEFAULT_FIELDS;
  } catch {
    return DEFAULT_FIELDS;
  }
}

const CAPTURE_ARGS: readonly (readonly string[])[] = [
  [],
  ['--json'],
  ['--ndjson'],
  ['-V'],
  ['-V', '-x'],
  ['-q', '-z', 'conv', '-z', 'fpdu-sizes', '-z', 'alignment', '-z', 'opcodes', '-z', 'rules'],
  ['--mpa', 'flow=all'],
  ['--mpa', 'flow=all,markers=both,crc=off'],
  ['--mpa', 'flow=all,markers=c2s,crc=on'],
  ['--checksums'],
  ['--tcp-buffer-flow', '1', '--tcp-reorder-window', '1'],
  ['-q', '-w', '@OUT'],
  ['-q', '--annotate', '@OUT'],
  ['-q', '-F', 'pcapng', '-w', '@OUT'],
  ['--fail-on', 'warning'],
  ['-q', '--junit', '@OUT'],
  // Upper layers forced on whatever the mutation left: NVMe/RDMA capsules of any shape, its SRT table.
  ['--ulp', 'flow=all,proto=nvme', '-V'],
  ['-q', '-z', 'nvme,srt', '-z', 'smb2,srt'],
  // Upper-layer request timing: service response times and the requests never answered under them.
  ['-q', '-z', 'smb2,srt', '-z', 'rpc,srt,100003,3'],
];

/** Arguments of the `ulp` target: every place the upper layers show or are counted. */
const ULP_ARGS: readonly (readonly string[])[] = [
  [],
  ['-V'],
  ['--json'],
  ['--ndjson'],
  ['-q', '-z', 'smb2,srt', '-z', 'rpc,srt,100003,3', '-z', 'rpc,srt,100003,4'],
  ['-T', 'fields', '-e', 'smb2.msg_id', '-e', 'smb2.cmd', '-e', 'rpcordma.xid', '-e', 'rpc.xid'],
  ['-Y', 'smb2 || rpcordma || smb_direct', '-V'],
  ['--ulp', 'flow=all,proto=smb-direct'],
  ['--ulp', 'flow=all,proto=rpc-rdma', '-V'],
  ['-q', '--junit', '@OUT'],
];

interface Case {
  target: Target;
  name: string;
  args: string[];
  /** Files the case needs, written into its directory: name -> content. */
  files: Map<string, Uint8Array | string>;
  pipe: boolean;
  /** peer: the hostile other side to play while the CLI runs. */
  peer?: PeerCase;
  /** Entries written before the run that plain files cannot be (FIFOs, links). */
  setup?: SurfaceCase['setup'];
  /** The case's own judgement of the outcome (hostile-surfaces.ts), null when right. */
  check?: SurfaceCase['check'];
}

function pick<T>(r: Rand, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function makeCase(
  r: Rand,
  target: Target,
  corpus: readonly string[],
  bytes: Map<string, Uint8Array>,
  fields: readonly string[],
  scenarios: readonly string[],
): Case {
  const files = new Map<string, Uint8Array | string>();
  if (target === 'peer') {
    const p = peerCase(r);
    const side = p.role === 'responder' ? '--listen' : '--connect';
    const args = ['peer', side, '127.0.0.1:@PORT', '--timeout', String(PEER_TIMEOUT_S), ...p.args];
    return { target, name: p.name, args, files, pipe: false, peer: p };
  }
  if (target === 'generate') {
    const g = generateCase(r, scenarios);
    return { target, name: g.name, args: g.args, files, pipe: false };
  }
  const pipe = r() < 0.2;
  const input = pick(r, corpus);
  if (target === 'captures') {
    const kind = pick(r, CAPTURE_MUTATIONS);
    const mutated = mutateCapture(r, bytes.get(input)!, bytes.get(pick(r, corpus))!, kind);
    files.set('input.pcap', mutated);
    const extra = pick(r, CAPTURE_ARGS).map((a) => (a === '@OUT' ? '@DIR/out.file' : a));
    return {
      target,
      name: `${kind} of ${basename(input)} ${extra.join(' ')}`.trim(),
      args: [...extra, '@DIR/input.pcap'],
      files,
      pipe,
    };
  }
  if (target === 'ulp') {
    const u = ulpCase(r);
    files.set('input.pcap', u.capture);
    const extra = pick(r, ULP_ARGS).map((a) => (a === '@OUT' ? '@DIR/out.file' : a));
    return { target, name: `${u.name} ${extra.join(' ')}`.trim(), args: [...extra, '@DIR/input.pcap'], files, pipe };
  }
  if (target === 'merge' || target === 'dirs' || target === 'specs') {
    const c = target === 'merge' ? mergeCase(r) : target === 'dirs' ? dirCase(r, bytes) : specCase(r, input);
    return { target, pipe, ...c };
  }
  if (target === 'filters') {
    const f = hostileFilter(r, fields);
    files.set('filter.txt', f.text);
    const write = r() < 0.3;
    const args = write
      ? ['-q', '-w', '@DIR/out.pcap', '--write-filter', f.text, input]
      : ['-Y', f.text, ...(r() < 0.3 ? ['-V'] : []), input];
    return { target, name: `${write ? '--write-filter' : '-Y'} ${f.name} on ${basename(input)}`, args, files, pipe };
  }
  const h = hostileRules(r);
  let path = h.path;
  if (h.content !== undefined) {
    files.set('rules.json', h.content);
    path = '@DIR/rules.json';
  }
  const cmd = r() < 0.2 ? ['rules', '--rules', path!] : ['--rules', path!, ...(r() < 0.3 ? ['--json'] : []), input];
  return {
    target,
    name: `--rules ${h.name}${cmd[0] === 'rules' ? ' (rules command)' : ''} on ${basename(input)}`,
    args: cmd,
    files,
    pipe,
  };
}

const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(mainJs)) usage(`${mainJs} not found: run npm run build first`);
  const shared = resolve(root, '../shared/captures');
  const corpus: string[] = [];
  captures(join(root, 'captures'), corpus);
  captures(join(shared, 'reference'), corpus);
  captures(join(shared, 'real'), corpus);
  if (corpus.length === 0) usage('no captures found to mutate');
  const bytes = new Map(corpus.map((p) => [p, new Uint8Array(readFileSync(p))] as const));
  // The TUI target needs a terminal: tmux. Without it the target is skipped, and the run says so.
  if (o.targets.includes('tui') && !haveTmux()) {
    console.log('fuzz: target tui skipped: tmux is not installed');
    o.targets = o.targets.filter((t) => t !== 'tui');
    if (o.targets.length === 0) usage('no target left to run');
  }
  const fields = o.targets.includes('filters') || o.targets.includes('tui') ? fieldNames() : DEFAULT_FIELDS;
  const scenarios = o.targets.includes('generate') ? scenarioNames() : [];
  // The UI opens the shipped captures as they are (a mutated one may be unreadable: a notice, not a UI to drive).
  const tuiCaptures = corpus.filter((p) => p.startsWith(join(root, 'captures')));
  const work = mkdtempSync(join(tmpdir(), 'mpa-dissect-fuzz-'));
  console.log(
    `fuzz: seed ${o.seed}, targets ${o.targets.join(',')}, ${o.seconds} s, ${o.jobs} jobs, ${corpus.length} captures (${shared}${existsSync(shared) ? '' : ': absent'}), limits ${o.timeout} s and ${o.maxRss} MB per run`,
  );
  console.log(`fuzz: work directory ${work}`);

  const r = rng(o.seed);
  const deadline = Date.now() + o.seconds * 1000;
  const stats = new Map<Target, { runs: number; failures: number; maxMs: number; maxRss: number }>(
    o.targets.map((t) => [t, { runs: 0, failures: 0, maxMs: 0, maxRss: 0 }]),
  );
  const failures: Array<{ dir: string; c: Case; out: RunOutcome }> = [];
  let n = 0;

  async function worker(w: number): Promise<void> {
    while (Date.now() < deadline) {
      const id = n++;
      let target = o.targets[id % o.targets.length]!;
      // A TUI case takes seconds (a terminal, keys, pastes) where a CLI case takes a fraction of one:
      // it takes one turn in four of its own, so the other targets keep their share of the run.
      if (target === 'tui' && o.targets.length > 1 && Math.floor(id / o.targets.length) % TUI_TURN !== 0)
        target = o.targets[(id + 1) % o.targets.length]!;
      if (target === 'tui') {
        await tuiRun(id, w);
        continue;
      }
      // Cases are drawn in order from one seeded generator, so a seed names the same sequence of cases.
      const c = makeCase(r, target, corpus, bytes, fields, scenarios);
      const dir = join(work, `case-${id}`);
      mkdirSync(dir);
      for (const [name, content] of c.files) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), content);
      }
      c.setup?.(dir);
      let args = c.args.map((a) => a.replace('@DIR', dir));
      const limits = {
        // A peer run must end within its own --timeout (and a margin for start-up and close).
        timeoutMs: (c.peer ? Math.min(o.timeout, PEER_TIMEOUT_S + PEER_MARGIN_S) : o.timeout) * 1000,
        maxRssMB: o.maxRss,
      };
      const timeFile = join(work, `time-${w}.txt`);
      const out = c.peer
        ? await withHostileSide(c.peer, (port) => {
            args = args.map((a) => a.replace('@PORT', String(port)));
            return runCase(process.execPath, mainJs, args, timeFile, limits, c.pipe);
          })
        : await runCase(process.execPath, mainJs, args, timeFile, limits, c.pipe);
      if (out.ok && c.check) {
        const problem = c.check(out.status, out.stderr);
        if (problem !== null) Object.assign(out, { ok: false, problem });
      }
      if (out.ok && (c.target === 'peer' || c.target === 'generate')) {
        // One clear line per problem: exit 0, or 2 with a single line (the Responder's "listening" line aside).
        const lines = out.stderr.split('\n').filter((l) => l !== '' && !/^mpa-dissect peer: listening on /.test(l));
        if (out.status === 1) out.problem = `exit 1 (0 or 2 expected)`;
        else if (lines.length > 1) out.problem = `${lines.length} lines on stderr`;
        else if (out.status === 2 && lines.length === 0) out.problem = 'exit 2 without a line';
        out.ok = out.problem === null;
      }
      const s = stats.get(c.target)!;
      s.runs++;
      s.maxMs = Math.max(s.maxMs, out.ms);
      s.maxRss = Math.max(s.maxRss, out.rssMB ?? 0);
      if (out.ok) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      s.failures++;
      failures.push({ dir, c, out });
      const cmd = `node ${shellQuote(mainJs)} ${args.map(shellQuote).join(' ')}${c.pipe ? ' | cat >/dev/null' : ' >/dev/null'}`;
      writeFileSync(
        join(dir, 'repro.sh'),
        `#!/bin/sh\n# ${c.target}: ${c.name}\n# ${out.problem}: status ${out.status ?? out.signal}, ${out.ms} ms, ${out.rssMB?.toFixed(0) ?? '?'} MB\n${cmd}\n`,
        { mode: 0o755 },
      );
      writeFileSync(join(dir, 'stderr.txt'), out.stderr);
      for (const a of args)
        if (a.startsWith('/') && !a.startsWith(dir) && existsSync(a) && statSync(a).isFile() && corpus.includes(a))
          copyFileSync(a, join(dir, basename(a)));
      const first = out.stderr.split('\n').find((l) => l.trim() !== '') ?? '';
      console.log(
        `FAIL ${out.problem} [${c.target}] ${c.name.slice(0, 120)}: ${first.slice(0, 160)} -> ${dir}/repro.sh`,
      );
    }
  }
  /** One TUI case under tmux; a failure keeps the case (actions, last screen) in its directory. */
  async function tuiRun(id: number, _w: number): Promise<void> {
    const c = tuiCase(r, fields);
    const capture = pick(r, tuiCaptures);
    const dir = join(work, `case-${id}`);
    mkdirSync(dir);
    const out = await runTuiCase(process.execPath, mainJs, capture, c, dir, 10_000);
    const s = stats.get('tui')!;
    s.runs++;
    s.maxMs = Math.max(s.maxMs, out.ms);
    if (out.ok) {
      rmSync(dir, { recursive: true, force: true });
      return;
    }
    s.failures++;
    const outcome: RunOutcome = {
      ok: false,
      problem: out.problem,
      status: null,
      signal: null,
      ms: out.ms,
      rssMB: null,
      stderr: out.screen,
    };
    const kc: Case = {
      target: 'tui',
      name: `${c.name} on ${basename(capture)}`,
      args: [capture],
      files: new Map(),
      pipe: false,
    };
    failures.push({ dir, c: kc, out: outcome });
    writeFileSync(join(dir, 'case.json'), JSON.stringify({ capture, ...c }, null, 1));
    writeFileSync(join(dir, 'screen.txt'), out.screen);
    console.log(`FAIL ${out.problem} [tui] ${kc.name.slice(0, 120)} -> ${dir}/case.json`);
  }

  await Promise.all(Array.from({ length: o.jobs }, (_, w) => worker(w)));

  console.log('\ntarget     runs  failures  slowest  peak RSS');
  for (const [t, s] of stats) {
    console.log(
      `${t.padEnd(9)} ${String(s.runs).padStart(5)}  ${String(s.failures).padStart(8)}  ${(s.maxMs / 1000).toFixed(1).padStart(6)} s  ${s.maxRss.toFixed(0).padStart(5)} MB`,
    );
  }
  const kinds = new Map<string, number>();
  for (const f of failures) kinds.set(f.out.problem!, (kinds.get(f.out.problem!) ?? 0) + 1);
  if (failures.length === 0) {
    rmSync(work, { recursive: true, force: true });
    console.log(`\nfuzz: no crash, hang, stack trace or memory blow-up in ${n} runs (seed ${o.seed})`);
    return;
  }
  console.log(
    `\nfuzz: ${failures.length} failing run(s) of ${n} (${[...kinds].map(([k, v]) => `${v} ${k}`).join(', ')}); inputs and repro.sh kept in ${work} (seed ${o.seed})`,
  );
  process.exitCode = 1;
}

await main();
