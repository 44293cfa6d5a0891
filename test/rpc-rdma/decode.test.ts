import { describe, expect, it } from 'vitest';
import {
  decodeHeader,
  findXid,
  MAX_LIST_ENTRIES,
  readChunks,
  rpcXidAfterLists,
} from '../../dissectors/rpc-rdma/decode.js';
import {
  Enc,
  RDMA_DONE,
  RDMA_ERROR,
  RDMA_MSG,
  RDMA_MSGP,
  RDMA_NOMSG,
  cat,
  rdmaHeader,
  rpcCall,
} from '../../src/generate/rpcrdma-encoder.js';

const seg = (handle: number, length: number, offset: bigint) => ({ handle, length, offset });

describe('RPC-over-RDMA header decoding (RFC 8166 §4.2-§4.5)', () => {
  it('decodes RDMA_MSG with a read list, a write list and a reply chunk, and finds the RPC message after them', () => {
    const hdr = rdmaHeader({
      xid: 0x1a2b3c4d,
      credit: 32,
      proc: RDMA_MSG,
      reads: [
        { position: 100, ...seg(0x11, 4096, 0x1000n) },
        { position: 100, ...seg(0x12, 100, 0x9000n) },
        { position: 200, ...seg(0x13, 8, 0xffff_0000_0000_0000n) },
      ],
      writes: [[seg(0x21, 8192, 0x2000n), seg(0x22, 4, 0x4000n)]],
      reply: [seg(0x31, 1024, 0x5000n)],
    });
    const b = cat(hdr, rpcCall({ xid: 0x1a2b3c4d, prog: 100003, vers: 3, proc: 6 }));
    const h = decodeHeader(b)!;
    expect(h).toMatchObject({ xid: 0x1a2b3c4d, vers: 1, credit: 32, proc: 0, problem: null, hasLists: true });
    expect(h.reads.map((s) => [s.position, s.handle, s.length, s.offset])).toEqual([
      [100, 0x11, 4096, 0x1000n],
      [100, 0x12, 100, 0x9000n],
      [200, 0x13, 8, 0xffff_0000_0000_0000n],
    ]);
    expect(h.writes).toHaveLength(1);
    expect(h.writes[0]!.count).toBe(2);
    expect(h.writes[0]!.segments.map((s) => s.handle)).toEqual([0x21, 0x22]);
    expect(h.reply!.segments[0]).toMatchObject({ handle: 0x31, length: 1024, offset: 0x5000n });
    // 16 fixed + 3 x 24 read entries + 4 end + (4 + 4 + 2 x 16) write chunk + 4 end + (4 + 4 + 16) reply
    expect(h.listsEnd).toBe(16 + 72 + 4 + 40 + 4 + 24);
    expect(h.listsEnd).toBe(hdr.length);
    expect(rpcXidAfterLists(b, h)).toBe(0x1a2b3c4d);
    expect(readChunks(h.reads).map((c) => [c.position, c.segments.length, c.length])).toEqual([
      [100, 2, 4196],
      [200, 1, 8],
    ]);
  });

  it('decodes RDMA_NOMSG with empty lists: 28 octets (Linux RPCRDMA_HDRLEN_MIN)', () => {
    const h = decodeHeader(rdmaHeader({ xid: 1, proc: RDMA_NOMSG }))!;
    expect(h).toMatchObject({ proc: 1, listsEnd: 28, reply: null, problem: null });
    expect(h.reads).toEqual([]);
    expect(h.writes).toEqual([]);
  });

  it('decodes RDMA_MSGP align and threshold before the lists', () => {
    const h = decodeHeader(rdmaHeader({ xid: 2, proc: RDMA_MSGP, align: 4096, thresh: 1024 }))!;
    expect(h).toMatchObject({ proc: 2, align: 4096, thresh: 1024, listsEnd: 36 });
  });

  it('decodes RDMA_DONE (void) and RDMA_ERROR ERR_VERS / ERR_CHUNK', () => {
    expect(decodeHeader(rdmaHeader({ xid: 3, proc: RDMA_DONE }))).toMatchObject({ proc: 3, hasLists: false });
    const v = decodeHeader(rdmaHeader({ xid: 4, proc: RDMA_ERROR, errcode: 1, range: [1, 1] }))!;
    expect(v).toMatchObject({ errcode: 1, versLow: 1, versHigh: 1, problem: null });
    expect(v.hasLists).toBe(false);
    const c = decodeHeader(rdmaHeader({ xid: 5, proc: RDMA_ERROR, errcode: 2 }))!;
    expect(c).toMatchObject({ errcode: 2, versLow: null });
  });

  it('leaves the body of another version alone: only the fixed header positions are common', () => {
    const b = new Enc().u32(9).u32(2).u32(8).u32(0).u32(1).u32(1).bytes();
    const h = decodeHeader(b)!;
    expect(h).toMatchObject({ xid: 9, vers: 2, credit: 8, proc: 0, hasLists: false, listsEnd: null, problem: null });
  });

  it('returns null for fewer than 16 octets', () => {
    expect(decodeHeader(new Uint8Array(15))).toBeNull();
  });
});

