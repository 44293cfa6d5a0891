/**
 * A capture whose MPA connection starts past frame 138,000 (filler ARP frames before it), with
 * FPDUs spread over several 536-octet segments: frame ranges as long as 138139-138145 in the PDU list.
 */
import { writeFileSync } from 'node:fs';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../../src/report/pcap-writer.js';

export const FILLER_FRAMES = 138_100;

export function writeLongFrameCapture(path: string): void {
  const c = buildMpaConnection({
    request: { m: true, c: true },
    reply: { m: true, c: true },
    i2r: Array.from({ length: 4 }, (_, k) => ({ ulpdu: sendUlpdu(k + 1, patternBytes(2500, k)) })),
    scenario: { mss: 536 },
  });
  // An ARP frame (EtherType 0x0806): not IP, so it only moves the frame numbers on.
  const arp = new Uint8Array(42);
  arp.fill(0xff, 0, 6);
  arp[12] = 0x08;
  arp[13] = 0x06;
  const filler: PcapFrame[] = Array.from({ length: FILLER_FRAMES }, () => ({ tsSec: 0, tsNsec: 0, data: arp }));
  writeFileSync(path, buildPcap(LINKTYPE_ETHERNET, [...filler, ...c.frames]));
}
