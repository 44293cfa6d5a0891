/**
 * Writes the small sample captures in captures/ from the scenario generator (so they can be made
 * again and reviewed as code): `npm run build && node dist/scripts/make-samples.js`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildMpaConnection } from '../src/generate/mpa-connection.js';
import { enhancedPd, patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../src/generate/mpa-encoder.js';

const dir = process.argv[2] ?? 'captures';
const payload = (n: number, seed: number) => patternBytes(n, seed);

// sample.pcap: a clean RFC 6581 connection with markers both ways and CRC, a Write RTR, Sends
// and Writes of assorted sizes, segments cut at random places (what the newcomer sees first).
const i2r: FpduSpec[] = [{ ulpdu: writeUlpdu(1, 0, new Uint8Array(0)) }];
const r2i: FpduSpec[] = [];
for (let i = 0; i < 12; i++) i2r.push({ ulpdu: i % 3 === 2 ? writeUlpdu(0x1000 + i, i * 8192, payload(200 + i * 97, i)) : sendUlpdu(i - Math.floor(i / 3) + 1, payload(40 + i * 61, i)) });
for (let i = 0; i < 6; i++) r2i.push({ ulpdu: sendUlpdu(i + 1, payload(64 + i * 150, 100 + i)) });
const sample = buildMpaConnection({
  request: { m: true, c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 16, ord: 16, p2p: true, write: true, read: true }) },
  reply: { m: true, c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 16, ord: 16, p2p: true, write: true }) },
  i2r,
  r2i,
  cutI2r: { random: 1, seed: 11, max: 1200 },
  cutR2i: { random: 1, seed: 12, max: 1200 },
});
writeFileSync(join(dir, 'sample.pcap'), sample.pcap);

// errors.pcap: what a broken RNIC looks like: a bad CRC, a wrong FPDUPTR, non-zero PAD.
const bad: FpduSpec[] = [];
for (let i = 0; i < 10; i++) bad.push({ ulpdu: sendUlpdu(i + 1, payload(300 + i * 130, 200 + i)) });
bad[3]!.fault = { badCrc: true };
bad[6]!.fault = { fpduptrDelta: 8 };
bad[8] = { ulpdu: sendUlpdu(9, payload(21, 9)), fault: { padByte: 0xee } };
const errors = buildMpaConnection({ request: { m: true, c: true }, reply: { m: true, c: true }, i2r: bad, r2i: [{ ulpdu: sendUlpdu(1, payload(100, 1)) }], cutI2r: { random: 1, seed: 5, max: 1400 } });
writeFileSync(join(dir, 'errors.pcap'), errors.pcap);
console.log(`wrote ${dir}/sample.pcap (${sample.pcap.length} bytes) and ${dir}/errors.pcap (${errors.pcap.length} bytes)`);
