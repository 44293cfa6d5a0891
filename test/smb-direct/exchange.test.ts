/**
 * A clean SMB Direct connection: negotiation, credits, a READ served by RDMA Writes, a WRITE
 * served by RDMA Read Requests, RDMA_V1_INVALIDATE answered by Send with Invalidate, a message
 * fragmented over three Sends, compounded commands, an interim response and a keepalive. No rule
 * may fire; Info texts, trees and timings are checked along the way.
 */
import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../../src/vocabulary/fields.js';
import {
  bare,
  compound,
  readRequest,
  readResponse,
  SMB2,
  smb2Header,
  writeRequest,
  writeResponse,
  cat,
} from '../../src/generate/smbd-encoder.js';
import { CLIENT, Harness, SERVER } from './harness.js';

function find(nodes: readonly TreeNode[], abbrev: string): TreeNode[] {
  const out: TreeNode[] = [];
  const walk = (ns: readonly TreeNode[]): void => {
    for (const n of ns) {
      if (n.field.abbrev === abbrev) out.push(n);
      if (n.children) walk(n.children);
    }
  };
  walk(nodes);
  return out;
}

function cleanConnection(ledgerFirst: boolean): Harness {
  const h = new Harness({}, ledgerFirst);
  h.negotiate();
  // MS-SMBD 4.1: the first Data Transfer carries the SMB2 NEGOTIATE and grants the Responder its credits.
  h.dt(CLIENT, bare({ command: SMB2.NEGOTIATE, messageId: 0 }, 36), { creditsGranted: 255 });
  h.dt(SERVER, bare({ command: SMB2.NEGOTIATE, messageId: 0, response: true }, 64), { creditsGranted: 1 });
  // READ over RDMA_V1: two RDMA Writes fill the client's buffer.
  h.dt(
    CLIENT,
    readRequest({ messageId: 12 }, { length: 65536, descriptors: [{ offset: 0x10000, token: 0xabc, length: 65536 }] }),
  );
  h.write(SERVER, 0xabc, 0x10000, 32768);
  h.write(SERVER, 0xabc, 0x18000, 32768);
  h.dt(SERVER, readResponse({ messageId: 12 }, { dataRemaining: 65536 }));
  // WRITE over RDMA_V1: the server RDMA-Reads the client's buffer.
  h.dt(
    CLIENT,
    writeRequest(
      { messageId: 13 },
      { remainingBytes: 8192, descriptors: [{ offset: 0x40000, token: 0xdef, length: 8192 }] },
    ),
  );
  const rr = h.readRequest(SERVER, 0xdef, 0x40000, 8192);
  h.readResponse(CLIENT, rr);
  h.dt(SERVER, writeResponse({ messageId: 13 }, 8192));
  // READ over RDMA_V1_INVALIDATE, answered by a Send with Invalidate of its Token.
  h.dt(
    CLIENT,
    readRequest(
      { messageId: 14 },
      { length: 4096, channel: 2, descriptors: [{ offset: 0x80000, token: 0x111, length: 4096 }] },
    ),
  );
  h.write(SERVER, 0x111, 0x80000, 4096);
  h.dt(SERVER, readResponse({ messageId: 14 }, { dataRemaining: 4096 }), {}, { invalidate: 0x111 });
  // A 3000-octet response fragmented over three Sends of at most 1364 octets (MS-SMBD 4.3).
  h.dt(CLIENT, bare({ command: SMB2.QUERY_DIRECTORY, messageId: 15 }, 40));
  const big = bare({ command: SMB2.QUERY_DIRECTORY, messageId: 15, response: true }, 3000 - 64);
  h.dt(SERVER, big.subarray(0, 1340), { remaining: 1660 });
  h.dt(SERVER, big.subarray(1340, 2680), { remaining: 320 });
  h.dt(SERVER, big.subarray(2680), { remaining: 0 });
  // A compound of two related requests and its compounded responses; an interim response first.
  h.dt(
    CLIENT,
    compound(bare({ command: SMB2.ECHO, messageId: 16 }, 4), bare({ command: SMB2.ECHO, messageId: 17 }, 4)),
  );
  h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 17, response: true, async: true, status: 0x103 }, 9));
  h.dt(
    SERVER,
    compound(
      bare({ command: SMB2.ECHO, messageId: 16, response: true }, 4),
      bare({ command: SMB2.ECHO, messageId: 17, response: true, async: true }, 4),
    ),
  );
  // Keepalive: an empty message with RESPONSE_REQUESTED, answered by an empty credit grant.
  h.dt(CLIENT, null, { flags: 1, creditsGranted: 0 });
  h.dt(SERVER, null, { creditsGranted: 1 });
  // An unsolicited oplock break notification (MessageId 0xFFFFFFFFFFFFFFFF).
  h.dt(SERVER, bare({ command: SMB2.OPLOCK_BREAK, messageId: 0xffffffffffffffffn, response: true }, 24));
  h.end();
  return h;
}

