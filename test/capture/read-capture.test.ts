import { mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { formatReadError, type CaptureSummary, type PacketRecord } from '../../src/capture/packet.js';
import { CaptureOpenError, readCapture, readCaptureStream, readErrorRule } from '../../src/capture/read-capture.js';
import {
  bytesOf,
  cat,
  epb,
  idb,
  pb,
  pcapFile,
  pcapFileHeader,
  pcapRec,
  shb,
  spb,
  removeTempFiles,
  tempFile,
  unknownBlock,
  block,
} from '../helpers/pcapng.js';

afterAll(removeTempFiles);

interface Got {
  frame: number;
  tsSec: number;
  tsNsec: number;
  linkType: number;
  data: number[];
  origLen: number;
  fileOffset: number;
  interfaceId: number;
}

function copy(p: PacketRecord): Got {
  return { ...p, data: Array.from(p.data) };
}

async function read(bytes: Uint8Array, chunkSize?: number): Promise<{ s: CaptureSummary; pk: Got[] }> {
  const path = tempFile(bytes);
  const pk: Got[] = [];
  const s = await readCapture(path, (p) => pk.push(copy(p)), chunkSize ? { chunkSize } : {});
  return { s, pk };
}

/** Reads with the default chunk and with tiny chunks (every record straddles): both must agree. */
async function readAll(bytes: Uint8Array): Promise<{ s: CaptureSummary; pk: Got[] }> {
  const whole = await read(bytes);
  for (const chunk of [16, 17, 23, 64, 1000]) {
    const small = await read(bytes, chunk);
    expect(small.pk).toEqual(whole.pk);
    expect({ ...small.s, path: '' }).toEqual({ ...whole.s, path: '' });
  }
  return whole;
}

const A = bytesOf(60, 1);
const B = bytesOf(1514, 2);
const C = bytesOf(1, 3);

describe('classic pcap', () => {
  for (const le of [true, false]) {
    for (const nano of [false, true]) {
      it(`reads ${nano ? 'nanosecond' : 'microsecond'} ${le ? 'little' : 'big'}-endian files`, async () => {
        const frac = nano ? 123456789 : 123456;
        const file = pcapFile({ le, nano, linkType: 113, snaplen: 65535 }, [
          { sec: 1700000000, frac, data: A },
          { sec: 1700000001, frac: 0, data: B, origLen: 9000 },
          { sec: 4294967295, frac: nano ? 999999999 : 999999, data: C },
        ]);
        const { s, pk } = await readAll(file);
        expect(s).toMatchObject({ format: 'pcap', packets: 3, bytes: 60 + 1514 + 1, linkTypes: [113], error: null });
        expect(pk.map((p) => p.frame)).toEqual([1, 2, 3]);
        expect(pk[0]).toMatchObject({
          tsSec: 1700000000,
          tsNsec: nano ? 123456789 : 123456000,
          linkType: 113,
          origLen: 60,
          fileOffset: 24,
          interfaceId: 0,
        });
        expect(pk[0]!.data).toEqual(Array.from(A));
        expect(pk[1]).toMatchObject({ tsSec: 1700000001, tsNsec: 0, origLen: 9000, fileOffset: 24 + 16 + 60 });
        expect(pk[1]!.data).toEqual(Array.from(B));
        expect(pk[2]).toMatchObject({
          tsSec: 4294967295,
          tsNsec: nano ? 999999999 : 999999000,
          fileOffset: 24 + 16 + 60 + 16 + 1514,
        });
      });
    }
  }

  it('carries a fraction of a second or more into the seconds', async () => {
    const { pk } = await read(pcapFile({}, [{ sec: 10, frac: 2500000, data: A }]));
    expect(pk[0]).toMatchObject({ tsSec: 12, tsNsec: 500000000 });
  });

  it('masks the FCS bits out of the link-type word', async () => {
    const h = pcapFileHeader({ linkType: 1 });
    new DataView(h.buffer).setUint32(20, 0x10000001 | (4 << 29), true);
    const { s, pk } = await read(cat(h, pcapRec({ sec: 1, frac: 0, data: A })));
    expect(s.linkTypes).toEqual([1]);
    expect(pk[0]!.linkType).toBe(1);
  });

  it('hands out one reused record whose data is a view (no per-packet copy)', async () => {
    const path = tempFile(
      pcapFile({}, [
        { sec: 1, frac: 0, data: A },
        { sec: 2, frac: 0, data: B },
      ]),
    );
    const recs = new Set<PacketRecord>();
    const buffers = new Set<ArrayBufferLike>();
    await readCapture(path, (p) => {
      recs.add(p);
      buffers.add(p.data.buffer);
    });
    expect(recs.size).toBe(1);
    expect(buffers.size).toBe(1);
  });

  it('accepts records up to a large snaplen, growing the buffer only as needed', async () => {
    const big = bytesOf(200000, 9);
    const { s, pk } = await read(
      pcapFile({ snaplen: 262144 }, [
        { sec: 1, frac: 0, data: A },
        { sec: 1, frac: 0, data: big },
        { sec: 1, frac: 0, data: C },
      ]),
      4096,
    );
    expect(s.error).toBeNull();
    expect(pk.map((p) => p.data.length)).toEqual([60, 200000, 1]);
    expect(pk[1]!.data).toEqual(Array.from(big));
  });
});

describe('pcapng', () => {
  for (const le of [true, false]) {
    it(`reads a ${le ? 'little' : 'big'}-endian section with EPB, SPB, PB and unknown blocks`, async () => {
      const file = cat(
        shb(le),
        idb(1, { le, snaplen: 65535 }),
        unknownBlock(0x00000bad, 10, le),
        epb(0, 1700000000123456n, A, { le, origLen: 1000, comment: 'hello' }),
        unknownBlock(5, 24, le), // interface statistics block
        spb(1514, B, le),
        pb(0, 1700000001000000n, C, le),
        unknownBlock(0x40000bad, 0, le),
      );
      const { s, pk } = await readAll(file);
      expect(s).toMatchObject({ format: 'pcapng', packets: 3, bytes: 60 + 1514 + 1, linkTypes: [1], error: null });
      const shbLen = 28;
      const idbLen = idb(1, { le, snaplen: 65535 }).length;
      expect(pk[0]).toMatchObject({
        frame: 1,
        tsSec: 1700000000,
        tsNsec: 123456000,
        linkType: 1,
        origLen: 1000,
        interfaceId: 0,
        fileOffset: shbLen + idbLen + 24,
      });
      expect(pk[0]!.data).toEqual(Array.from(A));
      expect(pk[1]).toMatchObject({ frame: 2, tsSec: 0, tsNsec: 0, origLen: 1514 });
      expect(pk[1]!.data).toEqual(Array.from(B));
      expect(pk[2]).toMatchObject({ frame: 3, tsSec: 1700000001, tsNsec: 0 });
      expect(pk[2]!.data).toEqual(Array.from(C));
    });
  }

  it('reads several sections in different byte orders; interfaces reset per section', async () => {
    const file = cat(
      shb(true),
      idb(1, { le: true }),
      idb(101, { le: true, tsresol: 9 }),
      epb(1, 1700000000000000001n, A, { le: true }),
      epb(0, 5n, B, { le: true }),
      shb(false),
      idb(276, { le: false, tsresol: 3 }),
      epb(0, 1700000000123n, C, { le: false }),
    );
    const { s, pk } = await readAll(file);
    expect(s.error).toBeNull();
    expect(s.linkTypes).toEqual([101, 1, 276]);
    expect(pk.map((p) => [p.linkType, p.interfaceId, p.tsSec, p.tsNsec])).toEqual([
      [101, 1, 1700000000, 1],
      [1, 0, 0, 5000],
      [276, 0, 1700000000, 123000000],
    ]);
    // Interface 1 does not exist in the second section.
    const bad = cat(file, epb(1, 0n, A, { le: false }));
    const r = await read(bad);
    expect(r.pk).toHaveLength(3);
    expect(r.s.error).toEqual({
      file: expect.any(String),
      offset: file.length,
      frame: 4,
      message: 'enhanced packet block refers to interface 1, but its section defines 1 interface',
    });
  });

  it('applies if_tsresol (decimal and binary) and if_tsoffset exactly', async () => {
    const file = cat(
      shb(),
      idb(1, { tsresol: 0 }), // seconds
      idb(1, { tsresol: 9 }), // nanoseconds, counts beyond 2^53
      idb(1, { tsresol: 0x80 | 10 }), // 1/1024 s
      idb(1, { tsresol: 0x80 | 20 }), // 1/2^20 s
      idb(1, { tsresol: 0x80 | 32 }),
      idb(1, { tsresol: 12 }), // picoseconds: BigInt path
      idb(1, { tsresol: 0x80 | 40 }),
      idb(1, { tsresol: 6, tsoffset: 1000n }),
      idb(1, { tsresol: 9, tsoffset: -10n }),
      epb(0, 1700000000n, A),
      epb(1, 1732000000999999999n, A),
      epb(2, 1024n * 5n + 512n, A),
      epb(3, (1n << 20n) * 7n + 1n, A), // 1/2^20 s = 953.67... ns, truncated
      epb(4, (3n << 32n) | 0x80000000n, A),
      epb(5, 12345678901234567n, A),
      epb(6, (9n << 40n) | (1n << 39n), A),
      epb(7, 5000001n, A),
      epb(8, 20000000005n, A),
    );
    const { pk } = await readAll(file);
    expect(pk.map((p) => [p.tsSec, p.tsNsec])).toEqual([
      [1700000000, 0],
      [1732000000, 999999999],
      [5, 500000000],
      [7, 953],
      [3, 500000000],
      [12345, 678901234],
      [9, 500000000],
      [1005, 1000],
      [10, 5],
    ]);
  });

  it('matches exact BigInt arithmetic for random timestamps and resolutions', async () => {
    const resols = [6, 9, 3, 0, 1, 7, 0x80 | 10, 0x80 | 20, 0x80 | 30, 0x80 | 32, 0x80 | 1, 0x80 | 0];
    let seed = 12345;
    const rnd32 = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    const blocks: Uint8Array[] = [shb(), ...resols.map((r) => idb(1, { tsresol: r }))];
    const want: Array<[number, number]> = [];
    for (let i = 0; i < 600; i++) {
      const ifid = i % resols.length;
      const r = resols[ifid]!;
      const hi = i % 3 === 0 ? rnd32() : rnd32() >>> 8;
      const ts = (BigInt(hi) << 32n) | BigInt(rnd32());
      const unit = (r & 0x80) !== 0 ? 1n << BigInt(r & 0x7f) : 10n ** BigInt(r);
      want.push([Number(ts / unit), Number(((ts % unit) * 1000000000n) / unit)]);
      blocks.push(epb(ifid, ts, C));
    }
    const { pk } = await read(cat(...blocks));
    expect(pk.map((p) => [p.tsSec, p.tsNsec])).toEqual(want);
  });

  it('gives a Simple Packet Block min(original length, snaplen, block body) bytes', async () => {
    const file = cat(
      shb(),
      idb(1, { snaplen: 100 }),
      spb(60, A),
      spb(1514, bytesOf(100, 4)),
      spb(5000, bytesOf(40, 5)),
    );
    const { s, pk } = await readAll(file);
    expect(s.error).toBeNull();
    expect(pk.map((p) => [p.data.length, p.origLen])).toEqual([
      [60, 60],
      [100, 1514],
      [40, 5000],
    ]);
  });

  it('reads several interfaces with different link types in one section', async () => {
    const file = cat(shb(), idb(1), idb(113), idb(101), epb(2, 1n, A), epb(0, 2n, B), epb(1, 3n, C), epb(2, 4n, C));
    const { s, pk } = await readAll(file);
    expect(s.linkTypes).toEqual([101, 1, 113]);
    expect(pk.map((p) => [p.interfaceId, p.linkType])).toEqual([
      [2, 101],
      [0, 1],
      [1, 113],
      [2, 101],
    ]);
  });

  it('streams past an unknown block too large to buffer, still checking its trailing length', async () => {
    const huge = unknownBlock(0x00000bad, 900 * 1024);
    const file = cat(shb(), idb(1), epb(0, 1n, A), huge, epb(0, 2n, B));
    for (const chunk of [undefined, 64 * 1024]) {
      const { s, pk } = await read(file, chunk);
      expect(s.error).toBeNull();
      expect(pk.map((p) => p.frame)).toEqual([1, 2]);
      expect(pk[1]!.fileOffset).toBe(file.length - epb(0, 2n, B).length);
    }
    // Same block with a wrong trailer.
    const bad = huge.slice();
    new DataView(bad.buffer).setUint32(bad.length - 4, 12, true);
    const prefix = cat(shb(), idb(1), epb(0, 1n, A));
    const r = await read(cat(prefix, bad, epb(0, 2n, B)), 64 * 1024);
    expect(r.pk).toHaveLength(1);
    expect(r.s.error).toMatchObject({
      offset: prefix.length,
      frame: 2,
      message: `block length ${huge.length} does not match its trailing length 12`,
    });
    // And cut short.
    const t = await read(cat(prefix, huge.subarray(0, 500000)), 64 * 1024);
    expect(t.s.error).toMatchObject({
      offset: prefix.length,
      frame: 2,
      message: `truncated block: length says ${huge.length} bytes, 500000 bytes left in file`,
    });
    expect(readErrorRule(t.s.error!)).toBe('capture.truncated');
  });
});

describe('bad input ends reading with one clear error after every earlier packet', () => {
  async function expectError(
    bytes: Uint8Array,
    e: { offset: number; frame: number; message: string },
    delivered: number,
  ): Promise<CaptureSummary> {
    for (const chunk of [undefined, 16, 29]) {
      const path = tempFile(bytes);
      const pk: number[] = [];
      const s = await readCapture(path, (p) => pk.push(p.frame), chunk ? { chunkSize: chunk } : {});
      expect(s.error).toEqual({ file: path, ...e });
      expect(pk).toEqual(Array.from({ length: delivered }, (_, i) => i + 1));
      expect(s.packets).toBe(delivered);
      expect(formatReadError(s.error!)).toBe(`${path}: offset ${e.offset}, frame ${e.frame}: ${e.message}`);
    }
    return (await read(bytes)).s;
  }

  const two = pcapFile({ snaplen: 2000 }, [
    { sec: 1, frac: 0, data: A },
    { sec: 2, frac: 0, data: B },
  ]);
  const end = two.length;

  it('empty file', async () => {
    const s = await expectError(
      new Uint8Array(0),
      { offset: 0, frame: 1, message: 'empty file: no capture header' },
      0,
    );
    expect(s.format).toBeNull();
    expect(readErrorRule(s.error!)).toBe('capture.read-error');
  });

  it('bad magic, gzip, too short', async () => {
    await expectError(
      new TextEncoder().encode('hello world, not a capture'),
      { offset: 0, frame: 1, message: 'not a pcap or pcapng file: unknown magic 0x68656c6c' },
      0,
    );
    await expectError(
      Uint8Array.of(0x1f, 0x8b, 8, 0, 0, 0),
      { offset: 0, frame: 1, message: 'truncated gzip stream: the compressed data ends early' },
      0,
    );
    await expectError(
      Uint8Array.of(0xd4, 0xc3),
      { offset: 0, frame: 1, message: 'file too short to be a capture: 2 bytes' },
      0,
    );
    await expectError(
      pcapFileHeader().subarray(0, 10),
      { offset: 0, frame: 1, message: 'file too short for a pcap file header: 24 bytes needed, 10 bytes in file' },
      0,
    );
    await expectError(
      pcapFileHeader({ major: 3 }),
      { offset: 0, frame: 1, message: 'unsupported pcap version 3.4 (only 2.x is defined)' },
      0,
    );
  });

  it('truncated record header', async () => {
    await expectError(
      cat(two, new Uint8Array(7)),
      { offset: end, frame: 3, message: 'truncated record header: 16 bytes needed, 7 bytes left in file' },
      2,
    );
  });

  it('truncated record data', async () => {
    const rec = pcapRec({ sec: 3, frac: 0, data: bytesOf(1514, 7) });
    const s = await expectError(
      cat(two, rec.subarray(0, 16 + 600)),
      { offset: end, frame: 3, message: 'truncated record: header says 1514 bytes captured, 600 bytes left in file' },
      2,
    );
    expect(readErrorRule(s.error!)).toBe('capture.truncated');
  });

  it('captured length above the snaplen, or above the limit when no snaplen is stated', async () => {
    await expectError(
      cat(two, pcapRec({ sec: 3, frac: 0, data: bytesOf(2001, 1) })),
      {
        offset: end,
        frame: 3,
        message: "record header says 2001 bytes captured, more than the file's snaplen of 2000",
      },
      2,
    );
    const noSnap = pcapFile({ snaplen: 0 }, [{ sec: 1, frac: 0, data: A }]);
    await expectError(
      cat(noSnap, pcapRec({ sec: 3, frac: 0, data: C, caplen: 0x7fffffff })),
      {
        offset: noSnap.length,
        frame: 2,
        message: 'record header says 2147483647 bytes captured, more than the 262144-byte limit for one record',
      },
      1,
    );
    // A hostile snaplen does not lift the ceiling beyond 16 MiB.
    const hostile = pcapFile({ snaplen: 0xffffffff }, []);
    await expectError(
      cat(hostile, pcapRec({ sec: 3, frac: 0, data: C, caplen: 0x40000000 })),
      {
        offset: 24,
        frame: 1,
        message: 'record header says 1073741824 bytes captured, more than the 16777216-byte limit for one record',
      },
      0,
    );
  });

  const ng = cat(shb(), idb(1, { snaplen: 2000 }), epb(0, 1n, A), epb(0, 2n, B));
  const ngEnd = ng.length;

  it('pcapng: block length not a multiple of 4, below the minimum, trailer mismatch', async () => {
    await expectError(
      cat(ng, block(6, new Uint8Array(40), true, 50)),
      { offset: ngEnd, frame: 3, message: 'enhanced packet block length 50 is not a multiple of 4' },
      2,
    );
    await expectError(
      cat(ng, block(6, new Uint8Array(16))),
      { offset: ngEnd, frame: 3, message: 'enhanced packet block length 28 is below the 32-byte minimum' },
      2,
    );
    await expectError(
      cat(ng, block(0xbad, new Uint8Array(0), true, 8)),
      { offset: ngEnd, frame: 3, message: 'block of type 0x00000bad length 8 is below the 12-byte minimum' },
      2,
    );
    await expectError(
      cat(ng, block(6, new Uint8Array(40), true, undefined, 48)),
      { offset: ngEnd, frame: 3, message: 'enhanced packet block length 52 does not match its trailing length 48' },
      2,
    );
  });

  it('pcapng: truncated block and block header', async () => {
    const e = epb(0, 3n, B);
    await expectError(
      cat(ng, e.subarray(0, 700)),
      {
        offset: ngEnd,
        frame: 3,
        message: `truncated block: enhanced packet block length says ${e.length} bytes, 700 bytes left in file`,
      },
      2,
    );
    await expectError(
      cat(ng, e.subarray(0, 5)),
      { offset: ngEnd, frame: 3, message: 'truncated block header: 12 bytes needed, 5 bytes left in file' },
      2,
    );
  });

  it('pcapng: captured length above the block body or the snaplen', async () => {
    await expectError(
      cat(ng, epb(0, 3n, A, { caplen: 64 })),
      {
        offset: ngEnd,
        frame: 3,
        message: 'enhanced packet block says 64 bytes captured, but the block holds only 60 bytes of packet data',
      },
      2,
    );
    await expectError(
      cat(ng, epb(0, 3n, bytesOf(2004, 1))),
      {
        offset: ngEnd,
        frame: 3,
        message: "enhanced packet block says 2004 bytes captured, more than interface 0's snaplen of 2000",
      },
      2,
    );
  });

  it('pcapng: a packet block larger than one legal record', async () => {
    const noSnap = cat(shb(), idb(1), epb(0, 1n, A));
    const huge = epb(0, 2n, bytesOf(330000, 1));
    await expectError(
      cat(noSnap, huge),
      {
        offset: noSnap.length,
        frame: 2,
        message: `enhanced packet block of ${huge.length} bytes exceeds the 327680-byte limit for one block`,
      },
      1,
    );
  });

  it('pcapng: bad byte-order magic, unsupported version, packet before any interface, option overrun', async () => {
    const badBom = shb().slice();
    badBom[8] = 0x99;
    await expectError(
      cat(ng, badBom),
      { offset: ngEnd, frame: 3, message: 'section header block has a bad byte-order magic 0x993c2b1a' },
      2,
    );
    await expectError(
      cat(ng, shb(true, 2)),
      { offset: ngEnd, frame: 3, message: 'unsupported pcapng version 2.0 (only 1.x is defined)' },
      2,
    );
    await expectError(
      cat(ng, shb(), spb(60, A)),
      {
        offset: ngEnd + 28,
        frame: 3,
        message: 'simple packet block before any interface description block in its section',
      },
      2,
    );
    const badIdb = idb(1).slice();
    new DataView(badIdb.buffer).setUint16(16 + 2, 200, true); // if_name option length
    await expectError(
      cat(ng, badIdb),
      {
        offset: ngEnd,
        frame: 3,
        message: 'interface description block: option 2 of 200 bytes runs past the end of the block',
      },
      2,
    );
  });
});

describe('opening', () => {
  it('missing file and directory are CaptureOpenErrors with "PATH: reason"', async () => {
    await expect(readCapture('/nonexistent/x.pcap', () => {})).rejects.toThrow(
      new CaptureOpenError('/nonexistent/x.pcap: no such file or directory'),
    );
    const dir = mkdtempSync(join(tmpdir(), 'mpa-dir-'));
    await expect(readCapture(dir, () => {})).rejects.toBeInstanceOf(CaptureOpenError);
    await expect(readCapture(dir, () => {})).rejects.toThrow(`${dir}: is a directory`);
    rmdirSync(dir);
  });

  it.skipIf(process.getuid?.() === 0)('unreadable file (skipped as root, which reads anything)', async () => {
    const { chmodSync } = await import('node:fs');
    const p = tempFile(pcapFile({}, []));
    chmodSync(p, 0);
    await expect(readCapture(p, () => {})).rejects.toThrow(`${p}: permission denied`);
  });
});

describe('streams (standard input)', () => {
  it('reads a capture arriving in odd-sized chunks', async () => {
    const file = cat(
      shb(),
      idb(1),
      ...Array.from({ length: 50 }, (_, i) => epb(0, BigInt(i), bytesOf(40 + i * 37, i))),
    );
    const chunks: Uint8Array[] = [];
    for (let o = 0, k = 1; o < file.length; o += k, k = (k * 7 + 3) % 997) chunks.push(file.slice(o, o + k));
    const pk: Got[] = [];
    const s = await readCaptureStream(Readable.from(chunks), '-', (p) => pk.push(copy(p)));
    expect(s).toMatchObject({ path: '-', format: 'pcapng', packets: 50, error: null });
    const direct = await read(file);
    expect(pk).toEqual(direct.pk);
  });

  it('reads a stream handed over in one chunk far larger than its read buffer, records larger than it included', async () => {
    // A stream is read 256 KiB at a time (read-capture.ts, STREAM_CHUNK): records of 300 KB and
    // one 3 MB chunk exercise the tail carried across reads and the buffer grown for a long record.
    const file = cat(
      shb(),
      idb(1),
      ...Array.from({ length: 12 }, (_, i) =>
        epb(0, BigInt(i), bytesOf(i % 3 === 1 ? 300_000 + i : 70_000 + i * 11, i)),
      ),
    );
    expect(file.length).toBeGreaterThan(1_500_000);
    // The records' octets kept as octets and compared as such: as arrays of numbers (copy()),
    // deep equality over 1.9 million of them was nearly all of this test's time.
    const keep = (into: PacketRecord[]) => (p: PacketRecord) => into.push({ ...p, data: p.data.slice() });
    const pk: PacketRecord[] = [];
    const s = await readCaptureStream(Readable.from([file]), '-', keep(pk));
    expect(s).toMatchObject({ format: 'pcapng', packets: 12, error: null });
    const direct: PacketRecord[] = [];
    await readCapture(tempFile(file), keep(direct));
    const fields = (ps: PacketRecord[]) => ps.map(({ data: _, ...rest }) => rest);
    expect(fields(pk)).toEqual(fields(direct));
    for (const [i, p] of pk.entries())
      if (Buffer.compare(p.data, direct[i]!.data) !== 0) expect(copy(p)).toEqual(copy(direct[i]!));
  });

  it('names standard input in errors', async () => {
    const file = pcapFile({}, [{ sec: 1, frac: 0, data: A }]);
    const s = await readCaptureStream(Readable.from([cat(file, new Uint8Array(3))]), '-', () => {});
    expect(s.error).toEqual({
      file: '<stdin>',
      offset: file.length,
      frame: 2,
      message: 'truncated record header: 16 bytes needed, 3 bytes left in file',
    });
  });
});
