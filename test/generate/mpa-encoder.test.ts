/**
 * The FPDU encoder writes octets into a growing buffer and copies each ULPDU in runs between
 * marker positions (issue 26: a number per octet took 8 times the capture's size, and
 * `generate --count 100 --size 1048576` peaked at 1.2 GB). Checked here against RFC 5044 read
 * directly, octet by octet: a marker every 512 octets from SeqStart (§4.3) whose FPDUPTR counts
 * back to the ULPDU_Length field, PAD to a multiple of 4, CRC32c over the FPDU with its markers
 * (§4.4, §5.1).
 */
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../dissectors/mpa/crc32c.js';
import { encodeFpdus, rng } from '../../src/generate/mpa-encoder.js';

/** The FPDUs of `ulpdus` from stream offset `start`, one octet at a time as §4.3 and §4.4 describe them. */
function byTheRfc(ulpdus: Uint8Array[], markers: boolean, crc: boolean, start: number): Uint8Array {
  const out: number[] = [];
  let rel = start;
  for (const u of ulpdus) {
    const fpdu: number[] = [];
    let lenRel = -1;
    const emit = (b: number) => {
      if (markers && rel % 512 === 0) {
        const ptr = lenRel < 0 ? 0 : rel - lenRel;
        fpdu.push(0, 0, (ptr >> 8) & 0xff, ptr & 0xfc);
        rel += 4;
      }
      if (lenRel < 0) lenRel = rel;
      fpdu.push(b);
      rel++;
    };
    emit(u.length >> 8);
    emit(u.length & 0xff);
    for (const b of u) emit(b);
    for (let i = 0; i < (4 - ((2 + u.length) % 4)) % 4; i++) emit(0);
    if (markers && rel % 512 === 0) {
      const ptr = rel - lenRel;
      fpdu.push(0, 0, (ptr >> 8) & 0xff, ptr & 0xfc);
      rel += 4;
    }
    const c = crc ? crc32c(Uint8Array.from(fpdu)) : 0;
    fpdu.push(c & 0xff, (c >>> 8) & 0xff, (c >>> 16) & 0xff, c >>> 24);
    rel += 4;
    out.push(...fpdu);
  }
  return Uint8Array.from(out);
}

describe('encodeFpdus', () => {
  it('octet for octet what RFC 5044 places, markers on and off, from any stream offset', () => {
    const r = rng(11);
    for (let round = 0; round < 40; round++) {
      const ulpdus = Array.from({ length: 1 + Math.floor(r() * 6) }, () => {
        const u = new Uint8Array(Math.floor(r() * 3000));
        for (let i = 0; i < u.length; i++) u[i] = Math.floor(r() * 256);
        return u;
      });
      const markers = r() < 0.7;
      const crc = r() < 0.7;
      const start = Math.floor(r() * 2048);
      const got = encodeFpdus(
        ulpdus.map((ulpdu) => ({ ulpdu })),
        { markers, crc, startRel: start },
      );
      expect(Buffer.from(got.bytes).equals(Buffer.from(byTheRfc(ulpdus, markers, crc, start)))).toBe(true);
      expect(got.fpdus.map((f) => f.ulpduLength)).toEqual(ulpdus.map((u) => u.length));
    }
  });

  it('8 MB of ULPDUs: memory near the output size', () => {
    const u = new Uint8Array(65000).fill(0x5a);
    const before = process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
    const got = encodeFpdus(
      Array.from({ length: 128 }, () => ({ ulpdu: u })),
      { markers: true, crc: true },
    );
    const after = process.memoryUsage().arrayBuffers + process.memoryUsage().heapUsed;
    expect(got.bytes.length).toBeGreaterThan(128 * 65000);
    // A number per octet held 8 octets each (and more while the array grew).
    expect(after - before).toBeLessThan(4 * got.bytes.length);
  });
});
