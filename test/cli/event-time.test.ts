/**
 * An event line's time is its record's last frame's, as tshark's frame.time_relative gives it,
 * also for FPDUs MPA hands on late: after a framing break, the FPDUs held while the break is
 * diagnosed reach the outputs when a later packet confirms the framing (marker-origin.pcap: a sender
 * counting markers from the stream's first octet). They used to show that later packet's time.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const CAPTURE = join(CAPTURES, 'corpus', 'marker-origin.pcap');

describe.skipIf(!HAVE_TSHARK)('event line times', () => {
  if (!HAVE_TSHARK) {
    it.skip('tshark is not installed (skipped: tshark is the oracle of frame times)', () => {});
    return;
  }
  it("every record line shows its last frame's frame.time_relative, held FPDUs included", () => {
    const t = spawnSync('tshark', ['-r', CAPTURE, '-T', 'fields', '-e', 'frame.number', '-e', 'frame.time_relative'], {
      encoding: 'utf8',
    }).stdout;
    const times = new Map(
      t
        .trim()
        .split('\n')
        .map((l) => l.split('\t'))
        .map(([f, s]) => [Number(f), Number(s).toFixed(6)] as const),
    );
    const out = cli(['--fail-on', 'never', CAPTURE]).stdout;
    let checked = 0;
    let held = 0;
    for (const line of out.split('\n')) {
      const m = /^ +(?:(\d+)-)?(\d+) +(\d+\.\d{6}) /.exec(line);
      if (!m) continue;
      const last = Number(m[2]);
      expect(`frame ${last}: ${m[3]}`).toBe(`frame ${last}: ${times.get(last)}`);
      checked++;
      if (last === 6) held++;
    }
    expect(checked).toBeGreaterThan(10);
    // Frame 6's FPDUs are the ones held while the framing break was diagnosed.
    expect(held).toBeGreaterThan(1);
  });
});
