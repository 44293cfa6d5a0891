import { describe, expect, it } from 'vitest';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import { readRequest, readResponse, send, Stream, terminate, write } from '../helpers/ddp-encoder.js';
import { setup } from './util.js';

function conv(ctx: Partial<MpaContext> = {}) {
  const s = setup(ctx);
  const A = new Stream(0, 1000, 1);
  const B = new Stream(1, 5000, 2);
  return {
    an: s.a,
    sink: s.sink,
    A,
    B,
    a: (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(A.next(ul, o)),
    b: (ul: Uint8Array, o: Parameters<Stream['next']>[1] = {}) => s.a.ulpdu(B.next(ul, o)),
  };
}

const p2p = (rtr: MpaContext['rtr']): Partial<MpaContext> => ({ rev: 2, p2p: true, rtr, initiatorDir: 0 });

describe('RFC 6581 RTR', () => {
  it('zero-length Send RTR: recognised, and it uses MSN 1 of QN 0', () => {
    const c = conv(p2p('send'));
    const r = c.a(send(1));
    expect(r.rtr).toBe('send');
    c.b(send(1, 'first reply'));
    c.a(send(2, 'first real send'));
    expect(c.sink.findings).toEqual([]);
    expect(c.an.directionStats(0).rtr).toBe('send');
    expect(c.an.directionStats(1).rtr).toBeNull();
    // Reusing MSN 1 after the RTR is a duplicate.
    const d = conv(p2p('send'));
    d.a(send(1));
    d.a(send(1, 'oops'));
    expect(d.sink.rules()).toEqual(['ddp.msn-duplicate']);
  });

  it('zero-length Write RTR: siw (STag 1, TO 0) and cxgb4 (STag 1, TO 1) shapes', () => {
    for (const to of [0n, 1n]) {
      const c = conv(p2p('write'));
      expect(c.a(write(1, to)).rtr).toBe('write');
      c.a(send(1, 'data'));
      expect(c.sink.findings).toEqual([]);
      expect(c.an.directionStats(0).rtr).toBe('write');
    }
  });

  it('zero-length Read RTR answered by a zero-length Read Response, STag/TO not checked', () => {
    const c = conv(p2p('read'));
    const r = c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0n, size: 0, srcStag: 1, srcTo: 0n }));
    expect(r.rtr).toBe('read');
    const resp = c.b(readResponse(0xabc, 0x99n));
    expect(resp.readRequest).toEqual({ seq: 1000, frames: [1] });
    c.a(readRequest({ msn: 2, sinkStag: 5, sinkTo: 0n, size: 4, srcStag: 6, srcTo: 0n }));
    c.b(readResponse(5, 0n, 'data'));
    expect(c.sink.findings).toEqual([]);
    expect(c.an.directionStats(0).rtr).toBe('read');
  });

  it('a Read RTR answered with data is a size violation', () => {
    const c = conv(p2p('read'));
    c.a(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0n, size: 0, srcStag: 1, srcTo: 0n }));
    c.b(readResponse(1, 0n, 'x'));
    expect(c.sink.rules()).toEqual(['rdmap.read-response-size']);
  });

  it("the wrong RTR kind is flagged and the Responder's Terminate 0x07 is linked to it", () => {
    const c = conv(p2p('read'));
    const r = c.a(write(1, 0n));
    expect(r.rtr).toBe('write');
    c.b(terminate({ layer: 2, etype: 0, code: 7 }));
    expect(c.sink.rules()).toEqual(['rdmap.rtr-mismatch', 'rdmap.terminate']);
    expect(c.sink.findings[0]!.message).toMatch(
      /should be the negotiated zero-length read RTR .* but it is a zero-length write RTR/,
    );
    expect(c.sink.findings[1]!.message).toMatch(
      /explained by the Initiator's first FPDU at seq 1000 \(frame 1\) not being the negotiated RTR/,
    );
    expect(c.an.directionStats(0).rtr).toBe('write');
  });

  it('a non-RTR first FPDU in peer-to-peer mode', () => {
    const c = conv(p2p('send'));
    c.a(send(1, 'payload'));
    expect(c.sink.rules()).toEqual(['rdmap.rtr-mismatch']);
    expect(c.sink.findings[0]!.message).toMatch(/but it is Send QN=0 MSN=1 MO=0 L len=7/);
    expect(c.an.directionStats(0).rtr).toBeNull();
    // A zero-length Send with the wrong MSN is not an RTR either.
    const m = conv(p2p('send'));
    m.a(send(2));
    expect(m.sink.rules()).toEqual(['rdmap.rtr-mismatch', 'ddp.msn-first']);
  });

  it('an Initiator rejecting the Reply with a Terminate as its first FPDU is not a wrong RTR', () => {
    const c = conv(p2p('write'));
    c.an.noteMpaError(1, 7, 4000, [6]); // the MPA layer saw the Reply choose an RTR not offered
    c.a(terminate({ layer: 2, etype: 0, code: 7 }));
    expect(c.sink.rules()).toEqual(['rdmap.terminate']);
    expect(c.sink.findings[0]!.message).toMatch(/No matching RTR option.*explained by MPA error code 7 at seq 4000/);
    expect(c.an.directionStats(0).rtr).toBeNull();
  });

  it('peer-to-peer without a recorded choice accepts any RTR form', () => {
    const c = conv(p2p(null));
    c.a(write(1, 0n));
    expect(c.sink.findings).toEqual([]);
    expect(c.an.directionStats(0).rtr).toBe('write');
  });

  it('the Initiator may be direction 1; the Responder is not checked', () => {
    const c = conv({ ...p2p('send'), initiatorDir: 1 });
    c.a(send(1, 'responder data')); // direction 0 is the Responder here
    c.b(send(1));
    expect(c.sink.findings).toEqual([]);
    expect(c.an.directionStats(1).rtr).toBe('send');
  });

  it('no RTR check when the startup was not captured or data was lost before it', () => {
    const c = conv({ rev: null, initiatorDir: null, p2p: false });
    c.a(send(7, 'x'));
    expect(c.sink.findings).toEqual([]);
    const l = conv(p2p('send'));
    l.an.noteCaptureGap(0, 900, 24);
    l.a(send(2, 'x'));
    expect(l.sink.rules()).toEqual(['ddp.capture-loss', 'ddp.capture-loss']);
    expect(l.sink.findings[0]!.message).toMatch(/RTR check not possible/);
  });
});

