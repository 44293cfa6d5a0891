import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bytesOf, cat, epb, idb, pcapFile, shb, removeTempFiles, tempFile } from '../helpers/pcapng.js';

afterAll(removeTempFiles);

/**
 * `tcpdump -w - | mpa-dissect -`: the compiled reader in a child process, fed through a real
 * shell pipe. The reader is compiled on its own into a temporary folder, so this test neither
 * depends on nor writes the project's dist/.
 */

let moduleUrl = '';
let out = '';

beforeAll(() => {
  out = mkdtempSync(join(tmpdir(), 'mpa-capture-build-'));
  const tsc = resolve('node_modules/typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [
      tsc,
      '--outDir',
      out,
      '--rootDir',
      resolve('src'),
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--target',
      'ES2022',
      '--strict',
      '--skipLibCheck',
      '--types',
      'node',
      resolve('src/capture/read-capture.ts'),
    ],
    { stdio: 'pipe' },
  );
  moduleUrl = pathToFileURL(join(out, 'capture/read-capture.js')).href;
}, 60_000);

afterAll(() => {
  if (out !== '') rmSync(out, { recursive: true, force: true });
});

const SCRIPT = `
const { readCapture } = await import(process.argv[1]);
const frames = [];
const s = await readCapture('-', (p) => frames.push([p.frame, p.data.length, p.fileOffset, p.data[0]]), { chunkSize: 1000 });
process.stdout.write(JSON.stringify({ s, frames }));
`;

function throughPipe(file: string): {
  s: { format: string; packets: number; error: unknown; path: string };
  frames: number[][];
} {
  const r = spawnSync(
    'sh',
    ['-c', `cat "$1" | "$2" --input-type=module -e "$3" "$4"`, 'sh', file, process.execPath, SCRIPT, moduleUrl],
    { encoding: 'utf8' },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as ReturnType<typeof throughPipe>;
}

describe('reading standard input through a pipe', () => {
  it('reads a pcapng capture piped in', () => {
    const recs = Array.from({ length: 300 }, (_, i) => epb(0, BigInt(i), bytesOf(60 + ((i * 97) % 1400), i)));
    const file = tempFile(cat(shb(), idb(1), ...recs));
    const { s, frames } = throughPipe(file);
    expect(s).toMatchObject({ path: '-', format: 'pcapng', packets: 300, error: null });
    expect(frames[299]![0]).toBe(300);
    expect(frames.map((f) => f[1])).toEqual(recs.map((_, i) => 60 + ((i * 97) % 1400)));
  });

  it('reports a truncated pcap on standard input after the good packets', () => {
    const good = pcapFile({}, [
      { sec: 1, frac: 0, data: bytesOf(100, 1) },
      { sec: 2, frac: 0, data: bytesOf(100, 2) },
    ]);
    const file = tempFile(cat(good, new Uint8Array(10)));
    const { s, frames } = throughPipe(file);
    expect(frames.map((f) => f[0])).toEqual([1, 2]);
    expect(s.error).toEqual({
      file: '<stdin>',
      offset: good.length,
      frame: 3,
      message: 'truncated record header: 16 bytes needed, 10 bytes left in file',
    });
  });
});
