/**
 * The batch (test/helpers/tshark-batch.ts) is only an oracle if tshark says of each capture in it
 * what it says of the capture alone: checked here on captures of each kind the batch must keep
 * apart (markers, loss, a pcapng, IPv6 in VLAN tags, IP faults and fragments, a capture cut short),
 * comparing the iWARP part of every frame's -V tree and -T fields rows, frame by frame. And that
 * PDML pairs (each side at the same place of a batch of its own) tell a file from a changed copy.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES } from '../cli/helpers.js';
import { tsharkFieldsMany, tsharkPdmlPairs, tsharkVerboseMany } from './tshark-batch.js';
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

  it('PDML pairs: a pair of the same frames reads the same, a pair that differs in a byte or in its addresses does not', {
    timeout: 300_000,
  }, async () => {
    const d = mkdtempSync(join(tmpdir(), 'mpa-pairs-'));
    try {
      const badCrc = join(CAPTURES, 'corpus', 'bad-crc.pcap');
      const loss = join(CAPTURES, 'corpus', 'loss.pcap');
      // bad-crc.pcap (classic pcap, Ethernet, IPv4) with each frame changed: a payload octet of
      // frame 5, or every frame's source and destination addresses swapped (a file that numbered
      // its addresses on its own would hide the swap).
      const edited = (name: string, edit: (frame: Buffer, n: number) => void) => {
        const buf = Buffer.from(readFileSync(badCrc));
        for (let o = 24, n = 1; o + 16 <= buf.length; n++) {
          const cap = buf.readUInt32LE(o + 8);
          edit(buf.subarray(o + 16, o + 16 + cap), n);
          o += 16 + cap;
        }
        writeFileSync(join(d, name), buf);
        return join(d, name);
      };
      const octet = edited('octet.pcap', (f, n) => {
        if (n === 5) f[f.length - 1]! ^= 1;
      });
      const swapped = edited('swapped.pcap', (f) => {
        const src = Buffer.from(f.subarray(26, 30));
        f.copy(f, 26, 30, 34);
        src.copy(f, 30);
      });
      const fields = (doc: string) => doc.split('\n').filter((l) => l.includes('<field'));
      const [same, byte, addresses, again] = await tsharkPdmlPairs(
        [
          [loss, loss],
          [octet, badCrc],
          [swapped, badCrc],
          [badCrc, badCrc],
        ],
        ['-o', 'tcp.try_heuristic_first:TRUE'],
      );
      expect(fields(same!.a).length).toBeGreaterThan(100);
      expect(fields(same!.a)).toEqual(fields(same!.b));
      expect(fields(again!.a)).toEqual(fields(again!.b));
      expect(again!.base).toBeGreaterThan(0); // in the batch, after the others
      expect(fields(byte!.a)).not.toEqual(fields(byte!.b));
      const ips = (doc: string) => fields(doc).filter((l) => l.includes('name="ip.src"'));
      expect(ips(addresses!.a)).not.toEqual(ips(addresses!.b));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

if (!HAVE_TSHARK) it.skip('tshark is not installed: the batch self-check skipped', () => {});
