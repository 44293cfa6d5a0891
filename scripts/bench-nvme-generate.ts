/**
 * Writes the NVMe/RDMA workloads of `npm run bench` without holding them in memory (framed by
 * bench-ulp-writer.ts), each queue built by the generator's NvmeSession as the NVMe-oF RDMA
 * transport binding says:
 *
 * - case (i): one host's admin queue (Connect with its data read by RDMA, Property Get/Set,
 *   Identify Controller and Namespace: 4096-octet blocks) and `queues` I/O queues, each with its
 *   Connect (data in the capsule), then NVM Reads and Writes of 4 KiB and 128 KiB in batches of
 *   `depth` outstanding commands per queue, the queues' batches interleaved. Reads are placed by the
 *   controller's RDMA Writes into a keyed SGL with subtype Fh, completed by Send with Invalidate;
 *   4 KiB Writes carry their data in the capsule (Linux's inline data), 128 KiB Writes are read by
 *   the controller's RDMA Read Requests. About 3 small commands to 1 large.
 * - case (j): many I/O queues open at once, each carrying a few 4 KiB commands: what each queue's
 *   state costs in memory.
 */
import { cmAccept, cmRequest, sqe } from '../src/generate/nvme-rdma-encoder.js';
import { adminClean } from '../src/generate/nvme-rdma-scenarios.js';
import { NVME_PORT, NvmeSession } from '../src/generate/nvme-rdma-session.js';
import { patternBytes } from '../src/generate/mpa-encoder.js';
import type { BenchCapture } from './bench-generate.js';
import { type BenchConn, UlpBenchWriter } from './bench-ulp-writer.js';

const READ = 0x02;
const WRITE = 0x01;
const LBA = 4096;
/** Command sizes in logical blocks, cycled: 4 KiB and 128 KiB. */
const BLOCKS = [1, 1, 32, 1, 1, 1, 32, 1] as const;
const HOST = 0x0a000001;
const TARGET = 0x0a0000fe;

interface Queue {
  s: NvmeSession;
  c: BenchConn;
  /** Commands issued (picks read or write and the size). */
  n: number;
}

function openQueue(w: UlpBenchWriter, qid: number, port: number, hsqsize: number): Queue {
  const s = new NvmeSession({ qid, hsqsize });
  const c = w.open({
    client: { addr: HOST, port },
    server: { addr: TARGET, port: NVME_PORT },
    requestPd: cmRequest({ qid, hrqsize: hsqsize + 1, hsqsize }),
    replyPd: cmAccept(hsqsize + 1),
  });
  return { s, c, n: 0 };
}

const inline = patternBytes(LBA, 71);

/** `count` commands submitted at once on `q`, then each one's data and completion in order. */
function batch(q: Queue, count: number, small = false): void {
  const s = q.s;
  const done: Array<() => void> = [];
  for (let i = 0; i < count; i++) {
    const k = q.n++;
    const blocks = small ? 1 : BLOCKS[(k >> 1) % BLOCKS.length]!;
    const read = k % 2 === 0;
    const len = blocks * LBA;
    const cid = s.cid() & 0xffff;
    const cdw = [k * 64, 0, blocks - 1];
    if (read) {
      const b = s.buffer();
      s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: len, key: b.key, invalidate: true },
          cdw,
        }),
        undefined,
        i === 0 ? 150 : 2,
      );
      done.push(() => {
        s.writeToHost(b.key, b.addr, len, len);
        s.complete(cid, {}, b.key);
      });
    } else if (len <= LBA) {
      s.command(
        sqe({ opc: WRITE, cid, nsid: 1, sgl: { kind: 'in-capsule', offset: 0, length: len }, cdw }),
        inline,
        i === 0 ? 150 : 2,
      );
      done.push(() => s.complete(cid));
    } else {
      const b = s.buffer();
      s.command(
        sqe({ opc: WRITE, cid, nsid: 1, sgl: { kind: 'keyed', addr: b.addr, length: len, key: b.key }, cdw }),
        undefined,
        i === 0 ? 150 : 2,
      );
      done.push(() => {
        s.readFromHost(b.key, b.addr, len, len);
        s.complete(cid);
      });
    }
  }
  for (const f of done) f();
}

/** Case (i): about `targetBytes` of NVMe/RDMA on an admin queue and `queues` I/O queues, `depth` commands in flight each. */
export function generateNvmeCapture(path: string, targetBytes: number, queues = 16, depth = 32): BenchCapture {
  const w = new UlpBenchWriter(path);
  const admin = openQueue(w, 0, 40000, 31);
  adminClean(admin.s);
  w.frameEvents(admin.c, admin.s.events);
  const io = Array.from({ length: queues }, (_, i) => {
    const q = openQueue(w, i + 1, 40001 + i, 127);
    q.s.connect();
    w.frameEvents(q.c, q.s.events);
    return q;
  });
  let turn = 0;
  while (w.bytes < targetBytes) {
    const q = io[turn++ % io.length]!;
    batch(q, depth);
    w.frameEvents(q.c, q.s.events);
  }
  for (const q of [...io, admin]) w.close(q.c);
  return w.finish();
}

/**
 * Case (j): `queues` I/O queues of one host open at once (connected first, all of them), then
 * rounds of one 4 KiB command per queue until about `targetBytes`, closed at the end.
 */
export function generateNvmeQueuesCapture(path: string, targetBytes: number, queues = 10_000): BenchCapture {
  if (queues > 40_000) throw new Error('at most 40,000 queues (one host port each)');
  const w = new UlpBenchWriter(path);
  const io = Array.from({ length: queues }, (_, i) => {
    const q = openQueue(w, 1 + i, 20000 + i, 127);
    q.s.connect();
    w.frameEvents(q.c, q.s.events);
    return q;
  });
  let turn = 0;
  while (w.bytes < targetBytes) {
    const q = io[turn++ % io.length]!;
    batch(q, 1, true);
    w.frameEvents(q.c, q.s.events);
  }
  for (const q of io) w.close(q.c);
  return w.finish();
}
