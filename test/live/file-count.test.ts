/** -c N on a capture file stops after N packets, as tshark -c: the rest of the file is not read. */
import { describe, expect, it } from 'vitest';
import { readCapture } from '../../src/capture/read-capture.js';
import { analyzeBytes } from '../helpers/analyze.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { sendUlpdu, patternBytes } from '../../src/generate/mpa-encoder.js';
import { cli } from '../cli/helpers.js';

describe('-c on files', () => {
  it('the pipeline stops after maxPackets; the summary counts only those', async () => {
    const conn = buildMpaConnection({
      request: { m: false, c: true },
      reply: { m: false, c: true },
      i2r: Array.from({ length: 20 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(300, i)) })),
    });
    const all = await analyzeBytes(conn.pcap);
    const some = await analyzeBytes(conn.pcap, { maxPackets: 9 });
    expect(all.capture.packets).toBe(conn.frames.length);
    expect(some.capture.packets).toBe(9);
    expect(some.flows[0]!.tcp.lastFrame).toBe(9);
  });

  it('the reader does not read past the limit (a damaged tail beyond it is never seen)', async () => {
    const conn = buildMpaConnection({ i2r: [{ ulpdu: sendUlpdu(1, patternBytes(100, 1)) }] });
    const cut = conn.pcap.subarray(0, conn.pcap.length - 7); // the last record is truncated
    const fs = await import('node:fs');
    const dir = fs.mkdtempSync('/tmp/mpa-c-');
    const file = `${dir}/cut.pcap`;
    fs.writeFileSync(file, cut);
    const full = await readCapture(file, () => {});
    expect(full.error?.message).toMatch(/truncated/);
    const first = await readCapture(file, () => {}, { maxPackets: 3 });
    expect([first.packets, first.error]).toEqual([3, null]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a bad record beyond the limit in the same read is not reported', async () => {
    const conn = buildMpaConnection({ i2r: [{ ulpdu: sendUlpdu(1, patternBytes(100, 1)) }] });
    const bad = new Uint8Array(16).fill(0xff); // a record header claiming 4 GB
    const pcap = new Uint8Array(conn.pcap.length + bad.length);
    pcap.set(conn.pcap);
    pcap.set(bad, conn.pcap.length);
    const all = await analyzeBytes(pcap);
    expect(all.capture.error).not.toBeNull();
    const first = await analyzeBytes(pcap, { maxPackets: 4 });
    expect([first.capture.packets, first.capture.error]).toEqual([4, null]);
  });

  it('mpa-dissect -c N file: only N packets, and -c must be a positive count', () => {
    const r = cli(['-q', '-c', '5', 'sample.pcap']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^5 packets, /m);
    expect(cli(['-c', '0', 'sample.pcap']).stderr).toMatch(/-c: 0 is not a packet count/);
  });
});
