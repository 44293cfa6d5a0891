/**
 * NVMe over Fabrics on RDMA scenarios (MPA Rev 2 on port 4420, one queue per connection): a clean
 * admin queue and a clean I/O queue with what a Linux host does on each, and one scenario per rule
 * with one mistake each. Each is built by nvme-rdma-session.ts on ulp-connection.ts; the expected
 * findings are the author's, at the message the specification says is wrong.
 */
import { identifyNamespace, propertySqe, sqe, cmRequest, OPC_FABRICS, FCTYPE_DISCONNECT } from './nvme-rdma-encoder.js';
import { CLIENT, NvmeSession, SERVER, type NvmeQueueOptions } from './nvme-rdma-session.js';
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, joinConnections, ULP_KNOBS } from './ulp-connection.js';
import { patternBytes } from './mpa-encoder.js';

/** Each scenario's session, by name: the capsules it sends (the NVMe/TCP twin of test/ulp/tshark-nvme.test.ts). */
const SESSIONS = new Map<string, () => NvmeSession>();

/** Scenarios of one host's admin and I/O queue: their two sessions. */
const HOST_SESSIONS = new Map<string, () => [NvmeSession, NvmeSession]>();

/** The session of NVMe/RDMA scenario `name`, freshly built; undefined for another name. */
export function nvmeSession(name: string): NvmeSession | undefined {
  return SESSIONS.get(name)?.();
}

/** Every queue's session of scenario `name`, in capture order (one, or a host's admin and I/O queue). */
export function nvmeSessions(name: string): NvmeSession[] | undefined {
  const one = nvmeSession(name);
  return one ? [one] : HOST_SESSIONS.get(name)?.();
}

function nvme(name: string, summary: string, run: (s: NvmeSession) => void, o: NvmeQueueOptions = {}): Scenario {
  SESSIONS.set(name, () => {
    const s = new NvmeSession(o);
    run(s);
    return s;
  });
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => {
      const s = new NvmeSession(o);
      run(s);
      return buildUlpConnection(s.spec(), k, seed);
    },
  };
}

/**
 * One host's admin queue, then one of its I/O queues, in one capture (the host's second port):
 * checks that need what the admin queue showed (the controller ID its Connect returned, the LBA
 * size its Identify Namespace gave) run on the I/O queue.
 */
function nvmeHost(
  name: string,
  summary: string,
  admin: (s: NvmeSession) => void,
  io: (s: NvmeSession) => void,
  ioOptions: NvmeQueueOptions = {},
): Scenario {
  const sessions = (): [NvmeSession, NvmeSession] => {
    const a = new NvmeSession({ clientPort: 50123 });
    admin(a);
    const q = new NvmeSession({ qid: 1, clientPort: 50124, ...ioOptions });
    io(q);
    return [a, q];
  };
  HOST_SESSIONS.set(name, sessions);
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => joinConnections(sessions().map((s) => buildUlpConnection(s.spec(), k, seed))),
  };
}

const IDENTIFY = 0x06;
const KEEP_ALIVE = 0x18;
const FLUSH = 0x00;
const WRITE = 0x01;
const READ = 0x02;
const LBA = 4096;

/** Controller registers (NVMe Base "Controller Properties"): CAP, CC, CSTS. */
const PROP = { CAP: 0x00, CC: 0x14, CSTS: 0x1c } as const;

/** What a Linux host does on the admin queue after connecting: enable the controller, identify it and its namespace. */
export function adminClean(s: NvmeSession): void {
  s.connect();
  for (const p of [
    { set: false, offset: PROP.CAP, size8: true },
    { set: true, offset: PROP.CC, size8: false, value: 0x00460001n },
    { set: false, offset: PROP.CSTS, size8: false },
  ]) {
    const cid = s.cid();
    s.command(propertySqe({ cid, ...p }));
    s.complete(cid, { dw0: p.offset === PROP.CSTS ? 1 : 0 });
  }
  identify(s, 1, 0, patternBytes(4096, 61));
  identify(s, 0, 1, identifyNamespace(1n << 24n, LBA));
  keepAlive(s);
}

