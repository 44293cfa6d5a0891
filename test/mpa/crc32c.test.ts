import { describe, expect, it } from 'vitest';
import { crc32c, crc32cUpdate, crc32cFinal, CRC32C_INIT, readWireCrc } from '../../dissectors/mpa/crc32c.js';

const hex = (s: string) =>
  Uint8Array.from(
    s
      .replace(/\s+/g, '')
      .match(/../g)!
      .map((b) => parseInt(b, 16)),
  );

describe('crc32c', () => {
  it('matches the check value and the RFC 3720 vectors', () => {
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
  });

  it('reproduces draft-ietf-rddp-mpa-00 Figure 5 (leading marker) in wire byte order', () => {
    const fpdu = hex('00000000 002a4003 00000000 00000000 00000001 00000000' + '00'.repeat(24));
    expect(fpdu.length).toBe(48);
    const wire = hex('4c86b384');
    expect(crc32c(fpdu)).toBe(readWireCrc(wire[0]!, wire[1]!, wire[2]!, wire[3]!));
    expect(crc32c(fpdu)).toBe(0x84b3864c);
  });

  it('reproduces Figure 6 (marker inside the ULPDU, FPDUPTR 0x14)', () => {
    const fpdu = hex('002a4003 00000000 00000000 00000002 00000000 00000014' + '00'.repeat(24));
    expect(crc32c(fpdu)).toBe(0x03d19ca1);
  });

  it('reproduces the worked FPDUs of SPEC-NOTES', () => {
    expect(crc32c(hex('00164143 00000000 00000000 00000001 00000000 70696e67'))).toBe(0xa77f48a5);
    expect(crc32c(hex('00174143 00000000 00000000 00000001 00000000 68656c6c 6f000000'))).toBe(0x0cb190b9);
    expect(crc32c(hex('000ec140 00000001 00000000 00000000'))).toBe(0x5f4cd3eb);
  });

  it('is the same computed incrementally over any split', () => {
    const data = Uint8Array.from({ length: 1000 }, (_, i) => (i * 7 + 3) & 0xff);
    const whole = crc32c(data);
    for (const cut of [0, 1, 7, 8, 9, 500, 999, 1000]) {
      let r = crc32cUpdate(CRC32C_INIT, data, 0, cut);
      r = crc32cUpdate(r, data, cut, data.length);
      expect(crc32cFinal(r)).toBe(whole);
    }
  });
});

describe('crc32c implementations agree', () => {
  it('native (when installed) and table code give the same register on random runs', async () => {
    const {
      crc32cJs,
      crc32cUpdate: upd,
      CRC32C_INIT: init,
      crc32cImplementation,
    } = await import('../../dissectors/mpa/crc32c.js');
    crc32cImplementation(); // loads the addon when it installed (otherwise it waits for 4 MB of JS hashing)
    let x = 12345;
    const data = Uint8Array.from({ length: 70000 }, () => {
      x = (x * 1103515245 + 12345) >>> 0;
      return x >>> 24;
    });
    for (const [s, e] of [
      [0, 70000],
      [3, 300],
      [1, 4097],
      [17, 65553],
      [100, 356],
    ] as const) {
      expect(upd(init, data, s, e) >>> 0).toBe(crc32cJs(init, data, s, e) >>> 0);
      expect(upd(0x12345678, data, s, e) >>> 0).toBe(crc32cJs(0x12345678, data, s, e) >>> 0);
    }
  });
});