describe('Terminate linking', () => {
  it('a DDP Terminate names the segment whose header it copies, and what we flagged on it', () => {
    const c = conv();
    c.b(send(1, 'one'));
    const bad = send(3, 'three');
    const target = c.b(bad);
    expect(target.findings.map((f) => f.rule)).toEqual(['ddp.msn-gap']);
    const t = c.a(
      terminate({ layer: 1, etype: 2, code: 3, m: true, d: true, segLen: bad.length, ddpHeader: bad.slice(0, 18) }),
    );
    expect(t.terminated).toEqual({ seq: target.seq, frames: [4] });
    const f = c.sink.of('rdmap.terminate')[0]!;
    expect(f.message).toMatch(/^Terminate DDP\/Untagged: Invalid MSN - MSN range is not valid \[MD\]/);
    expect(f.message).toMatch(/DDP segment length 23/);
    expect(f.message).toMatch(
      new RegExp(
        `terminates the peer's segment at seq ${target.seq} \\(frame 4\\), which mpa-dissect flagged: ddp.msn-gap`,
      ),
    );
    expect(c.sink.of('rdmap.terminate-unexplained')).toEqual([]);
  });

  it('a copied tagged header and a copied Read Request header are matched and decoded', () => {
    const c = conv();
    const rr = readRequest({ msn: 1, sinkStag: 3, sinkTo: 0x40n, size: 64, srcStag: 4, srcTo: 0n });
    const rrRec = c.b(rr);
    const w = write(0x55, 0x1000n, 'data');
    const wRec = c.b(w);
    const t1 = c.a(
      terminate({ layer: 0, etype: 1, code: 0, m: true, d: true, segLen: w.length, ddpHeader: w.slice(0, 14) }),
    );
    expect(t1.terminated?.seq).toBe(wRec.seq);
    const t2 = c.a(
      terminate({
        msn: 2,
        layer: 0,
        etype: 1,
        code: 2,
        m: true,
        d: true,
        r: true,
        segLen: 46,
        ddpHeader: rr.slice(0, 18),
        rdmapHeader: rr.slice(18),
      }),
    );
    expect(t2.terminated?.seq).toBe(rrRec.seq);
    expect(c.sink.of('rdmap.terminate')[1]!.message).toMatch(/copied Read Request: sink 0x00000003\/0x40 size 64/);
  });

  it('a copied header matching nothing is said so', () => {
    const c = conv();
    c.b(send(1, 'x'));
    c.a(
      terminate({
        layer: 1,
        etype: 2,
        code: 1,
        m: true,
        d: true,
        segLen: 20,
        ddpHeader: send(9, 'zz', { qn: 5 }).slice(0, 18),
      }),
    );
    expect(c.sink.of('rdmap.terminate')[0]!.message).toMatch(/matches none of the peer's last 1 segments/);
  });

  it("an LLP CRC Terminate is explained by the MPA error noted on the peer's half connection", () => {
    const c = conv();
    c.b(send(1, 'x'));
    c.an.noteMpaError(1, 2, 5024, [4, 6]);
    c.a(terminate({ layer: 2, etype: 0, code: 2 }));
    expect(c.sink.rules()).toEqual(['rdmap.terminate']);
    expect(c.sink.findings[0]!.message).toMatch(
      /explained by MPA error code 2 at seq 5024 \(frames 4,6\) on the peer's half connection/,
    );
  });

  it('an LLP Terminate with another code than the noted error is unexplained', () => {
    const c = conv();
    c.an.noteMpaError(1, 3, 5000, [2]);
    c.a(terminate({ layer: 2, etype: 0, code: 2 }));
    expect(c.sink.rules()).toEqual(['rdmap.terminate', 'rdmap.terminate-unexplained']);
    expect(c.sink.findings[1]).toMatchObject({ severity: 'warning' });
  });

  it('a Terminate is reported even when its own CRC is bad', () => {
    const c = conv();
    const r = c.a(terminate({ layer: 2, etype: 0, code: 1 }), { crc: 'bad' });
    expect(r.skipped).toBe('CRC does not verify');
    expect(c.sink.of('rdmap.terminate')[0]!.message).toMatch(/its own CRC does not verify/);
  });

  it("siw's shapes: M+D+R with only the DDP header of a Send is not an error", () => {
    const c = conv();
    const s = send(1, 'x');
    c.b(s);
    c.a(
      terminate({
        layer: 0,
        etype: 1,
        code: 0,
        m: true,
        d: true,
        r: true,
        segLen: s.length,
        ddpHeader: s.slice(0, 18),
      }),
    );
    expect(c.sink.rules()).toEqual(['rdmap.terminate']);
    expect(c.sink.findings[0]!.message).toMatch(/R is set but no terminated RDMAP header follows/);
  });
});