function keepAlive(s: NvmeSession): void {
  const ka = s.cid();
  s.command(sqe({ opc: KEEP_ALIVE, cid: ka, sgl: { kind: 'null' } }));
  s.complete(ka);
}

/** The admin queue of a host whose namespace 1 is formatted with `lba`-octet blocks. */
function adminWithLba(lba: number): (s: NvmeSession) => void {
  return (s) => {
    s.connect();
    identify(s, 0, 1, identifyNamespace(1n << 24n, lba));
  };
}

/** Identify (CNS `cns`) of 4096 octets into a keyed host buffer. */
function identify(s: NvmeSession, cns: number, nsid: number, data: Uint8Array): void {
  const cid = s.cid();
  const b = s.buffer();
  s.command(
    sqe({ opc: IDENTIFY, cid, nsid, sgl: { kind: 'keyed', addr: b.addr, length: 4096, key: b.key }, cdw: [cns] }),
  );
  s.writeToHost(b.key, b.addr, 4096, 4096, data);
  s.complete(cid);
}

/** NVM Read of `blocks` LBAs into a keyed buffer (subtype Fh: completed by Send with Invalidate). */
export function nvmRead(
  s: NvmeSession,
  blocks: number,
  o: { invalidate?: boolean; moved?: number } = {},
): { cid: number; key: number; addr: bigint } {
  const cid = s.cid();
  const b = s.buffer();
  const len = blocks * LBA;
  const invalidate = o.invalidate ?? true;
  s.command(
    sqe({
      opc: READ,
      cid,
      nsid: 1,
      sgl: { kind: 'keyed', addr: b.addr, length: len, key: b.key, invalidate },
      cdw: [0x1000, 0, blocks - 1],
    }),
  );
  s.writeToHost(b.key, b.addr, o.moved ?? len);
  s.complete(cid, {}, invalidate ? b.key : undefined);
  return { cid, key: b.key, addr: b.addr };
}

/** NVM Write of `blocks` LBAs the controller reads from a keyed buffer. */
function nvmWrite(s: NvmeSession, blocks: number): void {
  const cid = s.cid();
  const b = s.buffer();
  const len = blocks * LBA;
  s.command(
    sqe({
      opc: WRITE,
      cid,
      nsid: 1,
      sgl: { kind: 'keyed', addr: b.addr, length: len, key: b.key },
      cdw: [0x2000, 0, blocks - 1],
    }),
  );
  s.readFromHost(b.key, b.addr, len);
  s.complete(cid);
}

/** What a Linux host does on an I/O queue: Connect with in-capsule data, writes in the capsule and by RDMA Read, reads by RDMA Write, a flush. */
export function ioClean(s: NvmeSession): void {
  s.connect();
  const w = s.cid();
  s.command(
    sqe({ opc: WRITE, cid: w, nsid: 1, sgl: { kind: 'in-capsule', offset: 0, length: LBA }, cdw: [0x100, 0, 0] }),
    patternBytes(LBA, 71),
  );
  s.complete(w);
  nvmRead(s, 32);
  nvmWrite(s, 16);
  nvmRead(s, 1, { invalidate: false });
  const f = s.cid();
  s.command(sqe({ opc: FLUSH, cid: f, nsid: 1, sgl: { kind: 'null' } }));
  s.complete(f);
  const d = s.cid();
  s.command(sqe({ opc: OPC_FABRICS, cid: d, fctype: FCTYPE_DISCONNECT, sgl: { kind: 'null' } }));
  s.complete(d);
}

