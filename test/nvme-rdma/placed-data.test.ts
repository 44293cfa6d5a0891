/**
 * Structures the controller places or reads by RDMA, handed up from the tagged data: Connect data
 * the controller reads through the Connect's keyed SGL (decoded from the host's Read Response, its
 * CNTLID checked), the Identify Namespace LBA format (FLBAS with its high index bits; formats with
 * metadata leave the (NLB + 1) × LBA size check silent), and the buffer ledger asking MPA for
 * tagged octets only while such a structure is awaited.
 */
import { describe, expect, it } from 'vitest';
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import { lbaSizeOfIdentifyNs } from '../../dissectors/nvme-rdma/decode.js';
import {
  cmAccept,
  cmRequest,
  concatBytes,
  connectData,
  connectSqe,
  cqe,
  identifyNamespace,
  sqe,
} from '../../src/generate/nvme-rdma-encoder.js';
import { CollectSink, Wire, connection } from './harness.js';

const HOSTID = new Uint8Array(16).fill(9);
const data = (cntlid: number) =>
  connectData({
    hostid: HOSTID,
    cntlid,
    subnqn: 'nqn.2014-08.org.example:sub',
    hostnqn: 'nqn.2014-08.org.example:host',
  });

function open(qid: number, shared: Map<string, unknown>, sink = new CollectSink()): Wire {
  return new Wire(
    connection({ requestPrivateData: cmRequest({ qid, hrqsize: 32, hsqsize: 31 }), replyPrivateData: cmAccept(32) }),
    shared,
    sink,
  );
}

/** An admin queue whose Connect returned controller 0x21 (Connect data in the capsule). */
function admin(shared: Map<string, unknown>): Wire {
  const w = open(0, shared);
  w.command(
    concatBytes(
      connectSqe({ cid: 1, qid: 0, sqsize: 31, sgl: { kind: 'in-capsule', offset: 0, length: 1024 } }),
      data(0xffff),
    ),
  );
  w.complete(cqe({ cid: 1, sqhd: 1, sqid: 0, dw0: 0x21 }));
  return w;
}

/** An I/O queue's Connect whose data the controller reads through a keyed SGL (key 0x44 at 0x8000). */
function keyedConnect(w: Wire): void {
  w.command(connectSqe({ cid: 1, qid: 1, sqsize: 31, sgl: { kind: 'keyed', addr: 0x8000n, length: 1024, key: 0x44 } }));
  w.readRequest(0x44, 0x8000n, 1024);
}

