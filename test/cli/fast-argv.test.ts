import { describe, expect, it } from 'vitest';
import { fastArgv } from '../../cli/fast-argv.js';
import { parseArgv } from '../../cli/argv.js';

/** What yargs stores besides the options themselves. */
const YARGS_ONLY = new Set(['$0']);

/** yargs' object without its bookkeeping and without the options left unset. */
function comparable(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([k, v]) => !YARGS_ONLY.has(k) && v !== undefined));
}

describe('fast argument path', () => {
  const taken: string[][] = [
    ['x.pcap'],
    [],
    ['-'],
    ['--json', 'x.pcap'],
    ['-q', 'x.pcap'],
    ['x.pcap', '-q', '--ndjson'],
    ['-V', '-x', '-l', '--wide', '--allow-truncated', '--checksums', '--color', '--progress', 'dir/a b.pcapng'],
    ['-r', 'x.pcap'],
    ['-r', '-'],
    ['-Y', 'iwarp_mpa.crc_status == "bad"', 'x.pcap'],
    ['-Y', '', 'x.pcap'],
    ['-w', 'out.pcap', '--write-filter', 'frame.number == 1', '--junit', 'j.xml', '--rules', 'r.json', 'x.pcap'],
    ['x.pcap.gz'],
  ];
  for (const argv of taken) {
    it(`takes ${JSON.stringify(argv)} exactly as yargs does`, async () => {
      const fast = fastArgv(argv);
      expect(fast).not.toBeNull();
      const slow = (await parseArgv(argv)).args;
      expect(comparable(fast as Record<string, unknown>)).toEqual(
        comparable(slow as unknown as Record<string, unknown>),
      );
    });
  }

  const declined: string[][] = [
    ['-h'],
    ['--help'],
    ['-v'],
    ['rules'],
    ['fields'],
    ['tui', 'x.pcap'],
    ['peer'],
    ['-qV', 'x.pcap'],
    ['-q', '-q', 'x.pcap'],
    ['--json=true', 'x.pcap'],
    ['--no-color', 'x.pcap'],
    ['-c', '10', 'x.pcap'],
    ['-z', 'conv', 'x.pcap'],
    ['--mpa', 'flow=all', 'x.pcap'],
    ['-Y', '-x', 'x.pcap'],
    ['-r'],
    ['a.pcap', 'b.pcap'],
    ['123'],
    ['--', 'x.pcap'],
    ['--bogus', 'x.pcap'],
    ['-i', 'eth0'],
  ];
  for (const argv of declined) {
    it(`leaves ${JSON.stringify(argv)} to yargs`, () => {
      expect(fastArgv(argv)).toBeNull();
    });
  }
});
