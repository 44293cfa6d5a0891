import { describe, expect, it } from 'vitest';
import { RPC_RDMA } from '../../dissectors/rpc-rdma/index.js';
import { RPC_RULE } from '../../dissectors/rpc-rdma/rules.js';
import { connection, Wire } from './harness.js';
import {
  XID,
  inlineWrite,
  nomsgReply,
  plainReply,
  readCall,
  readdirCall,
  readReply,
  seg,
  writeCall,
} from '../../src/generate/rpcrdma-messages.js';
import {
  Enc,
  RDMA_DONE,
  RDMA_ERROR,
  RDMA_MSG,
  RDMA_MSGP,
  RDMA_NOMSG,
  cat,
  cmPrivateData,
  rdmaHeader,
  rpcCall,
  rpcReply,
} from '../../src/generate/rpcrdma-encoder.js';

const chunk = [seg(0x100, 8192, 0x10000n)];
/** A served NFSv3 READ up to (not including) the Reply. */
function servedRead(w: Wire, xid = XID): void {
  w.call(readCall(xid, chunk));
  w.write(0x100, 0x10000n, 8192);
}
const only = (w: Wire) => [...new Set(w.sink.rules())].sort();

describe('the rule table', () => {
  it('declares every rule once, with a reference and an explanation', () => {
    const ids = RPC_RDMA.rules.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Object.values(RPC_RULE).sort());
    for (const r of RPC_RDMA.rules) {
      expect(r.id.startsWith('rpcordma.')).toBe(true);
      expect(r.explanation.length).toBeGreaterThan(60);
    }
  });
});

describe('transport header rules', () => {
  it('version not 1, and whether ERR_VERS answered it', () => {
    const w = new Wire();
    const v2 = new Enc().u32(XID).u32(2).u32(1).u32(0).bytes();
    w.call(v2);
    w.reply(plainReply(XID));
    expect(only(w)).toEqual(['rpcordma.version-no-err-vers', 'rpcordma.version-unsupported']);
    const ok = new Wire();
    ok.call(v2);
    ok.reply(rdmaHeader({ xid: XID, proc: RDMA_ERROR, errcode: 1, range: [1, 1] }));
    expect(only(ok)).toEqual(['rpcordma.error-reply', 'rpcordma.version-unsupported']);
    expect(ok.records[1]!.info).toBe('RPC-over-RDMA RDMA_ERROR xid 0x1a2b3c4d credits 32 ERR_VERS (versions 1-1)');
  });

  it('deprecated RDMA_MSGP / RDMA_DONE, unknown procedure, short header', () => {
    const w = new Wire();
    const msgp = cat(
      rdmaHeader({ xid: XID, proc: RDMA_MSGP, align: 4096, thresh: 1024 }),
      rpcCall({ xid: XID, prog: 100003, vers: 3, proc: 0 }),
    );
    expect(w.call(msgp)!.info).toBe('RPC Call NFSv3 NULL xid 0x1a2b3c4d');
    w.call(rdmaHeader({ xid: 2, proc: RDMA_DONE }));
    expect(w.sink.of('rpcordma.proc-deprecated')).toHaveLength(2);
    w.call(new Enc().u32(3).u32(1).u32(1).u32(9).bytes());
    expect(w.sink.of('rpcordma.proc-unknown')[0]!.message).toContain('rdma_proc 9');
    w.call(new Uint8Array(8));
    expect(w.sink.of('rpcordma.header-short')).toHaveLength(1);
  });

  it('chunk lists that do not parse within the Send', () => {
    const w = new Wire();
    const never = new Enc().u32(XID).u32(1).u32(1).u32(RDMA_MSG);
    for (let i = 0; i < 64; i++) never.u32(1);
    w.call(never.bytes());
    const millions = new Enc()
      .u32(XID + 1)
      .u32(1)
      .u32(1)
      .u32(RDMA_MSG)
      .u32(0)
      .u32(1)
      .u32(3_000_000)
      .bytes();
    w.call(millions);
    const f = w.sink.of('rpcordma.chunk-lists-malformed');
    expect(f).toHaveLength(2);
    expect(f[1]!.message).toContain('3000000 segments');
  });

  it('unaligned read position', () => {
    const w = new Wire();
    w.call(
      rdmaHeader({
        xid: XID,
        proc: RDMA_NOMSG,
        reads: [
          { position: 0, ...seg(1, 100, 0n) },
          { position: 6, ...seg(2, 8, 0n) },
        ],
      }),
    );
    expect(w.sink.of('rpcordma.read-position-unaligned')[0]!.message).toContain('position 6');
  });

  it('RPC XID after the chunk lists differs from rdma_xid (lists encoded longer than their content)', () => {
    const w = new Wire();
    // A reply chunk pointer counted twice by the encoder: 20 octets of slack before the RPC message.
    const b = cat(
      rdmaHeader({ xid: XID, proc: RDMA_MSG }),
      new Uint8Array(20),
      rpcCall({ xid: XID, prog: 100003, vers: 4, proc: 0 }),
    );
    w.call(b);
    const f = w.sink.of('rpcordma.rpc-xid-mismatch');
    expect(f).toHaveLength(1);
    expect(f[0]!.message).toContain('offset 28');
    expect(f[0]!.message).toContain('rdma_xid is at offset 48');
    expect(RPC_RDMA.firstMessage(w.sendMessage(0, b), w.conn)).toBe(false);
  });

  it('malformed RPC inside RDMA_MSG', () => {
    const w = new Wire();
    w.call(
      cat(rdmaHeader({ xid: XID, proc: RDMA_MSG }), rpcCall({ xid: XID, prog: 100003, vers: 3, proc: 6, rpcvers: 3 })),
    );
    expect(w.sink.of('rpcordma.rpc-malformed')[0]!.message).toContain('RPC version 3');
  });

  it('RDMA_NOMSG Call without a position-zero read chunk', () => {
    const w = new Wire();
    w.call(rdmaHeader({ xid: XID, proc: RDMA_NOMSG, reads: [{ position: 100, ...seg(1, 8, 0n) }] }));
    expect(only(w)).toEqual(['rpcordma.nomsg-call-without-pzrc']);
  });
});

