/**
 * Live capture with findings carried as packet comments: `-i lo --annotate FILE.pcapng` and
 * `-w FILE.pcapng` (every captured packet, as -w writes live) while the MPA peer injects faults.
 * tshark reads both files: every packet, and our findings (the run's --ndjson) on their frames.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cannotCapture, exchange, freePort, interrupt, startCapture } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';
import { cli } from '../cli/helpers.js';

const why = cannotCapture('tcpdump') ?? (HAVE_TSHARK ? null : 'tshark is not installed (.ci/run installs it)');

function tshark(args: readonly string[]): string {
  const r = spawnSync('tshark', args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`tshark ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

if (why !== null) it.skip(`live annotate skipped: ${why}`, () => {});

describe.skipIf(why !== null)('live: --annotate and -w FILE.pcapng', () => {
  it('every captured packet, our findings as comments on their frames', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-live-ann-'));
    try {
      const port = await freePort();
      const ann = join(dir, 'a.pcapng');
      const w = join(dir, 'w.pcapng');
      const cap = await startCapture(port, [
        '--capture-backend',
        'tcpdump',
        '--ndjson',
        '--annotate',
        ann,
        '-w',
        w,
        '-a',
        'duration:40',
      ]);
      await exchange(
        port,
        { script: 'send:101,write:3000,send:57', faults: ['pad@1', 'crc@3'] },
        { script: 'send:40' },
      );
      const code = await interrupt(cap);
      expect(code).toBe(1);
      expect(cap.stderr()).not.toMatch(/not in the file|cannot write/);
      const want = new Map<number, string[]>();
      for (const line of cap.stdout().split('\n')) {
        if (!line.startsWith('{"type":"finding"')) continue;
        const f = JSON.parse(line) as { severity: string; rule: string; frames: number[]; message: string };
        for (const fr of new Set(f.frames)) want.set(fr, [...(want.get(fr) ?? []), `${f.severity} ${f.rule}`].sort());
      }
      expect([...want.values()].flat()).toEqual(
        expect.arrayContaining(['error mpa.crc-mismatch', 'warning mpa.pad-not-zero']),
      );
      const summary = JSON.parse(cap.stdout().trim().split('\n').at(-1)!) as { capture: { packets: number } };
      for (const file of [ann, w]) {
        const rows = tshark([
          '-r',
          file,
          '-T',
          'json',
          '-e',
          'frame.number',
          '-e',
          'frame.comment',
          '-Y',
          'frame.comment',
        ]);
        const got = new Map<number, string[]>();
        for (const p of JSON.parse(rows || '[]') as Array<{ _source: { layers: Record<string, string[]> } }>) {
          const texts = p._source.layers['frame.comment']!.map((t) => /^mpa-dissect: (\w+ \S+)/.exec(t)![1]!);
          got.set(Number(p._source.layers['frame.number']![0]), texts.sort());
        }
        expect(got).toEqual(want);
        const count = tshark(['-r', file, '-T', 'fields', '-e', 'frame.number']).trim().split('\n').length;
        expect(count).toBe(summary.capture.packets);
        // Read back by ourselves: the same findings (the file holds every packet).
        const back = cli(['-q', '--fail-on', 'never', file]);
        expect(back.stdout).toMatch(/mpa\.crc-mismatch/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('-b with a pcapng -w is one line: the ring writes pcap', () => {
    const r = cli(['-i', 'lo', '-w', 'x.pcapng', '-b', 'filesize:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^mpa-dissect: -b writes a ring of pcap files/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
