/**
 * `node dist/scripts/bench-output.js`: output back-pressure and memory (issue 8). Generates the
 * capture of 262,144 zero-length FPDUs (2 MB) and 1,000,000 empty records, runs the CLI with its
 * standard output into a pipe whose reader stalls for STALL_MS then reads everything, and prints
 * the time, the output size and the peak RSS of each case against the 300 MB bound.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildMpaConnection } from '../src/generate/mpa-connection.js';
import { buildPcap } from '../src/report/pcap-writer.js';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = join(here, '..', 'cli', 'main.js');
const STALL_MS = Number(process.env['STALL_MS'] ?? 3000);
const LIMIT_MB = 300;

function peakMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function measure(args: string[]): Promise<{ seconds: number; bytes: number; peak: number; code: number | null }> {
  return new Promise((resolve) => {
    const t = Date.now();
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
    let peak = 0;
    let bytes = 0;
    const timer = setInterval(() => (peak = Math.max(peak, peakMb(child.pid!))), 50);
    child.stdout.pause();
    setTimeout(() => {
      child.stdout.on('data', (b: Buffer) => (bytes += b.length));
      child.stdout.resume();
    }, STALL_MS);
    child.on('exit', (code) => {
      clearInterval(timer);
      resolve({ seconds: (Date.now() - t) / 1000, bytes, peak, code });
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), 'mpa-bench-output-'));
try {
  const zero = join(dir, 'zero-fpdus.pcap');
  writeFileSync(
    zero,
    buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: Array.from({ length: 262_144 }, () => ({ ulpdu: new Uint8Array(0) })),
    }).pcap,
  );
  const empty = join(dir, 'empty-records.pcap');
  writeFileSync(
    empty,
    buildPcap(
      1,
      Array.from({ length: 1_000_000 }, (_, i) => ({ tsSec: i, tsNsec: 0, data: new Uint8Array(0) })),
    ),
  );
  const cases: Array<[string, string[]]> = [
    ['256k zero-length FPDUs, -V -x', ['-V', '-x', zero]],
    ['256k zero-length FPDUs, text', [zero]],
    ['1M empty records, text', [empty]],
    ['1M empty records, --ndjson', ['--ndjson', empty]],
  ];
  let ok = true;
  for (const [name, args] of cases) {
    const r = await measure(args);
    const pass = r.peak < LIMIT_MB && r.code !== null;
    ok &&= pass;
    console.log(
      `${pass ? 'ok  ' : 'FAIL'} ${name}: ${r.seconds.toFixed(1)} s, ${(r.bytes / 1e6).toFixed(0)} MB of output, peak RSS ${r.peak.toFixed(0)} MB (limit ${LIMIT_MB}), exit ${r.code}`,
    );
  }
  process.exitCode = ok ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