describe('RFC 8797 private data rules', () => {
  it('Send larger than the 1024-octet default without private data', () => {
    const w = new Wire();
    w.call(inlineWrite(XID, 1500));
    expect(w.sink.of('rpcordma.send-exceeds-inline')[0]!.message).toContain('1024-octet default');
  });

  it('Send larger than the announced Receive Size; not checked without the MPA startup', () => {
    const w = new Wire(connection({ replyPrivateData: cmPrivateData({ recv: 2048 }) }));
    w.call(inlineWrite(XID, 1500));
    expect(w.sink.findings).toEqual([]);
    w.call(inlineWrite(XID + 1, 3000));
    expect(w.sink.of('rpcordma.send-exceeds-inline')[0]!.message).toContain("receiver's RFC 8797 Receive Size");
    const blind = new Wire(connection({ initiatorDir: null }));
    blind.call(inlineWrite(XID, 5000));
    expect(blind.sink.findings).toEqual([]);
  });

  it('Send with Invalidate the requester did not offer', () => {
    const w = new Wire(connection({ requestPrivateData: cmPrivateData({ remoteInvalidate: false }) }));
    servedRead(w);
    w.reply(readReply(XID, [chunk]), { invalidate: 0x100 });
    expect(only(w)).toEqual(['rpcordma.invalidate-not-negotiated']);
  });

  it('Send with Invalidate of an STag of another Call', () => {
    const w = new Wire(connection({ requestPrivateData: cmPrivateData({ remoteInvalidate: true }) }));
    servedRead(w);
    w.call(readCall(XID + 1, [seg(0x200, 4096, 0n)]));
    w.reply(readReply(XID, [chunk]), { invalidate: 0x200 });
    expect(only(w)).toEqual(['rpcordma.invalidate-foreign-stag']);
  });
});

