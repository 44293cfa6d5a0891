/**
 * The TUI's Time column is the time of the packet that completed the record, as the CLI's event
 * lines show it and as tshark's frame.time_relative gives it for that frame (Wireshark shows a
 * reassembled PDU at the frame that completes it). Finding rows likewise carry the time of the
 * packet they were raised on.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KIND_FINDING } from '../../src/tui/pdu-index.js';
import { ROOT } from '../cli/helpers.js';
import { capture, openModel } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const hasTshark = HAVE_TSHARK;
const READ_64K = join(ROOT, '../shared/captures/real/softuiwarp-loopback/read-64k.pcap');

/** frame number → frame.time_relative, as tshark prints it (to the microsecond). */
function tsharkTimes(path: string): Map<number, string> {
  const r = spawnSync('tshark', ['-r', path, '-T', 'fields', '-e', 'frame.number', '-e', 'frame.time_relative'], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const m = new Map<number, string>();
  for (const line of r.stdout.split('\n')) {
    const [n, t] = line.split('\t');
    if (n && t) m.set(Number(n), Number(t).toFixed(6));
  }
  return m;
}

describe.skipIf(!hasTshark)(`TUI Time column${hasTshark ? '' : ' (skipped: tshark is not installed)'}`, () => {
  const cases = [capture('errors.pcap'), capture('sample.pcap'), ...(existsSync(READ_64K) ? [READ_64K] : [])];
  for (const path of cases)
    it(`${path.split('/').pop()}: every row's time is its last frame's frame.time_relative`, async () => {
      const { model } = await openModel(path);
      const ix = model.index;
      const times = tsharkTimes(path);
      let checked = 0;
      for (let i = 0; i < ix.count; i++) {
        const frames = ix.framesOf(i);
        if (frames.length === 0) continue;
        const last = Math.max(...frames);
        // A finding row names the frames it is about; it is raised while the last of them is read.
        if (ix.kind[i] === KIND_FINDING && frames.length > 1) continue;
        expect(`${frames.join(',')} ${ix.time[i]!.toFixed(6)}`).toBe(`${frames.join(',')} ${times.get(last)}`);
        checked++;
      }
      expect(checked).toBeGreaterThan(5);
    });

  it('errors.pcap frame 4 (the MPA Request) at 0.000030, as the CLI and tshark say', async () => {
    const { model } = await openModel(capture('errors.pcap'));
    const ix = model.index;
    const i = [...Array(ix.count).keys()].find((k) => ix.framesOf(k)[0] === 4)!;
    expect(ix.time[i]!.toFixed(6)).toBe('0.000030');
  });
});
