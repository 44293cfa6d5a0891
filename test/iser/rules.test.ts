/**
 * The iSER dissector on RDMAP message records (harness.ts): a clean task of each kind gives no
 * finding and its timing; each rule that the scenarios cannot show fires here, and stays silent
 * where it must; hostile input (huge lengths, a login that never ends, ITT reuse, more outstanding
 * tasks than kept) is bounded. PDUs come from the generator's encoder (the specification's layout).
 */
import { describe, expect, it } from 'vitest';
import { hasIserEvidence, isIserFirstMessage, MAX_TASKS } from '../../dissectors/iser/index.js';
import { parseLeading } from '../../dissectors/iser/login.js';
import { LEADING_KEEP } from '../../dissectors/mpa/mpa-types.js';
import * as E from '../../src/generate/iser-encoder.js';
import { connection, leading, Wire } from './harness.js';

const login = (): Uint8Array =>
  E.loginRequest({
    itt: 1,
    transit: true,
    csg: 1,
    nsg: 3,
    tsih: 0,
    cmdSn: 1,
    expStatSn: 0,
    keys: E.keys([['RDMAExtensions', 'Yes']]),
  });
const loginOk = (): Uint8Array =>
  E.loginResponse({
    itt: 1,
    transit: true,
    csg: 1,
    nsg: 3,
    tsih: 9,
    cmdSn: 1,
    expStatSn: 0,
    statSn: 0,
    expCmdSn: 1,
    maxCmdSn: 64,
    keys: E.keys([['RDMAExtensions', 'Yes']]),
  });
const ctl = (bhs: Uint8Array, h: E.IserHdr = {}): Uint8Array => E.cat(E.iserHeader(h), bhs);
const read10 = (itt: number, blocks: number): Uint8Array =>
  E.scsiCommand({ itt, cdb: E.read10(0x100, blocks), edtl: blocks * 512, read: true, cmdSn: itt, expStatSn: 1 });
const rsp = (itt: number, o: Partial<E.ResponseOpts> = {}): Uint8Array =>
  E.scsiResponse({ itt, statSn: 1, expCmdSn: 2, maxCmdSn: 64, ...o });

function loggedIn(conn = connection()): Wire {
  const w = new Wire(conn);
  w.initiator(ctl(login()));
  w.target(ctl(loginOk()));
  return w;
}

describe('a clean READ and WRITE', () => {
  it('no finding; SRT timing per task with the CDB operation, first and last data', () => {
    const w = loggedIn();
    w.initiator(ctl(read10(5, 8), { read: { stag: 0x100, base: 0x1000n } }));
    const t0 = w.time;
    w.write(0x100, 0x1000n, 2048);
    const t1 = w.time;
    w.write(0x100, 0x1800n, 2048);
    const t2 = w.time;
    const r = w.target(ctl(rsp(5)), { invalidate: 0x100 });
    const t3 = w.time;
    expect(r!.info).toBe('SCSI: Response LUN: 0x00 (Read(10)) (Good)');
    w.initiator(
      ctl(
        E.scsiCommand({
          itt: 6,
          cdb: E.write10(0, 4),
          edtl: 2048,
          write: true,
          cmdSn: 6,
          expStatSn: 2,
          immediateData: new Uint8Array(512),
        }),
        { write: { stag: 0x200, base: 0x9200n } },
      ),
    );
    w.readRequest(0x200, 0x9200n, 1536);
    w.target(ctl(rsp(6)), { invalidate: 0x200 });
    w.end();
    expect(w.sink.findings).toEqual([]);
    expect(w.timings.map((t) => [t.program, t.command, t.code])).toEqual([
      ['SCSI', 'Read(10)', 0x28],
      ['SCSI', 'Write(10)', 0x2a],
    ]);
    const t = w.timings[0]!;
    expect([t.request, t.firstData, t.lastData, t.response]).toEqual([t0, t1, t2, t3]);
  });
});

describe('rules the scenarios do not show', () => {
  it('iser.not-captured: a Send cut inside the BHS is decoded as far as it goes, said once at the end', () => {
    const w = loggedIn();
    const r = w.initiator(ctl(read10(7, 8), { read: { stag: 0x100, base: 0n } }), { captured: 40 });
    expect(r!.tree.length).toBe(1);
    w.initiator(ctl(read10(8, 8), { read: { stag: 0x300, base: 0n } }), { captured: 40 });
    expect(w.sink.rules()).toEqual([]);
    w.end();
    expect(w.sink.rules()).toEqual(['iser.not-captured']);
    expect(w.sink.findings[0]!.message).toContain('iSCSI BHS (2×)');
  });

  it('a command cut before its BHS: its data and response are no error (ledger and tasks no longer strict)', () => {
    const w = loggedIn();
    w.initiator(ctl(read10(11, 8), { read: { stag: 0x400, base: 0n } }), { captured: 20 });
    w.write(0x400, 0n, 4096);
    w.target(ctl(rsp(11)), { invalidate: 0x400 });
    w.end();
    expect(w.sink.rules()).toEqual(['iser.not-captured']);
  });

  it('iscsi.residual-mismatch stays silent with a correct underflow, fires with a wrong one', () => {
    const w = loggedIn();
    w.initiator(ctl(read10(9, 8), { read: { stag: 0x100, base: 0n } }));
    w.write(0x100, 0n, 1024);
    w.target(ctl(rsp(9, { underflow: 3072 })));
    expect(w.sink.rules()).toEqual([]);
    w.initiator(ctl(read10(10, 8), { read: { stag: 0x110, base: 0n } }));
    w.write(0x110, 0n, 1024);
    w.target(ctl(rsp(10, { underflow: 1024 })));
    expect(w.sink.rules()).toEqual(['iscsi.residual-mismatch']);
  });

  it('no response-without-command when the capture joined mid-connection', () => {
    const w = new Wire(connection({ initiatorDir: null }));
    w.target(ctl(rsp(77)));
    w.end();
    expect(w.sink.rules()).toEqual([]);
  });
});

