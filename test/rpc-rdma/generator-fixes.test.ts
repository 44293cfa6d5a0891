/**
 * Analyzer fixes the generator's NFS-over-RDMA scenarios showed (src/generate/nfsrdma-scenarios.ts):
 * a message of unknown procedure from the requester is answered (RDMA_ERROR / ERR_CHUNK, RFC 5666
 * §4.2 and RFC 8166 §4.5; Linux svcrdma since "Hook up the logic to return ERR_CHUNK"), so the
 * answer pairs with it; and a Call never answered is reported from the Call's sender.
 */
import { describe, expect, it } from 'vitest';
import { Enc, RDMA_ERROR, cat, rdmaHeader, rpcCall } from '../../src/generate/rpcrdma-encoder.js';
import { XID, plainReply } from '../../src/generate/rpcrdma-messages.js';
import { Wire } from './harness.js';

const only = (w: Wire) => [...new Set(w.sink.rules())].sort();

describe('unknown rdma_proc from the requester', () => {
  it('its RDMA_ERROR / ERR_CHUNK answer pairs with it: no Reply without Call', () => {
    const w = new Wire();
    w.call(cat(rdmaHeader({ xid: 1, proc: 0 }), rpcCall({ xid: 1, prog: 100003, vers: 3, proc: 0 })));
    w.reply(plainReply(1));
    w.call(cat(new Enc().u32(XID).u32(1).u32(32).u32(9).bytes(), new Uint8Array(12)));
    w.reply(rdmaHeader({ xid: XID, proc: RDMA_ERROR, errcode: 2 }));
    w.end();
    expect(only(w)).toEqual(['rpcordma.error-reply', 'rpcordma.proc-unknown']);
  });

  it('unanswered, it is a Call never answered', () => {
    const w = new Wire();
    w.call(cat(new Enc().u32(XID).u32(1).u32(32).u32(9).bytes(), new Uint8Array(12)));
    w.end();
    expect(only(w)).toEqual(['rpcordma.call-unanswered', 'rpcordma.proc-unknown']);
  });
});

describe('a Call never answered', () => {
  it("is reported from the Call's sender, at the Call", () => {
    const w = new Wire();
    w.call(cat(rdmaHeader({ xid: XID, proc: 0 }), rpcCall({ xid: XID, prog: 100003, vers: 3, proc: 1 })));
    w.end();
    const f = w.sink.of('rpcordma.call-unanswered');
    expect(f).toHaveLength(1);
    expect(f[0]!.from).toBe('10.0.0.1:40000');
    expect(f[0]!.seq).toBe(1);
  });
});
