/**
 * The DDP/RDMAP layer on its own, fed the FPDUs of a real capture (SoftUiWARP client against Linux
 * siw, ../shared/captures/real). The pcap is parsed here minimally (Ethernet/IPv4/TCP, one FPDU
 * per segment, no markers, CRC not negotiated) so the test needs nothing from other layers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ulpdu } from '../../dissectors/mpa/ulpdu.js';
import { setup } from './util.js';
import { sharedCaptures } from '../helpers/analyze.js';
import { segmentInfo } from '../../dissectors/ddp-rdmap/tree.js';

const REAL = sharedCaptures('real');
const FILE = REAL ? join(REAL, 'softuiwarp_uiwarp.pcap') : '';
const have = REAL !== null;

interface Seg {
  frame: number;
  dir: 0 | 1;
  from: string;
  seq: number;
  flags: number;
  payload: Uint8Array;
}

function readSegments(path: string): Seg[] {
  const d = readFileSync(path);
  const v = new DataView(d.buffer, d.byteOffset, d.byteLength);
  const out: Seg[] = [];
  let off = 24;
  let frame = 0;
  let client: number | null = null;
  while (off + 16 <= d.length) {
    const cap = v.getUint32(off + 8, true);
    const p = off + 16;
    off = p + cap;
    frame++;
    if (v.getUint16(p + 12) !== 0x0800) continue;
    const ihl = (d[p + 14]! & 0x0f) * 4;
    const ipLen = v.getUint16(p + 16);
    const t = p + 14 + ihl;
    const sport = v.getUint16(t);
    const dataOff = (d[t + 12]! >> 4) * 4;
    client ??= sport;
    const dir = sport === client ? 0 : 1;
    out.push({
      frame,
      dir,
      from: `${dir === 0 ? '10.10.1.1' : '10.10.1.2'}:${sport}`,
      seq: v.getUint32(t + 4),
      flags: d[t + 13]!,
      payload: new Uint8Array(d.subarray(t + dataOff, p + 14 + ipLen)),
    });
  }
  return out;
}

describe.skipIf(!have)('real capture: SoftUiWARP against siw (rping)', () => {
  it(
    have
      ? 'decodes the Sends and the Read Request as the capture README describes'
      : 'skipped: ../shared/captures/real is absent',
    () => {
      const { a, sink } = setup({ rev: 1, initiatorDir: 0, p2p: false });
      const infos: string[] = [];
      for (const s of readSegments(FILE)) {
        const key = new TextDecoder().decode(s.payload.subarray(0, 6));
        if (s.payload.length > 0 && key !== 'MPA ID') {
          const len = (s.payload[0]! << 8) | s.payload[1]!;
          const u: Ulpdu = {
            flow: 1,
            dir: s.dir,
            from: s.from,
            seq: s.seq,
            length: len,
            head: s.payload.slice(2, 2 + Math.min(len, 96)),
            frames: [s.frame],
            crc: 'unchecked',
            afterError: false,
          };
          infos.push(`${s.frame} ${segmentInfo(a.ulpdu(u))}`);
        }
        if (s.flags & 0x01) a.end(s.dir, 'fin');
        if (s.flags & 0x04) {
          a.end(0, 'rst');
          a.end(1, 'rst');
        }
      }
      expect(infos).toEqual([
        '8 Send QN=0 MSN=1 MO=0 L len=16',
        '9 Send QN=0 MSN=2 MO=0 L len=16',
        expect.stringMatching(/^10 Read Request sink 0x[0-9a-f]{8}\/0x[0-9a-f]+ size \d+ src .* MSN=1$/),
        '12 Send QN=0 MSN=3 MO=0 L len=16',
        '13 Send QN=0 MSN=4 MO=0 L len=16',
      ]);
      expect(a.directionStats(0)).toMatchObject({
        segments: 4,
        messages: 4,
        byOpcode: { send: 4 },
        msnErrors: 0,
        moErrors: 0,
        rtr: null,
      });
      expect(a.directionStats(1)).toMatchObject({ segments: 1, byOpcode: { 'read-request': 1 } });
      // The client never answered the Read Request before the connection was reset.
      expect(sink.findings.map((f) => [f.rule, f.severity, f.frames])).toEqual([
        ['rdmap.read-unanswered', 'warning', [10]],
      ]);
    },
  );
});