describe('hostile input, bounded', () => {
  it('DataSegmentLength 2^24-1 and TotalAHSLength 1020 in a 76-octet Send: one finding, nothing allocated for them', () => {
    const w = loggedIn();
    w.initiator(ctl(E.pdu({ opcode: 0, immediate: true, flags: 0x80, itt: 3, dataLength: 0xffffff, ahsWords: 255 })));
    expect(w.sink.rules()).toEqual(['iscsi.pdu-length-mismatch']);
  });

  it('a Hello of 2 octets, and one cut by the capture: a finding or a skip, no exception', () => {
    const w = new Wire();
    w.initiator(E.iserHello(8).subarray(0, 2));
    expect(w.sink.rules()).toEqual(['iser.header-short']);
    const v = new Wire();
    v.initiator(E.iserHello(8), { captured: 2 });
    v.end();
    expect(v.sink.rules()).toEqual(['iser.not-captured']);
  });

  it('ITT reuse while outstanding: said, and the first task is replaced, not leaked', () => {
    const w = loggedIn();
    w.initiator(ctl(read10(4, 8), { read: { stag: 0x100, base: 0n } }));
    w.initiator(ctl(read10(4, 8), { read: { stag: 0x200, base: 0n } }));
    w.write(0x200, 0n, 4096);
    w.target(ctl(rsp(4)));
    w.end();
    expect(w.sink.rules()).toEqual(['iscsi.itt-reused']);
  });

  it(`more than ${MAX_TASKS} outstanding tasks: said once, the oldest forgotten, the rest still answered`, () => {
    const w = loggedIn();
    const n = MAX_TASKS + 500;
    for (let i = 0; i < n; i++)
      w.initiator(ctl(E.scsiCommand({ itt: i + 100, cdb: E.testUnitReady(), edtl: 0, cmdSn: i, expStatSn: 1 })));
    expect(w.sink.rules()).toEqual(['iscsi.tasks-capped']);
    w.target(ctl(rsp(n + 99)));
    // A response to a forgotten task is no error once tasks were forgotten.
    w.target(ctl(rsp(100)));
    expect(w.sink.rules()).toEqual(['iscsi.tasks-capped']);
    w.end();
    const unanswered = w.sink.findings.filter((f) => f.rule === 'iscsi.command-unanswered');
    // 64 listed one by one, then one line counting the rest.
    expect(unanswered.length).toBe(65);
    expect(unanswered[64]!.message).toMatch(/^\d+ more SCSI Commands were never answered$/);
  });

  it('a streaming-mode login longer than MPA keeps: login-unfinished, parsing bounded', () => {
    const pdus: Uint8Array[] = [];
    // Text-less Login Requests with C=1 forever (a login that never ends).
    for (let i = 0; i < 2000; i++)
      pdus.push(
        E.loginRequest({
          itt: 1,
          transit: false,
          csg: 1,
          nsg: 0,
          tsih: 0,
          cmdSn: 1,
          expStatSn: 0,
          keys: E.keys([['X', 'y'.repeat(40)]]),
        }),
      );
    const all = E.cat(...pdus);
    const kept = all.subarray(0, LEADING_KEEP);
    const l = parseLeading(leading(kept, all.length))!;
    expect(l.pdus.length).toBe(64);
    expect(l.cut).toBe(true);
    const w = new Wire(connection({ leading: [leading(kept, all.length), null] }));
    expect(w.sink.rules().sort()).toEqual(['iscsi.login-unfinished', 'iser.rdma-extensions-not-negotiated']);
  });

  it('leading octets that are no iSCSI login are not taken for one', () => {
    expect(parseLeading(leading(new Uint8Array(200).fill(0x41)))).toBeNull();
    expect(parseLeading({ ...leading(login()), fromStart: false })).toBeNull();
  });
});

describe('choosing iSER for a connection', () => {
  const send = (payload: Uint8Array, dir: 0 | 1 = 0) => new Wire().sendMessage(dir, payload);
  it('first Send: a Login Request or a Hello of the initiator; nothing else', () => {
    const c = connection();
    expect(isIserFirstMessage(send(ctl(login())), c)).toBe(true);
    expect(isIserFirstMessage(send(E.iserHello(8)), c)).toBe(true);
    expect(isIserFirstMessage(send(E.iserHello(8, 0x99)), c)).toBe(false);
    expect(isIserFirstMessage(send(ctl(read10(1, 1))), c)).toBe(false);
    expect(isIserFirstMessage(send(ctl(login()), 1), c)).toBe(false);
    expect(isIserFirstMessage(send(new Uint8Array(76)), c)).toBe(false);
  });
  it('private data: the iSER CM header on port 3260, or a streaming login asking RDMAExtensions=Yes', () => {
    expect(hasIserEvidence(connection())).toBe(true);
    expect(hasIserEvidence(connection({ serverPort: 5445 }))).toBe(false);
    expect(hasIserEvidence(connection({ requestPrivateData: new Uint8Array([0, 0, 1, 0]) }))).toBe(false);
    expect(
      hasIserEvidence(connection({ serverPort: 9999, requestPrivateData: null, leading: [leading(login()), null] })),
    ).toBe(true);
  });
});
