/**
 * An iSER connection's exchange, as an initiator and a target following RFC 7145 and RFC 7143 do
 * it: the login (in streaming mode over TCP before MPA, RFC 5046 §5.1, or iSER-assisted in Sends,
 * RFC 7145 §5.1), the optional iSER Hello exchange, and SCSI tasks. A READ advertises a Read STag
 * (RSV) that the target RDMA-Writes the data into; a WRITE carries immediate data, then unsolicited
 * Data-Out PDUs, and advertises a Write STag (WSV) at the solicited part, which the target pulls with
 * RDMA Read Requests; each task ends with the SCSI Response (Send with Invalidate of the task's STag
 * unless the initiator's CM private data says it is not supported). The result is a
 * UlpConnectionSpec for ulp-connection.ts. Truth is the scenario author's.
 */
import * as E from './iser-encoder.js';
import {
  CLIENT,
  SERVER,
  type ScheduledRequest,
  type UlpConnectionSpec,
  type UlpEvent,
  type UlpExpect,
} from './ulp-connection.js';

export { CLIENT, SERVER };
export const BLOCK = 512;

export interface IserOptions {
  /** iSER CM REQ private data flags (default: both supported). */
  readonly cm?: { zbvaNotSupported?: boolean; sendInvalidateNotSupported?: boolean };
  /** Raw Request private data instead of the iSER CM header. */
  readonly requestPd?: Uint8Array;
  readonly rev?: 1 | 2;
}

/** What a task does beyond the default. */
export interface TaskOpts {
  readonly lba?: number;
  /** RDMA Write (read) or RDMA Read Request (write) sizes; default one of the whole length. */
  readonly split?: readonly number[];
  /** READ(16)/WRITE(16) instead of the 10-octet CDB. */
  readonly cdb16?: boolean;
  /** Send with Invalidate of this STag (default: the task's, when allowed; null: plain Send). */
  readonly invalidate?: number | null;
  /** Send with Invalidate of the task's own STag even when the CM private data refuses it. */
  readonly invalidateOwn?: boolean;
  /** Residual underflow reported in the SCSI Response. */
  readonly underflow?: number;
  /** Octets of the response delay (µs) from the last data to the SCSI Response. */
  readonly serveUs?: number;
  /** No SCSI Response at all. */
  readonly unanswered?: boolean;
  /** ITT to use (default a fresh one). */
  readonly itt?: number;
  /** Immediate data (writes) and unsolicited Data-Out octets after it. */
  readonly immediate?: number;
  readonly dataOut?: number;
  /** iSER header to send instead of the task's own. */
  readonly header?: E.IserHdr;
  /** Response flags: both O and U (a mistake). */
  readonly bothResidualFlags?: boolean;
}

export class IserSession {
  readonly events: UlpEvent[] = [];
  readonly expect: UlpExpect[] = [];
  /**
   * Each answered SCSI task as scheduled: its command, the RDMA operations that moved its data
   * (the target's Writes, its Read Requests and the initiator's Read Responses) and its response.
   * Named as SPC-4/SBC-3 name the commands, in Wireshark's spelling.
   */
  readonly requests: ScheduledRequest[] = [];
  readonly leading: Array<{ dir: 0 | 1; bytes: Uint8Array }> = [];
  private cmdSn = 1;
  private statSn = 0;
  private itt = 0x10;
  private stag = 0x1000;
  private base = 0x7f00_0000_0000n;
  private tsih = 0;

  constructor(private readonly o: IserOptions = {}) {}

  get invalidateAllowed(): boolean {
    return !this.o.cm?.sendInvalidateNotSupported;
  }

  nextItt(): number {
    return this.itt++;
  }

  send(dir: 0 | 1, payload: Uint8Array, delayUs?: number, invalidate?: number): number {
    this.events.push({
      op: 'send',
      dir,
      payload,
      ...(invalidate !== undefined ? { invalidate } : {}),
      ...(delayUs !== undefined ? { delayUs } : {}),
    });
    return this.events.length - 1;
  }

  /** One iSCSI PDU in a Send behind an iSER header. */
  pdu(dir: 0 | 1, bhs: Uint8Array, h: E.IserHdr = {}, delayUs?: number, invalidate?: number): number {
    return this.send(dir, E.cat(E.iserHeader(h), bhs), delayUs, invalidate);
  }

  expectAt(rule: string, at: number): void {
    this.expect.push({ rule, dir: this.events[at]!.dir, at });
  }
  expectNone(rule: string): void {
    this.expect.push({ rule, dir: null, at: null });
  }

