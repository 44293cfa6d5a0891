/**
 * Wireshark as an independent oracle where SPEC-NOTES says it is reliable: FPDU counts, ULPDU
 * lengths and CRC verdicts without markers, and with markers when each segment holds one FPDU and
 * the first FPDU was captured.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMpaConnection, type MpaConnectionSpec } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { analyze } from '../../src/analysis/pipeline.js';
import { sharedCaptures } from '../helpers/analyze.js';
import { type FrameBlock, tsharkVerboseMany } from '../helpers/tshark-batch.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const hasTshark = HAVE_TSHARK;

interface OracleFpdu {
  frame: number;
  len: number;
  crc: 'good' | 'bad' | 'none';
}

/** Per FPDU in capture order: frame, ULPDU length, CRC verdict, from `tshark -V` (its frame blocks). */
function tsharkFpdus(blocks: readonly FrameBlock[]): OracleFpdu[] {
  const res: OracleFpdu[] = [];
  let frame = 0;
  let pending: OracleFpdu | null = null;
  for (const line of blocks.flatMap((b) => b.text.split('\n'))) {
    const fm = /^Frame (\d+):/.exec(line);
    if (fm) frame = Number(fm[1]);
    const lm = /^\s+ULPDU length: (\d+)/.exec(line);
    if (lm) {
      pending = { frame, len: Number(lm[1]), crc: 'none' };
      res.push(pending);
    }
    const cm = /^\s+CRC check: .*\((Good|Bad) CRC32/.exec(line);
    if (cm && pending) pending.crc = cm[1] === 'Good' ? 'good' : 'bad';
  }
  return res;
}

async function ours(file: string): Promise<OracleFpdu[]> {
  const res: OracleFpdu[] = [];
  await analyze(file, {
    onFpdu: (f) =>
      res.push({
        frame: f.frames[f.frames.length - 1]!,
        len: f.ulpduLength,
        crc: f.crcStatus === 'unchecked' ? 'none' : f.crcStatus === 'good' ? 'good' : 'bad',
      }),
  });
  return res.sort((a, b) => a.frame - b.frame);
}

function mixed(n: number, seed: number, bad: number[] = []): FpduSpec[] {
  return Array.from({ length: n }, (_, i) => ({
    ulpdu:
      i % 3 === 2
        ? writeUlpdu(7, i * 100, patternBytes(30 + ((i * 53) % 400), seed + i))
        : sendUlpdu(i + 1, patternBytes(10 + ((i * 71) % 900), seed + i)),
    ...(bad.includes(i) ? { fault: { badCrc: true } } : {}),
  }));
}

/** Segment sizes putting exactly one FPDU in each segment. */
function onePerSegment(f: FpduSpec[], markers: boolean): number[] | undefined {
  if (markers) return undefined;
  return f.map((x) => {
    const l = x.ulpdu.length;
    return 2 + l + ((4 - ((2 + l) % 4)) % 4) + 4;
  });
}

const cases: Array<[string, MpaConnectionSpec]> = [
  [
    'no markers, CRC, one FPDU per segment, two bad CRCs',
    {
      request: { c: true },
      reply: { c: true },
      i2r: mixed(12, 1, [3, 7]),
      r2i: mixed(6, 2),
      cutI2r: onePerSegment(mixed(12, 1), false),
      cutR2i: onePerSegment(mixed(6, 2), false),
    },
  ],
  [
    'no markers, CRC, several FPDUs packed per segment',
    { request: { c: true }, reply: {}, i2r: mixed(20, 3, [5]), cutI2r: [900, 900, 900, 900, 900, 900, 900, 900] },
  ],
  ['no markers, CRC off', { request: {}, reply: {}, i2r: mixed(8, 4), r2i: mixed(3, 5) }],
];

describe.skipIf(!hasTshark)('cross-check with tshark (Wireshark 4.0)', () => {
  if (!hasTshark) {
    it.skip('tshark is not installed: oracle cross-check skipped (.ci/run installs it)', () => {});
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'mpa-tshark-'));
  const generated = cases.map(([name, spec]) => {
    const c = buildMpaConnection(spec);
    const file = join(dir, `${name.replace(/\W+/g, '_')}.pcap`);
    writeFileSync(file, c.pcap);
    return file;
  });
  // Small FPDUs so that each one fits a segment; markers make some of them carry a marker.
  const markersI2r = mixed(16, 6, [4]);
  const markers = buildMpaConnection({
    request: { m: true, c: true },
    reply: { m: true, c: true },
    i2r: markersI2r,
    r2i: mixed(5, 7),
  });
  const markersFile = join(dir, 'markers.pcap');
  writeFileSync(markersFile, markers.pcap);
  const real = sharedCaptures('real');
  const realFiles = real ? ['softuiwarp_uiwarp.pcap', 'softuiwarp_uiwarp_8cdd2a5.pcap'].map((f) => join(real, f)) : [];
  /** tshark -V -Y iwarp_mpa of every capture here in one run (test/helpers/tshark-batch.ts): it starts slowly. */
  let read: Promise<Map<string, FrameBlock[]>> | null = null;
  const oracleOf = async (file: string): Promise<OracleFpdu[]> => {
    read ??= tsharkVerboseMany(
      [...generated, markersFile, ...realFiles],
      ['-o', 'tcp.try_heuristic_first:TRUE', '--disable-heuristic', 'rpcrdma_iwarp', '-Y', 'iwarp_mpa'],
    );
    const blocks = (await read).get(file);
    if (blocks === undefined) throw new Error(`${file}: not among the captures tshark read`);
    return tsharkFpdus(blocks);
  };

  cases.forEach(([name], i) => {
    it(name, async () => {
      const file = generated[i]!;
      const oracle = await oracleOf(file);
      expect(oracle.length).toBeGreaterThan(0);
      const mine = await ours(file);
      expect(mine.map((f) => [f.len, f.crc])).toEqual(oracle.map((f) => [f.len, f.crc]));
    });
  });

  it('with markers, one FPDU per segment, first FPDU captured: FPDU counts and lengths agree', async () => {
    const file = markersFile;
    const mine = await ours(file);
    expect(mine.length).toBe(markers.fpduSeqs[0].length + markers.fpduSeqs[1].length);
    const oracle = await oracleOf(file);
    // Wireshark frames FPDUs with markers only when segments line up with FPDUs; where it frames
    // an FPDU, its length must be ours too.
    const lens = new Set(mine.map((f) => f.len));
    for (const o of oracle) expect(lens.has(o.len)).toBe(true);
  });

  it.skipIf(!real)(
    `real siw captures: FPDU counts and ULPDU lengths agree${real ? '' : ' (skipped: ../shared/captures/real is absent)'}`,
    async () => {
      for (const file of realFiles) {
        const oracle = await oracleOf(file);
        const mine = await ours(file);
        expect(mine.map((x) => [x.frame, x.len])).toEqual(oracle.map((x) => [x.frame, x.len]));
      }
    },
  );
});
