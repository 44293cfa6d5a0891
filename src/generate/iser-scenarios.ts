/**
 * iSER scenarios (iSCSI over iSER over MPA Rev 2 on port 3260, iSER CM private data): clean
 * connections with the login in each place it can be (streaming mode before MPA, RFC 5046 §5.1;
 * iSER-assisted after the Hello, RFC 7145 §5.1), reads and writes (immediate and unsolicited data,
 * solicited data by RDMA Read), and one scenario per rule with one mistake each. Built by
 * iser-session.ts on ulp-connection.ts; the expected findings are the author's, at the message the
 * specification says is wrong.
 */
import * as E from './iser-encoder.js';
import { CLIENT, IserSession, SERVER, type IserOptions } from './iser-session.js';
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, ULP_KNOBS } from './ulp-connection.js';

function iser(name: string, summary: string, run: (s: IserSession) => void, o: IserOptions = {}): Scenario {
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => {
      const s = new IserSession(o);
      run(s);
      return buildUlpConnection(s.spec(), k, seed);
    },
  };
}

/** What a Linux initiator does after login: INQUIRY, reads and writes of a few sizes, a ping, logout. */
export function iserTasks(s: IserSession): void {
  s.inquiry(96, 36);
  // READ(10) of 16 KiB written by the target in two RDMA Writes.
  s.read(32, { lba: 0x100, split: [8192, 8192] });
  // WRITE(10) of 8 KiB: 1 KiB immediate, 1 KiB unsolicited Data-Out, 6 KiB pulled by two RDMA Reads.
  s.write(16, { lba: 0x2000, immediate: 1024, dataOut: 1024, split: [3072, 3072] });
  // READ(16) and WRITE(16) of 4 KiB each.
  s.read(8, { lba: 0x10000, cdb16: true });
  s.write(8, { lba: 0x20000, cdb16: true });
  s.nop();
  s.logout();
}

const clean = (s: IserSession): void => {
  s.hello();
  s.assistedLogin();
};