  private loginPdus(rdma: boolean, finish: boolean): [Uint8Array, Uint8Array] {
    const itt = this.nextItt();
    const reqKeys: Array<[string, string]> = [
      ['InitiatorName', 'iqn.2004-10.com.example:host1'],
      ['TargetName', 'iqn.2004-10.com.example:storage.disk1'],
      ['SessionType', 'Normal'],
      ['AuthMethod', 'None'],
    ];
    if (rdma) reqKeys.push(['RDMAExtensions', 'Yes']);
    const req = E.loginRequest({
      itt,
      transit: true,
      csg: 1,
      nsg: 3,
      tsih: 0,
      cmdSn: this.cmdSn,
      expStatSn: 0,
      keys: E.keys(reqKeys),
    });
    this.tsih = 0x12;
    const rsp = E.loginResponse({
      itt,
      transit: finish,
      csg: 1,
      nsg: finish ? 3 : 1,
      tsih: this.tsih,
      cmdSn: this.cmdSn,
      expStatSn: 0,
      statSn: this.statSn++,
      expCmdSn: this.cmdSn,
      maxCmdSn: this.cmdSn + 63,
      keys: E.keys(
        rdma
          ? [
              ['RDMAExtensions', 'Yes'],
              ['TargetPortalGroupTag', '1'],
            ]
          : [['TargetPortalGroupTag', '1']],
      ),
    });
    return [req, rsp];
  }

  /** RFC 5046 §5.1: the login over plain TCP, before the MPA Request. */
  streamingLogin(o: { rdma?: boolean; finish?: boolean } = {}): void {
    const [req, rsp] = this.loginPdus(o.rdma ?? true, o.finish ?? true);
    this.leading.push({ dir: CLIENT, bytes: req }, { dir: SERVER, bytes: rsp });
  }

  /** RFC 7145 §5.1: iSER-assisted login, the Login PDUs in iSER Sends. */
  assistedLogin(): [number, number] {
    const [req, rsp] = this.loginPdus(false, true);
    return [this.pdu(CLIENT, req), this.pdu(SERVER, rsp, {}, 150)];
  }

  /** iSER Hello and HelloReply (RFC 7145 §5.1.3, §9.3, §9.4). */
  hello(ird = 16, ord = 16, version = 0xaa): [number, number] {
    return [this.send(CLIENT, E.iserHello(ird, version)), this.send(SERVER, E.iserHelloReply(ord), 40)];
  }

  private nextStag(): number {
    this.stag += 0x100;
    return this.stag;
  }
  private nextBase(len: number): bigint {
    const b = this.base;
    this.base += BigInt((len + 0xfff) & ~0xfff) + 0x1000n;
    return b;
  }

  private response(itt: number, t: TaskOpts, stag: number, delayUs: number): number {
    const rsp = E.scsiResponse({
      itt,
      statSn: this.statSn++,
      expCmdSn: this.cmdSn,
      maxCmdSn: this.cmdSn + 63,
      ...(t.underflow !== undefined ? { underflow: t.underflow } : {}),
    });
    if (t.bothResidualFlags) rsp[1] = rsp[1]! | 0x06;
    const inv = t.invalidateOwn
      ? stag
      : t.invalidate === undefined
        ? this.invalidateAllowed
          ? stag
          : undefined
        : (t.invalidate ?? undefined);
    return this.pdu(SERVER, rsp, {}, delayUs, inv);
  }

  /** A SCSI READ of `blocks` blocks: command (RSV), RDMA Writes of the data, SCSI Response. */
  read(blocks: number, t: TaskOpts = {}): { cmd: number; data: number[]; rsp: number; itt: number; stag: number } {
    const itt = t.itt ?? this.nextItt();
    const len = blocks * BLOCK;
    const stag = this.nextStag();
    const base = this.nextBase(len);
    const cdb = t.cdb16 ? E.read16(BigInt(t.lba ?? 0), blocks) : E.read10(t.lba ?? 0, blocks);
    const cmd = this.pdu(
      CLIENT,
      E.scsiCommand({ itt, cdb, edtl: len, read: true, cmdSn: this.cmdSn++, expStatSn: this.statSn }),
      t.header ?? { read: { stag, base } },
      30,
    );
    const data: number[] = [];
    let off = 0;
    for (const n of t.split ?? [len]) {
      this.events.push({ op: 'write', dir: SERVER, stag, to: base + BigInt(off), length: n, delayUs: 90 });
      data.push(this.events.length - 1);
      off += n;
    }
    const rsp = t.unanswered ? -1 : this.response(itt, t, stag, t.serveUs ?? 25);
    if (rsp >= 0)
      this.requests.push({
        program: 'SCSI',
        command: t.cdb16 ? 'Read(16)' : 'Read(10)',
        request: cmd,
        data,
        response: rsp,
      });
    return { cmd, data, rsp, itt, stag };
  }

