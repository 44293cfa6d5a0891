import { describe, expect, it } from 'vitest';
import { analyzeBytes } from '../helpers/analyze.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { tcpFrame, FIN, RST, ACK } from '../../src/generate/frames.js';
import { buildPcap, LINKTYPE_ETHERNET } from '../../src/report/pcap-writer.js';

describe('data after FIN', () => {
  it('a bare RST one past the FIN is not data after the FIN (the real siw capture ends so)', async () => {
    const s = buildScenario([{ dir: 1, bytes: new Uint8Array(40) }], { close: 'none' });
    const fin = tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: s.dataSeq[1] + 40,
      ack: s.dataSeq[0],
      flags: FIN | ACK,
    });
    const rst = tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: s.dataSeq[1] + 41,
      ack: s.dataSeq[0],
      flags: RST | ACK,
    });
    const pcap = buildPcap(LINKTYPE_ETHERNET, [
      ...s.frames,
      { tsSec: 2e9, tsNsec: 0, data: fin },
      { tsSec: 2e9, tsNsec: 1, data: rst },
    ]);
    const r = await analyzeBytes(pcap);
    expect(r.report.findings.map((f) => f.rule)).not.toContain('tcp.data-after-fin');
  });

  it('payload after the FIN is reported', async () => {
    const s = buildScenario([{ dir: 1, bytes: new Uint8Array(40) }], { close: 'none' });
    const fin = tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: s.dataSeq[1] + 40,
      ack: s.dataSeq[0],
      flags: FIN | ACK,
    });
    const late = tcpFrame({
      src: '10.0.0.2',
      dst: '10.0.0.1',
      sport: 4420,
      dport: 40001,
      seq: s.dataSeq[1] + 41,
      ack: s.dataSeq[0],
      flags: ACK,
      payload: new Uint8Array(10),
    });
    const pcap = buildPcap(LINKTYPE_ETHERNET, [
      ...s.frames,
      { tsSec: 2e9, tsNsec: 0, data: fin },
      { tsSec: 2e9, tsNsec: 1, data: late },
    ]);
    const r = await analyzeBytes(pcap);
    expect(r.report.findings.map((f) => f.rule)).toContain('tcp.data-after-fin');
  });
});