export const ISER_SCENARIOS: readonly Scenario[] = [
  iser(
    'iser-clean',
    'iSER with iSER-assisted login: Hello, Login, INQUIRY, READ(10/16), WRITE(10/16) with immediate and unsolicited data, NOP, Logout',
    (s) => {
      clean(s);
      iserTasks(s);
    },
  ),
  iser(
    'iser-streaming-login',
    'iSER after an RFC 5046 streaming-mode login over TCP before MPA (RDMAExtensions=Yes), then reads and writes',
    (s) => {
      s.streamingLogin();
      iserTasks(s);
    },
  ),
  iser(
    'iser-no-invalidate',
    'iSER whose initiator refuses Send with Invalidate (CM private data 0x40): plain Sends answer every task',
    (s) => {
      clean(s);
      iserTasks(s);
    },
    { cm: { sendInvalidateNotSupported: true } },
  ),
  // --- one mistake each ---
  iser(
    'iser-invalidate-not-allowed',
    'rule iser.invalidate-not-allowed: Send with Invalidate although the CM private data says not supported',
    (s) => {
      clean(s);
      s.read(8);
      const bad = s.read(8, { invalidateOwn: true });
      s.expectAt('iser.invalidate-not-allowed', bad.rsp);
    },
    { cm: { sendInvalidateNotSupported: true } },
  ),
  iser(
    'iser-invalidate-wrong-stag',
    "rule iser.invalidate-wrong-stag: the SCSI Response invalidates another task's STag",
    (s) => {
      clean(s);
      const a = s.read(8, { invalidate: null });
      const b = s.read(8, { invalidate: a.stag });
      s.expectAt('iser.invalidate-wrong-stag', b.rsp);
    },
  ),
  iser(
    'iser-data-in-pdu',
    'rule iser.data-pdu-in-send: the target sends SCSI Data-In in a Send instead of an RDMA Write',
    (s) => {
      clean(s);
      const r = s.read(8, { unanswered: true });
      const di = s.pdu(
        SERVER,
        E.dataIn({
          itt: r.itt,
          data: new Uint8Array(16),
          offset: 0,
          dataSn: 0,
          statSn: 0,
          expCmdSn: 0,
          maxCmdSn: 0,
          final: false,
        }),
      );
      s.expectAt('iser.data-pdu-in-send', di);
      s.expectAt('iscsi.command-unanswered', r.cmd);
    },
  ),
  iser(
    'iser-residual-mismatch',
    'rule iscsi.residual-mismatch: a READ moves half its EDTL and the response reports no residual',
    (s) => {
      clean(s);
      const r = s.read(16, { split: [4096] });
      s.expectAt('iscsi.residual-mismatch', r.rsp);
    },
  ),
  iser('iser-residual-flags', 'rule iscsi.residual-flags: a SCSI Response sets both O and U', (s) => {
    clean(s);
    const r = s.read(8, { bothResidualFlags: true, underflow: 0 });
    s.expectAt('iscsi.residual-flags', r.rsp);
  }),
  iser('iser-itt-reused', 'rule iscsi.itt-reused: a READ reuses the ITT of an outstanding WRITE', (s) => {
    clean(s);
    const w = s.write(8, { unanswered: true });
    const r = s.read(8, { itt: w.itt });
    s.expectAt('iscsi.itt-reused', r.cmd);
    // The WRITE's Write STag was still advertised and is never retired; its RDMA Read is fine.
  }),
  iser(
    'iser-response-without-command',
    'rule iscsi.response-without-command: a SCSI Response for an ITT no command has',
    (s) => {
      clean(s);
      s.read(8);
      const o = s.bareResponse(0xdead);
      s.expectAt('iscsi.response-without-command', o);
    },
  ),
  iser('iser-duplicate-response', 'rule iscsi.duplicate-response: the target answers a READ twice', (s) => {
    clean(s);
    const r = s.read(8);
    const d = s.bareResponse(r.itt);
    s.expectAt('iscsi.duplicate-response', d);
  }),
  iser(
    'iser-command-unanswered',
    'rule iscsi.command-unanswered: a WRITE gets its data pulled but never a SCSI Response',
    (s) => {
      clean(s);
      const w = s.write(8, { unanswered: true });
      s.expectAt('iscsi.command-unanswered', w.cmd);
    },
  ),
  iser(
    'iser-stag-flags',
    'rule iser.stag-flags-mismatch: a WRITE advertises a Read STag (RSV) instead of a Write STag',
    (s) => {
      clean(s);
      const w = s.write(4, { immediate: 2048, header: { read: { stag: 0x77700, base: 0x1000n } } });
      s.expectAt('iser.stag-flags-mismatch', w.cmd);
    },
  ),
  iser(
    'iser-unsolicited-exceeds',
    'rule iscsi.unsolicited-exceeds-edtl: immediate data and Data-Out beyond the EDTL',
    (s) => {
      clean(s);
      const w = s.write(2, { immediate: 1024, dataOut: 1024, unanswered: true });
      // EDTL 1024 (2 blocks = 1024): 2048 octets sent unsolicited; the immediate part is within it.
      s.expectAt('iscsi.unsolicited-exceeds-edtl', w.dataOut!);
      s.expectAt('iscsi.command-unanswered', w.cmd);
    },
  ),
  iser('iser-hello-version', 'rule iser.hello-version: the Hello offers iSER version 9', (s) => {
    const [h] = s.hello(16, 16, 0x99);
    s.expectAt('iser.hello-version', h);
    s.assistedLogin();
    s.read(8);
  }),
  iser(
    'iser-hello-out-of-order',
    'rule iser.hello-out-of-order: the initiator sends its Login Request before the HelloReply',
    (s) => {
      s.send(CLIENT, E.iserHello(16));
      const [login] = s.assistedLogin();
      s.expectAt('iser.hello-out-of-order', login);
      const late = s.send(SERVER, E.iserHelloReply(16));
      void late;
      s.read(8);
    },
  ),
  iser(
    'iser-hello-rejected',
    'rule iser.hello-rejected: the target rejects the iSER connection in its HelloReply',
    (s) => {
      s.send(CLIENT, E.iserHello(16));
      const r = s.send(SERVER, E.iserHelloReply(16, true), 40);
      s.expectAt('iser.hello-rejected', r);
    },
  ),
  iser(
    'iser-hello-ord',
    'rule iser.hello-ord-exceeds-ird: the HelloReply announces more Read Requests than the Hello can take',
    (s) => {
      const [, r] = s.hello(4, 32);
      s.expectAt('iser.hello-ord-exceeds-ird', r);
      s.assistedLogin();
    },
  ),
  iser(
    'iser-first-not-login',
    'rule iser.first-not-login: the initiator starts with a SCSI Command, no login before or after MPA',
    (s) => {
      const r = s.read(8);
      s.expectAt('iser.first-not-login', r.cmd);
    },
  ),
  iser(
    'iser-login-unfinished',
    'rules iscsi.login-unfinished, iser.rdma-extensions-not-negotiated: a streaming-mode login without RDMAExtensions that never reaches Full Feature Phase',
    (s) => {
      s.streamingLogin({ rdma: false, finish: false });
      s.expectNone('iscsi.login-unfinished');
      s.expectNone('iser.rdma-extensions-not-negotiated');
      s.read(8);
    },
  ),
  iser(
    'iser-pdu-length',
    'rule iscsi.pdu-length-mismatch: a NOP-Out announcing a 16 MiB data segment in a 76-octet Send',
    (s) => {
      clean(s);
      const bad = s.pdu(
        CLIENT,
        E.pdu({
          opcode: 0x00,
          immediate: true,
          flags: 0x80,
          itt: 0x999,
          w20: 0xffffffff,
          dataLength: 0xffffff,
          ahsWords: 255,
        }),
      );
      s.expectAt('iscsi.pdu-length-mismatch', bad);
    },
  ),
  iser('iser-wrong-side', 'rule iscsi.opcode-wrong-side: the target sends a NOP-Out', (s) => {
    clean(s);
    const bad = s.pdu(SERVER, E.nopOut({ itt: 0x55, cmdSn: 0, expStatSn: 0 }));
    s.expectAt('iscsi.opcode-wrong-side', bad);
  }),
  iser('iser-flags-reserved', 'rule iser.flags-reserved: a SCSI Command with reserved iSER flag bits set', (s) => {
    clean(s);
    const [ping] = s.nop();
    const bad = s.pdu(CLIENT, E.nopOut({ itt: 0x66, cmdSn: 9, expStatSn: 9 }), { badFlags: 0x02 });
    s.expectAt('iser.flags-reserved', bad);
    void ping;
  }),
  iser('iser-opcode-unknown', 'rule iser.opcode-unknown: a Send whose iSER opcode is 0x4', (s) => {
    clean(s);
    const bad = s.send(CLIENT, E.cat(new Uint8Array([0x40]), new Uint8Array(75)));
    s.expectAt('iser.opcode-unknown', bad);
  }),
  iser(
    'iser-header-short',
    'rules iser.header-short, iscsi.bhs-short: Sends shorter than the iSER header and than header and BHS',
    (s) => {
      clean(s);
      const a = s.send(CLIENT, E.cat(new Uint8Array([0x10]), new Uint8Array(19)));
      s.expectAt('iser.header-short', a);
      const b = s.send(CLIENT, E.cat(E.iserHeader(), new Uint8Array(20)));
      s.expectAt('iscsi.bhs-short', b);
    },
  ),
  iser(
    'iser-cm-reserved',
    'rule iser.cm-private-data-reserved: CM private data with reserved bits set',
    (s) => {
      s.expectNone('iser.cm-private-data-reserved');
      clean(s);
      s.read(8);
    },
    { requestPd: new Uint8Array([0x01, 0, 0, 0]) },
  ),
  iser(
    'iser-access-outside',
    'rule ulp.access-outside-buffer: the target RDMA-Writes past the end of a READ buffer',
    (s) => {
      clean(s);
      const r = s.read(8, { split: [4096 + 512] });
      s.expectAt('ulp.access-outside-buffer', r.data[0]!);
      s.expectAt('iscsi.residual-mismatch', r.rsp);
    },
  ),
];
