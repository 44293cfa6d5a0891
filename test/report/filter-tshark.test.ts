/**
 * tshark habits in -Y: bare protocol names, CIDR networks, type errors with the caret, and
 * Wireshark's 0-based tcp.stream. Messages follow tshark 4.x where it has one.
 */
import { describe, expect, it } from 'vitest';
import type { FieldValue } from '../../src/vocabulary/fields.js';
import { compileEventFilter, filterType } from '../../src/report/fields.js';
import { FilterError, formatFilterError } from '../../src/report/filter/filter.js';
import { cli } from '../cli/helpers.js';

type Rec = Readonly<Record<string, readonly FieldValue[]>>;
const run = (filter: string, rec: Rec): boolean => compileEventFilter(filter).matches((f) => rec[f]);

function fail(filter: string): FilterError {
  try {
    compileEventFilter(filter);
  } catch (e) {
    if (e instanceof FilterError) return e;
    throw e;
  }
  throw new Error(`expected ${filter} to fail`);
}

describe('type errors, as tshark reports them', () => {
  it.each([
    ['iwarp_ddp.msn == "abc"', 'Unsigned integer (4 bytes) cannot be converted from a string ("abc").', 18, 5],
    ['iwarp_ddp.msn < "abc"', 'Unsigned integer (4 bytes) cannot be converted from a string ("abc").', 17, 5],
    ['iwarp_ddp.msn == 4294967296', '"4294967296" too big for this field, maximum 4294967295.', 18, 10],
    ['iwarp_ddp.msn == 0x1ffffffff', '"0x1ffffffff" too big for this field, maximum 4294967295.', 18, 11],
    ['iwarp_mpa.ulpdulength == 70000', '"70000" too big for this field, maximum 65535.', 26, 5],
    ['iwarp_rdma.opcode == 300', '"300" too big for this field, maximum 255.', 22, 3],
    [
      'iwarp_rdma.sinkto == 18446744073709551616',
      '"18446744073709551616" too big for this field, maximum 18446744073709551615.',
      22,
      20,
    ],
    ['tcp.srcport == 65536', '"65536" too big for this field, maximum 65535.', 16, 5],
    ['tcp.stream == -1', '"-1" too small for this field, minimum 0.', 15, 2],
    ['iwarp_ddp.msn == 1.5', '"1.5" is not a valid number.', 18, 3],
    ['iwarp_ddp.msn == 00:01', '"00:01" is not a valid number.', 18, 5],
    ['iwarp_ddp.msn == true', '"true" is not a valid number.', 18, 4],
    ['iwarp_ddp.msn in {1..4294967296}', '"4294967296" too big for this field, maximum 4294967295.', 22, 10],
    ['iwarp_ddp.msn in {1 "a"}', 'Unsigned integer (4 bytes) cannot be converted from a string ("a").', 21, 3],
    [
      'iwarp_ddp == 1',
      'iwarp_ddp (type=Protocol) cannot participate in == comparison; name iwarp_ddp alone to test that it is present.',
      1,
      9,
    ],
    [
      'iwarp_ddp.msn contains 5',
      'iwarp_ddp.msn (type=Unsigned integer (4 bytes)) cannot participate in contains comparison.',
      1,
      13,
    ],
    [
      'iwarp_ddp.msn matches "1"',
      'iwarp_ddp.msn (type=Unsigned integer (4 bytes)) cannot participate in matches comparison.',
      1,
      13,
    ],
    ['ip.src contains "10"', 'ip.src (type=IPv4 address) cannot participate in contains comparison.', 1, 6],
    ['iwarp_ddp.msn == ip.src', 'iwarp_ddp.msn and ip.src are not of compatible types.', 18, 6],
    ['iwarp_ddp.msn & "a"', '"a" is not a valid arithmetic operand.', 17, 3],
    [
      'finding.rule & 1',
      'finding.rule (type=Character string) cannot be masked with "&"; only integer fields can.',
      1,
      12,
    ],
    ['iwarp_mpa.crc_flag == "x"', 'Boolean cannot be converted from a string ("x").', 23, 3],
    ['ip.src == foo', '"foo" is not a valid IPv4 address.', 11, 3],
    ['ip.src == 1', '"1" is not a valid IPv4 address.', 11, 1],
    ['ip.src == 10.0.0.300', '"10.0.0.300" is not a valid IPv4 address.', 11, 10],
    ['ip.src == 10.0.0.0/33', 'Netmask bits in a CIDR IPv4 address should be <= 32, not 33', 11, 11],
    ['ip.addr == fd00::1', '"fd00::1" is not a valid IPv4 address.', 12, 7],
    ['ipv6.addr == 10.0.0.1', '"10.0.0.1" is not a valid IPv6 address.', 14, 8],
    ['ipv6.addr == fd00::/129', 'Netmask bits in a CIDR IPv6 address should be <= 128, not 129', 14, 10],
  ])('%s', (filter, message, column, length) => {
    const e = fail(filter);
    expect(e.message).toBe(message);
    expect(e.column).toBe(column);
    expect(e.length).toBe(length);
  });

  it('accepts what tshark accepts', () => {
    for (const f of [
      'iwarp_rdma.opcode == 255',
      'iwarp_ddp.msn == 4294967295',
      'iwarp_rdma.sinkto == 18446744073709551615',
      'iwarp_mpa.crc_flag == 1',
      'iwarp_mpa.crc_flag == true',
      'iwarp_ddp.msn == iwarp_ddp.mo',
      'iwarp_mpa.crc_flag == iwarp_ddp.msn',
      'finding.rule == 5',
      'ip.src == ip.dst',
      'ip.src > 10.0.0.1',
      'iwarp_mpa.privatedata contains "MPA"',
    ]) {
      expect(() => compileEventFilter(f), f).not.toThrow();
    }
  });

  it('knows integer widths from the field tables', () => {
    expect(filterType('iwarp_mpa.crc')).toEqual({ kind: 'uint', bits: 32 });
    expect(filterType('iwarp_mpa.rev')).toEqual({ kind: 'uint', bits: 8 });
    expect(filterType('iwarp_rdma.opcode')).toEqual({ kind: 'uint', bits: 8 });
    expect(filterType('iwarp_ddp.tagged_offset')).toEqual({ kind: 'uint', bits: 64 });
    expect(filterType('ipv6.src')).toEqual({ kind: 'ipv6' });
    expect(filterType('iwarp_mpa')).toEqual({ kind: 'label' });
  });

  it('shows the caret under the offending value', () => {
    const f = 'iwarp_ddp.msn == "abc"';
    expect(formatFilterError(f, fail(f)).split('\n')).toEqual([
      'Unsigned integer (4 bytes) cannot be converted from a string ("abc").',
      '    iwarp_ddp.msn == "abc"',
      '                     ^~~~~',
    ]);
  });
});