const IO: NvmeQueueOptions = { qid: 1 };
const flush = (s: NvmeSession, cid = s.cid(), o: { flags?: number; sglId?: number } = {}): number =>
  s.command(
    sqe({
      opc: FLUSH,
      cid,
      nsid: 1,
      sgl: o.sglId === undefined ? { kind: 'null' } : { kind: 'raw', id: o.sglId },
      ...(o.flags !== undefined ? { flags: o.flags } : {}),
    }),
  );

export const NVME_SCENARIOS: readonly Scenario[] = [
  nvme(
    'nvme-admin-clean',
    'NVMe/RDMA admin queue: Connect (data read by RDMA), Property Get/Set, Identify controller and namespace, Keep Alive; no finding',
    adminClean,
  ),
  nvme(
    'nvme-io-clean',
    'NVMe/RDMA I/O queue: Connect with in-capsule data, in-capsule Write, 128 KiB Read with remote invalidation, 64 KiB Write by RDMA Read, Flush, Disconnect; no finding',
    ioClean,
    IO,
  ),
  nvme(
    'nvme-cm-private-data',
    'RDMA_CM_REQUEST with RECFMT 1: the private data does not choose NVMe, the Connect does (nvme-rdma.cm-private-data)',
    (s) => {
      s.expectAt('nvme-rdma.cm-private-data', null, null);
      s.connect();
    },
    { ...IO, requestPd: cmRequest({ recfmt: 1, qid: 1, hrqsize: 128, hsqsize: 127 }) },
  ),
  nvme(
    'nvme-cm-admin-hsqsize',
    'Admin queue of 64 entries: above the 32 a Linux target accepts (nvme-rdma.cm-admin-hsqsize)',
    (s) => {
      s.expectAt('nvme-rdma.cm-admin-hsqsize', null, null);
      s.connect();
    },
    { hsqsize: 63 },
  ),
  nvme(
    'nvme-first-not-connect',
    'The first command on the queue is an Identify, not a Connect (nvme-rdma.first-not-connect)',
    (s) => {
      const cid = s.cid();
      const at = s.command(sqe({ opc: KEEP_ALIVE, cid, sgl: { kind: 'null' } }));
      s.complete(cid);
      s.expectAt('nvme-rdma.first-not-connect', CLIENT, at);
    },
  ),
  nvme(
    'nvme-connect-qid-mismatch',
    'The CM private data opens I/O queue 1, the Connect creates queue 2 (nvme-rdma.connect-qid-mismatch)',
    (s) => s.expectAt('nvme-rdma.connect-qid-mismatch', CLIENT, s.connect()),
    { ...IO, connectQid: 2 },
  ),
  nvme(
    'nvme-connect-sqsize-mismatch',
    'HSQSIZE 127 in the CM private data, SQSIZE 63 in the Connect (nvme-rdma.connect-sqsize-mismatch)',
    (s) => s.expectAt('nvme-rdma.connect-sqsize-mismatch', CLIENT, s.connect()),
    { ...IO, sqsize: 63 },
  ),
  nvme(
    'nvme-capsule-short',
    'A 40-octet command capsule (nvme-rdma.capsule-short)',
    (s) => {
      s.connect();
      s.expectAt('nvme-rdma.capsule-short', CLIENT, s.command(patternBytes(40, 5)));
    },
    IO,
  ),
  nvme(
    'nvme-psdt-not-sgl',
    'A Flush with PSDT 00b (PRPs) (nvme-rdma.psdt-not-sgl)',
    (s) => {
      s.connect();
      const cid = s.cid();
      s.expectAt('nvme-rdma.psdt-not-sgl', CLIENT, flush(s, cid, { flags: 0x00 }));
      s.complete(cid);
    },
    IO,
  ),
  nvme(
    'nvme-sgl-type-invalid',
    'A Flush whose SGL1 is a Last Segment descriptor (nvme-rdma.sgl-type-invalid)',
    (s) => {
      s.connect();
      const cid = s.cid();
      s.expectAt('nvme-rdma.sgl-type-invalid', CLIENT, flush(s, cid, { sglId: 0x30 }));
      s.complete(cid);
    },
    IO,
  ),
  nvme(
    'nvme-in-capsule-outside',
    'An in-capsule Write of 8192 octets with 4096 in the capsule (nvme-rdma.in-capsule-outside)',
    (s) => {
      s.connect();
      const cid = s.cid();
      const at = s.command(
        sqe({ opc: WRITE, cid, nsid: 1, sgl: { kind: 'in-capsule', offset: 0, length: 8192 }, cdw: [0, 0, 1] }),
        patternBytes(4096, 3),
      );
      s.expectAt('nvme-rdma.in-capsule-outside', CLIENT, at);
      s.complete(cid);
    },
    IO,
  ),
  nvme(
    'nvme-cid-in-use',
    'Two Flushes with the same CID outstanding (nvme-rdma.cid-in-use)',
    (s) => {
      s.connect();
      const cid = s.cid();
      flush(s, cid);
      s.expectAt('nvme-rdma.cid-in-use', CLIENT, flush(s, cid));
      s.complete(cid);
    },
    IO,
  ),
  nvme(
    'nvme-queue-full',
    'Five commands outstanding on a queue of four entries (nvme-rdma.queue-full)',
    (s) => {
      s.connect();
      const cids = [s.cid(), s.cid(), s.cid(), s.cid(), s.cid()];
      cids.forEach((c, i) => {
        const at = flush(s, c);
        if (i === 4) s.expectAt('nvme-rdma.queue-full', CLIENT, at);
      });
      for (const c of cids) s.complete(c);
    },
    { qid: 1, hsqsize: 3 },
  ),
  nvme(
    'nvme-sqhd-not-advancing',
    'The SQ head moves backwards in a completion (nvme-rdma.sqhd-not-advancing)',
    (s) => {
      s.connect();
      const a = s.cid();
      const b = s.cid();
      flush(s, a);
      flush(s, b);
      s.complete(a);
      s.expectAt('nvme-rdma.sqhd-not-advancing', SERVER, s.complete(b, { sqhd: 1 }));
    },
    IO,
  ),
  nvme(
    'nvme-sqid-mismatch',
    'A completion on I/O queue 1 names SQ 5 (nvme-rdma.sqid-mismatch)',
    (s) => {
      s.connect();
      const a = s.cid();
      flush(s, a);
      s.expectAt('nvme-rdma.sqid-mismatch', SERVER, s.complete(a, { sqid: 5 }));
    },
    IO,
  ),
  nvme(
    'nvme-completion-without-command',
    'A completion for a CID never submitted (nvme-rdma.completion-without-command)',
    (s) => {
      s.connect();
      s.expectAt('nvme-rdma.completion-without-command', SERVER, s.complete(77));
    },
    IO,
  ),
  nvme(
    'nvme-command-not-completed',
    'A Flush never completed before the capture ends (nvme-rdma.command-not-completed)',
    (s) => {
      s.connect();
      s.expectAt('nvme-rdma.command-not-completed', CLIENT, flush(s));
    },
    IO,
  ),
  nvme(
    'nvme-invalidate-not-requested',
    'A Read with SGL subtype 0 completed by Send with Invalidate of its key (nvme-rdma.invalidate-not-requested)',
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      s.command(
        sqe({ opc: READ, cid, nsid: 1, sgl: { kind: 'keyed', addr: b.addr, length: LBA, key: b.key }, cdw: [0, 0, 0] }),
      );
      s.writeToHost(b.key, b.addr, LBA);
      s.expectAt('nvme-rdma.invalidate-not-requested', SERVER, s.complete(cid, { invalidate: b.key }));
    },
    IO,
  ),
  nvme(
    'nvme-invalidate-wrong-key',
    "A Read's completion invalidates a key the host never advertised (nvme-rdma.invalidate-wrong-key, ulp.invalidate-unknown-stag)",
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: LBA, key: b.key, invalidate: true },
          cdw: [0, 0, 0],
        }),
      );
      s.writeToHost(b.key, b.addr, LBA);
      const at = s.complete(cid, { invalidate: b.key + 0x55 });
      s.expectAt('nvme-rdma.invalidate-wrong-key', SERVER, at);
      s.expectAt('ulp.invalidate-unknown-stag', SERVER, at);
    },
    IO,
  ),
  nvme(
    'nvme-invalidate-not-done',
    'A Read asking for remote invalidation completed by a plain Send (nvme-rdma.invalidate-not-done)',
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: LBA, key: b.key, invalidate: true },
          cdw: [0, 0, 0],
        }),
      );
      s.writeToHost(b.key, b.addr, LBA);
      s.expectAt('nvme-rdma.invalidate-not-done', SERVER, s.complete(cid, { invalidate: null }));
    },
    IO,
  ),
  nvme(
    'nvme-data-length-mismatch',
    'A 32 KiB Read completed successfully after 16 KiB were written (nvme-rdma.data-length-mismatch)',
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: 8 * LBA, key: b.key },
          cdw: [0, 0, 7],
        }),
      );
      s.writeToHost(b.key, b.addr, 4 * LBA);
      s.expectAt('nvme-rdma.data-length-mismatch', SERVER, s.complete(cid));
    },
    IO,
  ),
  nvme(
    'nvme-error-status',
    'A Read failed with LBA Out of Range, DNR set (nvme-rdma.error-status)',
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: LBA, key: b.key },
          cdw: [0xffffffff, 0xff, 0],
        }),
      );
      s.expectAt('nvme-rdma.error-status', SERVER, s.complete(cid, { sct: 0, sc: 0x80, dnr: true }));
    },
    IO,
  ),
  nvmeHost(
    'nvme-host-clean',
    'One host: admin queue (Connect data read by RDMA, Identify Namespace: 4096-octet blocks), then an I/O queue whose Reads and Writes move (NLB + 1) × 4096 octets; no finding',
    adminClean,
    ioClean,
  ),
  nvmeHost(
    'nvme-nlb-length-mismatch',
    "Identify Namespace gave 512-octet blocks; an I/O queue's Read of NLB 7 (8 blocks, 4096 octets) names an SGL of 8192 and moves it (nvme-rdma.nlb-length-mismatch)",
    adminWithLba(512),
    (s) => {
      s.connect();
      const cid = s.cid();
      const b = s.buffer();
      const at = s.command(
        sqe({
          opc: READ,
          cid,
          nsid: 1,
          sgl: { kind: 'keyed', addr: b.addr, length: 8192, key: b.key },
          cdw: [0, 0, 7],
        }),
      );
      s.writeToHost(b.key, b.addr, 8192);
      s.complete(cid);
      s.expectAt('nvme-rdma.nlb-length-mismatch', CLIENT, at);
    },
  ),
  nvmeHost(
    'nvme-connect-cntlid-mismatch',
    "The admin queue's Connect returned controller 0x0001; the I/O queue's Connect data, read by the controller through a keyed SGL, names 0x0022 (nvme-rdma.connect-cntlid-mismatch at the host's Read Response)",
    (s) => s.connect(),
    (s) => {
      const at = s.connect({ inCapsule: false, cntlid: 0x22 });
      // The Connect's data travels in the host's Read Response: the event after the Read Request.
      s.expectAt('nvme-rdma.connect-cntlid-mismatch', CLIENT, at + 2);
    },
  ),
  nvme(
    'nvme-key-after-completion',
    "The controller writes into a Read's buffer after completing it (ulp.access-after-response)",
    (s) => {
      s.connect();
      const r = nvmRead(s, 1, { invalidate: false });
      s.expectAt('ulp.access-after-response', SERVER, s.writeToHost(r.key, r.addr, 512));
    },
    IO,
  ),
];
