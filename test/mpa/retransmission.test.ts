/** MPA over a TCP stream with overlapping, re-cut retransmissions: framing must not notice them. */
import { describe, expect, it } from 'vitest';
import { encodeFpdus, patternBytes, rng, sendUlpdu, startupFrame } from '../../src/generate/mpa-encoder.js';
import { ACK, PSH, SYN, mssOption, tcpFrame } from '../../src/generate/frames.js';
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../../src/report/pcap-writer.js';
import { analyzeBytes } from '../helpers/analyze.js';

function capture(seed: number, corrupt: boolean): { pcap: Uint8Array; fpdus: number } {
  const r = rng(seed);
  const req = startupFrame({ kind: 'request', m: true, c: true });
  const rep = startupFrame({ kind: 'reply', m: true, c: true });
  const f = Array.from({ length: 25 }, (_, i) => ({
    ulpdu: sendUlpdu(i + 1, patternBytes(Math.floor(r() * 1500), i)),
  }));
  const body = encodeFpdus(f, { markers: true, crc: true }).bytes;
  const stream = new Uint8Array(req.length + body.length);
  stream.set(req);
  stream.set(body, req.length);
  const isn = 5000;
  const frames: PcapFrame[] = [];
  let t = 0;
  const push = (data: Uint8Array) => frames.push({ tsSec: 1_700_000_000, tsNsec: (t += 1000), data });
  const seg = (off: number, len: number, bytes = stream) =>
    tcpFrame({
      src: '10.0.0.1',
      dst: '10.0.0.2',
      sport: 40001,
      dport: 4420,
      seq: isn + 1 + off,
      ack: 9001,
      flags: ACK | PSH,
      payload: bytes.subarray(off, off + len),
    });
  push(
    tcpFrame({
      src: '10.0.0.1',
      dst: '10.0.0.2',
      sport: 40001,
      dport: 4420,
      seq: isn,
      flags: SYN,
      options: mssOption(1460),
    }),
  );
  push(
    tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: 9000,
      ack: isn + 1,
      flags: SYN | ACK,
      options: mssOption(1460),
    }),
  );
  push(seg(0, req.length));
  push(
    tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: 9001,
      ack: isn + 1 + req.length,
      flags: ACK | PSH,
      payload: rep,
    }),
  );
  let off = req.length;
  while (off < stream.length) {
    const len = Math.min(stream.length - off, 200 + Math.floor(r() * 1200));
    push(seg(off, len));
    // Now and then a retransmission of an overlapping range cut at other places.
    if (r() < 0.4 && off > 0) {
      const from = Math.max(0, off - Math.floor(r() * 800));
      // Only octets already sent: a retransmission repeats, it does not run ahead.
      const n = Math.min(off + len - from, Math.floor(r() * 1400) + 1);
      if (corrupt) {
        const bad = stream.slice();
        for (let i = from; i < from + n; i++) bad[i] = bad[i]! ^ 0xff;
        push(seg(from, n, bad));
      } else push(seg(from, n));
    }
    off += len;
  }
  return { pcap: buildPcap(LINKTYPE_ETHERNET, frames), fpdus: f.length };
}

describe('MPA over overlapping retransmissions', () => {
  it.each([1, 2, 3, 4, 5, 6])('seed %i: same FPDUs, no findings', async (seed) => {
    const { pcap, fpdus } = capture(seed, false);
    const r = await analyzeBytes(pcap);
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(fpdus);
    expect(r.report.findings.filter((x) => x.severity !== 'info')).toEqual([]);
    expect(r.report.flows[0]!.tcp.directions[0]!['retransmissions']).toBeGreaterThan(0);
  });

  it('retransmitted octets that differ: first copy wins, TCP says so, MPA stays clean', async () => {
    const { pcap, fpdus } = capture(3, true);
    const r = await analyzeBytes(pcap);
    const m = r.report.flows[0]!.mpa as Record<string, any>;
    expect(m.directions[0].fpdus).toBe(fpdus);
    expect(m.directions[0].crcErrors).toBe(0);
    expect(r.report.findings.map((x) => x.rule)).toContain('tcp.overlap-conflict');
  });
});
