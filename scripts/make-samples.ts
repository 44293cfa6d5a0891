/**
 * Writes the small sample captures in captures/ from the scenario generator (so they can be made
 * again and reviewed as code): `npm run build && node dist/scripts/make-samples.js`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildMpaConnection } from '../src/generate/mpa-connection.js';
import { enhancedPd, patternBytes, sendUlpdu, writeUlpdu, type FpduSpec } from '../src/generate/mpa-encoder.js';
import { buildScenario } from '../src/generate/scenario.js';
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../src/report/pcap-writer.js';

const dir = process.argv[2] ?? 'captures';
const payload = (n: number, seed: number) => patternBytes(n, seed);

// sample.pcap: a clean RFC 6581 connection with markers both ways and CRC, a Write RTR, Sends
// and Writes of assorted sizes, segments cut at random places (what the newcomer sees first).
const i2r: FpduSpec[] = [{ ulpdu: writeUlpdu(1, 0, new Uint8Array(0)) }];
const r2i: FpduSpec[] = [];
for (let i = 0; i < 12; i++)
  i2r.push({
    ulpdu:
      i % 3 === 2
        ? writeUlpdu(0x1000 + i, i * 8192, payload(200 + i * 97, i))
        : sendUlpdu(i - Math.floor(i / 3) + 1, payload(40 + i * 61, i)),
  });
for (let i = 0; i < 6; i++) r2i.push({ ulpdu: sendUlpdu(i + 1, payload(64 + i * 150, 100 + i)) });
const sample = buildMpaConnection({
  request: {
    m: true,
    c: true,
    rev: 2,
    enhanced: true,
    pd: enhancedPd({ ird: 16, ord: 16, p2p: true, write: true, read: true }),
  },
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
const errors = buildMpaConnection({
  request: { m: true, c: true },
  reply: { m: true, c: true },
  i2r: bad,
  r2i: [{ ulpdu: sendUlpdu(1, payload(100, 1)) }],
  cutI2r: { random: 1, seed: 5, max: 1400 },
});
writeFileSync(join(dir, 'errors.pcap'), errors.pcap);
console.log(
  `wrote ${dir}/sample.pcap (${sample.pcap.length} bytes) and ${dir}/errors.pcap (${errors.pcap.length} bytes)`,
);

// golden.pcap: small, for the CLI's golden output tests (test/cli/golden/). A Rev 2 peer-to-peer
// connection with markers both ways and CRC: a Write RTR, Sends, a Read Request and its Read
// Response, one FPDU with non-zero PAD, one with a wrong FPDUPTR, one with a bad CRC, FPDUs cut
// across segments; then a plain TCP connection that carries no MPA. Changing it means
// regenerating the golden files (UPDATE_GOLDEN=1 npx vitest run test/cli).
const readRequest = (msn: number): Uint8Array => {
  const rr = new Uint8Array(28);
  const v = new DataView(rr.buffer);
  v.setUint32(0, 0x2000); // Data Sink STag
  v.setBigUint64(4, 0x10000n); // Data Sink TO
  v.setUint32(12, 64); // RDMA Read Message Size
  v.setUint32(16, 0x3000); // Data Source STag
  v.setBigUint64(20, 0x40000n); // Data Source TO
  return sendUlpdu(msn, rr, { qn: 1, opcode: 0x1 });
};
const readResponse = writeUlpdu(0x2000, 0x10000, payload(64, 77));
readResponse[1] = (1 << 6) | 0x2; // RDMAP opcode 2: Read Response
const golden = buildMpaConnection({
  request: { m: true, c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
  reply: { m: true, c: true, rev: 2, enhanced: true, pd: enhancedPd({ ird: 8, ord: 8, p2p: true, write: true }) },
  i2r: [
    { ulpdu: writeUlpdu(1, 0, new Uint8Array(0)) },
    { ulpdu: sendUlpdu(1, payload(60, 1)) },
    { ulpdu: sendUlpdu(2, payload(21, 2)), fault: { padByte: 0xee } },
    { ulpdu: sendUlpdu(3, payload(400, 3)), fault: { fpduptrDelta: 8 } },
    { ulpdu: readRequest(1) },
    { ulpdu: sendUlpdu(4, payload(40, 4)), fault: { badCrc: true } },
  ],
  r2i: [{ ulpdu: sendUlpdu(1, payload(30, 5)) }, { ulpdu: readResponse }],
  cutI2r: [100, 300, 200],
});
const plain = buildScenario(
  [
    { dir: 0, bytes: new TextEncoder().encode('GET / HTTP/1.0\r\n\r\n') },
    { dir: 1, bytes: new TextEncoder().encode('HTTP/1.0 200 OK\r\n\r\n') },
  ],
  { client: { addr: '10.0.0.3', port: 40002 }, server: { addr: '10.0.0.2', port: 80 } },
);
const later = (f: PcapFrame): PcapFrame => ({ ...f, tsSec: f.tsSec + 1 });
writeFileSync(join(dir, 'golden.pcap'), buildPcap(LINKTYPE_ETHERNET, [...golden.frames, ...plain.frames.map(later)]));
console.log(`wrote ${dir}/golden.pcap`);
