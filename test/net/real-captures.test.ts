import { describe, expect, it } from 'vitest';
import { readCapture } from '../../src/capture/read-capture.js';
import { PacketDecoder } from '../../src/net/decoder.js';
import { CollectSink } from '../helpers/net-frames.js';
import { sharedCaptures } from '../helpers/analyze.js';

/** Reader and decoder together on the real SoftUiWARP/siw captures (../shared/captures/real). */
const DIR = sharedCaptures('real');
const present = DIR !== null;

describe.skipIf(!present)('real captures', () => {
  it('softuiwarp_uiwarp.pcap: 15 TCP frames, the MPA Request in frame 4', async () => {
    const sink = new CollectSink();
    const dec = new PacketDecoder(sink);
    const segs: Array<[number, string, number]> = [];
    const s = await readCapture(`${DIR}/softuiwarp_uiwarp.pcap`, (p) =>
      dec.decode(p, (x) => segs.push([x.frame, `${x.src}:${x.srcPort}`, x.payload.length])),
    );
    dec.finish();
    expect(s).toMatchObject({ format: 'pcap', packets: 15, linkTypes: [1], error: null });
    expect(segs).toHaveLength(15);
    expect(segs[3]).toEqual([4, '10.10.1.1:42742', 20]);
    expect(sink.got).toEqual([]);
  });

  it('softuiwarp_uiwarp_8cdd2a5.pcap: 12 TCP frames and an ARP request and reply', async () => {
    const sink = new CollectSink();
    const dec = new PacketDecoder(sink);
    let n = 0;
    const s = await readCapture(`${DIR}/softuiwarp_uiwarp_8cdd2a5.pcap`, (p) => dec.decode(p, () => n++));
    expect(s.packets).toBe(14);
    expect(n).toBe(12);
    expect(dec.stats).toMatchObject({ nonTcp: 2, malformed: 0 });
    expect(sink.got).toEqual([]);
  });
});

if (!present) it.skip(`real captures: ${DIR} is absent (a fresh clone does not have it)`, () => {});
