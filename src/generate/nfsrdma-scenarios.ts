/**
 * NFS over RDMA scenarios (RPC-over-RDMA version 1 over MPA Rev 2 on port 20049, RFC 8797 private
 * data): one clean connection with NFSv3 Calls using every kind of chunk and an NFSv4.1 COMPOUND,
 * and one scenario per rule with one mistake each. Each is built by nfs-session.ts on
 * ulp-connection.ts; the expected findings are the author's, at the message the specification
 * says is wrong.
 */
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, ULP_KNOBS } from './ulp-connection.js';
import { CLIENT, NFS3, NfsSession, SERVER, nfs3, type NfsOptions } from './nfs-session.js';
import { Enc } from './rpcrdma-encoder.js';

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
  s.simple(NFS3.NULL, new Uint8Array(0), new Uint8Array(0));
  s.simple(NFS3.GETATTR, nfs3.getattrArgs(), nfs3.getattrRes());
  s.simple(NFS3.LOOKUP, nfs3.lookupArgs('data.bin'), nfs3.lookupRes());
  // READ of 32 KiB into a write chunk of two segments, answered by Send with Invalidate.
  s.read(32768, { segments: [16384, 16384] });
  // WRITE of 16 KiB from a read chunk, pulled by two RDMA Read Requests.
  s.writeOp(16384);
  s.simple(NFS3.COMMIT, nfs3.commitArgs(16384), nfs3.commitRes());
  // A directory listing too long for a Send: the Reply goes into the reply chunk, RDMA_NOMSG.
  s.readdirplus(6000);
  // An NFSv4.1 COMPOUND { SEQUENCE, PUTFH, READ } served through a write chunk.
  s.v4read(4096);
}

export const NFSRDMA_SCENARIOS: readonly Scenario[] = [
  nfs(
    'nfsrdma-clean',
    "NFS over RDMA on port 20049 (MPA Rev 2, RFC 8797 private data): NFSv3 NULL, GETATTR, LOOKUP, a READ through a write chunk, a WRITE through a read chunk, COMMIT, a READDIRPLUS answered through its reply chunk (RDMA_NOMSG), an NFSv4.1 COMPOUND READ; Send with Invalidate of each Call's handle; no finding",
    nfsCleanExchange,
  ),
];

export { CLIENT, SERVER, Enc };