  /**
   * A SCSI WRITE of `blocks` blocks: command with immediate data, unsolicited Data-Out, the Write
   * STag at the solicited part (base + unsolicited octets), the target's RDMA Read Requests and
   * their Responses, then the SCSI Response.
   */
  write(
    blocks: number,
    t: TaskOpts = {},
  ): { cmd: number; dataOut: number | null; reads: number[]; rsp: number; itt: number; stag: number } {
    const itt = t.itt ?? this.nextItt();
    const len = blocks * BLOCK;
    const imm = t.immediate ?? 0;
    const dout = t.dataOut ?? 0;
    const unsolicited = imm + dout;
    const stag = this.nextStag();
    const base = this.nextBase(len);
    const cdb = t.cdb16 ? E.write16(BigInt(t.lba ?? 0), blocks) : E.write10(t.lba ?? 0, blocks);
    const solicited = len - unsolicited;
    const cmd = this.pdu(
      CLIENT,
      E.scsiCommand({
        itt,
        cdb,
        edtl: len,
        write: true,
        cmdSn: this.cmdSn++,
        expStatSn: this.statSn,
        final: dout === 0,
        ...(imm > 0 ? { immediateData: patternOf(imm, itt) } : {}),
      }),
      t.header ?? (solicited > 0 ? { write: { stag, base: base + BigInt(unsolicited) } } : {}),
      30,
    );
    let dataOut: number | null = null;
    if (dout > 0) {
      dataOut = this.pdu(
        CLIENT,
        E.dataOut({ itt, data: patternOf(dout, itt + 1), offset: imm, dataSn: 0, expStatSn: this.statSn, final: true }),
        {},
        8,
      );
    }
    const reads: number[] = [];
    let off = 0;
    const sink = this.nextStag() | 0x8000_0000;
    for (const n of solicited > 0 ? (t.split ?? [solicited]) : []) {
      this.events.push({
        op: 'read-request',
        dir: SERVER,
        sinkStag: sink,
        sinkTo: BigInt(off),
        size: n,
        srcStag: stag,
        srcTo: base + BigInt(unsolicited + off),
        delayUs: 60,
      });
      const rq = this.events.length - 1;
      this.events.push({ op: 'read-response', dir: CLIENT, request: rq, delayUs: 70 });
      reads.push(rq);
      off += n;
    }
    const rsp = t.unanswered
      ? -1
      : this.response(itt, solicited > 0 ? t : { ...t, invalidate: t.invalidate ?? null }, stag, t.serveUs ?? 40);
    if (rsp >= 0)
      this.requests.push({
        program: 'SCSI',
        command: t.cdb16 ? 'Write(16)' : 'Write(10)',
        request: cmd,
        data: reads.flatMap((rq) => [rq, rq + 1]), // each Read Request and the Read Response after it
        response: rsp,
      });
    return { cmd, dataOut, reads, rsp, itt, stag };
  }

  /** INQUIRY of `alloc` octets, answered with `got` (residual underflow alloc - got). */
  inquiry(alloc = 96, got = 36): { cmd: number; rsp: number } {
    const itt = this.nextItt();
    const stag = this.nextStag();
    const base = this.nextBase(alloc);
    const cmd = this.pdu(
      CLIENT,
      E.scsiCommand({
        itt,
        cdb: E.inquiry(alloc),
        edtl: alloc,
        read: true,
        cmdSn: this.cmdSn++,
        expStatSn: this.statSn,
      }),
      { read: { stag, base } },
      30,
    );
    this.events.push({ op: 'write', dir: SERVER, stag, to: base, length: got, delayUs: 50 });
    const data = this.events.length - 1;
    const rsp = this.response(itt, got < alloc ? { underflow: alloc - got } : {}, stag, 20);
    this.requests.push({ program: 'SCSI', command: 'Inquiry', request: cmd, data: [data], response: rsp });
    return { cmd, rsp };
  }

  /** NOP-Out ping and its NOP-In (RFC 7143 §11.18, §11.19). */
  nop(): [number, number] {
    const itt = this.nextItt();
    const a = this.pdu(CLIENT, E.nopOut({ itt, cmdSn: this.cmdSn, expStatSn: this.statSn }), {}, 200);
    const b = this.pdu(
      SERVER,
      E.nopIn({ itt, statSn: this.statSn++, expCmdSn: this.cmdSn, maxCmdSn: this.cmdSn + 63 }),
      {},
      15,
    );
    return [a, b];
  }

  logout(): [number, number] {
    const itt = this.nextItt();
    const a = this.pdu(CLIENT, E.logoutRequest({ itt, cmdSn: this.cmdSn, expStatSn: this.statSn }), {}, 100);
    const b = this.pdu(
      SERVER,
      E.logoutResponse({ itt, statSn: this.statSn++, expCmdSn: this.cmdSn + 1, maxCmdSn: this.cmdSn + 64 }),
      {},
      30,
    );
    return [a, b];
  }

  /** A bare SCSI Response for `itt` (for duplicate / orphan responses). */
  bareResponse(itt: number): number {
    return this.pdu(
      SERVER,
      E.scsiResponse({ itt, statSn: this.statSn++, expCmdSn: this.cmdSn, maxCmdSn: this.cmdSn + 63 }),
      {},
      20,
    );
  }

  spec(): UlpConnectionSpec {
    const requestPd = this.o.requestPd ?? E.iserCmPrivateData(this.o.cm ?? {});
    return {
      serverPort: E.ISCSI_PORT,
      rev: this.o.rev ?? 2,
      requestPd,
      replyPd: new Uint8Array(0),
      events: this.events,
      expect: this.expect,
      ...(this.leading.length > 0 ? { leading: this.leading } : {}),
    };
  }
}

/** Deterministic data octets (the generator's truth does not depend on them). */
export function patternOf(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
