import { describe, expect, it } from 'vitest';
import { indexFields, type TreeNode } from '../../src/vocabulary/fields.js';
import { decodeDdp } from '../../dissectors/ddp-rdmap/decode.js';
import { DDP_ANALYSIS_FIELDS, DDP_FIELDS, RDMA_FIELDS } from '../../dissectors/ddp-rdmap/fields.js';
import { ddpSummary, ddpTree } from '../../dissectors/ddp-rdmap/tree.js';
import {
  atomicRequest,
  atomicResponse,
  immediate,
  readRequest,
  readResponse,
  send,
  Stream,
  terminate,
  untagged,
  write,
} from '../helpers/ddp-encoder.js';
import { setup } from './util.js';

const FIELDS = indexFields(DDP_FIELDS, RDMA_FIELDS, DDP_ANALYSIS_FIELDS);
const dec = (b: Uint8Array) => decodeDdp(b.slice(0, 96), b.length);

function walk(nodes: readonly TreeNode[], out: TreeNode[] = []): TreeNode[] {
  for (const n of nodes) {
    out.push(n);
    if (n.children) walk(n.children, out);
  }
  return out;
}
const find = (nodes: readonly TreeNode[], abbrev: string) => walk(nodes).filter((n) => n.field.abbrev === abbrev);

describe('field tables', () => {
  it("declare each field once, with Wireshark's filter names", () => {
    expect(FIELDS.size).toBe(DDP_FIELDS.length + RDMA_FIELDS.length + DDP_ANALYSIS_FIELDS.length);
    for (const name of [
      'iwarp_ddp.tagged_flag',
      'iwarp_ddp.last_flag',
      'iwarp_ddp.rsvd',
      'iwarp_ddp.dv',
      'iwarp_ddp.rsvdulp',
      'iwarp_ddp.stag',
      'iwarp_ddp.tagged_offset',
      'iwarp_ddp.qn',
      'iwarp_ddp.msn',
      'iwarp_ddp.mo',
      'iwarp_rdma.version',
      'iwarp_rdma.rsv',
      'iwarp_rdma.opcode',
      'iwarp_rdma.inval_stag',
      'iwarp_rdma.sinkstag',
      'iwarp_rdma.sinkto',
      'iwarp_rdma.rdmardsz',
      'iwarp_rdma.srcstag',
      'iwarp_rdma.srcto',
      'iwarp_rdma.term_ctrl',
      'iwarp_rdma.term_layer',
      'iwarp_rdma.term_etype_llp',
      'iwarp_rdma.term_errcode_llp',
      'iwarp_rdma.term_hdrct_m',
      'iwarp_rdma.hdrct_d',
      'iwarp_rdma.hdrct_r',
      'iwarp_rdma.term_ddp_seg_len',
      'iwarp_rdma.term_ddp_h',
      'iwarp_rdma.term_rdma_h',
      'iwarp_rdma.atomic.opcode',
      'iwarp_rdma.atomic.original_remote_data_value',
    ]) {
      expect(FIELDS.has(name), name).toBe(true);
    }
    for (const f of FIELDS.values()) {
      expect(f.abbrev).toMatch(/^iwarp_(ddp|rdma)(\.|$)/);
      if (f.mask !== undefined) expect(f.bits, f.abbrev).toBeDefined();
    }
  });
});

