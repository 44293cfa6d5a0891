/** -w with -b: file names as tshark's ring buffer, a switch at the size, the oldest deleted beyond files:N. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCapture } from '../../src/capture/read-capture.js';
import type { PacketRecord } from '../../src/capture/packet.js';
import { CaptureFileWriter } from '../../src/report/ring-writer.js';

function packet(i: number, size: number): PacketRecord {
  return {
    frame: i,
    tsSec: 1000 + i,
    tsNsec: 5,
    linkType: 1,
    data: new Uint8Array(size).fill(i & 0xff),
    origLen: size + 10,
    fileOffset: 0,
    interfaceId: 0,
  };
}

describe('CaptureFileWriter', () => {
  it('one file without a ring: every packet, original lengths and nanoseconds kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-w-'));
    try {
      const w = new CaptureFileWriter(join(dir, 'x.pcap'));
      w.start(1);
      for (let i = 1; i <= 50; i++) w.write(packet(i, 100));
      w.close(1);
      const got: Array<[number, number, number]> = [];
      const s = await readCapture(join(dir, 'x.pcap'), (p) => got.push([p.tsSec, p.tsNsec, p.origLen]));
      expect(s.error).toBeNull();
      expect(got).toHaveLength(50);
      expect(got[0]).toEqual([1001, 5, 110]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a ring: PREFIX_NNNNN_YYYYMMDDhhmmss.EXT files under the size, only the newest N kept, each a valid capture', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-ring-'));
    try {
      const w = new CaptureFileWriter(join(dir, 'ring.pcap'), { fileSize: 10_000, files: 3 });
      w.start(1);
      for (let i = 1; i <= 100; i++) w.write(packet(i, 984)); // 1000 octets per record
      w.close(1);
      const names = readdirSync(dir).sort();
      expect(names).toHaveLength(3);
      for (const n of names) expect(n).toMatch(/^ring_\d{5}_\d{14}\.pcap$/);
      expect(names.map((n) => Number(n.slice(5, 10)))).toEqual([10, 11, 12]); // 9 records per file: 12 files, the last 3 kept
      const frames: number[] = [];
      for (const n of names) {
        expect(statSync(join(dir, n)).size).toBeLessThanOrEqual(10_000);
        const s = await readCapture(join(dir, n), (p) => frames.push(p.data[0]!));
        expect(s.error).toBeNull();
      }
      expect(frames.at(-1)).toBe(100);
      expect(frames).toEqual(Array.from({ length: frames.length }, (_, k) => 100 - frames.length + 1 + k));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
