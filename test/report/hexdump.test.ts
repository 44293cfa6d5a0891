/**
 * -x's dump rows are built from tables (src/report/hexdump.ts); here they are checked against the
 * plain definition of a row (two hex digits per octet, ?? when missing, a mark row under a row
 * with marks, colour on marked octets only), over random octets, gaps, marks and lengths 0..40,
 * and for records of a generated MPA connection read back from its file (FileFrames, which keeps
 * the frames it read last) and from a window of copies (WindowFrames).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/pipeline.js';
import type { PacketRecord } from '../../src/capture/packet.js';
import { openRandomAccess } from '../../src/capture/random-access.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { ethernet, ipv4, tcpSegment } from '../../src/generate/frames.js';
import { patternBytes } from '../../src/generate/mpa-encoder.js';
import { endpoint } from '../../src/net/segment.js';
import { fpduLayout, OCTET_CRC, OCTET_LENGTH, OCTET_MARKER, OCTET_PAD } from '../../dissectors/mpa/tree.js';
import { isFpdu, type MpaRecord } from '../../src/report/events.js';
import {
  FileFrames,
  streamBytes,
  WindowFrames,
  type FrameStore,
  type StreamBytes,
} from '../../src/report/frame-store.js';
import { dumpLines, recordDump } from '../../src/report/hexdump.js';
import { makeStyle, type Style } from '../../src/report/text.js';
import { randomInts } from '../helpers/random.js';

/** The plain definition: an array of cells per row, joined; each octet's colour by its mark. */
function reference(data: StreamBytes, marks: readonly string[], st: Style, crcBad = false): string[] {
  const colour = (m: string): ((s: string) => string) =>
    m === 'M'
      ? st.cyan
      : m === 'L'
        ? st.yellow
        : m === 'P'
          ? st.magenta
          : m === 'C'
            ? crcBad
              ? st.red
              : st.green
            : m === ''
              ? (s) => s
              : st.bold;
  const { bytes, have } = data;
  const width = Math.max(4, Math.max(0, bytes.length - 1).toString(16).length);
  const out: string[] = [];
  for (let row = 0; row < bytes.length; row += 16) {
    const hex: string[] = [];
    const under: string[] = [];
    let ascii = '';
    for (let i = row; i < row + 16; i++) {
      if (i >= bytes.length) {
        hex.push('  ');
        under.push('  ');
        continue;
      }
      const m = marks[i] ?? '';
      const b = bytes[i]!;
      hex.push(colour(m)(have[i] ? b.toString(16).padStart(2, '0') : '??'));
      under.push(m ? `${m} ` : '  ');
      ascii += !have[i] ? ' ' : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    }
    out.push(`${row.toString(16).padStart(width, '0')}  ${hex.join(' ')}   ${ascii}`.trimEnd());
    if (under.some((u) => u.trim() !== '')) out.push(`${' '.repeat(width)}  ${under.join(' ')}`.trimEnd());
  }
  return out;
}

const LETTERS = ['', '', '', 'M', 'L', 'P', 'C', 'K', 'F', 'R', 'E'];

describe('dumpLines', () => {
  for (const colour of [false, true])
    it(`matches the plain definition over random rows, lengths 0..40 and a 4 KiB record (colour ${colour})`, () => {
      const st = makeStyle(colour);
      const rnd = randomInts(colour ? 7 : 3);
      const lengths = [...Array.from({ length: 41 }, (_, n) => n), 4096, 4097];
      for (const n of lengths)
        for (let k = 0; k < 12; k++) {
          // Printable, space, control and high octets alike; gaps and marks dense or absent.
          const bytes = Uint8Array.from({ length: n }, () => (rnd(4) === 0 ? 0x20 : rnd(256)));
          const gaps = rnd(3);
          const have = Uint8Array.from({ length: n }, () => (gaps !== 0 && rnd(4 * gaps) === 0 ? 0 : 1));
          const dense = rnd(3);
          // Marks shorter, as long as or longer than the octets (the dump reads only its octets').
          const marks = Array.from({ length: Math.max(0, n + rnd(5) - 2) }, () =>
            dense === 0 ? '' : (LETTERS[rnd(dense === 1 ? LETTERS.length * 4 : LETTERS.length)] ?? ''),
          );
          const crcBad = rnd(2) === 0;
          expect(dumpLines({ bytes, have }, marks, st, crcBad), `n=${n} k=${k}`).toEqual(
            reference({ bytes, have }, marks, st, crcBad),
          );
        }
    });
  it('prints nothing for no octets', () => {
    expect(dumpLines({ bytes: new Uint8Array(0), have: new Uint8Array(0) }, [], makeStyle(false))).toEqual([]);
  });
});

