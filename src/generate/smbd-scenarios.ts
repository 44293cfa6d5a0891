/**
 * SMB Direct scenarios (MS-SMBD, MS-SMB2 over MPA Rev 2 on port 5445): one clean connection with
 * everything a client does to read and write a file over RDMA, and one scenario per rule with one
 * mistake each. Each is built by smbd-session.ts on ulp-connection.ts; the expected findings are
 * the author's, at the message the specification says is wrong.
 */
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, ULP_KNOBS } from './ulp-connection.js';
import {
  CHANNEL_RDMA_V1,
  CHANNEL_RDMA_V1_INVALIDATE,
  CLIENT,
  RESPONSE_REQUESTED,
  SERVER,
  SmbdSession,
  T,
  type SmbdOptions,
} from './smbd-session.js';

function smbd(name: string, summary: string, run: (s: SmbdSession) => void, o: SmbdOptions = {}): Scenario {
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => {
      const s = new SmbdSession(o);
      run(s);
      return buildUlpConnection(s.spec(), k, seed);
    },
  };
}

/** The clean exchange: what a Windows or Linux client does to read and write a file over SMB Direct. */
export function smbdCleanExchange(s: SmbdSession): void {
  s.establish();
  // READ of 64 KiB over RDMA_V1 into two registered buffers, each filled by one RDMA Write.
  s.read({ length: 65536, descriptors: [32768, 32768], channel: CHANNEL_RDMA_V1 });
  // WRITE of 32 KiB over RDMA_V1_INVALIDATE: two RDMA Read Requests, the WRITE Response invalidates the token.
  s.writeOp({ length: 32768, channel: CHANNEL_RDMA_V1_INVALIDATE });
  // The server's idle timer: a keepalive, answered by the client's credit-granting Data Transfer.
  s.keepalive(SERVER);
  s.close();
}

export const SMBD_SCENARIOS: readonly Scenario[] = [
  smbd(
    'smbd-clean',
    'SMB Direct on port 5445 (MPA Rev 2, MS-SMBD IRD/ORD private data): negotiation, SMB2 NEGOTIATE, a fragmented SESSION_SETUP, TREE_CONNECT, CREATE, a READ served by RDMA Writes, a WRITE served by RDMA Read Requests and answered by Send with Invalidate, a keepalive, CLOSE; no finding',
    smbdCleanExchange,
  ),
];

export { CLIENT, SERVER, T, RESPONSE_REQUESTED };