describe('SMB Direct: a clean connection', () => {
  for (const ledgerFirst of [true, false]) {
    it(`raises no finding (ledger checked ${ledgerFirst ? 'before' : 'after'} the upper layer)`, () => {
      const h = cleanConnection(ledgerFirst);
      expect(h.sink.findings).toEqual([]);
      expect(h.ledger.size).toBe(0);
    });
  }

  it('writes tshark-style Info texts', () => {
    const info = cleanConnection(true).info();
    expect(info).toEqual([
      'SMB Direct Negotiate Request',
      'SMB Direct Negotiate Response',
      'SMB2 NEGOTIATE Request',
      'SMB2 NEGOTIATE Response',
      'SMB2 READ Request MessageId 12 File offset 0 Len 65536 via RDMA_V1',
      'SMB2 READ Response MessageId 12 DataRemaining 65536',
      'SMB2 WRITE Request MessageId 13 File offset 0 Len 8192 via RDMA_V1',
      'SMB2 WRITE Response MessageId 13 Count 8192',
      'SMB2 READ Request MessageId 14 File offset 0 Len 4096 via RDMA_V1_INVALIDATE',
      'SMB2 READ Response MessageId 14 DataRemaining 4096',
      'SMB2 QUERY_DIRECTORY Request MessageId 15',
      'SMB Direct Data Transfer (credits granted 1) [fragment 1, 1660 octets remaining]',
      'SMB Direct Data Transfer (credits granted 1) [fragment 2, 320 octets remaining]',
      'SMB2 QUERY_DIRECTORY Response MessageId 15 [reassembled from 3 fragments, 3000 octets]',
      'SMB2 ECHO Request MessageId 16; SMB2 ECHO Request MessageId 17',
      'SMB2 ECHO Response MessageId 17 (interim, STATUS_PENDING)',
      'SMB2 ECHO Response MessageId 16; SMB2 ECHO Response MessageId 17',
      'SMB Direct Data Transfer (credits granted 0, response requested)',
      'SMB Direct Data Transfer (credits granted 1)',
      'SMB2 OPLOCK_BREAK Notification',
    ]);
  });

  it('reports one timing per answered request, with the RDMA data phase', () => {
    const h = cleanConnection(true);
    expect(h.timings.map((t) => `${t.program} ${t.command}`)).toEqual([
      'SMB2 NEGOTIATE',
      'SMB2 READ',
      'SMB2 WRITE',
      'SMB2 READ',
      'SMB2 QUERY_DIRECTORY',
      'SMB2 ECHO',
      'SMB2 ECHO',
    ]);
    const read = h.timings[1]!;
    expect(read.firstData).toBeGreaterThan(read.request);
    expect(read.lastData).toBeGreaterThan(read.firstData);
    expect(read.response).toBeGreaterThan(read.lastData);
    const write = h.timings[2]!;
    expect(write.lastData).toBeGreaterThan(write.firstData); // Read Request, then Read Response
  });

  it('builds an smb_direct node with its fields and an smb2 node per command', () => {
    const h = cleanConnection(true);
    const req = h.records[0]!;
    expect(req.protocol).toBe('smb_direct');
    expect(find(req.tree, 'smb_direct.version.min')[0]!.value).toBe(0x0100);
    expect(find(req.tree, 'smb_direct.max_fragmented_size')[0]!.value).toBe(1048576);
    const rsp = h.records[1]!;
    expect(find(rsp.tree, 'smb_direct.credits.granted')[0]!.value).toBe(255);
    expect(find(rsp.tree, 'smb_direct.peer_send_credits')[0]!.value).toBe(255);
    // The READ request: SMB2 header and body fields, the Buffer Descriptor, offsets within the Send.
    const read = h.records[4]!;
    const smb2 = find(read.tree, 'smb2');
    expect(smb2).toHaveLength(1);
    expect(smb2[0]!.offset).toBe(24);
    expect(find(read.tree, 'smb2.cmd')[0]!.value).toBe(8);
    expect(find(read.tree, 'smb2.msg_id')[0]!.value).toBe(12n);
    expect(find(read.tree, 'smb2.channel')[0]!.value).toBe(1);
    expect(find(read.tree, 'smb2.read_length')[0]!.value).toBe(65536);
    expect(find(read.tree, 'smb2.buffer_descriptor.token')[0]!.value).toBe(0xabc);
    expect(find(read.tree, 'smb2.buffer_descriptor.token')[0]!.offset).toBe(24 + 112 + 8);
    expect(find(read.tree, 'smb2.buffer_descriptor.offset')[0]!.value).toBe(0x10000n);
    expect(find(read.tree, 'smb2.fid')[0]!.value).toBe('04030201-0605-0807-090a-0b0c0d0e0f10');
    // The READ response: DataRemaining, the request's frame, the octets moved.
    const rsp12 = h.records[7]!;
    expect(find(rsp12.tree, 'smb2.read_remaining')[0]!.value).toBe(65536);
    expect(find(rsp12.tree, 'smb2.response_to')[0]!.value).toBe(read.tree.length ? 5 : 0);
    expect(find(rsp12.tree, 'smb2.rdma.moved')[0]!.value).toBe(65536);
    // The compounded responses: two smb2 nodes in one smb_direct node.
    const comp = h.records.find((r) => r?.info.startsWith('SMB2 ECHO Response MessageId 16'))!;
    expect(find(comp.tree, 'smb2')).toHaveLength(2);
    // The keepalive answer says what it answers and how long it took.
    const ka = h.records.find(
      (r) =>
        r?.info === 'SMB Direct Data Transfer (credits granted 1)' &&
        find(r.tree, 'smb_direct.keepalive.latency_us').length,
    )!;
    expect(find(ka.tree, 'smb_direct.keepalive.latency_us')[0]!.value).toBe(100);
    // The reassembled message says so.
    const re = h.records.find((r) => r?.info.includes('reassembled'))!;
    expect(find(re.tree, 'smb_direct.fragment.count')[0]!.value).toBe(3);
    expect(find(re.tree, 'smb_direct.reassembled.length')[0]!.value).toBe(3000);
  });

  it('counts credits per direction as MS-SMBD 3.1.5.1 / 3.1.5.8 define them', () => {
    const h = new Harness();
    h.negotiate({}, { creditsGranted: 10 });
    const a = h.dt(CLIENT, null, { creditsGranted: 5 })!;
    expect(find(a.tree, 'smb_direct.send_credits')[0]!.value).toBe(9);
    expect(find(a.tree, 'smb_direct.peer_send_credits')[0]!.value).toBe(5);
    const b = h.dt(SERVER, null, { creditsGranted: 3 })!;
    expect(find(b.tree, 'smb_direct.send_credits')[0]!.value).toBe(4);
    expect(find(b.tree, 'smb_direct.peer_send_credits')[0]!.value).toBe(12);
    h.end();
    expect(h.sink.findings).toEqual([]);
  });

  it('decodes a message whose start was not captured without negotiation findings', () => {
    const h = new Harness({ initiatorDir: null });
    h.dt(CLIENT, readRequest({ messageId: 40 }, { descriptors: [{ offset: 0, token: 7, length: 4096 }] }));
    h.write(SERVER, 9, 0, 100); // an STag advertised before the capture began: not an error
    h.dt(SERVER, readResponse({ messageId: 39 }, { dataRemaining: 10 })); // answers an unseen request
    h.write(SERVER, 7, 0, 4096);
    h.dt(SERVER, readResponse({ messageId: 40 }, { dataRemaining: 4096 }));
    h.end();
    expect(h.sink.findings).toEqual([]);
    expect(h.info()[0]).toBe('SMB2 READ Request MessageId 40 File offset 0 Len 65536 via RDMA_V1');
  });

  it('places SMB2 nodes without offsets when the message was reassembled', () => {
    const h = new Harness();
    h.establish();
    const msg = cat(smb2Header({ command: SMB2.ECHO, messageId: 3 }), new Uint8Array(2000));
    h.dt(CLIENT, msg.subarray(0, 1000), { remaining: msg.length - 1000 });
    const r = h.dt(CLIENT, msg.subarray(1000), { remaining: 0 })!;
    expect(find(r.tree, 'smb2')[0]!.offset).toBeUndefined();
  });
});

