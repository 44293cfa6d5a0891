import { afterAll, describe, expect, it } from 'vitest';
import type { PacketRecord } from '../../src/capture/packet.js';
import { openRandomAccess } from '../../src/capture/random-access.js';
import { CaptureOpenError, readCapture } from '../../src/capture/read-capture.js';
import {
  bytesOf,
  cat,
  epb,
  idb,
  pb,
  pcapFile,
  shb,
  spb,
  removeTempFiles,
  tempFile,
  unknownBlock,
} from '../helpers/pcapng.js';

afterAll(removeTempFiles);

async function records(path: string): Promise<PacketRecord[]> {
  const out: PacketRecord[] = [];
  await readCapture(path, (p) => out.push({ ...p, data: p.data.slice() }));
  return out;
}

describe('openRandomAccess', () => {
  for (const le of [true, false]) {
    it(`reads back every frame of a ${le ? 'little' : 'big'}-endian nanosecond pcap by offset, in any order`, async () => {
      const path = tempFile(
        pcapFile(
          { le, nano: true, linkType: 101 },
          Array.from({ length: 20 }, (_, i) => ({
            sec: 1000 + i,
            frac: i * 1000 + 7,
            data: bytesOf(40 + i * 50, i),
            origLen: 5000,
          })),
        ),
      );
      const recs = await records(path);
      const ra = await openRandomAccess(path);
      for (const r of [...recs].reverse()) expect(ra.read(r.fileOffset, r.frame)).toEqual(r);
      expect(ra.read(0, 1)).toBeNull();
      expect(ra.read(1 << 30, 1)).toBeNull();
      ra.close();
    });
  }

  it('reads back pcapng frames across sections, byte orders and interfaces', async () => {
    const path = tempFile(
      cat(
        shb(true),
        idb(1, { tsresol: 9 }),
        epb(0, 1700000000000000001n, bytesOf(100, 1)),
        unknownBlock(0xbad, 40),
        idb(113),
        epb(1, 5n, bytesOf(60, 2)),
        spb(1000, bytesOf(80, 3)),
        shb(false),
        idb(101, { le: false, tsresol: 3 }),
        pb(0, 1234n, bytesOf(33, 4), false),
        epb(0, 99n, bytesOf(70, 5), { le: false }),
      ),
    );
    const recs = await records(path);
    expect(recs).toHaveLength(5);
    const ra = await openRandomAccess(path);
    // Last first: the lazy walk must get there; then the rest from its index.
    for (const i of [4, 0, 2, 3, 1]) expect(ra.read(recs[i]!.fileOffset, recs[i]!.frame)).toEqual(recs[i]);
    expect(ra.read(0, 1)).toBeNull(); // a section header, not a packet
    expect(ra.read(recs[0]!.fileOffset + 4, 1)).toBeNull();
    ra.close();
  });

  it('refuses standard input and missing files', async () => {
    await expect(openRandomAccess('-')).rejects.toBeInstanceOf(CaptureOpenError);
    await expect(openRandomAccess('/nonexistent.pcap')).rejects.toThrow('/nonexistent.pcap: no such file or directory');
    await expect(openRandomAccess(tempFile(new Uint8Array(3)))).rejects.toThrow('not a readable pcap or pcapng file');
  });
});
