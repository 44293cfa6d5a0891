/**
 * Never TUF: MPA (whose FPDUs with CRC and a ULPDU_Length divisible by 4 pass TUF's receiver test
 * with the DDP header as a "key"), random octets, plain protocols, zeros, and every capture we have.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildScenario } from '../../src/generate/scenario.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { encodeFpdus, rng } from '../../src/generate/mpa-encoder.js';
import { write, send } from '../helpers/ddp-encoder.js';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { buildReport } from '../../src/report/json-report.js';
import { sharedCaptures } from '../helpers/analyze.js';
import { runTuf } from './helpers.js';
import { looksLikeMpaFpdu } from '../../src/analysis/framing-flow.js';

const enc = new TextEncoder();

function noTuf(r: Awaited<ReturnType<typeof runTuf>>): void {
  for (const f of r.report.flows) expect(f.tuf).toBeNull();
  expect(r.records).toEqual([]);
  expect(r.rules.filter((x) => x.startsWith('tuf.'))).toEqual([]);
}

function randomBytes(n: number, seed: number): Uint8Array {
  const r = rng(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

// RDMA Writes to one STag whose ULPDU_Length (14 + payload) is a multiple of 4: with CRC each FPDU is
// exactly ULPDU_Length + 8 octets, so each segment passes TUF's test with a recurring 6-octet "key".
const lookalikes = Array.from({ length: 12 }, (_, i) => ({
  ulpdu: write(0x1234, i * 4096, randomBytes(2 + 4 * (10 + i * 7), i)),
}));

describe('never TUF', () => {
  it('the MPA look-alike really passes the receiver test, and is recognised as an FPDU', () => {
    const { bytes, fpdus } = encodeFpdus(lookalikes, { markers: false, crc: true });
    const keys = new Set<string>();
    for (let i = 0; i < fpdus.length; i++) {
      const a = fpdus[i]!.lenRel;
      const b = i + 1 < fpdus.length ? fpdus[i + 1]!.lenRel : bytes.length;
      const seg = bytes.subarray(a, b);
      expect((seg[0]! << 8) | seg[1]!).toBe(seg.length - 8); // TUF §5.4: Length = segment length - 8
      keys.add(Buffer.from(seg.subarray(2, 8)).toString('hex'));
      expect(looksLikeMpaFpdu(seg)).toBe(true);
    }
    expect(keys.size).toBe(1); // the "key" recurs: only the CRC tells it from TUF
    expect(looksLikeMpaFpdu(randomBytes(64, 1))).toBe(false);
  });

  it('MPA with startup frames, CRC, FPDUs that pass the receiver test: MPA, not TUF', async () => {
    const c = buildMpaConnection({
      request: { c: true },
      reply: { c: true },
      i2r: lookalikes,
      r2i: lookalikes.slice(0, 4),
    });
    const r = await runTuf(c.pcap, { upper: defaultUpper });
    noTuf(r);
    expect(r.report.flows[0]!.mpa).not.toBeNull();
  });

  it('MPA captured mid-stream (no startup frames), same look-alike FPDUs: not TUF', async () => {
    const c = buildMpaConnection({
      request: null,
      reply: null,
      i2r: lookalikes,
      r2i: lookalikes.slice(0, 5),
      encodeCrc: true,
      encodeMarkers: [false, false],
      scenario: { noHandshake: true },
    });
    noTuf(await runTuf(c.pcap, { upper: defaultUpper }));
    noTuf(await runTuf(c.pcap)); // without the DDP layer either: the CRC says MPA
  });

  it('MPA without CRC captured mid-stream, same look-alike FPDUs: not TUF (PAD and DDP header say MPA)', async () => {
    // C=0: the CRC field may hold anything (RFC 5044 §7.1.1), so only PAD (zero, §4.2) and the DDP
    // segment header at the ULPDU's start tell an FPDU from a TUF framing PDU.
    const { bytes, fpdus } = encodeFpdus(lookalikes, { markers: false, crc: false });
    const seg = bytes.subarray(fpdus[0]!.lenRel, fpdus[1]!.lenRel);
    expect(looksLikeMpaFpdu(seg)).toBe(true);
    const tufLike = seg.slice();
    tufLike[seg.length - 6] = 0x5a; // a non-zero octet where MPA's PAD is
    expect(looksLikeMpaFpdu(tufLike)).toBe(false);
    const c = buildMpaConnection({
      request: null,
      reply: null,
      i2r: lookalikes,
      r2i: lookalikes.slice(0, 5),
      encodeCrc: false,
      encodeMarkers: [false, false],
      scenario: { noHandshake: true },
    });
    const r = await runTuf(c.pcap, { upper: defaultUpper });
    noTuf(r);
    expect(r.report.flows[0]!.mpa).not.toBeNull();
  });

  it('MPA with markers (zero marker at SeqStart, 512-octet grid): not TUF marker mode', async () => {
    const sends = Array.from({ length: 10 }, (_, i) => ({ ulpdu: send(i + 1, randomBytes(900 + i * 13, 40 + i)) }));
    const c = buildMpaConnection({
      request: { m: true, c: true },
      reply: { m: true, c: true },
      i2r: sends,
      r2i: sends,
    });
    noTuf(await runTuf(c.pcap, { upper: defaultUpper }));
  });

  it('random octets, in any segmentation', async () => {
    for (const seed of [1, 2, 3]) {
      const sc = buildScenario([
        { dir: 0, bytes: randomBytes(200_000, seed), cut: { random: 1, seed, max: 1460 } },
        { dir: 1, bytes: randomBytes(50_000, seed + 9) },
      ]);
      noTuf(await runTuf(sc.pcap));
    }
  });

  it('a plain text protocol, and zeros', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `GET /files/${i}.bin HTTP/1.1\r\nHost: example\r\n\r\n`).join(
      '',
    );
    const resp = Array.from(
      { length: 400 },
      (_, i) => `HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n${String(i).padStart(8, ' ')}`,
    ).join('');
    const sc = buildScenario([
      { dir: 0, bytes: enc.encode(lines) },
      { dir: 1, bytes: enc.encode(resp) },
    ]);
    noTuf(await runTuf(sc.pcap));
    const z = buildScenario([
      { dir: 0, bytes: new Uint8Array(100_000) },
      { dir: 1, bytes: new Uint8Array(30_000), cut: new Array(30).fill(1000) },
    ]);
    noTuf(await runTuf(z.pcap));
  });

  it('a binary length-prefixed protocol (DNS over TCP style), one message per segment', async () => {
    const msgs = Array.from({ length: 50 }, (_, i) => {
      const body = randomBytes(30 + i * 3, i);
      body[0] = 0x12; // a fixed ID, as a poor client might use
      body[1] = 0x34;
      const m = new Uint8Array(2 + body.length);
      m[0] = body.length >> 8;
      m[1] = body.length & 0xff;
      m.set(body, 2);
      return m;
    });
    const all = new Uint8Array(msgs.reduce((a, b) => a + b.length, 0));
    let o = 0;
    for (const m of msgs) {
      all.set(m, o);
      o += m.length;
    }
    const sc = buildScenario([{ dir: 0, bytes: all, cut: msgs.map((m) => m.length) }]);
    noTuf(await runTuf(sc.pcap));
  });

  /** The corpus's TUF captures (their truth names a tuf-* scenario) are TUF on purpose. */
  const isTufCorpusCapture = (f: string): boolean => {
    const truth = f.replace(/\.pcap(ng)?$/, '.json');
    return (
      existsSync(truth) &&
      String((JSON.parse(readFileSync(truth, 'utf8')) as { scenario?: unknown }).scenario).startsWith('tuf-')
    );
  };
  const dirs: Array<[string, string | null]> = [
    ['captures/', join(import.meta.dirname, '../../captures')],
    ['../shared/captures/reference', sharedCaptures('reference')],
    ['../shared/captures/real', sharedCaptures('real')],
  ];
  for (const [name, dir] of dirs) {
    it.skipIf(dir === null)(
      `every capture in ${name}${dir === null ? ' (skipped: not present)' : ''}: tuf null everywhere, no tuf.* finding`,
      async () => {
        const files: string[] = [];
        const walk = (d: string): void => {
          for (const e of readdirSync(d, { withFileTypes: true })) {
            if (e.isDirectory()) walk(join(d, e.name));
            else if (/\.(pcap|pcapng)(\.gz)?$/.test(e.name) && !isTufCorpusCapture(join(d, e.name)))
              files.push(join(d, e.name));
          }
        };
        walk(dir!);
        expect(files.length).toBeGreaterThan(0);
        for (const f of files) {
          let tufRecords = 0;
          const r = await analyze(f, { upper: defaultUpper, onTuf: () => tufRecords++ });
          const doc = buildReport(r);
          expect(doc.flows.filter((x) => x.tuf !== null).map((x) => `${f} flow ${x.id}`)).toEqual([]);
          expect(doc.findings.filter((x) => x.rule.startsWith('tuf.')).map((x) => `${f}: ${x.rule}`)).toEqual([]);
          expect(tufRecords).toBe(0);
          void readFileSync;
        }
      },
      120_000,
    );
  }
});