describe('SMB Direct: the detail tree is built when read', () => {
  it('shows the octets of the Send as they were, though the payload was reused after the call', () => {
    const h = new Harness();
    h.negotiate();
    const signature = Uint8Array.from({ length: 16 }, (_, i) => 0xa0 + i);
    const fileId = Uint8Array.from({ length: 16 }, (_, i) => 0x30 + i);
    const msg = readRequest(
      { messageId: 7 },
      { length: 4096, fileId, descriptors: [{ offset: 0x2000, token: 0x77, length: 4096 }] },
    );
    msg.set(signature, 48); // MS-SMB2 2.2.1: Signature, octets 48-63 of the header
    const rec = h.dt(CLIENT, msg, {}, { scrub: true })!;
    expect(rec.info).toBe('SMB2 READ Request MessageId 7 File offset 0 Len 4096 via RDMA_V1');
    expect(find(rec.tree, 'smb2.signature')[0]!.value).toEqual(signature);
    expect(find(rec.tree, 'smb2.fid')[0]!.value).toBe('33323130-3534-3736-3839-3a3b3c3d3e3f');
    expect(find(rec.tree, 'smb2.buffer_descriptor.token')[0]!.value).toBe(0x77);
    expect(find(rec.tree, 'smb2.msg_id')[0]!.value).toBe(7n);
    // Read twice: the same nodes (built once).
    expect(rec.tree).toBe(rec.tree);
  });
});
