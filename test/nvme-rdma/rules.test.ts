/**
 * NVMe/RDMA decode and the rules the generated scenarios cannot show on one connection: the CM
 * reject, the controller ID across the admin and I/O queues, the NLB × LBA size check with the
 * Identify Namespace data, snaplen-cut capsules, and hostile input (a CQE for every CID, 2^24-1
 * octet SGLs, a million outstanding commands) staying bounded. Each rule fires once where it must
 * and stays silent where it must not.
 */
import { describe, expect, it } from 'vitest';
import {
  decodeCmReject,
  decodeCmRequest,
  decodeCqe,
  decodeSgl,
  decodeSqe,
  isConnectCommand,
  lbaSizeOfIdentifyNs,
} from '../../dissectors/nvme-rdma/decode.js';
import { hasNvmeRdmaPrivateData } from '../../dissectors/nvme-rdma/index.js';
import { MAX_OUTSTANDING } from '../../dissectors/nvme-rdma/dissector.js';
import {
  cmAccept,
  cmReject,
  cmRequest,
  concatBytes,
  connectData,
  connectSqe,
  cqe,
  identifyNamespace,
  sqe,
} from '../../src/generate/nvme-rdma-encoder.js';
import { rng } from '../../src/generate/mpa-encoder.js';
import { CollectSink, Wire, connection } from './harness.js';

const HOSTID = new Uint8Array(16).fill(7);
const data = (cntlid: number) => connectData({ hostid: HOSTID, cntlid, subnqn: 'nqn.sub', hostnqn: 'nqn.host' });

/** A queue opened as a Linux host does: CM REQ/ACCEPT, Connect (in-capsule data), its completion. */
function queue(
  qid: number,
  o: { shared?: Map<string, unknown>; cntlid?: number; returned?: number; sink?: CollectSink; hsqsize?: number } = {},
): Wire {
  const hsqsize = o.hsqsize ?? 31;
  const w = new Wire(
    connection({
      requestPrivateData: cmRequest({ qid, hrqsize: hsqsize + 1, hsqsize }),
      replyPrivateData: cmAccept(hsqsize + 1),
    }),
    o.shared,
    o.sink,
  );
  w.command(
    concatBytes(
      connectSqe({ cid: 1, qid, sqsize: hsqsize, sgl: { kind: 'in-capsule', offset: 0, length: 1024 } }),
      data(o.cntlid ?? 0xffff),
    ),
  );
  w.complete(cqe({ cid: 1, sqhd: 1, sqid: qid, dw0: o.returned ?? 0x21 }));
  return w;
}

