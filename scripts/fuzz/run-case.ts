/**
 * Runs the built CLI once under /usr/bin/time (peak RSS) with a time limit, and judges the outcome:
 * exit status 0, 1 or 2, no JavaScript stack trace or fatal error on stderr, within time, under the
 * RSS limit. The process group is killed on timeout, so nothing is left running.
 */
import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';

export interface RunLimits {
  timeoutMs: number;
  maxRssMB: number;
}

export interface RunOutcome {
  ok: boolean;
  /** What went wrong: crash (status), stack, fatal, hang, rss. */
  problem: string | null;
  status: number | null;
  signal: string | null;
  ms: number;
  rssMB: number | null;
  stderr: string;
}

const STDERR_KEEP = 64 * 1024;
/** A V8 stack frame line ("    at fn (file:line:col)" or "    at file:line:col"). */
const STACK_FRAME = /^\s+at (?:.+ \()?(?:file:|node:|\/)[^\s)]*:\d+:\d+\)?$/m;
const FATAL =
  /FATAL ERROR|Allocation failed|JavaScript heap out of memory|Maximum call stack size exceeded|UnhandledPromiseRejection|Segmentation fault|Aborted|core dumped/;

export function runCase(
  node: string,
  mainJs: string,
  args: readonly string[],
  timeFile: string,
  limits: RunLimits,
  pipeStdout: boolean,
): Promise<RunOutcome> {
  return new Promise((resolve) => {
    if (existsSync(timeFile)) rmSync(timeFile);
    const devNull = pipeStdout ? null : openSync('/dev/null', 'w');
    const t0 = Date.now();
    // An argument this long, or holding a NUL, cannot be passed on a command line at all (spawn refuses it).
    if (args.some((a) => Buffer.byteLength(a) >= 128 * 1024 || a.includes('\0'))) {
      resolve({ ok: true, problem: null, status: null, signal: null, ms: 0, rssMB: null, stderr: '' });
      return;
    }
    const child = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, node, mainJs, ...args], {
      detached: true, // own process group: a timeout kills the CLI too, not just time(1)
      stdio: ['ignore', devNull ?? 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1', CI: '1' },
    });
    if (devNull !== null) closeSync(devNull);
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (s: string) => {
      if (stderr.length < STDERR_KEEP) stderr += s.slice(0, STDERR_KEEP - stderr.length);
    });
    child.stdout?.resume(); // a reader that keeps up: drained and dropped
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, limits.timeoutMs);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      const ms = Date.now() - t0;
      let rssMB: number | null = null;
      try {
        const kb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop());
        if (Number.isFinite(kb)) rssMB = kb / 1024;
      } catch {
        // killed before time(1) wrote it
      }
      // time(1) reports the child's status as its own; "Command exited with non-zero status" lines go to the -o file.
      let problem: string | null = null;
      if (timedOut) problem = 'hang';
      else if (signal !== null || status === null || ![0, 1, 2].includes(status))
        problem = `crash (status ${status ?? signal})`;
      else if (STACK_FRAME.test(stderr)) problem = 'stack trace';
      else if (FATAL.test(stderr)) problem = 'fatal error';
      else if (rssMB !== null && rssMB > limits.maxRssMB) problem = 'rss';
      resolve({ ok: problem === null, problem, status, signal, ms, rssMB, stderr });
    });
  });
}
