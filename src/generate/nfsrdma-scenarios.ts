/**
 * NFS over RDMA scenarios (RPC-over-RDMA version 1 over MPA Rev 2 on port 20049, RFC 8797 private
 * data): one clean connection with NFSv3 Calls using every kind of chunk and an NFSv4.1 COMPOUND,
 * and one scenario per rule with one mistake each. Each is built by nfs-session.ts on
 * ulp-connection.ts; the expected findings are the author's, at the message the specification
 * says is wrong.
 */
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, ULP_KNOBS } from './ulp-connection.js';
import { CLIENT, NFS3, NFS_PROGRAM, NfsSession, SERVER, T, nfs3, type NfsOptions } from './nfs-session.js';
import {
  Enc,
  RDMA_ERROR,
  RDMA_MSG,
  RDMA_MSGP,
  RDMA_NOMSG,
  cat,
  cmPrivateData,
  compound,
  nfs3ReadArgs,
  nfs3ReadResults,
  nfs3WriteArgs,
  op,
  rdmaHeader,
  rpcCall,
  rpcReply,
} from './rpcrdma-encoder.js';

function nfs(name: string, summary: string, run: (s: NfsSession) => void, o: NfsOptions = {}): Scenario {
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => {
      const s = new NfsSession(o);
      run(s);
      return buildUlpConnection(s.spec(), k, seed);
    },
  };
}

/** What the Linux NFS client does after mounting: ping, look up a file, read, write, commit, list. */
export function nfsCleanExchange(s: NfsSession): void {
  s.simple(NFS3.NULL, new Uint8Array(0), new Uint8Array(0), 22);
  s.simple(NFS3.GETATTR, nfs3.getattrArgs(), nfs3.getattrRes(), 38);
  s.simple(NFS3.LOOKUP, nfs3.lookupArgs('data.bin'), nfs3.lookupRes(), 95);
  // READ of 32 KiB into a write chunk of two segments, answered by Send with Invalidate.
  s.read(32768, { segments: [16384, 16384] });
  // WRITE of 16 KiB from a read chunk, pulled by two RDMA Read Requests.
  s.writeOp(16384);
  // COMMIT waits for the data to reach stable storage.
  s.simple(NFS3.COMMIT, nfs3.commitArgs(16384), nfs3.commitRes(), 1450);
  // A directory listing too long for a Send: the Reply goes into the reply chunk, RDMA_NOMSG.
  s.readdirplus(6000);
  // An NFSv4.1 COMPOUND { SEQUENCE, PUTFH, READ } served through a write chunk.
  s.v4read(4096);
}

const C = CLIENT;
const S = SERVER;
const ERR_VERS = 1;
const ERR_CHUNK = 2;

/** The Linux client pings the server first (NULL): the connection is followed from its first Call. */
const ping = (s: NfsSession): void => {
  s.simple(NFS3.NULL, new Uint8Array(0), new Uint8Array(0));
};

/** RDMA_ERROR of `errcode` (ERR_VERS with the range 1-1) answering `xid`. */
const rdmaError = (xid: number, errcode: number): Uint8Array =>
  rdmaHeader({ xid, proc: RDMA_ERROR, credit: 128, errcode, range: [1, 1] });

/** A GETATTR Call and its Reply, each made by the callers (the Reply's index returned with the Call's). */
function getattr(
  s: NfsSession,
  reply: (xid: number) => Uint8Array | null,
  call?: (xid: number) => Uint8Array,
): [number, number] {
  const xid = s.nextXid();
  const a = s.call(call ? call(xid) : s.nfs3Call(xid, NFS3.GETATTR, nfs3.getattrArgs()));
  const r = reply(xid);
  return [a, r ? s.reply(r, null, T.serve) : -1];
}

