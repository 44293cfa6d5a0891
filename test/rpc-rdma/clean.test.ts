import { describe, expect, it } from 'vitest';
import { RDMA_ERROR, RDMA_NOMSG, cmPrivateData, rdmaHeader } from '../../src/generate/rpcrdma-encoder.js';
import { connection, Wire } from './harness.js';
import {
  XID,
  inlineWrite,
  nomsgReply,
  plainReply,
  pzrcCall,
  readCall,
  readdirCall,
  readReply,
  seg,
  v4ReadCall,
  writeCall,
} from '../../src/generate/rpcrdma-messages.js';

const negotiated = () =>
  connection({
    requestPrivateData: cmPrivateData({ remoteInvalidate: true, send: 4096, recv: 4096 }),
    replyPrivateData: cmPrivateData({ remoteInvalidate: false, send: 4096, recv: 4096 }),
  });

describe('clean exchanges are silent', () => {
  it('NFSv3 READ with a write chunk served by RDMA Writes', () => {
    const w = new Wire();
    const chunk = [seg(0x100, 8192, 0x10000n)];
    expect(w.call(readCall(XID, chunk))!.info).toBe('RPC Call NFSv3 READ xid 0x1a2b3c4d');
    expect(w.ledger.strict).toBe(true);
    expect(w.write(0x100, 0x10000n, 4096)!.info).toBe(
      'RPC-over-RDMA RDMA Write into write chunk 1 of NFSv3 READ xid 0x1a2b3c4d',
    );
    w.write(0x100, 0x11000n, 4096);
    const r = w.reply(readReply(XID, [[seg(0x100, 8192, 0x10000n)]]))!;
    expect(r.info).toBe('RPC Reply NFSv3 READ xid 0x1a2b3c4d ACCEPT_OK');
    w.end();
    expect(w.sink.findings).toEqual([]);
    expect(w.ledger.size).toBe(0);
    expect(w.timings).toHaveLength(1);
    expect(w.timings[0]).toMatchObject({ program: 'NFSv3', command: 'READ', queue: 'flow 7' });
    const t = w.timings[0]!;
    expect(t.firstData).toBeGreaterThan(t.request);
    expect(t.lastData).toBeGreaterThan(t.firstData);
    expect(t.response).toBeGreaterThan(t.lastData);
    // The tree: rpcordma with its write list, rpc, nfs (status).
    const names = r.tree.map((n) => n.field.abbrev);
    expect(names).toEqual(['rpcordma', 'rpc', 'nfs']);
    const hdr = r.tree[0]!.children!.map((n) => n.field.abbrev);
    expect(hdr).toContain('rpcordma.writes_count');
    expect(hdr).toContain('rpcordma.written_bytes');
    expect(r.tree[0]!.children!.find((n) => n.field.abbrev === 'rpcordma.written_bytes')!.value).toBe(8192);
  });

  it('NFSv3 WRITE with a read chunk served by RDMA Read Requests', () => {
    const w = new Wire();
    const { payload } = writeCall(XID, [seg(0x200, 4096, 0x8000n), seg(0x201, 4096, 0x20000n)]);
    expect(w.call(payload)!.info).toBe('RPC Call NFSv3 WRITE xid 0x1a2b3c4d');
    expect(w.readRequest(0x200, 0x8000n, 4096)!.info).toContain('RDMA Read Request of read chunk at position');
    w.readRequest(0x201, 0x20000n, 4096);
    expect(w.reply(plainReply(XID))!.info).toBe('RPC Reply NFSv3 WRITE xid 0x1a2b3c4d ACCEPT_OK');
    w.end();
    expect(w.sink.findings).toEqual([]);
  });

  it('an NFSv3 WRITE times its data by the Read Responses that carry it, with their frames', () => {
    const w = new Wire();
    const { payload } = writeCall(XID, [seg(0x200, 4096, 0x8000n), seg(0x201, 4096, 0x20000n)]);
    w.call(payload); // frame 1
    w.readRequest(0x200, 0x8000n, 4096); // 2
    w.readRequest(0x201, 0x20000n, 4096); // 3
    expect(w.readResponse(0x200, 0x8000n, 4096)).toBeNull(); // 4: no event line of its own
    w.readResponse(0x201, 0x20000n, 4096); // 5
    w.readResponse(0x999, 0x0n, 16); // 6: no chunk of this Call: not its data
    w.reply(plainReply(XID)); // 7
    w.end();
    expect(w.sink.findings).toEqual([]);
    const t = w.timings[0]!;
    // The harness sends frame k at 1000 + k ms.
    expect(t).toMatchObject({ requestFrame: 1, firstDataFrame: 2, lastDataFrame: 5, responseFrame: 7 });
    expect(t.lastData - t.firstData).toBeCloseTo(0.003, 9);
    expect(t.response - t.lastData).toBeCloseTo(0.002, 9);
  });

  it('a Call never answered is reported at the end with its request frame and no response', () => {
    const w = new Wire();
    w.call(readCall(XID, [seg(0x100, 8192, 0x10000n)]));
    w.write(0x100, 0x10000n, 4096);
    w.end();
    expect(w.timings).toHaveLength(1);
    expect(w.timings[0]!.response).toBeNaN();
    expect(w.timings[0]).toMatchObject({ requestFrame: 1, command: 'READ' });
  });

  it('a long Reply written into the reply chunk, answered by RDMA_NOMSG', () => {
    const w = new Wire();
    w.call(readdirCall(XID, [seg(0x300, 8192, 0x30000n)]));
    w.write(0x300, 0x30000n, 3000);
    const r = w.reply(nomsgReply(XID, [seg(0x300, 3000, 0x30000n)]))!;
    expect(r.info).toBe('RPC-over-RDMA RDMA_NOMSG xid 0x1a2b3c4d credits 32 (Reply to NFSv3 READDIR in reply chunk)');
    w.end();
    expect(w.sink.findings).toEqual([]);
  });

  it('a long Call in a position-zero read chunk (PZRC)', () => {
    const w = new Wire();
    const c = w.call(pzrcCall(XID, seg(0x400, 2000, 0x40000n)))!;
    expect(c.info).toBe('RPC-over-RDMA RDMA_NOMSG xid 0x1a2b3c4d credits 32 (Call in position-zero read chunk)');
    w.readRequest(0x400, 0x40000n, 2000);
    w.reply(plainReply(XID));
    w.end();
    expect(w.sink.findings).toEqual([]);
  });

  it('an NFSv4.1 COMPOUND, its main operation as the statistics command', () => {
    const w = new Wire();
    const c = w.call(v4ReadCall(XID, [seg(0x500, 4096, 0x50000n)]))!;
    expect(c.info).toBe('RPC Call NFSv4 COMPOUND (SEQUENCE, PUTFH, READ) xid 0x1a2b3c4d');
    expect(c.tree.map((n) => n.field.abbrev)).toEqual(['rpcordma', 'rpc', 'nfs']);
    const nfs = c.tree[2]!.children!;
    expect(nfs.filter((n) => n.field.abbrev === 'nfs.opcode').map((n) => n.value)).toEqual([53, 22, 25]);
    expect(nfs.find((n) => n.field.abbrev === 'nfs.main_opcode')!.value).toBe(25);
    w.write(0x500, 0x50000n, 4096);
    expect(w.reply(readReply(XID, [[seg(0x500, 4096, 0x50000n)]]))!.info).toBe(
      'RPC Reply NFSv4 COMPOUND (SEQUENCE, PUTFH, READ) xid 0x1a2b3c4d ACCEPT_OK',
    );
    w.end();
    expect(w.sink.findings).toEqual([]);
    expect(w.timings[0]).toMatchObject({ program: 'NFSv4', command: 'READ' });
  });

  it('RFC 8797 private data: large inline Sends and Send with Invalidate of the Call’s STag, in either ledger order', () => {
    for (const after of [false, true]) {
      const w = new Wire(negotiated());
      w.invalidateAfter = after;
      const c = w.call(readCall(XID, [seg(0x100, 8192, 0x10000n)]))!;
      expect(c.tree.filter((n) => n.field.abbrev === 'rpcordma.cm')).toHaveLength(2);
      w.write(0x100, 0x10000n, 8192);
      w.reply(readReply(XID, [[seg(0x100, 8192, 0x10000n)]]), { invalidate: 0x100 });
      // A 2.6 KB inline WRITE fits the 4 KB receive size both sides announced.
      const big = inlineWrite(XID + 1, 2500);
      expect(big.length).toBeGreaterThan(2500);
      w.call(big);
      w.reply(plainReply(XID + 1));
      w.end();
      expect(w.sink.findings).toEqual([]);
    }
  });

  it('an RDMA_NOMSG Reply with an empty write list and RDMA_ERROR decode without findings of their own', () => {
    const w = new Wire();
    w.call(readdirCall(XID, [seg(0x300, 4096, 0n)]));
    w.write(0x300, 0n, 100);
    w.reply(rdmaHeader({ xid: XID, proc: RDMA_NOMSG, reply: [seg(0x300, 100, 0n)] }));
    expect(w.sink.findings).toEqual([]);
    w.call(readCall(XID + 1, [seg(0x600, 4096, 0n)]));
    const e = w.reply(rdmaHeader({ xid: XID + 1, proc: RDMA_ERROR, errcode: 2 }))!;
    expect(e.info).toBe('RPC-over-RDMA RDMA_ERROR xid 0x1a2b3c4e credits 32 ERR_CHUNK');
    expect(w.sink.rules()).toEqual(['rpcordma.error-reply']);
  });
});