describe('detail tree', () => {
  const all = [
    send(1, 'ping'),
    send(2, 'x', { invalidate: 5 }),
    write(1, 0x10n, 'abc'),
    readResponse(2, 0n, 'x'),
    readRequest({ msn: 1, sinkStag: 1, sinkTo: 2n, size: 3, srcStag: 4, srcTo: 5n }),
    terminate({ layer: 1, etype: 2, code: 3, m: true, d: true, segLen: 22, ddpHeader: send(3, 'abcd').slice(0, 18) }),
    atomicRequest({ msn: 1, atomicOpcode: 2, requestId: 1, remoteStag: 2, remoteTo: 3n }),
    atomicResponse({ msn: 1, originalRequestId: 1, value: 2n }),
    immediate({ msn: 1, data: 7n }),
    untagged({ opcode: 0xd, qn: 0, msn: 1 }),
    send(1, 'x').slice(0, 10),
  ];

  it('every node names a declared field, offsets stay inside the ULPDU', () => {
    for (const b of all) {
      const nodes = walk(ddpTree(dec(b)));
      expect(nodes.length).toBeGreaterThan(1);
      for (const n of nodes) {
        expect(FIELDS.get(n.field.abbrev), n.field.abbrev).toBe(n.field);
        if (n.offset !== undefined) expect(n.offset + (n.length ?? 0), n.field.abbrev).toBeLessThanOrEqual(b.length);
      }
    }
  });

  it("untagged Send: DDP and RDMAP subtrees with Wireshark's layout", () => {
    const t = ddpTree(dec(send(1, 'ping')));
    expect(t.map((n) => n.field.abbrev)).toEqual(['iwarp_ddp', 'iwarp_rdma']);
    expect(find(t, 'iwarp_ddp.msn')[0]).toMatchObject({ value: 1, offset: 10, length: 4 });
    expect(find(t, 'iwarp_ddp.qn')[0]).toMatchObject({ value: 0, offset: 6 });
    expect(find(t, 'iwarp_ddp.last_flag')[0]!.value).toBe(true);
    expect(find(t, 'iwarp_ddp.payload_length')[0]!.value).toBe(4);
    expect(find(t, 'iwarp_rdma.opcode')[0]).toMatchObject({ value: 3, display: 'Send (0x3)' });
    expect(find(t, 'iwarp_rdma.reserved')).toHaveLength(1);
  });

  it('tagged Write: STag and 64-bit TO', () => {
    const t = ddpTree(dec(write(0xabcdef01, 0x1122334455667788n, 'x')));
    expect(find(t, 'iwarp_ddp.stag')[0]).toMatchObject({ value: 0xabcdef01, display: '0xabcdef01', offset: 2 });
    expect(find(t, 'iwarp_ddp.tagged_offset')[0]).toMatchObject({ value: 0x1122334455667788n, offset: 6, length: 8 });
  });

  it('Terminate: the copied header is decoded again underneath term_ddp_h', () => {
    const t = ddpTree(
      dec(
        terminate({
          layer: 1,
          etype: 2,
          code: 3,
          m: true,
          d: true,
          segLen: 22,
          ddpHeader: send(3, 'abcd').slice(0, 18),
        }),
      ),
    );
    const h = find(t, 'iwarp_rdma.term_ddp_h')[0]!;
    expect(h.offset).toBe(24);
    const inner = walk(h.children ?? []);
    expect(inner.find((n) => n.field.abbrev === 'iwarp_ddp.msn')).toMatchObject({ value: 3, offset: 34 });
    expect(inner.find((n) => n.field.abbrev === 'iwarp_rdma.opcode')?.value).toBe(3);
    expect(find(t, 'iwarp_rdma.term_errcode_ddp_untagged')[0]!.display).toBe(
      'Invalid MSN - MSN range is not valid (0x03)',
    );
    expect(find(t, 'iwarp_rdma.term_etype_ddp')[0]!.display).toBe('Untagged Buffer Error (0x2)');
    expect(find(t, 'iwarp_rdma.term_ddp_seg_len')[0]!.value).toBe(22);
    expect(find(t, 'iwarp_rdma.term_hdrct_m')[0]!.value).toBe(true);
    expect(find(t, 'iwarp_rdma.hdrct_r')[0]!.value).toBe(false);
  });

  it('a truncated ULPDU shows a malformed item', () => {
    const t = ddpTree(dec(send(1, 'x').slice(0, 10)));
    expect(find(t, 'iwarp_ddp.malformed')[0]!.value).toMatch(/shorter than the 18-octet untagged DDP header/);
  });

  it("with the analyzer's record: an analysis subtree with message, pairing and findings", () => {
    const { a } = setup();
    const A = new Stream(0);
    const B = new Stream(1, 9000, 2);
    a.ulpdu(A.next(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0n, size: 4, srcStag: 2, srcTo: 0n })));
    const r = a.ulpdu(B.next(readResponse(1, 0n, 'abcdef')));
    const t = ddpTree(r);
    expect(find(t, 'iwarp_ddp.analysis.request_frames')[0]!.value).toBe('1 (seq 1000)');
    expect(find(t, 'iwarp_ddp.analysis.message_complete')[0]!.value).toBe(true);
    expect(find(t, 'iwarp_ddp.analysis.finding')[0]!.value).toMatch(/^rdmap.read-response-size: /);
    const bad = a.ulpdu(A.next(send(1, 'x'), { crc: 'bad' }));
    expect(find(ddpTree(bad), 'iwarp_ddp.analysis.skipped')[0]!.value).toBe('CRC does not verify');
  });
});

