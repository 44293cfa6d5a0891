/**
 * Writes the SMB Direct workload of `npm run bench` (case h) without holding it in memory: a few
 * SMB Direct connections (MPA Rev 2, CRC, no markers, the MS-SMBD Appendix A IRD/ORD block), each
 * negotiated and established as the generator's SmbdSession does it, then SMB2 READs and WRITEs
 * over RDMA_V1 channels in turn: the bulk moves in RDMA Writes (READ) and RDMA Read Requests with
 * their Read Responses (WRITE), as MS-SMBD 3.1.4.5/3.1.4.6 and MS-SMB2 3.3.5.12/3.3.5.13 say.
 *
 * The session's events (its RDMAP messages, credits and MessageIds as the specification counts
 * them) are drained after every operation and framed by bench-ulp-writer.ts, the connections'
 * operations interleaved.
 */
import { irdOrd } from '../src/generate/smbd-encoder.js';
import { CHANNEL_RDMA_V1, CHANNEL_RDMA_V1_INVALIDATE, SMBD_PORT, SmbdSession } from '../src/generate/smbd-session.js';
import type { BenchCapture } from './bench-generate.js';
import { type BenchConn, UlpBenchWriter } from './bench-ulp-writer.js';

/** The SMB2 READ and WRITE lengths, cycled (Windows and Linux clients use 64 KiB to 1 MiB). */
const LENGTHS = [1 << 20, 65536, 262144, 1 << 20] as const;

interface Conn {
  s: SmbdSession;
  c: BenchConn;
}

/** Generates about `targetBytes` of SMB Direct traffic on `connections` connections. */
export function generateSmbdCapture(path: string, targetBytes: number, connections = 2): BenchCapture {
  const w = new UlpBenchWriter(path);
  const pd = irdOrd(16, 16);
  const open = (n: number): Conn => {
    const c = w.open({
      client: { addr: (0x0a000001 + n * 0x100) >>> 0, port: 49152 + n },
      server: { addr: 0x0a0000fe, port: SMBD_PORT },
      requestPd: pd,
      replyPd: pd,
    });
    const s = new SmbdSession();
    s.establish();
    w.frameEvents(c, s.events);
    return { s, c };
  };

  const conns = Array.from({ length: Math.max(1, connections) }, (_, n) => open(n));
  let op = 0;
  while (w.bytes < targetBytes) {
    const { s, c } = conns[op % conns.length]!;
    const k = Math.floor(op / conns.length);
    const length = LENGTHS[(k >> 1) % LENGTHS.length]!;
    // READ and WRITE in turn on each connection, both channels (RDMA_V1_INVALIDATE from SMB 3.0.2).
    const channel = k % 4 < 2 ? CHANNEL_RDMA_V1 : CHANNEL_RDMA_V1_INVALIDATE;
    if (k % 2 === 0) s.read({ length, channel });
    else s.writeOp({ length, channel });
    w.frameEvents(c, s.events);
    op++;
  }
  for (const { s, c } of conns) {
    s.close();
    w.frameEvents(c, s.events);
    w.close(c);
  }
  return w.finish();
}