describe('Connect data read by the controller (keyed SGL)', () => {
  it('decoded from the Read Response; a CNTLID other than the admin queue returned fires connect-cntlid-mismatch', () => {
    const shared = new Map<string, unknown>();
    admin(shared);
    const w = open(1, shared);
    keyedConnect(w);
    const rec = w.readResponse(0x44, 0x8000n, 1024, data(0x22));
    expect(rec?.info).toBe('NVMeOF Connect Data cid=1');
    const flat = JSON.stringify(rec?.tree, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
    expect(flat).toContain('nqn.2014-08.org.example:host');
    expect(flat).toContain('nqn.2014-08.org.example:sub');
    w.complete(cqe({ cid: 1, sqhd: 1, sqid: 1, dw0: 0x21 }));
    expect(w.sink.rules()).toEqual(['nvme-rdma.connect-cntlid-mismatch']);
    expect(w.sink.findings[0]!.message).toContain('0x0022');
  });

  it("silent when the CNTLID is the admin queue's, and when the read does not start at the SGL address", () => {
    const shared = new Map<string, unknown>();
    admin(shared);
    const right = open(1, shared);
    keyedConnect(right);
    expect(right.readResponse(0x44, 0x8000n, 1024, data(0x21))?.info).toBe('NVMeOF Connect Data cid=1');
    right.complete(cqe({ cid: 1, sqhd: 1, sqid: 1, dw0: 0x21 }));
    expect(right.sink.rules()).toEqual([]);
    // A read of the second half: not the start of the Connect data, not decoded (no record, no finding).
    const part = open(1, shared);
    keyedConnect(part);
    expect(part.readResponse(0x44, 0x8200n, 512, data(0x22).subarray(512))).toBeNull();
    // Fewer than the 768 octets up to the Host NQN's end: not decoded either.
    expect(part.readResponse(0x44, 0x8000n, 512, data(0x22).subarray(0, 512))).toBeNull();
    expect(part.sink.rules()).toEqual([]);
  });
});

describe('Identify Namespace LBA format', () => {
  it('FLBAS bits 6:5 extend the format index when NLBAF counts more than 16 formats', () => {
    const b = identifyNamespace(1000n, 4096);
    b[25] = 19; // 20 formats
    b[26] = 0x20 | 0x02; // index 0b01_0010 = 18
    b[128 + 4 * 18 + 2] = 9; // LBAF 18: 512-octet blocks
    expect(lbaSizeOfIdentifyNs(b)).toBe(512);
    b[25] = 3; // 4 formats: bits 6:5 are not part of the index
    b[128 + 4 * 2 + 2] = 12;
    expect(lbaSizeOfIdentifyNs(b)).toBe(4096);
  });

  it('a format with metadata leaves the NLB check silent; the same format without fires it', () => {
    for (const ms of [8, 0]) {
      const shared = new Map<string, unknown>();
      const a = admin(shared);
      a.command(
        sqe({ opc: 0x06, cid: 2, nsid: 1, sgl: { kind: 'keyed', addr: 0x1000n, length: 4096, key: 0x77 }, cdw: [0] }),
      );
      const id = identifyNamespace(1n << 20n, 512);
      id[128] = ms; // LBAF0 MS: metadata octets per block
      a.write(0x77, 0x1000n, 4096, id);
      a.complete(cqe({ cid: 2, sqhd: 2, sqid: 0 }));
      const io = open(1, shared);
      io.command(
        concatBytes(
          connectSqe({ cid: 1, qid: 1, sqsize: 31, sgl: { kind: 'in-capsule', offset: 0, length: 1024 } }),
          data(0x21),
        ),
      );
      io.complete(cqe({ cid: 1, sqhd: 1, sqid: 1, dw0: 0x21 }));
      // 8 blocks of 512 (plus 8 octets of metadata each when formatted so) under an SGL of 4160.
      io.command(
        sqe({
          opc: 0x02,
          cid: 2,
          nsid: 1,
          sgl: { kind: 'keyed', addr: 0x2000n, length: 4160, key: 0x88 },
          cdw: [0, 0, 7],
        }),
      );
      expect(io.sink.rules()).toEqual(ms === 0 ? ['nvme-rdma.nlb-length-mismatch'] : []);
    }
  });
});

describe('the ledger asks for tagged octets only while a structure is awaited', () => {
  it('keeping(dir) follows the live entries with keep, by the direction their data travels in', () => {
    const l = new BufferLedger(1, new CollectSink());
    const ad = (request: number, access: 'remote-write' | 'remote-read', keep: number) =>
      l.advertise({
        owner: 0,
        stag: 0x100 + request,
        base: 0n,
        length: 4096,
        access,
        request,
        label: `r${request}`,
        invalidate: false,
        seq: 0,
        frames: [],
        keep,
      });
    ad(1, 'remote-write', 0); // the bulk: nothing kept
    expect([l.keeping(0), l.keeping(1)]).toEqual([false, false]);
    ad(2, 'remote-write', 512); // Identify: the peer's RDMA Writes carry it
    expect([l.keeping(0), l.keeping(1)]).toEqual([false, true]);
    expect(l.keepOf(0, 0x102)).toBe(512);
    expect(l.keepOf(0, 0x101)).toBe(0);
    ad(3, 'remote-read', 1024); // Connect data: the owner's Read Responses carry it
    expect([l.keeping(0), l.keeping(1)]).toEqual([true, true]);
    l.retire(0, 2);
    l.retire(0, 3);
    expect([l.keeping(0), l.keeping(1)]).toEqual([false, false]);
    expect(l.retire(0, 1).map((e) => e.label)).toEqual(['r1']);
    expect(l.size).toBe(0);
  });
});
