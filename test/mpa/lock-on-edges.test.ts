/**
 * Where framing is found when little is known: a capture that starts mid-stream, or octets after a
 * hole. Each case is a generator scenario (its truth from RFC 5044, src/generate/knob-connection.ts)
 * that the round trip found the analyzer getting wrong; the analysis must now be the truth, FPDU by
 * FPDU, and say what the case is about. Each has a twin where the same rule must not fire.
 */
import { describe, expect, it } from 'vitest';
import { generate } from '../../src/generate/generate.js';
import { KnobError } from '../../src/generate/knobs.js';
import { analyzedWithSeqs } from '../generate/helpers.js';

async function roundTrip(scenario: string, knobs: Record<string, string>, seed: number) {
  const g = generate(scenario, knobs, seed, 'pcap');
  const got = await analyzedWithSeqs(g.capture);
  const want = Object.fromEntries(
    Object.entries(g.truth.fpduSeqs ?? {})
      .filter(([, v]) => v.length > 0)
      .sort(),
  );
  expect({ findings: got.findings, flows: got.flows }).toEqual({ findings: g.truth.findings, flows: g.truth.flows });
  expect(Object.fromEntries(Object.entries(got.fpduSeqs).sort())).toEqual(want);
  return got;
}

const rulesAt = (got: Awaited<ReturnType<typeof analyzedWithSeqs>>, rule: string) =>
  got.findings.filter((f) => f.rule === rule);
const initiator = '10.0.0.1:40001';

