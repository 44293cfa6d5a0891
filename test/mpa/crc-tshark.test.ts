/**
 * Our iwarp_mpa.crc and iwarp_mpa.crc_check are Wireshark's: the same numbers as real tshark
 * prints for the same FPDUs, and a value copied from tshark filters here. Wireshark's MPA
 * dissector reads the CRC field with tvb_get_ntohl (wire octets most significant first) and shows
 * iwarp_mpa.crc when the CRC is bad, iwarp_mpa.crc_check when it is good; it only dissects FPDUs
 * that start a TCP segment, so few FPDUs per capture are compared. Skips visibly without tshark.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCaptures } from '../helpers/analyze.js';
import { CAPTURES, cli } from '../cli/helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';
import { tsharkFieldsMany } from '../helpers/tshark-batch.js';

const haveTshark = HAVE_TSHARK;

interface Ours {
  crc: number;
  crcComputed: number;
  crcStatus: string;
}

const TSHARK_ARGS = ['-o', 'tcp.try_heuristic_first:TRUE', '--disable-heuristic', 'rpcrdma_iwarp'];
const CRC_FIELDS = ['iwarp_mpa.crc', 'iwarp_mpa.crc_check'];

type Row = { frame: number; crc: number[]; check: number[] };

/** Each capture's FPDUs with a CRC, as tshark shows them (one tshark over them all: test/helpers/tshark-batch.ts). */
async function tsharkCrcs(files: readonly string[]): Promise<Map<string, Row[]>> {
  const all = await tsharkFieldsMany(files, [...TSHARK_ARGS, '-Y', 'iwarp_mpa.crc || iwarp_mpa.crc_check'], CRC_FIELDS);
  const nums = (s: string | undefined): number[] =>
    s
      ? s
          .split(',')
          .filter((x) => x !== '')
          .map((x) => Number(x))
      : [];
  return new Map(
    files.map((f) => [
      f,
      (all.get(f) ?? []).map(({ text }) => {
        const [frame, crc, check] = text.split('\t');
        return { frame: Number(frame), crc: nums(crc), check: nums(check) };
      }),
    ]),
  );
}

/** Every capture's CRCs as tshark shows them: one batch for the tests that ask. */
let crcsRead: Promise<Map<string, Row[]>> | null = null;
const allCrcs = (): Promise<Map<string, Row[]>> => (crcsRead ??= tsharkCrcs(captures()));

/** `--ndjson` of a capture, run once for the tests that read it. */
const ndjsonRan = new Map<string, ReturnType<typeof cli>>();
function ndjson(capture: string): ReturnType<typeof cli> {
  let r = ndjsonRan.get(capture);
  if (r === undefined) ndjsonRan.set(capture, (r = cli(['--ndjson', capture])));
  return r;
}

/** Our FPDUs by the frame that completes them (where tshark dissects a PDU). */
function ourCrcs(capture: string): Map<number, Ours[]> {
  const r = ndjson(capture);
  const byFrame = new Map<number, Ours[]>();
  for (const line of r.stdout.split('\n')) {
    if (!line.startsWith('{"type":"fpdu"')) continue;
    const e = JSON.parse(line) as Ours & { frames: number[] };
    const last = e.frames[e.frames.length - 1]!;
    byFrame.set(last, [...(byFrame.get(last) ?? []), e]);
  }
  return byFrame;
}

const hex = (n: number): string => `0x${n.toString(16).padStart(8, '0')}`;

function captures(): string[] {
  const out = [join(CAPTURES, 'errors.pcap'), join(CAPTURES, 'golden.pcap'), join(CAPTURES, 'sample.pcap')];
  for (const sub of ['real', 'reference'] as const) {
    const d = sharedCaptures(sub);
    if (d) for (const f of readdirSync(d)) if (/\.pcap(ng)?$/.test(f)) out.push(join(d, f));
  }
  return out;
}

describe.skipIf(!haveTshark)(
  `iwarp_mpa.crc equals real tshark's${haveTshark ? '' : ' (skipped: tshark is not installed)'}`,
  () => {
    it('for every FPDU tshark shows a CRC for, in every capture at hand', async () => {
      let compared = 0;
      const theirs = await allCrcs();
      for (const capture of captures()) {
        const ours = ourCrcs(capture);
        for (const row of theirs.get(capture)!) {
          const here = ours.get(row.frame) ?? [];
          const where = `${capture} frame ${row.frame}`;
          for (const c of row.crc) {
            expect(
              here.map((o) => hex(o.crc)),
              where,
            ).toContain(hex(c));
            compared++;
          }
          for (const c of row.check) {
            // A good CRC: the value received and the value computed are the same number.
            expect(
              here.filter((o) => o.crcStatus === 'good').map((o) => hex(o.crc)),
              where,
            ).toContain(hex(c));
            expect(
              here.map((o) => hex(o.crcComputed)),
              where,
            ).toContain(hex(c));
            compared++;
          }
        }
      }
      // errors.pcap frame 19 at least (wire octets fa bf b8 7d: 0xfabfb87d).
      expect(compared).toBeGreaterThan(0);
    }, 120_000);

    it('a CRC value copied from tshark selects that FPDU in -Y', async () => {
      const capture = join(CAPTURES, 'errors.pcap');
      // errors.pcap is among the captures the test above reads: its rows come from the same batch.
      const row = (await allCrcs()).get(capture)!.find((r) => r.check.length > 0)!;
      expect(row).toBeDefined();
      const r = cli([
        '-Y',
        `iwarp_mpa.crc == ${hex(row.check[0]!)} && iwarp_mpa.crc_check == ${hex(row.check[0]!)}`,
        capture,
      ]);
      expect(r.stdout).toMatch(new RegExp(`^\\s+${row.frame}\\s+\\d+\\.\\d{6}\\s.*CRC ok`, 'm'));
    }, 60_000);
  },
);

describe('the CRC form without tshark', () => {
  it('errors.pcap: the bad CRC of frame 9 as the wire octets read most significant first', () => {
    const r = ndjson(join(CAPTURES, 'errors.pcap'));
    const bad = r.stdout
      .split('\n')
      .filter((l) => l.includes('"crcStatus":"bad"'))
      .map((l) => JSON.parse(l) as Ours);
    expect(bad).toHaveLength(1);
    // The finding says the same numbers as the event.
    expect(r.stdout).toContain(
      `"message":"CRC ${hex(bad[0]!.crc)} on the wire, computed ${hex(bad[0]!.crcComputed)} (ULPDU_Length 708)"`,
    );
    expect(hex(bad[0]!.crc)).toBe('0xa7f36a54');
  }, 30_000);
});
