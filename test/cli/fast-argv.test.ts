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
    ['a.pcap', 'b.pcap', 'dir'],
    ['-q', '--fail-on', 'never', 'x.pcap'],
    ['--fail-on', 'warning', '--json', 'x.pcap'],
    ['-q', '-z', 'conv', 'x.pcap'],
    ['-q', '-z', 'conv,tcp', '-z', 'expert', '-z', 'rules', 'x.pcap'],
    [
      '-T',
      'fields',
      '-e',
      'frame.number',
      '-e',
      'iwarp_mpa.ulpdu_length',
      '-E',
      'separator=,',
      '-E',
      'header=y',
      'x.pcap',
    ],
    ['-t', 'ad', '-o', 'tcp.relative_sequence_numbers:FALSE', '-Y', 'iwarp_mpa', 'x.pcap'],
    ['-G', 'fields'],
    ['-v'],
    ['-D'],
    ['-F', 'pcapng', '-w', 'o.pcap', '--annotate', 'a.pcapng', 'x.pcap'],
    ['--mpa', 'flow=all,markers=both,crc=on', '--mpa', 'flow=2,start=0', '--tuf', 'flow=1,interval=512', 'x.pcap'],
    ['--ulp', 'flow=all,proto=none', '--threads', '2', '--jobs', '3', 'a.pcap', 'b.pcap'],
    ['-c', '500', '--threads', '1', 'x.pcap'],
    ['--tcp-buffer-flow', '0.5', '--tcp-buffer-total', '128', '--tcp-reorder-window', '2', 'x.pcap'],
    [
      '-i',
      'lo',
      '-f',
      'tcp port 4420',
      '-s',
      '1500',
      '-a',
      'duration:5',
      '-a',
      'packets:10',
      '--flow-timeout',
      '30',
      '-w',
      'r.pcap',
      '-b',
      'filesize:1,files:3',
    ],
    ['-r', 'x.pcap', '--fail-on', 'error', '--html', 'r.html', '--junit', '-'],
    ['tui', 'x.pcap'],
    ['tui'],
    ['tui', '-Y', 'iwarp_mpa', '--mpa', 'flow=all,crc=on', '--rules', 'r.json', 'x.pcap'],
    ['tui', '-i', 'lo', '-f', 'tcp', '--capture-backend', 'tcpdump', '--flow-timeout', '10'],
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
    ['rules'],
    ['fields'],
    ['tui', 'tui'],
    ['tui', '-h'],
    ['peer'],
    ['-qV', 'x.pcap'],
    ['-q', '-q', 'x.pcap'],
    ['--json=true', 'x.pcap'],
    ['--no-color', 'x.pcap'],
    ['-c', '1e3', 'x.pcap'],
    ['-c', '0x10', 'x.pcap'],
    ['--threads', 'two', 'x.pcap'],
    ['--threads', '1', '--threads', '2', 'x.pcap'],
    ['--fail-on', 'bogus', 'x.pcap'],
    ['--fail-on', 'never', '--fail-on', 'error', 'x.pcap'],
    ['-T', 'fields', '-T', 'text', 'x.pcap'],
    ['-e', '-x', 'x.pcap'],
    ['-z'],
    ['--capture-backend', 'pcap', '-i', 'lo'],
    ['-Y', '-x', 'x.pcap'],
    ['-r'],
    ['x.pcap', 'rules'],
    ['123'],
    ['--', 'x.pcap'],
    ['--bogus', 'x.pcap'],
  ];
  for (const argv of declined) {
    it(`leaves ${JSON.stringify(argv)} to yargs`, () => {
      expect(fastArgv(argv)).toBeNull();
    });
  }
});
