/**
 * `generate` writes as it makes: the capture file goes out block by block, so memory does not grow
 * with the capture (issue 26: `generate clean --count 100 --size 1048576` took 1.8 GB for an 88 MB
 * file, --count 1000 wrote nothing in a minute). The streamed octets are those of the whole-file
 * writer; the corpus test (test/corpus/) and the round trip check that they did not change.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { captureFile, type CaptureFormat } from '../../src/generate/capture-file.js';
import { CaptureWriter } from '../../src/generate/capture-writer.js';
import { patternBytes, rng } from '../../src/generate/mpa-encoder.js';
import type { PcapFrame } from '../../src/report/pcap-writer.js';
import { CLI, requireBuilt } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-genstream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `generate ARGS` and returns the child's peak resident memory in octets (its own resourceUsage). */
function peakOf(args: string[]): { rss: number; code: number | null; stderr: string } {
  requireBuilt();
  const preload = join(dir, 'peak.cjs');
  writeFileSync(
    preload,
    "process.on('exit', () => process.stderr.write('\\nMAXRSS ' + process.resourceUsage().maxRSS + '\\n'));\n",
  );
  const r = spawnSync(process.execPath, ['-r', preload, CLI, 'generate', ...args], { encoding: 'utf8' });
  const m = /MAXRSS (\d+)/.exec(r.stderr);
  return { rss: m ? Number(m[1]) * 1024 : Number.NaN, code: r.status, stderr: r.stderr };
}

describe('generate as a stream', () => {
  it('peak memory does not follow the capture size (26 MB and 173 MB captures)', { timeout: 60_000 }, () => {
    const small = join(dir, 'small.pcap');
    const large = join(dir, 'large.pcap');
    // Past the first megabytes (the JavaScript heap growing to its working size), so what is compared is what the capture adds.
    const a = peakOf(['clean', '--count', '30', '--size', '1048576', '-o', small]);
    // A large step, so the garbage collector's timing on a busy machine (tens of MB of peak either
    // way) stays well inside the bound.
    const b = peakOf(['clean', '--count', '200', '--size', '1048576', '-o', large]);
    expect([a.code, b.code]).toEqual([0, 0]);
    const grown = statSync(large).size - statSync(small).size;
    expect(grown).toBeGreaterThan(140e6);
    // Holding the capture costs at least its size once more (the whole-file build took 6 times it);
    // streaming costs a few bytes per FPDU: far less than half of what the capture grew.
    expect(b.rss - a.rss, `peak ${a.rss} then ${b.rss} octets for ${grown} more captured`).toBeLessThan(grown / 2);
  });

  it('-o - writes the octets -o FILE writes, with the truth', () => {
    requireBuilt();
    const f = join(dir, 'f.pcapng');
    const args = ['clean', '--count', '40', '--size', '60000', '--markers', 'both', '--segmentation', 'random'];
    const toFile = spawnSync(process.execPath, [CLI, 'generate', ...args, '-o', f, '--truth', join(dir, 'f.json')]);
    const toOut = spawnSync(process.execPath, [CLI, 'generate', ...args, '--format', 'pcapng', '-o', '-'], {
      maxBuffer: 64e6,
    });
    expect([toFile.status, toOut.status]).toEqual([0, 0]);
    const file = readFileSync(f);
    expect(file.length).toBeGreaterThan(2e6);
    expect(Buffer.compare(toOut.stdout, file)).toBe(0);
    const truth = JSON.parse(readFileSync(join(dir, 'f.json'), 'utf8'));
    expect(Object.values(truth.fpduSeqs as Record<string, number[]>).flat().length).toBeGreaterThan(1000);
  });

  it.each(['pcap', 'pcapng'] as const)(
    'the frame-by-frame writer gives the octets of the whole-file one (%s)',
    (format: CaptureFormat) => {
      const r = rng(format.length * 7 + 3);
      const frames: PcapFrame[] = [];
      // Lengths around the padding boundaries, a cut frame, and one larger than the writer's block.
      for (let i = 0; i < 300; i++) {
        const n = i === 150 ? (1 << 20) + 3 : Math.floor(r() * 2000);
        const data = Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
        frames.push({
          tsSec: 1_700_000_000 + i,
          tsNsec: Math.floor(r() * 1e6) * 1000,
          data,
          ...(i % 7 === 0 ? { origLen: n + 100 } : {}),
        });
      }
      const blocks: Buffer[] = [];
      const w = new CaptureWriter(format, 1, (b) => blocks.push(Buffer.from(b)));
      for (const f of frames) w.write(f);
      w.end();
      expect(blocks.length).toBeGreaterThan(1);
      expect(Buffer.concat(blocks).equals(Buffer.from(captureFile(frames, format, 1)))).toBe(true);
    },
  );

  it.each([0, 1, 7, 123456789, 2 ** 32 - 1])(
    'patternBytes(n, %i) is the octets of rng(seed), as drawn one by one',
    (seed) => {
      const r = rng(seed);
      const want = Uint8Array.from({ length: 5000 }, () => Math.floor(r() * 256));
      expect(Buffer.from(patternBytes(5000, seed)).equals(Buffer.from(want))).toBe(true);
    },
  );
});
