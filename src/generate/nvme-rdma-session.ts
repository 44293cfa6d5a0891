/**
 * One NVMe/RDMA queue as the generator builds it (NVMe-oF RDMA transport binding): the host (MPA
 * Initiator) opens the queue with an RDMA_CM_REQUEST in the MPA Request, the controller accepts it
 * in the Reply, the host sends command capsules and the controller response capsules. Data the
 * command sends to the controller is in the capsule or read by the controller (RDMA Read Request of
 * the host's keyed SGL, answered by the host's Read Response); data for the host is placed by the
 * controller's RDMA Writes. A command whose SGL has subtype Fh is completed by Send with Invalidate
 * of its key. With SQ flow control the controller reports the SQ head of every command submitted
 * so far. It produces the RDMAP messages of ulp-connection.ts; the expected findings are the
 * scenario author's.
 */
import { cmAccept, cmRequest, concatBytes, connectData, connectSqe, cqe, type SglSpec } from './nvme-rdma-encoder.js';
import {
  CLIENT,
  SERVER,
  type Dir,
  type ScheduledRequest,
  type UlpConnectionSpec,
  type UlpEvent,
  type UlpExpect,
} from './ulp-connection.js';
import { patternBytes } from './mpa-encoder.js';

export { CLIENT, SERVER };

/** NVMe/RDMA well-known port (NVME_RDMA_IP_PORT). */
export const NVME_PORT = 4420;
/** The Fabrics command opcode (NVMe over Fabrics 1.1 §2.1). */
const OPC_FABRICS_CODE = 0x7f;
/** Think time of the host, the controller's time to serve and answer, gaps within a transfer (µs). */
export const T = { request: 150, serve: 40, answer: 20, next: 4 } as const;

export interface NvmeQueueOptions {
  readonly qid?: number;
  /** Zero-based. Default 31 (admin) or 127 (I/O). */
  readonly hsqsize?: number;
  /** Connect SQSIZE, default = HSQSIZE. */
  readonly sqsize?: number;
  readonly connectQid?: number;
  readonly requestPd?: Uint8Array;
  readonly replyPd?: Uint8Array;
  readonly cntlid?: number;
  /** The host's port (default: the connection builder's): queues joined in one capture differ by it. */
  readonly clientPort?: number;
}

export const HOSTID = patternBytes(16, 4420);
export const SUBNQN = 'nqn.2014-08.org.nvmexpress:uuid:0f8f4b4e-nvme-iwarp-subsys';
export const HOSTNQN = 'nqn.2014-08.org.nvmexpress:uuid:7d6c1e2a-host-iwarp';
export const CNTLID = 0x0001;

export interface Completion {
  readonly sct?: number;
  readonly sc?: number;
  readonly dnr?: boolean;
  readonly dw0?: number;
  /** Send with Invalidate of this STag; default: the command's key when its SGL asked (subtype Fh). */
  readonly invalidate?: number | null;
  readonly sqhd?: number;
  readonly sqid?: number;
  readonly delayUs?: number;
}

/**
 * Command names as the NVMe Base Specification 2.0 (Figures 28 and 89: admin and NVM command set
 * opcodes) and NVMe over Fabrics 1.1 (Figure 14: Fabrics command types) name them.
 */
const ADMIN_NAMES: Readonly<Record<number, string>> = {
  0x02: 'Get Log Page',
  0x06: 'Identify',
  0x09: 'Set Features',
  0x0a: 'Get Features',
  0x0c: 'Asynchronous Event Request',
  0x18: 'Keep Alive',
};
const NVM_NAMES: Readonly<Record<number, string>> = { 0x00: 'Flush', 0x01: 'Write', 0x02: 'Read' };
const FABRICS_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Property Set',
  0x01: 'Connect',
  0x04: 'Property Get',
  0x05: 'Authentication Send',
  0x06: 'Authentication Receive',
  0x08: 'Disconnect',
};

