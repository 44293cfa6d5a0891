/**
 * One capture of a multi-capture run (cli/multi.ts), analysed with the single-capture run()
 * (cli/run.ts), so its output is what `mpa-dissect [options] CAPTURE` prints alone. Standard
 * output goes to the job's file (the parent prints the files in the order the captures were
 * given); standard error comes back in the result, with the exit status and the capture's digest
 * for the combined summary. Run on a worker thread (cli/capture-worker.ts), or on the main thread
 * when the captures are small (multi.ts).
 */
import { closeSync, openSync } from 'node:fs';
import type { AnalysisResult } from '../src/analysis/pipeline.js';
import { CaptureOpenError } from '../src/capture/read-capture.js';
import { digestOf, unopenedDigest, type CaptureDigest } from '../src/report/capture-digest.js';
import { reportHead, SCHEMA_ID, TOOL, writeReport, type ReportDocument } from '../src/report/json-report.js';
import type { CaptureView } from '../src/report/html/model.js';
import { writeAllSync } from './output.js';
import { run, type RunOptions } from './run.js';

export interface CaptureJob {
  /** The run's options, `capture` set to this capture (plain data: it crosses to the worker). */
  options: RunOptions;
  /** File the capture's standard output goes to. */
  outPath: string;
  /** --ndjson: put `"capturePath": PATH` first in each line. */
  tagNdjson: boolean;
  /** Keep flows and findings in the digest (the run writes --junit). */
  junit: boolean;
  /** Send back the capture's HTML page data (the run writes --html). */
  html?: boolean;
}

export interface CaptureJobResult {
  code: number;
  stderr: string;
  digest: CaptureDigest;
  seconds: number;
  /** The capture's HTML page data, when asked for and the capture was analysed. */
  html?: CaptureView;
}

/** `{"type":...}` → `{"capturePath":"x.pcap","type":...}`, for each whole line of `s`. */
function tagger(path: string): (s: string) => string {
  const head = `{"capturePath":${JSON.stringify(path)},`;
  return (s) => s.replace(/^\{(?=.)/gm, head);
}

/** The document of a capture that could not even be opened: every required key, nothing found. */
function unopenedReport(path: string, error: string): ReportDocument {
  return {
    schema: SCHEMA_ID,
    tool: { ...TOOL },
    capture: { path, format: null, packets: 0, bytes: 0, linkTypes: [], error },
    flows: [],
    findings: [],
    summary: { flows: 0, mpaFlows: 0, fpdus: 0, errors: 0, warnings: 0, infos: 0, findingsOmitted: 0 },
  };
}

async function runJob(job: CaptureJob): Promise<CaptureJobResult> {
  const started = Date.now();
  const o = job.options;
  const fd = openSync(job.outPath, 'w');
  const tag = job.tagNdjson ? tagger(o.capture) : null;
  let wrote = false;
  let stderr = '';
  const out = (s: string): void => {
    if (s.length === 0) return;
    wrote = true;
    writeAllSync(fd, Buffer.from(tag ? tag(s) : s, 'utf8'));
  };
  const got: { result: AnalysisResult | null; html?: CaptureView } = { result: null };
  let code: number;
  let openError: string | null = null;
  try {
    code = await run(
      {
        ...o,
        onAnalysis: (r) => (got.result = r),
        ...(job.html ? { onHtml: (v: CaptureView) => (got.html = v) } : {}),
      },
      {
        out,
        err: (s) => (stderr += s),
        ...(tag
          ? {}
          : {
              outBytes: (b: Uint8Array) => {
                if (b.length === 0) return;
                wrote = true;
                writeAllSync(fd, b);
              },
            }),
      },
    );
  } catch (e) {
    // What the single-capture CLI would print as its one line before exiting 2.
    const msg = e instanceof Error ? e.message : String(e);
    stderr += `mpa-dissect: ${msg}\n`;
    code = 2;
    if (e instanceof CaptureOpenError || got.result === null) openError = msg;
  }
  try {
    const r = got.result;
    // The combined --json document has an element for every capture: one that printed no report
    // (unreadable) gets the document of what was read, with its capture.error.
    if (o.json && !wrote) {
      if (r !== null) writeReport(r, out);
      else out(JSON.stringify(unopenedReport(o.capture, openError ?? 'not analysed'), null, 1) + '\n');
    }
    const digest =
      r !== null
        ? digestOf({ ...reportHead(r), flows: r.flows.map((f) => f.tcp) }, job.junit)
        : unopenedDigest(o.capture, openError ?? 'not analysed');
    return { code, stderr, digest, seconds: (Date.now() - started) / 1000, ...(got.html ? { html: got.html } : {}) };
  } finally {
    closeSync(fd);
  }
}

/** Runs one job; never rejects: a job whose output file cannot be written (disk full) fails alone. */
export function runCaptureJob(job: CaptureJob): Promise<CaptureJobResult> {
  return runJob(job).catch((e: unknown): CaptureJobResult => {
    const msg = e instanceof Error ? e.message : String(e);
    return {
      code: 2,
      stderr: `mpa-dissect: ${job.options.capture}: ${msg}\n`,
      digest: unopenedDigest(job.options.capture, msg),
      seconds: 0,
    };
  });
}