describe('hostile headers: bounded, never throwing', () => {
  it('stops a read list that never ends at the message end', () => {
    const e = new Enc().u32(1).u32(1).u32(1).u32(0);
    for (let i = 0; i < 1000; i++) e.u32(1);
    const h = decodeHeader(e.bytes())!;
    expect(h.problem?.kind).toBe('overrun');
    expect(h.listsEnd).toBeNull();
    expect(h.reads.length).toBeLessThan(200);
  });

  it('refuses a segment count of millions without allocating', () => {
    const b = new Enc().u32(1).u32(1).u32(1).u32(0).u32(0).u32(1).u32(5_000_000).bytes();
    const h = decodeHeader(b)!;
    expect(h.problem).toMatchObject({ kind: 'count' });
    expect(h.problem!.detail).toContain('5000000 segments');
    expect(h.writes[0]!.segments).toHaveLength(0);
  });

  it('bounds a read list longer than any Send', () => {
    const e = new Enc().u32(1).u32(1).u32(1).u32(0);
    for (let i = 0; i <= MAX_LIST_ENTRIES; i++) e.u32(1).u32(0).u32(i).u32(1).u64(0n);
    const h = decodeHeader(e.u32(0).u32(0).u32(0).bytes())!;
    expect(h.problem?.kind).toBe('bound');
    expect(h.reads).toHaveLength(MAX_LIST_ENTRIES);
  });

  it('tells a snaplen cut (octets exist but were not captured) from an overrun', () => {
    const full = rdmaHeader({ xid: 6, proc: RDMA_MSG, writes: [[seg(1, 10, 0n), seg(2, 10, 0n)]] });
    const h = decodeHeader(full.subarray(0, 40), full.length)!;
    expect(h.problem?.kind).toBe('cut');
    // Complete at 40 octets, the count of 2 segments no longer fits: the sender's fault.
    expect(decodeHeader(full.subarray(0, 40))!.problem?.kind).toBe('count');
  });

  it('survives random octets', () => {
    let s = 12345;
    const rnd = (): number => {
      s = (s * 1103515245 + 12345) >>> 0;
      return s;
    };
    for (let i = 0; i < 2000; i++) {
      const b = new Uint8Array(16 + (rnd() % 200));
      for (let j = 0; j < b.length; j++) b[j] = rnd() & 0xff;
      // Bias toward version 1 and small procs so the list walker runs.
      b[7] = 1;
      b[4] = b[5] = b[6] = 0;
      b[15] = rnd() % 5;
      b[12] = b[13] = b[14] = 0;
      expect(() => decodeHeader(b, b.length + (rnd() % 3 === 0 ? 100 : 0))).not.toThrow();
    }
  });

  it('finds where rdma_xid really is', () => {
    const b = cat(
      rdmaHeader({ xid: 0xabcdef01, proc: RDMA_MSG }),
      new Uint8Array(20),
      new Enc().u32(0xabcdef01).bytes(),
    );
    expect(findXid(b, 0xabcdef01, 28)).toBe(48);
  });
});