export class NvmeSession {
  readonly events: UlpEvent[] = [];
  readonly expect: UlpExpect[] = [];
  /** Each answered or outstanding command as scheduled: its capsule, data transfers and response. */
  readonly requests: ScheduledRequest[] = [];
  /** Commands sent and not yet answered, by CID, and the CID of each keyed buffer in use. */
  private readonly open = new Map<number, { command: string; request: number; data: number[] }>();
  private readonly keyCid = new Map<number, number>();
  readonly qid: number;
  readonly sqsize: number;
  private readonly hsqsize: number;
  private readonly connectQid: number;
  private tail = 0;
  private cidNext = 1;
  private keyNext = 0x2000_0100;
  private addrNext = 0x7f00_1000_0000n;
  private sinkNext = 0x9000_0040;

  constructor(readonly o: NvmeQueueOptions = {}) {
    this.qid = o.qid ?? 0;
    this.hsqsize = o.hsqsize ?? (this.qid === 0 ? 31 : 127);
    this.sqsize = o.sqsize ?? this.hsqsize;
    this.connectQid = o.connectQid ?? this.qid;
  }

  spec(): UlpConnectionSpec {
    return {
      serverPort: NVME_PORT,
      ...(this.o.clientPort !== undefined ? { clientPort: this.o.clientPort } : {}),
      rev: 2,
      requestPd: this.o.requestPd ?? cmRequest({ qid: this.qid, hrqsize: this.hsqsize + 1, hsqsize: this.hsqsize }),
      replyPd: this.o.replyPd ?? cmAccept(this.hsqsize + 1),
      events: this.events,
      expect: this.expect,
    };
  }

  /** Expects `rule` at event `at` (sent by `dir`), or with no seq. */
  expectAt(rule: string, dir: Dir | null, at: number | null): void {
    this.expect.push({ rule, dir, at });
  }

  cid(): number {
    return this.cidNext++;
  }

  /** A host buffer: a fresh key and address. */
  buffer(): { key: number; addr: bigint } {
    const key = this.keyNext;
    this.keyNext += 0x100;
    const addr = this.addrNext;
    this.addrNext += 0x10_0000n;
    return { key, addr };
  }

  /** A command capsule (SQE + in-capsule data); returns its event index. */
  command(sqe: Uint8Array, data?: Uint8Array, delayUs: number = T.request): number {
    this.tail++;
    this.events.push({ op: 'send', dir: CLIENT, payload: data ? concatBytes(sqe, data) : sqe, delayUs });
    const at = this.events.length - 1;
    const cid = sqe[2]! | (sqe[3]! << 8);
    const opc = sqe[0]!;
    const command =
      (opc === OPC_FABRICS_CODE ? FABRICS_NAMES[sqe[4]!] : (this.qid === 0 ? ADMIN_NAMES : NVM_NAMES)[opc]) ??
      `opcode 0x${opc.toString(16)}`;
    this.open.set(cid, { command, request: at, data: [] });
    // A keyed SGL data block (descriptor type 4h, octet 39): transfers to or from its key are this command's.
    const length = sqe[32]! | (sqe[33]! << 8) | (sqe[34]! << 16);
    if (sqe[39]! >> 4 === 4 && length > 0)
      this.keyCid.set((sqe[35]! | (sqe[36]! << 8) | (sqe[37]! << 16) | (sqe[38]! << 24)) >>> 0, cid);
    return at;
  }

  /** Event `at` moves data of the command whose keyed buffer is `key`. */
  private dataOf(key: number, at: number): void {
    const cid = this.keyCid.get(key >>> 0);
    if (cid !== undefined) this.open.get(cid)?.data.push(at);
  }

