/**
 * Every example command of `--help` (cli/argv.ts HELP_EXAMPLES) and of the ```sh blocks of the
 * README, DEVELOPING.md and every page of docs/ runs: each in a fresh directory where the placeholder names it uses (capture.pcap,
 * smb.pcap, runs/, reports/*.json, ...) are links to shipped captures or reports made for it, with
 * `mpa-dissect` on the PATH as the built CLI. "Runs" is what a reader needs: exit status 0 or 1 (a
 * finding), never 2 (a usage error, an unknown field, a missing option). Commands that need a
 * network interface or a second process (live capture, -D, the peer) are listed as skipped, with why.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { HELP_EXAMPLES } from '../../cli/argv.js';
import { CAPTURES, CLI, ROOT, cli, requireBuilt } from './helpers.js';

const CORPUS = join(CAPTURES, 'corpus');

/** Command lines of the ```sh blocks (continuation lines joined) that run mpa-dissect. */
function docCommands(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
    const lines = m[1]!.replace(/\\\n\s*/g, ' ').split('\n');
    for (const l of lines) if (/^\s*mpa-dissect\s/.test(l)) out.push(l.trim());
  }
  return out;
}

/** A trailing "# comment" (outside quotes) taken off. */
function uncomment(cmd: string): string {
  let q: string | null = null;
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!;
    if (q) {
      if (c === q) q = null;
    } else if (c === "'" || c === '"') q = c;
    else if (c === '#' && (i === 0 || /\s/.test(cmd[i - 1]!))) return cmd.slice(0, i).trim();
  }
  return cmd.trim();
}

/** Why a command cannot run here, or null. */
function cannotRun(cmd: string): string | null {
  if (/(^|\s)-i\s/.test(cmd) || /tcpdump/.test(cmd)) return 'live capture: needs a network interface and privileges';
  if (/(^|\s)-D(\s|$)/.test(cmd)) return 'lists network interfaces: depends on the machine';
  if (/\bmpa-dissect peer\b/.test(cmd)) return 'the peer runs over real TCP sockets with a second process';
  // A pipe into another tool (jq) runs only where that tool is installed.
  for (const m of cmd.matchAll(/\|\s*([\w.-]+)/g))
    if (m[1] !== 'mpa-dissect' && spawnSync('sh', ['-c', `command -v ${m[1]}`]).status !== 0)
      return `${m[1]} is not installed`;
  return null;
}

const docs = ['README.md', 'DEVELOPING.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))].filter(
  (f) => f.endsWith('.md'),
);
const commands: Array<[string, string]> = [
  ...HELP_EXAMPLES.map(([c]) => ['--help', c.replaceAll('$0', 'mpa-dissect')] as [string, string]),
  ...docs.flatMap((d) => docCommands(join(ROOT, d)).map((c) => [d, uncomment(c)] as [string, string])),
];

