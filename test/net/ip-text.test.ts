import { describe, expect, it } from 'vitest';
import { AddressCache, ipv4Text, ipv6Text } from '../../src/net/ip-text.js';
import { parseIPv6 } from '../helpers/frames.js';

function v6(text: string): string {
  return ipv6Text(parseIPv6(text), 0);
}

describe('IPv6 text (RFC 5952)', () => {
  it.each([
    ['2001:db8::1', '2001:db8::1'],
    ['::1', '::1'],
    ['::', '::'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['fe80::', 'fe80::'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
    ['0:0:1:0:0:0:0:0', '0:0:1::'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['1::', '1::'],
    ['0:1:0:1:0:1:0:1', '0:1:0:1:0:1:0:1'],
    ['fd00:0:0:0:0:0:0:9', 'fd00::9'],
    ['abcd:ef01:2345:6789:abcd:ef01:2345:6789', 'abcd:ef01:2345:6789:abcd:ef01:2345:6789'],
    ['::ffff:c000:0201', '::ffff:192.0.2.1'], // IPv4-mapped (section 5)
    ['::ffff', '::ffff'],
  ])('%s -> %s', (input, want) => {
    expect(v6(input)).toBe(want);
  });

  it('formats at an offset', () => {
    const b = new Uint8Array(20);
    b.set(parseIPv6('2001:db8::7'), 4);
    expect(ipv6Text(b, 4)).toBe('2001:db8::7');
    expect(ipv4Text(Uint8Array.of(9, 10, 0, 0, 1, 255), 2)).toBe('0.0.1.255');
  });
});

describe('AddressCache', () => {
  it('returns the same text for the same bytes, formatting each address once', () => {
    const c = new AddressCache();
    const a = parseIPv6('fd00::1');
    const b = parseIPv6('fd00::2');
    const s1 = c.ipv6(a, 0);
    expect(c.ipv6(b, 0)).toBe('fd00::2');
    expect(c.ipv6(a.slice(), 0)).toBe(s1);
    expect(c.ipv4(Uint8Array.of(10, 0, 0, 1), 0)).toBe('10.0.0.1');
    expect(c.ipv4(Uint8Array.of(255, 255, 255, 255), 0)).toBe('255.255.255.255');
  });

  it('stays right when more addresses pass than it holds', () => {
    const c = new AddressCache();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5000; i++) {
        const b = parseIPv6(`2001:db8::${i.toString(16)}`);
        expect(c.ipv6(b, 0)).toBe(i === 0 ? '2001:db8::' : `2001:db8::${i.toString(16)}`);
        const v4 = Uint8Array.of(10, (i >> 8) & 255, i & 255, round);
        expect(c.ipv4(v4, 0)).toBe(`10.${(i >> 8) & 255}.${i & 255}.${round}`);
      }
    }
  });
});
