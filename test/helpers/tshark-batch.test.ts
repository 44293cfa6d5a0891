/**
 * The batch (test/helpers/tshark-batch.ts) is only an oracle if tshark says of each capture in it
 * what it says of the capture alone: checked here on captures of each kind the batch must keep
 * apart (markers, loss, a pcapng, IPv6 in VLAN tags, IP faults and fragments, a capture cut short),
 * comparing the iWARP part of every frame's -V tree and -T fields rows, frame by frame.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES } from '../cli/helpers.js';
import { tsharkFieldsMany, tsharkVerboseMany } from './tshark-batch.js';
import { HAVE_TSHARK } from './tools.js';

const FILES = [
  'bad-crc.pcap',
  'loss.pcap',
  'clean-rev2-markers-both-crc-on.pcapng',
  'ipv6-vlan.pcap',
  'rule-net-faults.pcap',
  'rule-capture-truncated.pcap',
  'smbd-clean.pcap',
].map((f) => join(CAPTURES, 'corpus', f));
const ARGS = ['-o', 'tcp.try_heuristic_first:TRUE', '-Y', 'iwarp_mpa'];
const FIELDS = ['iwarp_mpa.ulpdulength', 'iwarp_mpa.crc', 'iwarp_ddp.msn', 'tcp.srcport', 'smb_direct.credits.granted'];

function alone(file: string, args: readonly string[]): string {
  try {
    return execFileSync('tshark', [...args, '-r', file], { encoding: 'utf8', maxBuffer: 256 << 20 });
  } catch (e) {
    // A capture cut short: tshark exits 2 after what it read.
    return (e as { stdout?: string }).stdout ?? '';
  }
}

/**
 * Each frame's iWARP trees (MPA, DDP/RDMAP), which the batch's users read: they do not depend on
 * addresses or stream numbers. (Upper layers' trees name other frames in fields of their own,
 * "[Response to: 8]", which the batch does not renumber: -T fields users do not ask for them.)
 */
function iwarpTrees(verbose: string): string[] {
  return verbose
    .split(/^(?=Frame \d+:)/m)
    .filter((b) => b.startsWith('Frame '))
    .map((b) => {
      const trees = b.split(/^(?=\S)/m).filter((t) => t.startsWith('iWARP'));
      return `${/^Frame (\d+):/.exec(b)![1]} ${trees.join('')}`;
    });
}

describe.skipIf(!HAVE_TSHARK)('tshark over many captures at once says what it says of each alone', () => {
  it('-V: every frame shown, and its iWARP tree, as tshark shows them alone', { timeout: 300_000 }, async () => {
    const batch = await tsharkVerboseMany(FILES, ARGS);
    let frames = 0;
    for (const f of FILES) {
      const theirs = iwarpTrees(alone(f, [...ARGS, '-V']));
      const mine = iwarpTrees((batch.get(f) ?? []).map((b) => b.text).join(''));
      expect(mine, f).toEqual(theirs);
      frames += theirs.length;
    }
    expect(frames).toBeGreaterThan(50);
  });

  it('-T fields: every row, frame numbers as in the capture alone', { timeout: 300_000 }, async () => {
    const batch = await tsharkFieldsMany(FILES, ['-o', 'tcp.try_heuristic_first:TRUE'], FIELDS);
    let mpaRows = 0;
    for (const f of FILES) {
      const theirs = alone(f, [
        '-o',
        'tcp.try_heuristic_first:TRUE',
        '-T',
        'fields',
        '-e',
        'frame.number',
        ...FIELDS.flatMap((x) => ['-e', x]),
      ]);
      expect((batch.get(f) ?? []).map((b) => `${b.text}\n`).join(''), f).toBe(theirs);
      mpaRows += theirs.split('\n').filter((l) => /^\d+\t\d/.test(l)).length;
    }
    // Something to compare: rows with an ULPDU_Length in them.
    expect(mpaRows).toBeGreaterThan(50);
  });
});

if (!HAVE_TSHARK) it.skip('tshark is not installed: the batch self-check skipped', () => {});