export const NFSRDMA_SCENARIOS: readonly Scenario[] = [
  nfs(
    'nfsrdma-clean',
    "NFS over RDMA on port 20049 (MPA Rev 2, RFC 8797 private data): NFSv3 NULL, GETATTR, LOOKUP, a READ through a write chunk, a WRITE through a read chunk, COMMIT, a READDIRPLUS answered through its reply chunk (RDMA_NOMSG), an NFSv4.1 COMPOUND READ; Send with Invalidate of each Call's handle; no finding",
    nfsCleanExchange,
  ),
  nfs(
    'nfsrdma-snaplen-cut',
    'NFS over RDMA, the clean exchange with the frame of the READ Call cut to 128 octets by the capture: MPA frames across the cut (CRC not captured), DDP decodes the Send; the chunk lists past the cut and the RDMA Writes into its unseen chunk are no finding, what was not checked is said once, at the end',
    (s) => {
      s.simple(NFS3.NULL, new Uint8Array(0), new Uint8Array(0), 22);
      s.simple(NFS3.GETATTR, nfs3.getattrArgs(), nfs3.getattrRes(), 38);
      s.simple(NFS3.LOOKUP, nfs3.lookupArgs('data.bin'), nfs3.lookupRes(), 95);
      s.cut = s.read(32768, { segments: [16384, 16384] }).call;
      // RFC 8166 §4.2: the transport header's chunk lists are past the cut: said once, at the end.
      s.x('rpcordma.capture-cut', null, null);
      s.writeOp(16384);
      s.simple(NFS3.COMMIT, nfs3.commitArgs(16384), nfs3.commitRes(), 1450);
      s.readdirplus(6000);
    },
  ),
  // --- the transport header (RFC 8166 §4.2, §4.5) ---
  nfs(
    'nfsrdma-version-unsupported',
    'RPC-over-RDMA: a Call of rdma_vers 2, answered with RDMA_ERROR / ERR_VERS (versions 1-1)',
    (s) => {
      ping(s);
      const [a, b] = getattr(
        s,
        (xid) => rdmaError(xid, ERR_VERS),
        (xid) => cat(new Enc().u32(xid).u32(2).u32(128).u32(RDMA_MSG).bytes(), new Uint8Array(12)),
      );
      s.x('rpcordma.version-unsupported', C, a);
      s.x('rpcordma.error-reply', S, b);
    },
  ),
  nfs(
    'nfsrdma-version-no-err-vers',
    'RPC-over-RDMA: a Call of rdma_vers 2 answered by an RDMA_MSG Reply instead of ERR_VERS',
    (s) => {
      ping(s);
      const [a, b] = getattr(
        s,
        (xid) => s.replyMsg(xid, nfs3.getattrRes()),
        (xid) => cat(new Enc().u32(xid).u32(2).u32(128).u32(RDMA_MSG).bytes(), new Uint8Array(12)),
      );
      s.x('rpcordma.version-unsupported', C, a);
      s.x('rpcordma.version-no-err-vers', S, b);
    },
  ),
  nfs('nfsrdma-proc-deprecated', 'RPC-over-RDMA: a Call sent as RDMA_MSGP (RFC 5666 padding), answered', (s) => {
    ping(s);
    const [a] = getattr(
      s,
      (xid) => s.replyMsg(xid, nfs3.getattrRes()),
      (xid) =>
        cat(
          rdmaHeader({ xid, proc: RDMA_MSGP, credit: 128, align: 4096, thresh: 1024 }),
          rpcCall({ xid, prog: NFS_PROGRAM, vers: 3, proc: NFS3.GETATTR, args: nfs3.getattrArgs() }),
        ),
    );
    s.x('rpcordma.proc-deprecated', C, a);
  }),
  nfs('nfsrdma-proc-unknown', 'RPC-over-RDMA: a Call with rdma_proc 9, answered with RDMA_ERROR / ERR_CHUNK', (s) => {
    ping(s);
    const [a, b] = getattr(
      s,
      (xid) => rdmaError(xid, ERR_CHUNK),
      (xid) => cat(new Enc().u32(xid).u32(1).u32(128).u32(9).bytes(), new Uint8Array(12)),
    );
    s.x('rpcordma.proc-unknown', C, a);
    s.x('rpcordma.error-reply', S, b);
  }),
  nfs('nfsrdma-header-short', 'RPC-over-RDMA: a 12-octet Send (no whole fixed header), dropped by the server', (s) => {
    ping(s);
    s.x('rpcordma.header-short', C, s.call(new Enc().u32(s.nextXid()).u32(1).u32(128).bytes()));
  }),
  nfs(
    'nfsrdma-chunk-lists-malformed',
    'RPC-over-RDMA: a READ Call whose write chunk counts 2 segments and the Send ends after 1, answered with ERR_CHUNK',
    (s) => {
      ping(s);
      const [a, b] = getattr(
        s,
        (xid) => rdmaError(xid, ERR_CHUNK),
        (xid) => {
          const seg = s.segment(8192);
          return new Enc()
            .u32(xid)
            .u32(1)
            .u32(128)
            .u32(RDMA_MSG)
            .u32(0) // no read list
            .u32(1) // a write chunk ...
            .u32(2) // ... of 2 segments
            .u32(seg.handle)
            .u32(seg.length)
            .u64(seg.offset)
            .bytes();
        },
      );
      s.x('rpcordma.chunk-lists-malformed', C, a);
      s.x('rpcordma.error-reply', S, b);
    },
  ),
  nfs(
    'nfsrdma-read-position-unaligned',
    'RPC-over-RDMA: a WRITE Call whose read chunk sits at XDR position 126 (not a multiple of 4), answered with ERR_CHUNK',
    (s) => {
      ping(s);
      const [a, b] = getattr(
        s,
        (xid) => rdmaError(xid, ERR_CHUNK),
        (xid) => {
          const rpc = rpcCall({
            xid,
            prog: NFS_PROGRAM,
            vers: 3,
            proc: NFS3.WRITE,
            args: nfs3WriteArgs(0n, 8192, false),
          });
          const seg = s.segment(8192);
          return cat(
            rdmaHeader({ xid, proc: RDMA_MSG, credit: 128, reads: [{ position: rpc.length + 2, ...seg }] }),
            rpc,
          );
        },
      );
      s.x('rpcordma.read-position-unaligned', C, a);
      s.x('rpcordma.error-reply', S, b);
    },
  ),
  nfs(
    'nfsrdma-rpc-xid-mismatch',
    'RPC-over-RDMA: a GETATTR Reply with 20 octets between its chunk lists and the RPC message (lists encoded longer than their content)',
    (s) => {
      ping(s);
      const [, b] = getattr(s, (xid) =>
        cat(
          rdmaHeader({ xid, proc: RDMA_MSG, credit: 128 }),
          new Uint8Array(20),
          rpcReply({ xid, results: nfs3.getattrRes() }),
        ),
      );
      s.x('rpcordma.rpc-xid-mismatch', S, b);
    },
  ),
  nfs(
    'nfsrdma-rpc-malformed',
    'RPC-over-RDMA: a GETATTR Call of RPC version 3, refused with MSG_DENIED / RPC_MISMATCH',
    (s) => {
      ping(s);
      const [a] = getattr(
        s,
        (xid) => cat(rdmaHeader({ xid, proc: RDMA_MSG, credit: 128 }), rpcReply({ xid, denied: 0 })),
        (xid) =>
          cat(
            rdmaHeader({ xid, proc: RDMA_MSG, credit: 128 }),
            rpcCall({ xid, prog: NFS_PROGRAM, vers: 3, proc: NFS3.GETATTR, args: nfs3.getattrArgs(), rpcvers: 3 }),
          ),
      );
      s.x('rpcordma.rpc-malformed', C, a);
    },
  ),
  nfs(
    'nfsrdma-nomsg-call-without-pzrc',
    'RPC-over-RDMA: an RDMA_NOMSG Call whose only read chunk is at position 100, answered with ERR_CHUNK',
    (s) => {
      ping(s);
      const [a, b] = getattr(
        s,
        (xid) => rdmaError(xid, ERR_CHUNK),
        (xid) => rdmaHeader({ xid, proc: RDMA_NOMSG, credit: 128, reads: [{ position: 100, ...s.segment(4096) }] }),
      );
      s.x('rpcordma.nomsg-call-without-pzrc', C, a);
      s.x('rpcordma.error-reply', S, b);
    },
  ),
  // --- RFC 8797 private data ---
  nfs(
    'nfsrdma-send-exceeds-inline',
    "RPC-over-RDMA: a WRITE of 6000 octets sent inline, larger than the server's 4096-octet Receive Size",
    (s) => {
      ping(s);
      const [a] = getattr(
        s,
        (xid) => s.replyMsg(xid, new Enc().u32(0).u32(0).u32(0).u32(6000).u32(2).raw(new Uint8Array(8)).bytes()),
        (xid) => s.nfs3Call(xid, NFS3.WRITE, nfs3WriteArgs(0n, 6000, true)),
      );
      s.x('rpcordma.send-exceeds-inline', C, a);
    },
  ),
  nfs(
    'nfsrdma-invalidate-not-negotiated',
    'RPC-over-RDMA: the client did not offer Remote Invalidation, yet the READ Reply is a Send with Invalidate',
    (s) => {
      ping(s);
      s.x('rpcordma.invalidate-not-negotiated', S, s.read(8192, { invalidate: 'own' }).reply);
    },
    { requestPd: cmPrivateData({ remoteInvalidate: false, send: 4096, recv: 4096 }) },
  ),
  nfs(
    'nfsrdma-invalidate-foreign-stag',
    "RPC-over-RDMA: two READs in flight; each Reply invalidates the other Call's handle",
    (s) => {
      ping(s);
      const xa = s.nextXid();
      const xb = s.nextXid();
      const ca = s.segment(8192);
      const cb = s.segment(8192);
      s.call(s.nfs3Call(xa, NFS3.READ, nfs3ReadArgs(0n, 8192), { writes: [[ca]] }));
      s.call(s.nfs3Call(xb, NFS3.READ, nfs3ReadArgs(8192n, 8192), { writes: [[cb]] }), 20);
      s.write(ca, 0, 8192, T.serve);
      s.write(cb, 0, 8192);
      const ra = s.reply(s.replyMsg(xa, nfs3ReadResults(8192), { writes: [[ca]] }), cb.handle);
      const rb = s.reply(s.replyMsg(xb, nfs3ReadResults(8192), { writes: [[cb]] }), ca.handle, T.next);
      s.x('rpcordma.invalidate-foreign-stag', S, ra);
      s.x('rpcordma.invalidate-foreign-stag', S, rb);
    },
  ),
  // --- chunk accounting at the Reply (RFC 8166 §3.4.5, §4.3) ---
  nfs(
    'nfsrdma-read-chunk-incomplete',
    'RPC-over-RDMA: a WRITE of 16 KiB through a read chunk; the server reads the first 8 KiB only, then replies',
    (s) => {
      ping(s);
      s.x('rpcordma.read-chunk-incomplete', S, s.writeOp(16384, { reads: [[0, 8192]] }).reply);
    },
  ),
  nfs(
    'nfsrdma-reply-write-length',
    'RPC-over-RDMA: a READ of 32 KiB; the server writes 16 KiB into the write chunk, its Reply reports 32768',
    (s) => {
      ping(s);
      s.x('rpcordma.reply-write-length', S, s.read(32768, { writes: [[0, 0, 16384]], reported: [32768] }).reply);
    },
  ),
  nfs(
    'nfsrdma-reply-chunk-mismatch',
    "RPC-over-RDMA: a READ whose Reply returns the write chunk with another handle than the Call's",
    (s) => {
      ping(s);
      const r = s.read(8192, { returnedHandle: 0x00bad000 });
      s.x('rpcordma.reply-chunk-mismatch', S, r.reply);
    },
  ),
  nfs('nfsrdma-reply-has-read-list', 'RPC-over-RDMA: a READ Reply that carries a read list', (s) => {
    ping(s);
    const r = s.read(8192, { header: { reads: [{ position: 4, handle: 0x00b0b000, length: 64, offset: 0n }] } });
    s.x('rpcordma.reply-has-read-list', S, r.reply);
  }),
  nfs(
    'nfsrdma-nomsg-reply-without-reply-chunk',
    'RPC-over-RDMA: a GETATTR Call (no chunks) answered by RDMA_NOMSG',
    (s) => {
      ping(s);
      const [, b] = getattr(s, (xid) => rdmaHeader({ xid, proc: RDMA_NOMSG, credit: 128 }));
      s.x('rpcordma.nomsg-reply-without-reply-chunk', S, b);
    },
  ),
  nfs(
    'nfsrdma-msg-reply-with-reply-chunk',
    'RPC-over-RDMA: a READDIRPLUS served through its reply chunk, answered by RDMA_MSG with the Reply inline too',
    (s) => {
      ping(s);
      s.x('rpcordma.msg-reply-with-reply-chunk', S, s.readdirplus(6000, { nomsg: false }).reply);
    },
  ),
  // --- credits (RFC 8166 §3.3) ---
  nfs(
    'nfsrdma-credits-exceeded',
    'RPC-over-RDMA: the server grants 1 credit; the client sends two GETATTR Calls without waiting',
    (s) => {
      ping(s);
      const x1 = s.nextXid();
      const x2 = s.nextXid();
      s.call(s.nfs3Call(x1, NFS3.GETATTR, nfs3.getattrArgs()));
      s.x('rpcordma.credits-exceeded', C, s.call(s.nfs3Call(x2, NFS3.GETATTR, nfs3.getattrArgs()), 15));
      s.reply(s.replyMsg(x1, nfs3.getattrRes()), null, T.serve);
      s.reply(s.replyMsg(x2, nfs3.getattrRes()), null, T.next);
    },
    { grant: 1 },
  ),
  nfs('nfsrdma-credit-zero', 'RPC-over-RDMA: a GETATTR Reply granting 0 credits', (s) => {
    ping(s);
    const [, b] = getattr(s, (xid) => s.replyMsg(xid, nfs3.getattrRes(), {}, { credit: 0 }));
    s.x('rpcordma.credit-zero', S, b);
  }),
  nfs('nfsrdma-credit-implausible', 'RPC-over-RDMA: a GETATTR Reply granting 100000 credits', (s) => {
    ping(s);
    const [, b] = getattr(s, (xid) => s.replyMsg(xid, nfs3.getattrRes(), {}, { credit: 100000 }));
    s.x('rpcordma.credit-implausible', S, b);
  }),
  // --- pairing (RFC 5531 §9) ---
  nfs('nfsrdma-reply-without-call', 'RPC-over-RDMA: a Reply to an XID the client never used', (s) => {
    ping(s);
    s.x('rpcordma.reply-without-call', S, s.reply(s.replyMsg(0x7e570001, nfs3.getattrRes()), null, T.call));
  }),
  nfs('nfsrdma-duplicate-reply', 'RPC-over-RDMA: a GETATTR answered twice', (s) => {
    ping(s);
    const [, b] = getattr(s, (xid) => s.replyMsg(xid, nfs3.getattrRes()));
    const again = s.events[b]!;
    if (again.op !== 'send') throw new Error('the Reply is a Send');
    s.x('rpcordma.duplicate-reply', S, s.reply(again.payload, null, 40));
  }),
  nfs('nfsrdma-xid-reused', 'RPC-over-RDMA: a second GETATTR Call with the XID of one still outstanding', (s) => {
    ping(s);
    const xid = s.nextXid();
    s.call(s.nfs3Call(xid, NFS3.GETATTR, nfs3.getattrArgs()));
    s.x('rpcordma.xid-reused', C, s.call(s.nfs3Call(xid, NFS3.GETATTR, nfs3.getattrArgs()), 20));
    s.reply(s.replyMsg(xid, nfs3.getattrRes()), null, T.serve);
  }),
  nfs('nfsrdma-call-unanswered', 'RPC-over-RDMA: a GETATTR Call the server never answers', (s) => {
    ping(s);
    s.x('rpcordma.call-unanswered', C, getattr(s, () => null)[0]);
  }),
  // --- the buffer ledger ---
  nfs(
    'nfsrdma-access-outside-buffer',
    "RPC-over-RDMA: a READ of 8 KiB; the server's RDMA Write runs 512 octets past the end of the write chunk's segment",
    (s) => {
      ping(s);
      const r = s.read(8192, { writes: [[0, 512, 8192]], reported: [8192] });
      s.x('ulp.access-outside-buffer', S, r.writes[0]!);
      // Nothing landed inside the segment: the Reply reports 8192 octets written.
      s.x('rpcordma.reply-write-length', S, r.reply);
    },
  ),
];