describe('addresses and CIDR', () => {
  const v4: Rec = { 'ip.src': ['10.0.0.1'], 'ip.dst': ['10.0.0.2'], 'ip.addr': ['10.0.0.1', '10.0.0.2'] };
  const v6: Rec = { 'ipv6.src': ['fd00::1'], 'ipv6.dst': ['fd00:0:0:1::9'], 'ipv6.addr': ['fd00::1', 'fd00:0:0:1::9'] };
  it('IPv4 networks', () => {
    expect(run('ip.addr == 10.0.0.0/24', v4)).toBe(true);
    expect(run('ip.src == 10.0.0.0/31', v4)).toBe(true);
    expect(run('ip.dst == 10.0.0.0/31', v4)).toBe(false);
    expect(run('ip.addr == 10.1.0.0/16', v4)).toBe(false);
    expect(run('ip.addr != 10.0.0.0/8', v4)).toBe(false);
    expect(run('ip.addr == 0.0.0.0/0', v4)).toBe(true);
    expect(run('ip.src == "10.0.0.1"', v4)).toBe(true); // quoted, as our README has shown it
  });
  it('in sets too', () => {
    expect(run('ip.addr in {192.168.0.0/16, 10.0.0.2}', v4)).toBe(true);
    expect(run('ip.src in {192.168.0.0/16 10.0.0.2}', v4)).toBe(false);
    expect(run('ip.src not in {10.0.0.0/24}', v4)).toBe(false);
  });
  it('orders addresses numerically, not as text', () => {
    expect(run('ip.src > 9.255.255.255', v4)).toBe(true);
    expect(run('ip.src < 10.0.0.10', v4)).toBe(true);
  });
  it('IPv6 addresses and prefixes', () => {
    expect(run('ipv6.src == fd00::1', v6)).toBe(true);
    expect(run('ipv6.src == fd00:0:0:0:0:0:0:1', v6)).toBe(true);
    expect(run('ipv6.addr == fd00:0:0:1::/64', v6)).toBe(true);
    expect(run('ipv6.src == fd00:0:0:1::/64', v6)).toBe(false);
    expect(run('ipv6.addr == fd00::/16', v6)).toBe(true);
    expect(run('ipv6.src == ::1', v6)).toBe(false);
    expect(run('ipv6.src == ::ffff:10.0.0.1', v6)).toBe(false);
  });
  it('an address field of the other family never matches', () => {
    expect(run('ip.addr == 10.0.0.0/8', v6)).toBe(false);
  });
});

