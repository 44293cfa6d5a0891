import { describe, expect, it } from 'vitest';
import { plausibleDdpHeader } from '../../dissectors/ddp-rdmap/plausible.js';
import { sendUlpdu, writeUlpdu } from '../../src/generate/mpa-encoder.js';

describe('plausibleDdpHeader (CRC-off lock-on evidence)', () => {
  const send = sendUlpdu(1, new Uint8Array(8));
  const write = writeUlpdu(7, 0, new Uint8Array(8));
  const with_ = (u: Uint8Array, i: number, v: number) => {
    const c = u.slice();
    c[i] = v;
    return c;
  };

  it('accepts conforming Send, Write, Read Request, Terminate and Rev 0 headers', () => {
    expect(plausibleDdpHeader(send, send.length)).toBe(true);
    expect(plausibleDdpHeader(write, write.length)).toBe(true);
    expect(plausibleDdpHeader(sendUlpdu(1, new Uint8Array(28), { opcode: 0x1, qn: 1 }), 46)).toBe(true);
    expect(plausibleDdpHeader(sendUlpdu(1, new Uint8Array(4), { opcode: 0x7, qn: 2 }), 22)).toBe(true);
    expect(plausibleDdpHeader(sendUlpdu(1, new Uint8Array(4), { dv: 0 }), 22)).toBe(true);
  });

  it('rejects what no conforming segment carries', () => {
    expect(plausibleDdpHeader(sendUlpdu(1, new Uint8Array(4), { qn: 1 }), 22)).toBe(false); // Send on QN 1
    expect(plausibleDdpHeader(with_(send, 0, send[0]! | 0x80), send.length)).toBe(false); // Send tagged
    expect(plausibleDdpHeader(with_(send, 0, send[0]! | 0x04), send.length)).toBe(false); // DDP reserved bit
    expect(plausibleDdpHeader(with_(send, 1, (send[1]! & 0xf0) | 0x0c), send.length)).toBe(false); // unassigned opcode
    expect(plausibleDdpHeader(sendUlpdu(1, new Uint8Array(4), { dv: 2 }), 22)).toBe(false); // DV 2
    expect(plausibleDdpHeader(with_(send, 1, 0x03), send.length)).toBe(false); // RV 0 with DV 1
    expect(plausibleDdpHeader(send, 13)).toBe(false); // shorter than any DDP header
  });
});