/**
 * A snaplen cut inside a Send of several FPDUs (the upper layer receives the Send without its
 * last octets). Its own table, registered after the others: the round trip's settings of the
 * scenarios before it stay as they were.
 */
export const NFSRDMA_CUT_SCENARIOS: readonly Scenario[] = [
  nfs(
    'nfsrdma-snaplen-in-send',
    'NFSv4.1 over RDMA with 8 KiB inline Sends (RFC 8797 private data): a COMPOUND { SEQUENCE, PUTFH, WRITE of 7900 octets inline, GETATTR } in one Send of six FPDUs, the frame of its second FPDU cut to 128 octets by the capture; MPA frames across the cut, the Call is decoded from the octets before the cut, and the operations past it are said once, at the end',
    (s) => {
      ping(s);
      const xid = s.nextXid();
      const call = s.call(
        cat(
          rdmaHeader({ xid, proc: RDMA_MSG, credit: 128 }),
          rpcCall({
            xid,
            prog: NFS_PROGRAM,
            vers: 4,
            proc: 1,
            args: compound('', 1, [op.sequence(), op.putfh(), op.write(0n, 7900, true), op.getattr()]),
          }),
        ),
      );
      s.cut = call;
      s.cutFpdu = 1;
      s.reply(s.replyMsg(xid, new Enc().u32(0).string('').u32(0).bytes()), null, T.serve);
      s.simple(NFS3.GETATTR, nfs3.getattrArgs(), nfs3.getattrRes(), 38);
      s.simple(NFS3.LOOKUP, nfs3.lookupArgs('data.bin'), nfs3.lookupRes(), 95);
      // Said with no seq, once per connection at its end (the count of Sends cut).
      s.x('rpcordma.capture-cut', null, null);
    },
    {
      requestPd: cmPrivateData({ remoteInvalidate: true, send: 8192, recv: 8192 }),
      replyPd: cmPrivateData({ remoteInvalidate: false, send: 8192, recv: 8192 }),
    },
  ),
];