describe('decode', () => {
  it('splits the CQE status as Wireshark masks it (SC 8:1, SCT 11:9, CRD 13:12, M 14, DNR 15)', () => {
    const c = decodeCqe(cqe({ cid: 0xabcd, sqhd: 9, sqid: 3, sct: 2, sc: 0x81, dnr: true }))!;
    expect(c).toMatchObject({ cid: 0xabcd, sqhd: 9, sqid: 3, sct: 2, sc: 0x81, dnr: true, more: false, crd: 0 });
    expect(c.status).toBe((0x81 << 1) | (2 << 9) | 0x8000);
  });

  it('tells the SGL forms apart: keyed, keyed with invalidate, in-capsule, null, other', () => {
    const at = (s: Parameters<typeof sqe>[0]['sgl']) => decodeSgl(sqe({ opc: 2, cid: 1, sgl: s }), 24);
    expect(at({ kind: 'keyed', addr: 0x1234n, length: 0xffffff, key: 0xdeadbeef })).toMatchObject({
      kind: 'keyed',
      length: 0xffffff,
      key: 0xdeadbeef,
      addr: 0x1234n,
      id: 0x40,
    });
    expect(at({ kind: 'keyed', addr: 1n, length: 8, key: 9, invalidate: true })).toMatchObject({
      kind: 'keyed-invalidate',
      id: 0x4f,
    });
    expect(at({ kind: 'in-capsule', offset: 0, length: 4096 })).toMatchObject({
      kind: 'in-capsule',
      length: 4096,
      id: 0x01,
    });
    expect(at({ kind: 'null' })).toMatchObject({ kind: 'null', length: 0, key: 0 });
    expect(at({ kind: 'raw', id: 0x20 })).toMatchObject({ kind: 'other', type: 2 });
  });

  it('reads the CM private data, the Connect command and its data, and the LBA size', () => {
    expect(decodeCmRequest(cmRequest({ qid: 4, hrqsize: 128, hsqsize: 127, cntlid: 0x21 }))).toMatchObject({
      recfmt: 0,
      qid: 4,
      hrqsize: 128,
      hsqsize: 127,
      cntlid: 0x21,
    });
    expect(decodeCmReject(cmReject(4))).toMatchObject({ status: 4 });
    const s = decodeSqe(connectSqe({ cid: 5, qid: 2, sqsize: 63, cattr: 4, sgl: { kind: 'null' } }))!;
    expect(s.connect).toMatchObject({ qid: 2, sqsize: 63, cattr: 4 });
    expect(s.fctype).toBe(1);
    expect(lbaSizeOfIdentifyNs(identifyNamespace(1000n, 4096))).toBe(4096);
    expect(lbaSizeOfIdentifyNs(identifyNamespace(1000n, 512))).toBe(512);
    expect(lbaSizeOfIdentifyNs(new Uint8Array(100))).toBeNull();
    expect(decodeSqe(new Uint8Array(63))).toBeNull();
  });

  it('recognises its private data and first message strictly', () => {
    const c = (req: Uint8Array | null, rep: Uint8Array | null, rejected = false) =>
      connection({ requestPrivateData: req, replyPrivateData: rep, rejected });
    expect(hasNvmeRdmaPrivateData(c(cmRequest({ qid: 0, hrqsize: 32, hsqsize: 31 }), cmAccept(32)))).toBe(true);
    expect(hasNvmeRdmaPrivateData(c(cmRequest({ qid: 1, hrqsize: 128, hsqsize: 127 }), cmReject(6), true))).toBe(true);
    expect(hasNvmeRdmaPrivateData(c(cmRequest({ recfmt: 1, qid: 0, hrqsize: 32, hsqsize: 31 }), null))).toBe(false);
    expect(hasNvmeRdmaPrivateData(c(new Uint8Array(32).fill(1), null))).toBe(false);
    expect(hasNvmeRdmaPrivateData(c(new Uint8Array(20), null))).toBe(false);
    expect(isConnectCommand(connectSqe({ cid: 1, qid: 0, sqsize: 31, sgl: { kind: 'null' } }), 64)).toBe(true);
    expect(isConnectCommand(sqe({ opc: 2, cid: 1, sgl: { kind: 'null' } }), 64)).toBe(false);
  });
});

