/**
 * `mpa-dissect [options] a.pcap b.pcap dir/`: several captures analysed on a pool of worker
 * threads (cli/worker-pool.ts, cli/capture-worker.ts), or on the main thread when they are small
 * (IN_THREAD_BYTES), each exactly as it would be alone (cli/capture-job.ts), their
 * outputs printed in the order given (never interleaved, whatever finishes first), then one
 * combined summary (src/report/combined-summary.ts) and one exit status, the worst capture's.
 *
 * Each capture's standard output is written to a file of its own in a temporary directory while
 * it runs, and copied out when its turn comes; it is deleted once printed, the directory at the end.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buildJUnitCaptures, type JUnitOptions } from '../src/report/junit.js';
import {
  combine,
  combinedJsonElementStart,
  combinedJsonHead,
  combinedJsonTail,
  combinedText,
  digestJUnit,
  headerLine,
  indentChunk,
  type CombinedSummary,
} from '../src/report/combined-summary.js';
import { unopenedDigest, type CaptureDigest } from '../src/report/capture-digest.js';
import { makeStyle } from '../src/report/text.js';
import { printable } from '../src/report/printable.js';
import { CapturesProgress } from '../src/report/progress.js';
import type { CaptureJob, CaptureJobResult } from './capture-job.js';
import { erasingFirst, writeFileOrFail, type RunIo } from './output.js';
import { loadRulesFile } from '../src/report/rules-file.js';
import { TOOL } from '../src/report/json-report.js';
import type { CaptureView } from '../src/report/html/model.js';
import type { RunOptions } from './run.js';
import { WorkerPool } from './worker-pool.js';

export interface MultiOptions {
  /** Worker threads analysing captures at once. */
  jobs: number;
  /** --jobs was given: the captures run on workers whatever their size. */
  jobsGiven?: boolean;
  /** --junit FILE: one document for all captures (a testsuite per capture and per capture's flow). */
  junit: string | null;
  /** A line on standard error: captures done of how many (CapturesProgress). */
  progress: boolean;
  /** --html FILE: one page for all captures (an overview, then a section per capture). */
  html?: string | null;
  /** --annotate DIR: each capture's annotated pcapng in DIR, named after the capture. */
  annotateDir?: string | null;
}

/**
 * Each capture's annotated pcapng in `dir`: its base name without .gz and the capture extension,
 * then .pcapng; a name two captures share gets the capture's position (stdin: "stdin").
 */
export function annotateNames(dir: string, captures: readonly string[]): string[] {
  const stems = captures.map((c) =>
    c === '-'
      ? 'stdin'
      : basename(c)
          .replace(/\.gz$/i, '')
          .replace(/\.(pcapng|pcap|cap|ntar)$/i, ''),
  );
  const count = new Map<string, number>();
  for (const s of stems) count.set(s, (count.get(s) ?? 0) + 1);
  return stems.map((s, i) => join(dir, `${count.get(s)! > 1 ? `${s}-${i + 1}` : s}.pcapng`));
}

/**
 * Below this many octets in all, and without --jobs, the captures are analysed one after another
 * on the main thread, the same jobs as on the workers: a worker loads the analysis modules first
 * (about 100 ms of CPU each), more than it saves on a few MB of captures.
 */
export const IN_THREAD_BYTES = 4 * 1024 * 1024;

/** What runs the jobs: the worker pool, or the main thread one job at a time. */
interface JobRunner {
  run(job: CaptureJob, stdin: boolean): Promise<CaptureJobResult>;
  close(): Promise<void>;
}

function inThreadRunner(): JobRunner {
  let last: Promise<unknown> = Promise.resolve();
  return {
    run(job) {
      const p = last.then(async () => (await import('./capture-job.js')).runCaptureJob(job));
      last = p;
      return p;
    },
    close: () => Promise.resolve(),
  };
}

/** Octets of every capture, or null when one is standard input or cannot be sized. */
function totalSize(captures: readonly string[]): { total: number | null; sizes: number[] } {
  const sizes = captures.map((c) => {
    try {
      return c === '-' ? -1 : statSync(c).size;
    } catch {
      return -1;
    }
  });
  return {
    total: sizes.includes(-1) ? null : sizes.reduce((a, b) => a + b, 0),
    sizes: sizes.map((n) => Math.max(0, n)),
  };
}

/** One read buffer for every copy (copies are synchronous), not 1 MiB more per capture. */
let copyBuffer: Buffer | undefined;

