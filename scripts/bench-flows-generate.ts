/**
 * A capture of many one-segment TCP flows (issue 8): each flow is a SYN, a SYN-ACK and one data
 * segment from the client, none of it MPA. Used by `npm run bench` and test/robustness.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { ACK, PSH, SYN, tcpFrame } from '../src/generate/frames.js';
import { pcapHeader, pcapRecord, LINKTYPE_ETHERNET } from '../src/report/pcap-writer.js';

export async function generateFlowsCapture(
  file: string,
  flows: number,
  payloadBytes = 100,
): Promise<{ packets: number }> {
  const out = createWriteStream(file);
  const write = async (b: Uint8Array) => {
    if (!out.write(b)) await once(out, 'drain');
  };
  await write(pcapHeader(LINKTYPE_ETHERNET));
  const payload = new Uint8Array(payloadBytes).fill(0x41);
  let packets = 0;
  for (let i = 0; i < flows; i++) {
    const client = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    const server = '10.200.0.1';
    const sport = 10000 + (i % 50000);
    const ts = 1 + Math.floor(i / 1000);
    const frames = [
      tcpFrame({ src: client, dst: server, sport, dport: 4420, seq: 1000, flags: SYN }),
      tcpFrame({ src: server, dst: client, sport: 4420, dport: sport, seq: 5000, ack: 1001, flags: SYN | ACK }),
      tcpFrame({ src: client, dst: server, sport, dport: 4420, seq: 1001, ack: 5001, flags: PSH | ACK, payload }),
    ];
    for (const data of frames) {
      await write(pcapRecord({ tsSec: ts, tsNsec: (i % 1000) * 1000, data }));
      packets++;
    }
  }
  out.end();
  await once(out, 'finish');
  return { packets };
}

// `node dist/scripts/bench-flows-generate.js FILE [FLOWS]`
if (process.argv[1]?.endsWith('bench-flows-generate.js')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: bench-flows-generate FILE [FLOWS]');
  await generateFlowsCapture(file, Number(process.argv[3] ?? 100_000));
}