describe('one-line summaries', () => {
  it('read like tshark Info columns', () => {
    expect(ddpSummary(dec(send(1, filled16())))).toBe('Send QN=0 MSN=1 MO=0 L len=16');
    expect(ddpSummary(dec(send(2, 'ab', { l: false, mo: 100 })))).toBe('Send QN=0 MSN=2 MO=100 len=2');
    expect(ddpSummary(dec(send(3, 'x', { invalidate: 0x1234 })))).toBe(
      'Send with Invalidate QN=0 MSN=3 MO=0 L len=1 inval=0x00001234',
    );
    expect(ddpSummary(dec(write(1, 0n)))).toBe('RDMA Write STag=0x00000001 TO=0x0 L len=0');
    expect(ddpSummary(dec(readResponse(2, 0x1000n, 'abcd', { l: false })))).toBe(
      'Read Response STag=0x00000002 TO=0x1000 len=4',
    );
    expect(
      ddpSummary(dec(readRequest({ msn: 1, sinkStag: 1, sinkTo: 0n, size: 4096, srcStag: 2, srcTo: 0x1000n }))),
    ).toBe('Read Request sink 0x00000001/0x0 size 4096 src 0x00000002/0x1000 MSN=1');
    expect(ddpSummary(dec(terminate({ layer: 2, etype: 0, code: 2 })))).toBe('Terminate LLP/MPA: MPA CRC Error');
    expect(
      ddpSummary(
        dec(terminate({ layer: 0, etype: 2, code: 6, m: true, d: true, segLen: 18, ddpHeader: send(1).slice(0, 18) })),
      ),
    ).toBe('Terminate RDMAP/Remote Operation: Unexpected OpCode [MD]');
    expect(ddpSummary(dec(atomicRequest({ msn: 2, atomicOpcode: 0, requestId: 7, remoteStag: 3, remoteTo: 8n })))).toBe(
      'Atomic Request FetchAdd id=7 STag=0x00000003 TO=0x8 MSN=2',
    );
    expect(ddpSummary(dec(atomicResponse({ msn: 1, originalRequestId: 7, value: 255n })))).toBe(
      'Atomic Response id=7 value=0xff MSN=1',
    );
    expect(ddpSummary(dec(immediate({ msn: 4, data: 1n })))).toBe(
      'Immediate Data QN=0 MSN=4 MO=0 L len=8 data=0x0000000000000001',
    );
    expect(ddpSummary(dec(send(1, 'x', { t: true })))).toMatch(/^Send STag=.* \[tagged!\]$/);
    expect(ddpSummary(dec(untagged({ opcode: 0xc, qn: 0, msn: 1 })))).toBe('Unassigned (0xC) QN=0 MSN=1 MO=0 L len=0');
    expect(ddpSummary(dec(send(1, 'x').slice(0, 9)))).toBe(
      'Send [Malformed DDP segment: ULPDU of 9 octets is shorter than the 18-octet untagged DDP header]',
    );
  });
});

function filled16(): Uint8Array {
  return new Uint8Array(16).fill(0x61);
}

describe('upper-layer factory', () => {
  it('creates analyzers and summarizes only its own records', async () => {
    const { ddpUpperFactory } = await import('../../dissectors/ddp-rdmap/upper-factory.js');
    const { mpaContext } = await import('../helpers/ddp-encoder.js');
    const { CollectSink } = await import('./util.js');
    const f = ddpUpperFactory();
    const an = f.create(3, mpaContext(), new CollectSink());
    const rec = an.ulpdu(new Stream(0).next(send(1, 'ping')));
    expect(rec.flow).toBe(3);
    expect(f.summarize(rec)).toBe('Send QN=0 MSN=1 MO=0 L len=4');
    expect(f.summarize({ kind: 'fpdu' })).toBeNull();
    expect(f.summarize(null)).toBeNull();
    expect(an.summary(0)).toEqual(an.directionStats(0));
  });
});