describe('rules a single generated connection cannot show', () => {
  it('nvme-rdma.cm-rejected: the Reply rejected the queue, with the status named', () => {
    const w = new Wire(
      connection({
        requestPrivateData: cmRequest({ qid: 1, hrqsize: 128, hsqsize: 127 }),
        replyPrivateData: cmReject(4),
        rejected: true,
      }),
    );
    w.end();
    expect(w.sink.rules()).toEqual(['nvme-rdma.cm-rejected']);
    expect(w.sink.findings[0]!.message).toContain('Invalid Host SQ Size');
    const ok = queue(1);
    ok.end();
    expect(ok.sink.rules()).toEqual([]);
  });

  it('nvme-rdma.connect-cntlid-mismatch: across the admin and I/O queues of one host and controller', () => {
    const shared = new Map<string, unknown>();
    const sink = new CollectSink();
    queue(0, { shared, sink, returned: 0x21 });
    queue(1, { shared, sink, cntlid: 0x21, hsqsize: 127 }); // the controller the admin queue returned: silent
    expect(sink.rules()).toEqual([]);
    queue(2, { shared, sink, cntlid: 0x22, hsqsize: 127 });
    expect(sink.rules()).toEqual(['nvme-rdma.connect-cntlid-mismatch']);
    expect(sink.findings[0]!.message).toContain('0x0022');
    // Without the admin queue in the capture nothing is known: silent.
    const alone = new CollectSink();
    queue(3, { shared: new Map(), sink: alone, cntlid: 0x99, hsqsize: 127 });
    expect(alone.rules()).toEqual([]);
  });

  it('nvme-rdma.nlb-length-mismatch: once an Identify Namespace gave the LBA size', () => {
    const shared = new Map<string, unknown>();
    const admin = queue(0, { shared });
    admin.command(
      sqe({ opc: 0x06, cid: 2, nsid: 1, sgl: { kind: 'keyed', addr: 0x1000n, length: 4096, key: 0x77 }, cdw: [0] }),
    );
    admin.write(0x77, 0x1000n, 4096, identifyNamespace(1n << 20n, 512));
    admin.complete(cqe({ cid: 2, sqhd: 2, sqid: 0 }));
    const io = queue(1, { shared, cntlid: 0x21, hsqsize: 127 });
    // 8 blocks of 512: 4096 octets, right.
    io.command(
      sqe({
        opc: 0x02,
        cid: 2,
        nsid: 1,
        sgl: { kind: 'keyed', addr: 0x2000n, length: 4096, key: 0x88 },
        cdw: [0, 0, 7],
      }),
    );
    io.write(0x88, 0x2000n, 4096);
    io.complete(cqe({ cid: 2, sqhd: 2, sqid: 1 }));
    expect([...admin.sink.rules(), ...io.sink.rules()]).toEqual([]);
    // 8 blocks of 512 with an SGL of 8192: wrong.
    io.command(
      sqe({
        opc: 0x01,
        cid: 3,
        nsid: 1,
        sgl: { kind: 'keyed', addr: 0x3000n, length: 8192, key: 0x99 },
        cdw: [0, 0, 7],
      }),
    );
    expect(io.sink.rules()).toEqual(['nvme-rdma.nlb-length-mismatch']);
    // Another namespace, never identified: silent.
    io.command(
      sqe({
        opc: 0x01,
        cid: 4,
        nsid: 2,
        sgl: { kind: 'keyed', addr: 0x4000n, length: 8192, key: 0xaa },
        cdw: [0, 0, 7],
      }),
    );
    expect(io.sink.rules()).toEqual(['nvme-rdma.nlb-length-mismatch']);
  });

  it('timing for every command: program NVMe, the command name and the queue', () => {
    const w = queue(1, { hsqsize: 127 });
    w.command(
      sqe({
        opc: 0x02,
        cid: 2,
        nsid: 1,
        sgl: { kind: 'keyed', addr: 0x2000n, length: 4096, key: 0x88 },
        cdw: [0, 0, 7],
      }),
    );
    const t0 = w.time;
    w.write(0x88, 0x2000n, 4096);
    const t1 = w.time;
    w.complete(cqe({ cid: 2, sqhd: 2, sqid: 1 }));
    const t2 = w.time;
    w.command(sqe({ opc: 0x00, cid: 3, nsid: 1, sgl: { kind: 'null' } }));
    w.end();
    expect(w.timings.map((t) => [t.program, t.command, t.queue])).toEqual([
      ['NVMe', 'Connect', '1'],
      ['NVMe', 'Read', '1'],
      ['NVMe', 'Flush', '1'],
    ]);
    expect(w.timings[1]).toMatchObject({ code: 2, request: t0, firstData: t1, lastData: t1, response: t2 });
    expect(w.timings[2]!.response).toBeNaN();
    expect(w.sink.rules()).toEqual(['nvme-rdma.command-not-completed']);
  });
});

describe('snaplen-cut capsules', () => {
  it('decodes what is present, skips the rest, and says so once per connection', () => {
    const w = queue(1, { hsqsize: 127 });
    const cmd = sqe({
      opc: 0x02,
      cid: 2,
      nsid: 1,
      sgl: { kind: 'keyed', addr: 0x2000n, length: 4096, key: 0x88 },
      cdw: [0, 0, 7],
    });
    const rec = w.command(cmd, { captured: 40 });
    expect(rec!.info).toContain('40 of 64');
    w.command(cmd.slice(), { captured: 20 });
    w.complete(cqe({ cid: 2, sqhd: 3, sqid: 1 }), { captured: 10 });
    w.complete(cqe({ cid: 9, sqhd: 3, sqid: 1 })); // its command may be one of those cut: no error
    w.end();
    expect(w.sink.rules()).toEqual(['nvme-rdma.not-captured']);
    expect(w.sink.findings[0]!.message).toBe(
      'octets not captured, not checked: command SQEs (2×); completion CQEs (1×)',
    );
  });
});

