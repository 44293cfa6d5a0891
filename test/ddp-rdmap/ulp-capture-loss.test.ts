/**
 * Capture loss and the upper layers (fixes the generator's snaplen-cut scenarios showed): when the
 * TCP layer declares octets of a direction missing, the hand-off makes the buffer ledger stop
 * treating unknown STags as errors and tells the upper layer (SMB Direct, RPC-over-RDMA), which
 * stops treating unseen requests as errors; accesses the ledger could not place are credited to a
 * buffer advertised late (MPA holds a sender's FPDUs until framing is found again, so a request
 * after the loss reaches the upper layer after the server served it).
 */
import { describe, expect, it } from 'vitest';
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import type { WriteMessage } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { generate } from '../../src/generate/generate.js';
import { cat, rdmaHeader, rpcCall } from '../../src/generate/rpcrdma-encoder.js';
import { plainReply } from '../../src/generate/rpcrdma-messages.js';
import { echo, readResponse } from '../../src/generate/smbd-encoder.js';
import type { FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { analyzedTruth } from '../generate/helpers.js';
import { analyzeBytes, rulesOf } from '../helpers/analyze.js';
import { Wire } from '../rpc-rdma/harness.js';
import { CLIENT, Harness, SERVER } from '../smb-direct/harness.js';

const write = (stag: number, to: bigint, length: number, time = 1): WriteMessage => ({
  flow: 1,
  dir: 1,
  from: '10.0.0.2:5445',
  opcode: 0,
  seq: 77,
  lastSeq: 77,
  frames: [7],
  time,
  length,
  intact: true,
  kind: 'write',
  stag,
  to,
});

describe('buffer ledger after capture loss', () => {
  it('credits accesses it could not place to the buffer advertised after them', () => {
    const got: string[] = [];
    const sink: FindingSink = { report: (rule: string, _f: FindingInput) => got.push(rule) };
    const l = new BufferLedger(1, sink);
    l.captureLoss();
    l.write(write(0xab, 0x1000n, 4096, 5));
    l.write(write(0xab, 0x2000n, 4096, 6));
    l.write(write(0xcd, 0x1000n, 100, 6)); // another STag: not credited
    const e = l.advertise({
      owner: 0,
      stag: 0xab,
      base: 0x1000n,
      length: 8192,
      access: 'remote-write',
      request: 1,
      label: 'SMB2 READ MessageId 1',
      invalidate: false,
      seq: 1,
      frames: [1],
    });
    expect(e.moved).toBe(8192);
    expect([e.firstTime, e.lastTime]).toEqual([5, 6]);
    expect(got).toEqual([]);
  });

  it('without a capture loss (a capture joined mid-connection) nothing is kept for later advertisements', () => {
    const l = new BufferLedger(1, { report: () => undefined });
    l.write(write(0xab, 0x1000n, 4096, 5));
    const e = l.advertise({
      owner: 0,
      stag: 0xab,
      base: 0x1000n,
      length: 8192,
      access: 'remote-write',
      request: 1,
      label: 'SMB2 READ MessageId 1',
      invalidate: false,
      seq: 1,
      frames: [1],
    });
    expect(e.moved).toBe(0);
  });
});

describe('SMB Direct after capture loss', () => {
  it('a lost client message: responses without a request and unknown STags are no error, credits no longer counted', () => {
    const h = new Harness();
    h.establish();
    h.ledger.captureLoss(); // as the hand-off does
    h.d.captureLoss?.(CLIENT);
    h.write(SERVER, 0x999, 0, 100);
    h.dt(SERVER, readResponse({ messageId: 42 }, { dataRemaining: 100 }));
    for (let i = 0; i < 300; i++) h.dt(CLIENT, null, { creditsGranted: 0 });
    h.end();
    expect(h.sink.rules()).toEqual([]);
  });

  it('without the loss the same response is an error', () => {
    const h = new Harness();
    h.establish();
    h.dt(SERVER, readResponse({ messageId: 42 }, { dataRemaining: 100 }));
    expect(h.sink.rules()).toEqual(['smb2.response-without-request']);
  });

  it("a lost server message: the server's fragment train resumes at a whole message", () => {
    const h = new Harness();
    h.establish();
    h.dt(CLIENT, echo({ messageId: 1 }));
    h.dt(SERVER, new Uint8Array(40), { remaining: 100 }); // the first fragment of a message whose rest is lost
    h.d.captureLoss?.(SERVER);
    h.dt(SERVER, echo({ messageId: 1 }, true));
    h.end();
    expect(h.sink.rules()).toEqual([]);
  });
});

describe('RPC-over-RDMA after capture loss', () => {
  const call = (xid: number) => cat(rdmaHeader({ xid, proc: 0 }), rpcCall({ xid, prog: 100003, vers: 3, proc: 1 }));
  it('a lost Call: a Reply to an XID not seen is no error', () => {
    const w = new Wire();
    w.call(call(1));
    w.reply(plainReply(1));
    w.dissector.captureLoss?.(0);
    w.reply(plainReply(2));
    w.end();
    expect(w.sink.rules()).toEqual([]);
  });

  it('a lost Reply: Calls outstanding are no longer counted against the credits', () => {
    const w = new Wire();
    w.call(call(1));
    w.reply(plainReply(1, { credit: 1 }));
    w.dissector.captureLoss?.(1);
    w.call(call(2));
    w.call(call(3));
    expect(w.sink.rules()).toEqual([]);
  });
});

describe('the snaplen-cut scenarios, end to end', () => {
  it.each([
    ['smbd-snaplen-cut', 'smb_direct.not-captured'],
    ['nfsrdma-snaplen-cut', 'rpcordma.capture-cut'],
  ])(
    '%s: MPA frames across the cut; TCP and the upper layer each say once what was not captured',
    async (name, ulp) => {
      const g = generate(name, {}, 1, 'pcap');
      const got = await analyzedTruth(g.capture);
      expect(got.findings.map((f) => f.rule).sort()).toEqual([ulp, 'tcp.snaplen-cut'].sort());
    },
  );
});

describe('a snaplen cut inside a Send of several FPDUs, end to end', () => {
  it.each([
    ['smbd-snaplen-in-send', 'smb_direct.not-captured', 'SMB2 WRITE Request MessageId 4 File offset 0 Len 8000'],
    ['nfsrdma-snaplen-in-send', 'rpcordma.capture-cut', 'RPC Call NFSv4 COMPOUND (SEQUENCE, PUTFH, WRITE, …)'],
  ])(
    '%s: the Send is decoded from the octets before the cut, and what was not checked is said once',
    async (name, rule, info) => {
      const g = generate(name, {}, 1, 'pcap');
      const infos: string[] = [];
      const r = await analyzeBytes(g.capture, {
        upper: defaultUpper,
        onFpdu: (f) => {
          const u = (f.upper as { ulp?: { info: string } } | null)?.ulp;
          if (u) infos.push(u.info);
        },
      });
      const rules = rulesOf(r);
      // Said once, and the only upper-layer finding: the held Sends reached the upper layer in order.
      expect(rules.filter((x) => !/^(tcp|mpa|ddp)\./.test(x))).toEqual([rule]);
      expect(infos.some((i) => i.startsWith(info))).toBe(true);
    },
  );

  it('the same Send without the cut draws neither rule', async () => {
    for (const name of ['smbd-clean', 'nfsrdma-clean']) {
      const r = await analyzeBytes(generate(name, {}, 1, 'pcap').capture, { upper: defaultUpper });
      expect(rulesOf(r).filter((x) => x === 'smb_direct.not-captured' || x === 'rpcordma.capture-cut')).toEqual([]);
    }
  });
});