describe('chunk accounting at the Reply', () => {
  it('read chunk not read whole before the Reply', () => {
    const w = new Wire();
    w.call(writeCall(XID, [seg(0x200, 8192, 0n)]).payload);
    w.readRequest(0x200, 0n, 4096);
    w.reply(plainReply(XID));
    expect(w.sink.of('rpcordma.read-chunk-incomplete')[0]!.message).toContain('covered only 4096 octets');
  });

  it("the Reply's write list reports a length other than what was written", () => {
    const w = new Wire();
    w.call(readCall(XID, chunk));
    w.write(0x100, 0x10000n, 4096);
    w.reply(readReply(XID, [[seg(0x100, 8192, 0x10000n)]]));
    expect(only(w)).toEqual(['rpcordma.reply-write-length']);
    expect(w.sink.findings[0]!.message).toContain('reports 8192 octets in write chunk 1');
  });

  it('a written length padded to the XDR unit is accepted', () => {
    const w = new Wire();
    w.call(readCall(XID, chunk));
    w.write(0x100, 0x10000n, 1004);
    w.reply(readReply(XID, [[seg(0x100, 1001, 0x10000n)]]));
    expect(w.sink.findings).toEqual([]);
  });

  it("the Reply's chunks are larger than, or other than, the Call's", () => {
    const w = new Wire();
    servedRead(w);
    w.reply(readReply(XID, [[seg(0x100, 9000, 0x10000n)], [seg(0x7, 1, 0n)]]));
    const f = w.sink.of('rpcordma.reply-chunk-mismatch').map((x) => x.message);
    expect(f.some((m) => m.includes('more than the 8192 the Call offered'))).toBe(true);
    expect(f.some((m) => m.includes('write chunk 2, which the Call did not offer'))).toBe(true);
  });

  it('data written after the Reply (raised by the buffer ledger the Reply retired)', () => {
    const w = new Wire();
    servedRead(w);
    w.reply(readReply(XID, [chunk]));
    w.write(0x100, 0x10000n, 100);
    expect(only(w)).toEqual(['ulp.access-after-response']);
  });

  it('a Reply with a read list; RDMA_NOMSG without a reply chunk; RDMA_MSG with a reply chunk', () => {
    const a = new Wire();
    servedRead(a);
    a.reply(readReply(XID, [chunk], { reads: [{ position: 4, ...seg(9, 4, 0n) }] }));
    expect(only(a)).toContain('rpcordma.reply-has-read-list');
    const b = new Wire();
    b.call(readCall(XID, chunk));
    b.reply(nomsgReply(XID, null));
    expect(only(b)).toContain('rpcordma.nomsg-reply-without-reply-chunk');
    const c = new Wire();
    c.call(readdirCall(XID, [seg(0x300, 4096, 0n)]));
    c.write(0x300, 0n, 200);
    c.reply(readReply(XID, [], { reply: [seg(0x300, 200, 0n)] }));
    expect(only(c)).toEqual(['rpcordma.msg-reply-with-reply-chunk']);
  });
});

describe('credits', () => {
  it('more Calls outstanding than granted', () => {
    const w = new Wire();
    w.call(plainCall(1));
    w.reply(plainReply(1, { credit: 1 }));
    w.call(plainCall(2));
    expect(w.sink.findings).toEqual([]);
    w.call(plainCall(3));
    expect(w.sink.of('rpcordma.credits-exceeded')[0]!.message).toContain('2 Calls outstanding');
  });

  it('a grant of zero, and a grant of 2^32-1', () => {
    const w = new Wire();
    w.call(plainCall(1));
    w.reply(plainReply(1, { credit: 0 }));
    w.call(plainCall(2, 0xffffffff));
    w.reply(plainReply(2, { credit: 0xffffffff }));
    expect(only(w)).toEqual(['rpcordma.credit-implausible', 'rpcordma.credit-zero']);
    expect(w.sink.of('rpcordma.credit-implausible')).toHaveLength(2);
  });
});

describe('pairing', () => {
  it('Reply without Call, duplicate Reply, XID reused, Call never answered', () => {
    const w = new Wire();
    w.call(plainCall(1));
    w.reply(plainReply(99));
    expect(only(w)).toEqual(['rpcordma.reply-without-call']);
    w.reply(plainReply(1));
    w.reply(plainReply(1));
    expect(w.sink.of('rpcordma.duplicate-reply')).toHaveLength(1);
    w.call(plainCall(5));
    w.call(plainCall(5));
    expect(w.sink.of('rpcordma.xid-reused')).toHaveLength(1);
    w.end();
    expect(w.sink.of('rpcordma.call-unanswered')).toHaveLength(1);
    expect(w.timings.at(-1)!.response).toBeNaN();
  });

  it('a Reply without Call is not an error when the capture joined mid-connection', () => {
    const w = new Wire(connection({ initiatorDir: null }));
    w.reply(plainReply(99));
    w.call(plainCall(1));
    w.reply(plainReply(98));
    expect(w.sink.findings).toEqual([]);
    expect(w.ledger.strict).toBe(false);
  });

  it('hostile: thousands of reused and unanswered XIDs stay bounded', () => {
    const w = new Wire();
    for (let i = 0; i < 1000; i++) w.call(plainCall(i % 7));
    w.end();
    expect(w.sink.of('rpcordma.xid-reused').length).toBe(1000 - 7);
    expect(w.sink.of('rpcordma.call-unanswered')).toHaveLength(7);
  });
});

