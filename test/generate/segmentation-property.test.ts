/**
 * Property (issue 21): the analysis of the same octets does not depend on how they were cut into
 * TCP segments. A capture generated with random settings (markers, CRC, Rev, messages, faults) is
 * rebuilt with every segment of it cut again at random points (the same octets, the same ISNs, the
 * same order of the two directions' sends), and both captures must give the same findings (rule,
 * sender, seq), the same FPDUs at the same seqs and the same per-direction counts.
 * Sender mistakes of the length and PAD kind (wrong-pad, no-pad, length-counts-*, length-le) are
 * among the impairments: a bad CRC or non-zero PAD waits for the octets after its FPDU before it is
 * judged, so the diagnosis does not depend on where a segment ended.
 */
import { describe, expect, it } from 'vitest';
import { readCaptureStream } from '../../src/capture/read-capture.js';
import { generate } from '../../src/generate/generate.js';
import { KnobError } from '../../src/generate/knobs.js';
import { rng } from '../../src/generate/mpa-encoder.js';
import { buildScenario, type Send } from '../../src/generate/scenario.js';
import { PacketDecoder } from '../../src/net/decoder.js';
import { TCP_FIN, TCP_RST, TCP_SYN } from '../../src/net/segment.js';
import { analyzedWithSeqs } from './helpers.js';

const IMPAIR = [
  '',
  '',
  'bad-crc',
  'bad-fpduptr',
  'pad-nonzero',
  'marker-origin',
  'bad-key',
  'responder-first',
  'wrong-pad',
  'no-pad',
  'length-counts-header',
  'length-counts-crc',
  'length-le',
];

function settings(seed: number): Record<string, string> {
  const r = rng(seed * 104729 + 7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  return {
    rev: pick(['1', '2']),
    markers: pick(['none', 'i2r', 'r2i', 'both']),
    crc: r() < 0.8 ? 'on' : 'off',
    messages: pick(['send,write', 'send,read', 'write,read,send-inv', 'send,atomic,immediate', 'read']),
    count: String(3 + Math.floor(r() * 12)),
    size: pick(['64', '500', '1500', '4000']),
    'max-ulpdu': pick(['256', '1024', '4096']),
    segmentation: 'one-per-segment',
    impair: pick(IMPAIR),
  };
}

interface Seg {
  dir: 0 | 1;
  payload: Uint8Array;
  flags: number;
  seq: number;
}

/** The capture's TCP segments in capture order (one connection; dir 0 = the SYN's sender). */
async function segmentsOf(pcap: Uint8Array): Promise<Seg[]> {
  const out: Seg[] = [];
  const dec = new PacketDecoder({ report: () => undefined });
  let client: string | null = null;
  await readCaptureStream(
    (async function* () {
      yield pcap;
    })(),
    'x.pcap',
    (p) =>
      dec.decode(p, (s) => {
        const from = `${s.src} ${s.srcPort}`;
        client ??= from;
        out.push({ dir: from === client ? 0 : 1, payload: s.payload.slice(), flags: s.flags, seq: s.seq });
      }),
  );
  return out;
}

/** The same octets, each segment cut again at random points. */
async function recut(pcap: Uint8Array, seed: number): Promise<Uint8Array> {
  const segs = await segmentsOf(pcap);
  const syn = (d: 0 | 1) => segs.find((s) => s.dir === d && (s.flags & TCP_SYN) !== 0)!.seq;
  const sends: Send[] = segs
    .filter((s) => s.payload.length > 0)
    .map((s, i) => ({ dir: s.dir, bytes: s.payload, cut: { random: 1, seed: seed * 31 + i, max: 1 + (i % 97) } }));
  const closing = segs
    .filter((s) => (s.flags & (TCP_FIN | TCP_RST)) !== 0)
    .map((s) => ({ dir: s.dir, flag: (s.flags & TCP_RST) !== 0 ? ('rst' as const) : ('fin' as const) }));
  return buildScenario(sends, { isn: [syn(0), syn(1)], closing }).pcap;
}

describe('segmentation property: the same octets cut otherwise give the same analysis', () => {
  it('60 random settings, each segment cut again at random points', { timeout: 300_000 }, async () => {
    const failures: string[] = [];
    let ran = 0;
    for (let seed = 1; ran < 60 && seed < 500; seed++) {
      const o = settings(seed);
      let g;
      try {
        g = generate('clean', o, seed, 'pcap');
      } catch (e) {
        if (e instanceof KnobError) continue;
        throw e;
      }
      ran++;
      const a = await analyzedWithSeqs(g.capture);
      const b = await analyzedWithSeqs(await recut(g.capture, seed));
      const key = (x: typeof a) =>
        JSON.stringify({
          findings: x.findings.map((f) => `${f.rule} ${f.from} ${f.seq}`).sort(),
          flows: x.flows,
          fpduSeqs: Object.fromEntries(Object.entries(x.fpduSeqs).sort()),
        });
      if (key(a) !== key(b))
        failures.push(
          `seed ${seed} ${Object.entries(o)
            .map(([k, v]) => `--${k} ${v}`)
            .join(' ')}\n  one per segment ${key(a)}\n  cut again       ${key(b)}`,
        );
    }
    expect(failures.slice(0, 3).join('\n')).toBe('');
    expect(ran).toBe(60);
  });

  it('the recut capture really is cut otherwise (more segments, the same octets)', async () => {
    const g = generate('clean', { markers: 'both', count: '8', size: '1500' }, 3, 'pcap');
    const before = await segmentsOf(g.capture);
    const after = await segmentsOf(await recut(g.capture, 3));
    const octets = (s: Seg[], d: 0 | 1) => Buffer.concat(s.filter((x) => x.dir === d).map((x) => x.payload));
    expect(after.filter((s) => s.payload.length > 0).length).toBeGreaterThan(
      2 * before.filter((s) => s.payload.length > 0).length,
    );
    expect(octets(after, 0).equals(octets(before, 0))).toBe(true);
    expect(octets(after, 1).equals(octets(before, 1))).toBe(true);
  });
});