describe('hostile input stays bounded', () => {
  it('a CQE for every possible CID on a fresh queue: 64 listed, the rest counted', () => {
    const w = queue(1, { hsqsize: 127 });
    for (let cid = 0; cid < 65536; cid++) w.complete(cqe({ cid, sqhd: 1, sqid: 1 }));
    w.end();
    const f = w.sink.of('nvme-rdma.completion-without-command');
    expect(f).toHaveLength(65);
    expect(f[64]!.message).toContain(`${65536 - 64} more findings`);
  });

  it('an SGL of 2^24-1 octets is a ledger entry, never an allocation', () => {
    const w = queue(1, { hsqsize: 127 });
    w.command(
      sqe({
        opc: 0x02,
        cid: 2,
        nsid: 1,
        sgl: { kind: 'keyed', addr: 0n, length: 0xffffff, key: 0x88 },
        cdw: [0, 0, 0xffff],
      }),
    );
    w.write(0x88, 0n, 4096);
    w.complete(cqe({ cid: 2, sqhd: 2, sqid: 1 }));
    expect(w.sink.rules()).toEqual(['nvme-rdma.data-length-mismatch']);
    expect(w.sink.findings[0]!.message).toContain('4096 octets moved by RDMA; the keyed SGL length is 16777215');
  });

  it('a million outstanding commands: the outstanding table capped, each excess said once', {
    timeout: 300_000,
  }, () => {
    const w = queue(1, { hsqsize: 127 });
    const b = sqe({ opc: 0x00, cid: 0, nsid: 1, sgl: { kind: 'null' } });
    for (let i = 0; i < 1_000_000; i++) {
      b[2] = i & 0xff;
      b[3] = (i >>> 8) & 0xff;
      w.command(b);
      w.records.length = 0;
    }
    w.end();
    const count = (r: string) => w.sink.of(r).length;
    expect(count('nvme-rdma.queue-full')).toBe(1);
    expect(count('nvme-rdma.outstanding-capacity')).toBe(1);
    // CIDs repeat every 65536 commands; the tracker forgot them first: no reuse is seen.
    expect(count('nvme-rdma.cid-in-use')).toBe(0);
    expect(count('nvme-rdma.command-not-completed')).toBe(65); // 64 listed, then the count
    expect(w.sink.of('nvme-rdma.command-not-completed')[64]!.message).toContain(`${MAX_OUTSTANDING - 64} more`);
  });

  it('keyed SGLs of commands never completed: the ledger capped, said once', { timeout: 120_000 }, () => {
    const w = queue(1, { hsqsize: 127 });
    const b = sqe({
      opc: 0x02,
      cid: 0,
      nsid: 1,
      sgl: { kind: 'keyed', addr: 0n, length: 4096, key: 0 },
      cdw: [0, 0, 0],
    });
    for (let i = 0; i < 20_000; i++) {
      b[2] = i & 0xff;
      b[3] = (i >>> 8) & 0xff;
      b.set([i & 0xff, (i >>> 8) & 0xff, (i >>> 16) & 0xff], 35); // key = i
      w.command(b);
      w.records.length = 0;
    }
    w.end();
    expect(w.sink.of('ulp.ledger-capacity')).toHaveLength(1);
    expect(w.ledger.size).toBeLessThanOrEqual(4096);
  });

  it('random capsules, cut or whole, both ways: no exception, findings bounded per rule', () => {
    const r = rng(4420);
    const w = queue(1, { hsqsize: 7 });
    for (let i = 0; i < 20_000; i++) {
      const host = r() < 0.5;
      const len = host
        ? r() < 0.8
          ? 64 + Math.floor(r() * 200)
          : Math.floor(r() * 64)
        : r() < 0.8
          ? 16
          : Math.floor(r() * 40);
      const b = new Uint8Array(len);
      for (let k = 0; k < len; k++) b[k] = Math.floor(r() * 256);
      if (host && len >= 64 && r() < 0.5) b[1] = 0x40;
      if (!host && len >= 16 && r() < 0.7) b[14] = b[15] = 0;
      const captured = r() < 0.1 ? Math.floor(r() * len) : len;
      if (host) w.command(b, { captured });
      else w.complete(b, r() < 0.2 ? { invalidate: Math.floor(r() * 2 ** 32), captured } : { captured });
      if (r() < 0.05) w.write(Math.floor(r() * 2 ** 32), BigInt(Math.floor(r() * 2 ** 40)), Math.floor(r() * 70000));
      w.records.length = 0;
    }
    w.end();
    const per = new Map<string, number>();
    for (const f of w.sink.findings) per.set(f.rule, (per.get(f.rule) ?? 0) + 1);
    for (const [rule, n] of per) if (!rule.startsWith('ulp.')) expect(n, rule).toBeLessThanOrEqual(65);
  });
});