describe('CLI: bare protocols, tcp.stream from 0, type errors', () => {
  const eventLines = (out: string): string[] => out.split('\n').filter((l) => /^\s*\d+(-\d+)?\s+\d+\.\d{6}\s/.test(l));
  it('bare protocol names filter as in tshark', () => {
    const all = eventLines(cli(['golden.pcap']).stdout).length;
    expect(all).toBeGreaterThan(5);
    for (const p of ['iwarp_mpa', 'tcp', 'ip', 'frame']) {
      const r = cli(['-Y', p, 'golden.pcap']);
      expect(r.code, p).toBe(1);
      expect(eventLines(r.stdout).length, p).toBeGreaterThan(0);
    }
    expect(
      eventLines(cli(['-Y', 'iwarp_ddp', 'golden.pcap']).stdout).every((l) => !/MPA (Request|Reply)/.test(l)),
    ).toBe(true);
    expect(eventLines(cli(['-Y', 'iwarp_rdma', 'golden.pcap']).stdout).length).toBeGreaterThan(0);
    expect(eventLines(cli(['-Y', 'ipv6', 'golden.pcap']).stdout)).toEqual([]);
  }, 60_000);
  it('tcp.stream == 0 is the first flow (flow 1 in the report)', () => {
    const r = cli(['-Y', 'tcp.stream == 0', 'golden.pcap']);
    expect(eventLines(r.stdout).length).toBeGreaterThan(0);
    const json = JSON.parse(cli(['--json', 'golden.pcap']).stdout) as { flows: Array<{ id: number }> };
    expect(json.flows[0]!.id).toBe(1); // the JSON report's id is a public contract and stays 1-based
  }, 30_000);
  it('CIDR from the command line', () => {
    const r = cli(['-Y', 'ip.addr == 10.0.0.0/24 && iwarp_mpa', 'golden.pcap']);
    expect(eventLines(r.stdout).length).toBeGreaterThan(0);
    expect(eventLines(cli(['-Y', 'ip.addr == 192.168.0.0/16', 'golden.pcap']).stdout)).toEqual([]);
  }, 30_000);
  it("a type error: exit 2, tshark's message and caret, nothing on stdout", () => {
    const r = cli(['-Y', 'iwarp_ddp.msn == "abc"', 'golden.pcap']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter((l) => l !== '')).toEqual([
      'mpa-dissect: -Y: column 18: Unsigned integer (4 bytes) cannot be converted from a string ("abc").',
      '    iwarp_ddp.msn == "abc"',
      '                     ^~~~~',
    ]);
    const w = cli(['-w', '/dev/null', '--write-filter', 'iwarp_rdma.opcode == 300', 'golden.pcap']);
    expect(w.code).toBe(2);
    expect(w.stderr).toContain('--write-filter: column 22: "300" too big for this field, maximum 255.');
  }, 30_000);
});