/** Reads a file in pieces of up to 1 MiB, each a view valid until `each` returns. */
function readPieces(path: string, each: (b: Buffer) => void): void {
  const fd = openSync(path, 'r');
  try {
    copyBuffer ??= Buffer.allocUnsafe(1 << 20);
    const buf = copyBuffer;
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return;
      each(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies a capture's output file to `out` as strings; `piece` may rewrite each (the --json
 * re-indent). A piece ends before its last newline, so pieces hold whole UTF-8 characters and the
 * file's final newline reaches `piece` only in the last piece (`last` true).
 */
function copyOut(path: string, out: (s: string) => void, piece: (s: string, last: boolean) => string = (s) => s): void {
  let carry: Buffer = Buffer.alloc(0);
  readPieces(path, (b) => {
    const chunk = carry.length ? Buffer.concat([carry, b]) : b;
    const nl = chunk.lastIndexOf(0x0a);
    if (nl <= 0) {
      carry = Buffer.from(chunk);
      return;
    }
    out(piece(chunk.subarray(0, nl).toString('utf8'), false));
    carry = Buffer.from(chunk.subarray(nl));
  });
  const rest = piece(carry.toString('utf8'), true);
  if (rest) out(rest);
}

/** Runs every capture and prints as described above; returns the exit status. */
export async function runMulti(
  base: RunOptions,
  captures: readonly string[],
  m: MultiOptions,
  ioIn: RunIo,
): Promise<number> {
  const started = Date.now();
  const { total, sizes } = totalSize(captures);
  const bar = m.progress ? new CapturesProgress(ioIn.err, captures.length, total) : null;
  // Anything written erases the bar first (it may share the terminal); the loop draws it again.
  const io: RunIo = bar ? erasingFirst(ioIn, () => bar.done()) : ioIn;
  const st = makeStyle(base.color);
  const text = !base.json && !base.ndjson;
  const dir = mkdtempSync(join(tmpdir(), 'mpa-dissect-'));
  const pool: JobRunner =
    m.jobsGiven !== true && !captures.includes('-') && sizes.reduce((a, b) => a + b, 0) < IN_THREAD_BYTES
      ? inThreadRunner()
      : new WorkerPool<CaptureJob, CaptureJobResult>(
          new URL('./capture-worker.js', import.meta.url),
          Math.min(m.jobs, captures.length),
        );
  // Ctrl-C or a kill: the outputs waiting for their turn are removed, then the signal does its usual work.
  const onSignal = (sig: NodeJS.Signals): void => {
    rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, sig);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const sig of signals) process.once(sig, onSignal);
  try {
    // Every capture is handed to the pool at once; results are taken in argument order.
    const annotated = m.annotateDir ? annotateNames(m.annotateDir, captures) : null;
    const pending = captures.map((capture, i) => {
      const { onAnalysis: _drop, live: _live, ...plain } = base;
      const job: CaptureJob = {
        options: {
          ...plain,
          capture,
          junit: null,
          write: null,
          html: null,
          progress: false,
          annotate: annotated ? annotated[i]! : null,
        },
        outPath: join(dir, `${i}.out`),
        tagNdjson: base.ndjson,
        junit: m.junit !== null,
        html: (m.html ?? null) !== null,
      };
      const p = pool.run(job, capture === '-');
      if (bar) {
        void p.then(
          () => {
            bar.finish(sizes[i]!);
            bar.draw();
          },
          () => bar.finish(sizes[i]!),
        );
      }
      return p.catch((e: unknown): CaptureJobResult => {
        // The worker died (out of memory, an internal error): this capture failed, the others go on.
        const msg = `${capture}: analysis stopped: ${e instanceof Error ? e.message : String(e)}`;
        return { code: 2, stderr: `mpa-dissect: ${msg}\n`, digest: unopenedDigest(capture, msg), seconds: 0 };
      });
    });
    const disabled = base.rules !== null ? [...loadRulesFile(base.rules).overrides.disabled] : [];
    const digests: CaptureDigest[] = [];
    const junit: JUnitOptions[] = [];
    const pages: CaptureView[] = [];
    let worst = 0;
    if (base.json) io.out(combinedJsonHead());
    for (let i = 0; i < captures.length; i++) {
      const capture = captures[i]!;
      // The header goes out at once: a reader sees which capture the run is waiting for.
      if (text) io.out(`${i > 0 ? '\n' : ''}${headerLine(printable(capture), st)}\n`);
      bar?.draw();
      const r = await pending[i]!;
      const outPath = join(dir, `${i}.out`);
      if (base.json) {
        io.out(combinedJsonElementStart(i));
        copyOut(outPath, io.out, (s, last) => indentChunk(last ? s.replace(/\n$/, '') : s, 2));
      } else if (io.outBytes) {
        // Text and NDJSON need no rewriting: the octets as they are, not decoded and encoded again.
        readPieces(outPath, io.outBytes);
      } else {
        copyOut(outPath, io.out);
      }
      rmSync(outPath, { force: true });
      if (r.stderr) io.err(r.stderr);
      worst = Math.max(worst, r.code);
      digests.push(r.digest);
      if (m.junit !== null) junit.push(digestJUnit(r.digest, base.failOn, disabled, r.seconds));
      if (m.html)
        pages.push(r.html ?? (await import('../src/report/html/collect.js')).unanalysedView(r.digest, r.code));
    }
    bar?.done();
    const summary: CombinedSummary = combine(digests, base.failOn, base.allowTruncated === true);
    if (base.json) io.out(combinedJsonTail(summary, captures.length > 0));
    else if (base.ndjson) io.out(JSON.stringify({ type: 'combined-summary', ...summary }) + '\n');
    else io.out(`\n${combinedText(summary, st)}\n`);
    if (m.junit !== null) writeFileOrFail(m.junit, '--junit', buildJUnitCaptures(junit, (Date.now() - started) / 1000));
    const code = Math.max(worst, summary.exit);
    if (m.html) {
      const { htmlPage, severalWhy } = await import('../src/report/html/page.js');
      const exit = { code, why: severalWhy(pages, code) };
      writeFileOrFail(
        m.html,
        '--html',
        htmlPage(pages, { exit, tool: `${TOOL.name} ${TOOL.version}`, generated: new Date() }),
      );
    }
    return code;
  } finally {
    for (const sig of signals) process.off(sig, onSignal);
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