const dir = mkdtempSync(join(tmpdir(), 'mpa-hexdump-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FPDU_LETTER: Readonly<Record<number, string>> = {
  [OCTET_LENGTH]: 'L',
  [OCTET_MARKER]: 'M',
  [OCTET_PAD]: 'P',
  [OCTET_CRC]: 'C',
};

describe('recordDump', () => {
  // Markers both ways, FPDUs of every size from 0 (many per segment) to several segments, some
  // segments cut short so that FPDUs span frames.
  const sizes = [0, 0, 0, 1, 2, 3, 5, 17, 100, 511, 1400, 3000, 0, 0, 7];
  const conn = buildMpaConnection({
    request: { m: true, c: true },
    reply: { m: true, c: true },
    i2r: sizes.map((n, i) => ({ ulpdu: patternBytes(n, i) })),
    r2i: sizes.map((n, i) => ({ ulpdu: patternBytes(n, 100 + i) })),
    cutI2r: [9, 700, 33],
  });
  const file = join(dir, 'markers.pcap');
  writeFileSync(file, conn.pcap);

  async function records(): Promise<{ recs: MpaRecord[]; window: WindowFrames; packets: PacketRecord[] }> {
    const recs: MpaRecord[] = [];
    const window = new WindowFrames();
    const packets: PacketRecord[] = [];
    await analyze(file, {
      packetData: true,
      onPacket: (p) => {
        window.note(p);
        packets.push({ ...p, data: new Uint8Array(p.data) });
      },
      onStartup: (r) => recs.push(r),
      onFpdu: (r) => recs.push(r),
    });
    return { recs, window, packets };
  }

  it('each FPDU as the plain definition dumps its octets and octet classes, from the file or a window', async () => {
    const { recs, window, packets } = await records();
    const fpdus = recs.filter(isFpdu);
    expect(fpdus.length).toBe(2 * sizes.length);
    const files = await FileFrames.open(file);
    for (const p of packets) files.note(p);
    const st = makeStyle(true);
    try {
      for (const store of [files, window] as FrameStore[])
        for (const r of fpdus) {
          const startSeq = (r.seq - (r.lenOffset - r.start)) >>> 0;
          const data = streamBytes(store, r.frames, r.from, startSeq, r.wireSize);
          expect(data.have.every((h) => h === 1)).toBe(true);
          const marks = Array.from(fpduLayout(r), (c) => FPDU_LETTER[c] ?? '');
          const lines = recordDump(r, store, st);
          expect(lines.slice(1)).toEqual(reference(data, marks, st, r.crcStatus === 'bad'));
          expect(lines[0]).toMatch(new RegExp(`^FPDU at seq ${startSeq}, ${r.wireSize} octets from frames? `));
        }
    } finally {
      files.close();
    }
  });

  it('FileFrames gives each frame as read from the file, in any order and again', async () => {
    const { packets } = await records();
    const files = await FileFrames.open(file);
    for (const p of packets) files.note(p);
    const ra = await openRandomAccess(file);
    const rnd = randomInts(11);
    try {
      for (let k = 0; k < 200; k++) {
        const f = 1 + rnd(packets.length + 2); // past the last frame too
        const got = files.get(f);
        const want = f <= packets.length ? ra.read(packets[f - 1]!.fileOffset, f) : null;
        if (want === null) expect(got).toBeNull();
        else {
          expect(got?.frame).toBe(f);
          // Octets compared as octets: toEqual walks a typed array an element at a time (most of
          // this test's time); it runs only to word a difference.
          const same = (a: Uint8Array | undefined, b: Uint8Array) => a !== undefined && Buffer.compare(a, b) === 0;
          if (!same(got?.data, want.data)) expect(got?.data).toEqual(want.data);
          if (!same(got?.data, packets[f - 1]!.data)) expect(got?.data).toEqual(packets[f - 1]!.data);
        }
      }
      expect(files.get(0)).toBeNull();
    } finally {
      files.close();
      ra.close();
    }
  });
});

describe('streamBytes', () => {
  // A segment of 40 octets at seq 1000 carried by two IP fragments (frames 1 and 2).
  const payload = patternBytes(40, 3);
  const seg = tcpSegment({ src: '10.0.0.1', dst: '10.0.0.2', sport: 4000, dport: 5000, seq: 1000, payload });
  const frames = [
    ipv4('10.0.0.1', '10.0.0.2', seg.subarray(0, 32), { id: 9, fragOffset: 0, moreFragments: true }),
    ipv4('10.0.0.1', '10.0.0.2', seg.subarray(32), { id: 9, fragOffset: 32 }),
  ];
  const store = new WindowFrames();
  frames.forEach((ip, i) => {
    const data = ethernet(ip);
    store.note({
      frame: i + 1,
      tsSec: 0,
      tsNsec: 0,
      linkType: 1,
      data,
      origLen: data.length,
      fileOffset: 0,
      interfaceId: 0,
    });
  });
  const from = endpoint('10.0.0.1', 4000);
  const got = (fr: number[]) => streamBytes(store, fr, from, 1000, 40);
  it("reads a record's octets out of IP fragments among its frames", () => {
    const all = got([1, 2]);
    expect(all.have.every((h) => h === 1)).toBe(true);
    expect(Buffer.from(all.bytes).equals(Buffer.from(payload))).toBe(true);
  });
  it('decodes the frames of each call as a new decoder would: no fragment is carried to the next call', () => {
    // Alone, each fragment gives nothing; the first one held from a call must not complete the
    // datagram in the next.
    for (let k = 0; k < 3; k++) {
      expect(got([1]).have.every((h) => h === 0)).toBe(true);
      expect(got([2]).have.every((h) => h === 0)).toBe(true);
      expect(got([1, 2]).have.every((h) => h === 1)).toBe(true);
    }
  });
});
