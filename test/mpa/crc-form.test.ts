/**
 * The CRC numbers in findings are Wireshark's form (the four wire octets read most significant
 * first), checked against the octets the encoder put on the wire, for a bad CRC and for a CRC
 * sent byte-swapped (whose diagnosis must keep its meaning: the received octets are the due
 * octets in reverse order).
 */
import { describe, expect, it } from 'vitest';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { encodeFpdus, patternBytes, sendUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { analyzeBytes } from '../helpers/analyze.js';

const ulpdu = sendUlpdu(1, patternBytes(50, 3));
const hexOf = (octets: ArrayLike<number>): string =>
  `0x${Array.from(octets, (b) => b.toString(16).padStart(2, '0')).join('')}`;

/** The CRC octets a correct sender puts on the wire for this FPDU (no markers). */
function dueOctets(): number[] {
  const { bytes } = encodeFpdus([{ ulpdu }], { markers: false, crc: true });
  return Array.from(bytes.subarray(bytes.length - 4));
}

async function messageFor(fault: FpduSpec['fault'], rule: string): Promise<string> {
  const c = buildMpaConnection({ request: { c: true }, reply: {}, i2r: [{ ulpdu, fault }] });
  const r = await analyzeBytes(c.pcap);
  const f = r.report.findings.find((x) => x.rule === rule);
  expect(f, rule).toBeDefined();
  return f!.message;
}

describe('CRC numbers in findings, as Wireshark shows them', () => {
  it('mpa.crc-byte-order: the octets received, then the octets due, each read most significant first', async () => {
    const due = dueOctets();
    const sent = [...due].reverse();
    expect(await messageFor({ crcByteSwap: true }, 'mpa.crc-byte-order')).toBe(
      `CRC ${hexOf(sent)} on the wire is the computed ${hexOf(due)} byte-swapped (the CRC32c value sent most significant octet first)`,
    );
  });
  it('mpa.crc-mismatch: the octets received against the octets due', async () => {
    const due = dueOctets();
    // The encoder's bad CRC flips the lowest bit of the CRC32c value: its first wire octet.
    const sent = [due[0]! ^ 1, due[1]!, due[2]!, due[3]!];
    expect(await messageFor({ badCrc: true }, 'mpa.crc-mismatch')).toBe(
      `CRC ${hexOf(sent)} on the wire, computed ${hexOf(due)} (ULPDU_Length ${ulpdu.length})`,
    );
  });
});