  /** The completion of `cid`: SQHD of every command submitted so far (the controller fetched them all). */
  complete(cid: number, c: Completion = {}, keyToInvalidate?: number): number {
    const q = this.sqsize + 1;
    const inv = c.invalidate === undefined ? keyToInvalidate : c.invalidate;
    this.events.push({
      op: 'send',
      dir: SERVER,
      payload: cqe({
        cid,
        sqhd: c.sqhd ?? this.tail % q,
        sqid: c.sqid ?? this.connectQid,
        dw0: c.dw0 ?? 0,
        sct: c.sct ?? 0,
        sc: c.sc ?? 0,
        dnr: c.dnr ?? false,
      }),
      ...(inv !== undefined && inv !== null ? { invalidate: inv } : {}),
      delayUs: c.delayUs ?? T.answer,
    });
    const at = this.events.length - 1;
    const cmd = this.open.get(cid);
    if (cmd) {
      this.open.delete(cid);
      this.requests.push({ program: 'NVMe', command: cmd.command, request: cmd.request, data: cmd.data, response: at });
    }
    return at;
  }

  /** The controller places `length` octets into the host buffer (RDMA Writes of at most `chunk`). */
  writeToHost(key: number, addr: bigint, length: number, chunk = 65536, data?: Uint8Array): number {
    let first = -1;
    for (let off = 0; off < length; off += chunk) {
      const n = Math.min(chunk, length - off);
      this.events.push({
        op: 'write',
        dir: SERVER,
        stag: key,
        to: addr + BigInt(off),
        length: n,
        ...(data ? { data: data.subarray(off, off + n) } : {}),
        delayUs: off === 0 ? T.serve : T.next,
      });
      this.dataOf(key, this.events.length - 1);
      if (first < 0) first = this.events.length - 1;
    }
    return first;
  }

  /**
   * The controller reads `length` octets of the host buffer (Read Requests of at most `chunk`, each
   * answered by the host's Read Response with those octets of `data`, or a pattern).
   */
  readFromHost(key: number, addr: bigint, length: number, chunk = 65536, data?: Uint8Array): number {
    let first = -1;
    for (let off = 0; off < length; off += chunk) {
      const n = Math.min(chunk, length - off);
      const sink = this.sinkNext;
      this.sinkNext += 0x100;
      this.events.push({
        op: 'read-request',
        dir: SERVER,
        sinkStag: sink,
        sinkTo: 0n,
        size: n,
        srcStag: key,
        srcTo: addr + BigInt(off),
        delayUs: off === 0 ? T.serve : T.next,
      });
      const rr = this.events.length - 1;
      if (first < 0) first = rr;
      this.dataOf(key, rr);
      this.events.push({
        op: 'read-response',
        dir: CLIENT,
        request: rr,
        ...(data ? { data: data.subarray(off, off + n) } : {}),
        delayUs: T.next,
      });
      this.dataOf(key, this.events.length - 1);
    }
    return first;
  }

  /**
   * The queue's Connect: on the admin queue the Connect data is read by the controller through a
   * keyed SGL (as the Linux host does there), on an I/O queue it travels in the capsule. The
   * completion returns the controller ID in DW0.
   */
  connect(o: { inCapsule?: boolean; cntlid?: number; cattr?: number } = {}): number {
    const cid = this.cid();
    const data = connectData({
      hostid: HOSTID,
      cntlid: o.cntlid ?? (this.qid === 0 ? 0xffff : CNTLID),
      subnqn: SUBNQN,
      hostnqn: HOSTNQN,
    });
    const inCapsule = o.inCapsule ?? this.qid !== 0;
    let at: number;
    if (inCapsule) {
      at = this.command(
        connectSqe({
          cid,
          qid: this.connectQid,
          sqsize: this.sqsize,
          cattr: o.cattr ?? 0,
          sgl: { kind: 'in-capsule', offset: 0, length: 1024 },
        }),
        data,
      );
    } else {
      const b = this.buffer();
      const sgl: SglSpec = { kind: 'keyed', addr: b.addr, length: 1024, key: b.key };
      at = this.command(connectSqe({ cid, qid: this.connectQid, sqsize: this.sqsize, cattr: o.cattr ?? 0, sgl }));
      this.readFromHost(b.key, b.addr, 1024, 65536, data);
    }
    this.complete(cid, { dw0: this.o.cntlid ?? CNTLID });
    return at;
  }
}