const base = mkdtempSync(join(tmpdir(), 'mpa-doc-examples-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const bin = join(base, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'mpa-dissect'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
chmodSync(join(bin, 'mpa-dissect'), 0o755);

/** Placeholder capture names and the shipped capture each stands for. */
const CAPTURE_FOR: Record<string, string> = {
  'capture.pcap': join(CAPTURES, 'golden.pcap'),
  'midstream.pcap': join(CORPUS, 'mid-stream.pcap'),
  'framed.pcap': join(CORPUS, 'tuf-second-key.pcap'),
  'extra.pcap': join(CAPTURES, 'errors.pcap'),
  'smb.pcap': join(CORPUS, 'smbd-clean.pcap'),
  'nfs.pcap': join(CORPUS, 'nfsrdma-clean.pcap'),
  'nfs-on-odd-port.pcap': join(CORPUS, 'nfsrdma-clean.pcap'),
  'nvme.pcap': join(CORPUS, 'nvme-io-clean.pcap'),
  'iser.pcap': join(CORPUS, 'iser-clean.pcap'),
};

let reportsMade: string[] | null = null;
/** Two --json reports (made once), for merge's examples. */
function reports(): string[] {
  if (reportsMade) return reportsMade;
  reportsMade = ['golden.pcap', 'errors.pcap'].map((c) => cli(['--json', c]).stdout);
  return reportsMade;
}

/** A fresh directory holding what `cmd` names; returns it and the command with absolute paths put in. */
function workspace(cmd: string, n: number): [string, string] {
  const dir = join(base, `w${n}`);
  mkdirSync(dir);
  for (const [name, target] of Object.entries(CAPTURE_FOR))
    if (cmd.includes(name)) symlinkSync(target, join(dir, name));
  // The checkout's own captures, named as in a clone (`mpa-dissect captures/sample.pcap`).
  if (/(^|\s)captures\//.test(cmd)) symlinkSync(CAPTURES, join(dir, 'captures'));
  if (cmd.includes('capture.pcap.gz'))
    writeFileSync(join(dir, 'capture.pcap.gz'), gzipSync(readFileSync(CAPTURE_FOR['capture.pcap']!)));
  // A CI recipe's artifacts/ directory (its `mkdir -p artifacts` is an example line of its own).
  if (/\bartifacts\//.test(cmd)) mkdirSync(join(dir, 'artifacts'));
  // The CI recipe's rules file (its JSON is an example block of its own).
  if (cmd.includes('ci/mpa-rules.json')) {
    mkdirSync(join(dir, 'ci'));
    writeFileSync(join(dir, 'ci', 'mpa-rules.json'), JSON.stringify({ rules: { 'mpa.fpdu-exceeds-emss': 'off' } }));
  }
  if (cmd.includes('ci.json'))
    writeFileSync(join(dir, 'ci.json'), JSON.stringify({ rules: { 'mpa.pad-not-zero': 'off' } }));
  if (/\bruns\//.test(cmd)) {
    mkdirSync(join(dir, 'runs'));
    symlinkSync(join(CAPTURES, 'golden.pcap'), join(dir, 'runs', 'a.pcap'));
    symlinkSync(join(CAPTURES, 'sample.pcap'), join(dir, 'runs', 'b.pcap'));
  }
  let out = cmd;
  const writeReports = (d: string): void => {
    reports().forEach((r, i) => {
      writeFileSync(join(d, `r${i}.json`), r);
    });
  };
  if (/\breports\//.test(cmd)) {
    mkdirSync(join(dir, 'reports'));
    writeReports(join(dir, 'reports'));
  }
  if (/\/data\/reports\//.test(cmd)) {
    mkdirSync(join(dir, 'data-reports'));
    writeReports(join(dir, 'data-reports'));
    out = out.replace('/data/reports/', 'data-reports/');
  }
  if (/merge .*\*\.json/.test(cmd) && !/reports\//.test(cmd)) writeReports(dir);
  return [dir, out];
}

/**
 * An example's run, once per command: the same command shown in several documents (the README and
 * its topic page, --help) runs in a workspace made from the command alone, so it gives the same.
 */
const runs = new Map<string, [string, SpawnSyncReturns<string>]>();
function ranOnce(cmd: string, n: number): [string, SpawnSyncReturns<string>] {
  const known = runs.get(cmd);
  if (known) return known;
  const [dir, line] = workspace(cmd, n);
  const r = spawnSync('sh', ['-c', line], {
    cwd: dir,
    encoding: 'utf8',
    input: '',
    env: { PATH: `${bin}:${process.env['PATH'] ?? ''}`, NO_COLOR: '1', HOME: dir },
    maxBuffer: 64 * 1024 * 1024,
  });
  runs.set(cmd, [line, r]);
  return [line, r];
}

requireBuilt();
describe('every example of --help and of the documentation runs', () => {
  expect(commands.filter(([from]) => from === '--help').length).toBeGreaterThan(10);
  expect(commands.filter(([from]) => from === 'README.md').length).toBeGreaterThan(20);
  // Each topic page split out of the README shows commands of its own, and they run here too.
  for (const page of ['filters-and-fields', 'live-capture', 'report', 'generator', 'many-captures', 'upper-layers'])
    expect(commands.filter(([from]) => from === join('docs', `${page}.md`)).length, page).toBeGreaterThan(0);
  commands.forEach(([from, cmd], n) => {
    const why = cannotRun(cmd);
    if (why) {
      it.skip(`${from}: ${cmd} (skipped: ${why})`, () => {});
      return;
    }
    it(`${from}: ${cmd}`, () => {
      const [line, r] = ranOnce(cmd, n);
      expect(r.status, `${line}\n${r.stderr}`).not.toBeNull();
      expect(r.status, `${line}\n${r.stderr}`).toBeLessThan(2);
      expect(r.stderr, line).not.toMatch(/mpa-dissect: .*(unknown|aren't valid|not supported|needs )/);
    });
  });
});