describe('backchannel (NFSv4.1 callbacks over the same connection)', () => {
  it('a server Call and the client Reply are paired apart, without findings', () => {
    const w = new Wire();
    w.call(plainCall(1));
    w.reply(plainReply(1));
    const cb = cat(
      rdmaHeader({ xid: 0x77, proc: RDMA_MSG }),
      rpcCall({ xid: 0x77, prog: 0x40000000, vers: 1, proc: 1 }),
    );
    expect(w.reply(cb)!.info).toBe('RPC Call (backchannel) RPC 1073741824v1 proc 1 xid 0x00000077');
    const back = cat(rdmaHeader({ xid: 0x77, proc: RDMA_MSG }), rpcReply({ xid: 0x77 }));
    expect(w.call(back)!.info).toContain('backchannel Reply to RPC 1073741824v1 proc 1');
    w.end();
    expect(w.sink.findings).toEqual([]);
  });
});

describe('snaplen-cut Sends', () => {
  it('decodes what is present, skips the checks that need the rest, says so once at the end', () => {
    const w = new Wire();
    const call = readCall(XID, [seg(0x100, 4096, 0n), seg(0x101, 4096, 0x2000n)]);
    const r = w.call(call, { captured: 40 })!;
    expect(r.info).toBe('RPC-over-RDMA RDMA_MSG xid 0x1a2b3c4d credits 32');
    w.write(0x100, 0n, 100);
    const rep = readReply(XID, [[seg(0x100, 4096, 0n), seg(0x101, 4096, 0x2000n)]]);
    w.reply(rep, { captured: 36 });
    w.call(readCall(XID + 1, chunk), { captured: 70 });
    w.call(new Uint8Array(8), { captured: 8, length: 200 });
    expect(w.sink.findings).toEqual([]);
    w.end();
    expect(only(w)).toEqual(['rpcordma.call-unanswered', 'rpcordma.capture-cut']);
    const f = w.sink.of('rpcordma.capture-cut');
    expect(f).toHaveLength(1);
    expect(f[0]!.severity).toBe('info');
    expect(f[0]!.message).toContain('chunk lists past the cut');
  });

  it('accepts a cut first message as RPC-over-RDMA when what is present fits', () => {
    const w = new Wire();
    const m = w.sendMessage(0, readCall(XID, chunk), { captured: 20 });
    expect(RPC_RDMA.firstMessage(m, w.conn)).toBe(true);
    expect(RPC_RDMA.firstMessage(w.sendMessage(0, readCall(XID, chunk)), w.conn)).toBe(true);
    expect(RPC_RDMA.firstMessage(w.sendMessage(0, new Enc().u32(1).u32(2).u32(3).u32(0).bytes()), w.conn)).toBe(false);
  });
});

describe('hostile input never throws', () => {
  it('random Sends, Writes and Read Requests', () => {
    let s = 99;
    const rnd = (): number => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s;
    };
    const w = new Wire(connection({ requestPrivateData: cmPrivateData({ remoteInvalidate: true }) }));
    for (let i = 0; i < 1500; i++) {
      const k = rnd() % 4;
      if (k === 0 || k === 1) {
        const b = new Uint8Array(rnd() % 300);
        for (let j = 0; j < b.length; j++) b[j] = rnd() & 0xff;
        if (b.length >= 16) {
          b[4] = b[5] = b[6] = 0;
          b[7] = 1;
          b[12] = b[13] = b[14] = 0;
          b[15] = rnd() % 5;
        }
        const o = rnd() % 5 === 0 ? { captured: rnd() % (b.length + 1) } : rnd() % 7 === 0 ? { invalidate: rnd() } : {};
        expect(() => (k === 0 ? w.call(b, o) : w.reply(b, o))).not.toThrow();
      } else if (k === 2) expect(() => w.write(rnd() % 8, BigInt(rnd()), rnd() % 10000)).not.toThrow();
      else expect(() => w.readRequest(rnd() % 8, BigInt(rnd()), rnd() % 10000)).not.toThrow();
    }
    expect(() => w.end()).not.toThrow();
  });
});

function plainCall(xid: number, credit = 32): Uint8Array {
  return cat(
    rdmaHeader({ xid, proc: RDMA_MSG, credit }),
    rpcCall({ xid, prog: 100003, vers: 3, proc: 1, args: new Enc().opaque(new Uint8Array(8)).bytes() }),
  );
}