describe('mid-stream lock-on and resync: the analysis is the generator truth', () => {
  it('a hole before the stream said it was MPA: the FPDUs held before it are framed (CRC off)', async () => {
    const got = await roundTrip('mid-stream-loss', {}, 1);
    const seqs = got.fpduSeqs[initiator]!;
    // Framed from the first captured octet, and again after the hole.
    expect(rulesAt(got, 'mpa.mid-stream').some((f) => f.from === initiator && f.seq === seqs[0])).toBe(true);
    expect(rulesAt(got, 'mpa.resync').map((f) => f.from)).toEqual([initiator]);
    expect(seqs.length).toBeGreaterThan(5);
  });

  it('the same stream without the hole: one lock-on per direction, no resync', async () => {
    const got = await roundTrip('mid-stream-loss', { impair: '' }, 1);
    expect(rulesAt(got, 'mpa.resync')).toEqual([]);
    expect(rulesAt(got, 'mpa.mid-stream').length).toBe(2);
  });

  it('the second FPDU of a mid-stream capture has a bad CRC: framing starts at the first, the second is a CRC error', async () => {
    const got = await roundTrip('mid-stream-bad-crc', {}, 7);
    const seqs = got.fpduSeqs[initiator]!;
    expect(rulesAt(got, 'mpa.mid-stream').find((f) => f.from === initiator)!.seq).toBe(seqs[0]);
    expect(rulesAt(got, 'mpa.crc-mismatch').map((f) => f.seq)).toEqual([seqs[1]]);
  });

  it('the first captured FPDU has the bad CRC: nothing vouches for the first octet, framing starts after it', async () => {
    // --at 0: the bad CRC is in the first FPDU, before or at the capture's start.
    const got = await roundTrip('mid-stream-bad-crc', { at: '0' }, 1);
    const seqs = got.fpduSeqs[initiator] ?? [];
    expect(rulesAt(got, 'mpa.crc-mismatch')).toEqual([]);
    expect(seqs.length).toBeGreaterThan(2);
  });

  it('one marker position in a direction: its FPDUPTR and the CRCs show markers are on', async () => {
    const got = await roundTrip('mid-stream-one-marker', {}, 1);
    const dirs = got.flows[0]!.mpa!.directions;
    expect(dirs.some((d) => d.markers && d.markerCount === 1)).toBe(true);
  });

  it('octets shaped like markers in a stream without them: markers stay off', async () => {
    // Zero-length Sends: DDP headers full of zero octets, some at every phase.
    const got = await roundTrip(
      'mid-stream',
      { crc: 'on', markers: 'none', size: '0', count: '15', segmentation: 'one-per-segment' },
      2,
    );
    expect(got.flows[0]!.mpa!.directions.every((d) => !d.markers)).toBe(true);
  });

  it('a hole with markers on: framing resumes at the first octet after it, chained to the marked FPDU', async () => {
    const got = await roundTrip('loss-markers', {}, 2);
    const gap = rulesAt(got, 'tcp.capture-loss')[0]!;
    const resync = rulesAt(got, 'mpa.resync')[0]!;
    const seqs = got.fpduSeqs[initiator]!;
    expect(seqs).toContain(resync.seq);
    // Nothing framed was skipped between the hole and the resync.
    expect(seqs.filter((s) => s > gap.seq! && s < resync.seq!)).toEqual([]);
  });

  it('a hole near the end with markers on and CRC off: FPDUs up to the last octet resume framing', async () => {
    const got = await roundTrip(
      'clean',
      {
        rev: '2',
        rtr: 'write',
        markers: 'both',
        crc: 'off',
        messages: 'send-se,send-inv,atomic',
        count: '5',
        size: '500',
        'max-ulpdu': '4000',
        segmentation: 'one-per-segment',
        mss: '536',
        impair: 'loss',
        ip: '6',
      },
      2771,
    );
    expect(rulesAt(got, 'mpa.resync').length).toBe(1);
    expect(rulesAt(got, 'mpa.framing-lost')).toEqual([]);
  });

  it('the first captured FPDU has a bad CRC but chains onto verified ones: framed from it, a CRC error', async () => {
    const got = await roundTrip(
      'clean',
      {
        markers: 'r2i',
        messages: 'send-se,send-inv,read,atomic,immediate',
        count: '7',
        size: '4000',
        'max-ulpdu': '4000',
        segmentation: 'packed',
        mss: '1460',
        close: 'none',
        impair: 'bad-crc',
        ip: '6',
        start: 'mid-stream',
      },
      11021,
    );
    const seqs = got.fpduSeqs['[fd00::1]:40001']!;
    expect(rulesAt(got, 'mpa.crc-mismatch').map((f) => f.seq)).toEqual([seqs[0]]);
  });

  it("CRC off, markers on: the first marker's FPDU runs past the octets held, the chain from the first octet through it shows markers", async () => {
    const got = await roundTrip(
      'clean',
      {
        markers: 'r2i',
        crc: 'off',
        messages: 'send,write,atomic,immediate',
        count: '11',
        size: '4000',
        segmentation: 'one-per-segment',
        mss: '9000',
        impair: 'overlap',
        ip: '6',
        start: 'mid-stream',
      },
      12279,
    );
    expect(got.flows[0]!.mpa!.directions[1]!.markers).toBe(true);
  });

  it('a wrong FPDUPTR in the one marker a mid-stream capture holds: no truth can place it, so no such capture is made', () => {
    const knobs = {
      markers: 'i2r',
      messages: 'send,send-se,send-inv,write,immediate',
      count: '15',
      size: '64',
      'max-ulpdu': '4000',
      segmentation: 'one-per-segment',
      mss: '536',
      impair: 'bad-fpduptr',
      start: 'mid-stream',
    };
    expect(() => generate('clean', knobs, 8421, 'pcap')).toThrow(KnobError);
    expect(() => generate('clean', knobs, 8421, 'pcap')).toThrow(/only one from the Initiator/);
  });

  it('a wrong FPDUPTR mid-stream among other markers: the marker grid places it, an FPDUPTR error', async () => {
    const got = await roundTrip(
      'clean',
      {
        markers: 'i2r',
        messages: 'send,send-se,send-inv,write,immediate',
        count: '15',
        size: '1500',
        'max-ulpdu': '4000',
        segmentation: 'one-per-segment',
        mss: '536',
        impair: 'bad-fpduptr',
        start: 'mid-stream',
      },
      8421,
    );
    expect(rulesAt(got, 'mpa.fpduptr-mismatch').length).toBe(1);
    expect(got.flows[0]!.mpa!.directions[0]!.markers).toBe(true);
  });

  it('a direction of three tiny FPDUs (60 octets) captured mid-stream: framed once the stream ends', async () => {
    const got = await roundTrip(
      'clean',
      {
        rev: '2',
        rtr: 'read',
        markers: 'i2r',
        messages: 'write',
        count: '5',
        size: '0',
        segmentation: 'one-per-segment',
        impair: 'marker-origin',
        ip: '6',
        'seq-wrap': 'yes',
        start: 'mid-stream',
        close: 'fin',
      },
      4057,
    );
    expect(rulesAt(got, 'mpa.mid-stream').length).toBe(2);
    expect(got.flows[0]!.mpa!.directions[1]!.fpdus).toBe(3);
  });

  it('both ends send a Request: each direction frames as the two Requests ask, and both are early', async () => {
    const got = await roundTrip(
      'clean',
      {
        markers: 'none',
        crc: 'off',
        messages: 'send-inv,write,read,immediate',
        count: '7',
        size: '500',
        'max-ulpdu': '256',
        segmentation: 'one-per-segment',
        mss: '536',
        impair: 'initiator-initiator',
        ip: '6',
        close: 'rst',
      },
      1666,
    );
    expect(rulesAt(got, 'mpa.initiator-before-reply').length).toBe(2);
    expect(rulesAt(got, 'mpa.framing-lost')).toEqual([]);
  });
});
