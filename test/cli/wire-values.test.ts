/**
 * A field shows what is on the wire (RFC 5044 §4.1: ULPDU_Length is the field sent), also when a
 * diagnosed sender mistake made the framing use another length; that length, and the PAD the RFC
 * requires, are fields of their own, present only where they differ. tshark reads the same field
 * value (it follows ULPDU_Length as sent).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const CORPUS = join(CAPTURES, 'corpus');
const hasTshark = HAVE_TSHARK;

/** The corpus captures of the length mistakes, with their first FPDU's field as sent and as framed. */
const CASES = [
  { capture: 'length-counts-crc.pcap', field: 269, framed: 265 },
  { capture: 'length-counts-header.pcap', field: 267, framed: 265 },
  { capture: 'length-le.pcap', field: 259, framed: 769 },
] as const;

/** -T fields rows (FPDUs only: rows with a ULPDU_Length). */
function rows(capture: string, ...fields: string[]): string[][] {
  const r = cli(['-T', 'fields', ...fields.flatMap((f) => ['-e', f]), '-e', 'iwarp_mpa.ulpdulength', capture], {
    cwd: CORPUS,
  });
  return r.stdout
    .split('\n')
    .map((l) => l.split('\t'))
    .filter((c) => c[c.length - 1] !== '' && c[0] !== '');
}

describe('iwarp_mpa.ulpdulength is the field as sent', () => {
  for (const c of CASES) {
    it(`${c.capture}: ${c.field} on the wire, framed as ${c.framed}, in -T fields, -Y, text and NDJSON`, () => {
      const [first] = rows(c.capture, 'iwarp_mpa.ulpdulength_framed');
      expect(first).toEqual([String(c.framed), String(c.field)]); // -e frame fields first, the ULPDU_Length last

      const matched = cli(['-Y', `iwarp_mpa.ulpdulength == ${c.field}`, c.capture], { cwd: CORPUS });
      expect(matched.stdout).toMatch(new RegExp(`FPDU seq=\\d+ len=${c.field} \\[framed ${c.framed}\\]`));
      const framedNotField = cli(
        ['-Y', `iwarp_mpa.ulpdulength == ${c.framed} && iwarp_mpa.ulpdulength_framed`, c.capture],
        {
          cwd: CORPUS,
        },
      );
      expect(framedNotField.stdout).not.toMatch(/FPDU seq=/);

      const fpdu = cli(['--ndjson', c.capture], { cwd: CORPUS })
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((e) => e['type'] === 'fpdu')!;
      expect(fpdu['ulpduLength']).toBe(c.field);
      expect(fpdu['ulpduLengthFramed']).toBe(c.framed);

      const v = cli(['-V', '-Y', 'iwarp_mpa.ulpdulength_framed', c.capture], { cwd: CORPUS }).stdout;
      expect(v).toContain(`ULPDU length: ${c.field} [framed as ${c.framed}]`);
      expect(v).toContain(`[ULPDU length as framed: ${c.framed}]`);
    });
  }

  it('a PAD mistake shows the PAD on the wire and the PAD RFC 5044 section 4.2 requires', () => {
    // siw-pad.pcap: the sender pads to (ULPDU_Length + 2) mod 4; a 171-octet ULPDU needs 3 octets, it sends 1.
    const r = rows('siw-pad.pcap', 'iwarp_mpa.pad', 'iwarp_mpa.pad_expected').find((x) => x[2] === '171')!;
    expect(r).toEqual(['00', '3', '171']);
  });

  it('clean traffic has neither iwarp_mpa.ulpdulength_framed nor iwarp_mpa.pad_expected', () => {
    const r = cli(['--ndjson', 'sample.pcap']);
    expect(r.stdout).toMatch(/"ulpduLength":/);
    expect(r.stdout).not.toMatch(/ulpduLengthFramed|padExpected/);
    expect(cli(['-Y', 'iwarp_mpa.ulpdulength_framed || iwarp_mpa.pad_expected', 'sample.pcap']).stdout).not.toMatch(
      /FPDU seq=/,
    );
    expect(cli(['-Y', 'iwarp_mpa.ulpdulength', 'sample.pcap']).stdout).toMatch(/FPDU seq=/);
  });
});

describe.skipIf(!hasTshark)(
  `tshark reads the same ULPDU_Length${hasTshark ? '' : ' (skipped: tshark is not installed)'}`,
  () => {
    for (const c of CASES)
      it(c.capture, () => {
        const t = spawnSync(
          'tshark',
          [
            '-o',
            'tcp.try_heuristic_first:TRUE',
            '-r',
            join(CORPUS, c.capture),
            '-T',
            'fields',
            '-e',
            'iwarp_mpa.ulpdulength',
            '-Y',
            'iwarp_mpa.ulpdulength',
          ],
          { encoding: 'utf8' },
        );
        const theirs = Number(t.stdout.split('\n')[0]!.split(',')[0]);
        expect(theirs).toBe(c.field);
        expect(Number(rows(c.capture)[0]![0])).toBe(theirs);
      });
  },
);
