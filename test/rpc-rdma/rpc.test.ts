import { describe, expect, it } from 'vitest';
import { describeCall, replyStatus } from '../../dissectors/rpc-rdma/describe.js';
import { MAX_OPS_LISTED } from '../../dissectors/rpc-rdma/nfs.js';
import { decodeRpc, type RpcCall, type RpcReply } from '../../dissectors/rpc-rdma/rpc.js';
import { Enc, authSys, compound, nfs3ReadArgs, op, rpcCall, rpcReply } from '../../src/generate/rpcrdma-encoder.js';

describe('ONC RPC headers (RFC 5531 §9)', () => {
  it('decodes a Call, skipping an AUTH_SYS credential and the verifier by their lengths', () => {
    const b = rpcCall({
      xid: 0x1a2b3c4d,
      prog: 100003,
      vers: 3,
      proc: 6,
      cred: authSys('a-long-machine-name'),
      args: nfs3ReadArgs(0n, 4096),
    });
    const r = decodeRpc(b, 0);
    expect(r.malformed).toBeNull();
    const c = r.msg as RpcCall;
    expect(c).toMatchObject({ kind: 'call', xid: 0x1a2b3c4d, rpcvers: 2, prog: 100003, vers: 3, proc: 6 });
    expect(c.cred!.flavor).toBe(1);
    expect(c.verf).toMatchObject({ flavor: 0, length: 0 });
    expect(c.argsAt).toBe(b.length - nfs3ReadArgs(0n, 4096).length);
    expect(describeCall(c)).toMatchObject({ program: 'NFSv3', command: 'READ', label: 'NFSv3 READ' });
  });

  it('decodes accepted and denied Replies', () => {
    const ok = decodeRpc(rpcReply({ xid: 9, results: new Enc().u32(0).bytes() }), 0).msg as RpcReply;
    expect(ok).toMatchObject({ kind: 'reply', replyStat: 0, acceptStat: 0, resultsAt: 24 });
    expect(replyStatus(ok)).toBe('ACCEPT_OK');
    const mism = decodeRpc(rpcReply({ xid: 9, accept: 2 }), 0).msg as RpcReply;
    expect(mism).toMatchObject({ acceptStat: 2, low: 3, high: 3 });
    expect(replyStatus(mism)).toBe('PROG_MISMATCH');
    const denied = decodeRpc(rpcReply({ xid: 9, denied: 1 }), 0).msg as RpcReply;
    expect(replyStatus(denied)).toBe('MSG_DENIED AUTH_ERROR');
  });

  it('says what is malformed', () => {
    expect(decodeRpc(rpcCall({ xid: 1, prog: 1, vers: 1, proc: 1, rpcvers: 3 }), 0).malformed).toContain(
      'RPC version 3',
    );
    expect(decodeRpc(new Enc().u32(1).u32(7).bytes(), 0).malformed).toContain('msg_type 7');
    const bigAuth = new Enc().u32(1).u32(0).u32(2).u32(100003).u32(3).u32(0).u32(1).u32(100000).bytes();
    expect(decodeRpc(bigAuth, 0).malformed).toContain('100000 octets');
  });

  it('reports a capture cut inside the header as cut, not malformed', () => {
    const b = rpcCall({ xid: 1, prog: 100003, vers: 3, proc: 6 });
    const r = decodeRpc(b.subarray(0, 30), 0, b.length);
    expect(r.cut).toBe(true);
    expect(r.malformed).toBeNull();
  });
});

describe('NFSv4 COMPOUND operation lists (RFC 8881 §16.2)', () => {
  const v4 = (ops: Uint8Array[], xid = 5) =>
    rpcCall({ xid, prog: 100003, vers: 4, proc: 1, args: compound('tag', 1, ops) });

  it('walks the operations and names the main one', () => {
    const c = decodeRpc(v4([op.sequence(), op.putfh(), op.read(0n, 4096)]), 0).msg as RpcCall;
    expect(c.nfs).toMatchObject({ tag: 'tag', minor: 1, opsCount: 3, ops: [53, 22, 25], opsComplete: true });
    expect(describeCall(c)).toMatchObject({
      program: 'NFSv4',
      command: 'READ',
      label: 'NFSv4 COMPOUND (SEQUENCE, PUTFH, READ)',
    });
  });

  it('continues past WRITE data moved to a read chunk (only its length word is inline)', () => {
    const b = v4([op.sequence(), op.putfh(), op.write(0n, 8192, false), op.getattr()]);
    // The read chunk's position is where the WRITE data would start: right after its length word.
    const position = b.length - op.getattr().length;
    const c = decodeRpc(b, 0, b.length, new Map([[position, 8192]])).msg as RpcCall;
    expect(c.nfs!.ops).toEqual([53, 22, 38, 9]);
    expect(c.nfs!.opsComplete).toBe(true);
    // Without the chunk, the 8192 data octets are looked for inline and are not there.
    expect((decodeRpc(b, 0).msg as RpcCall).nfs!.ops).toEqual([53, 22, 38]);
  });

  it('stops at an operation whose arguments it does not walk, marking the list incomplete', () => {
    const c = decodeRpc(v4([op.sequence(), op.putfh(), op.open(), op.getattr()]), 0).msg as RpcCall;
    expect(c.nfs!.ops).toEqual([53, 22, 18]);
    expect(c.nfs!.opsComplete).toBe(false);
    expect(describeCall(c).label).toBe('NFSv4 COMPOUND (SEQUENCE, PUTFH, OPEN, …)');
  });

  it('bounds a COMPOUND that claims a million operations', () => {
    const e = new Enc().string('').u32(1).u32(1_000_000);
    for (let i = 0; i < 200; i++) e.u32(24);
    const c = decodeRpc(rpcCall({ xid: 1, prog: 100003, vers: 4, proc: 1, args: e.bytes() }), 0).msg as RpcCall;
    expect(c.nfs!.ops).toHaveLength(MAX_OPS_LISTED);
    expect(c.nfs!.opsComplete).toBe(false);
  });
});
