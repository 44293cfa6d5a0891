/** The RPC-over-RDMA dissector on the shared upper-layer harness (test/helpers/ulp-wire.ts): the client calls, the server replies. */
import type { UlpConnection, UlpRecord } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { RPC_RDMA } from '../../dissectors/rpc-rdma/index.js';
import { RuleSink, type SendOpts, ulpConnection, UlpWire } from '../helpers/ulp-wire.js';

export type { SendOpts };

export class CollectSink extends RuleSink {
  constructor() {
    super(RPC_RDMA.rules);
  }
}

export function connection(o: Partial<UlpConnection> = {}): UlpConnection {
  return ulpConnection(7, 20049, o);
}

export class Wire extends UlpWire<CollectSink> {
  constructor(conn: UlpConnection = connection()) {
    super(RPC_RDMA, conn, new CollectSink());
  }

  /** A Send from the client (the MPA Initiator, direction 0). */
  call(payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.send(0, payload, o);
  }

  /** A Send from the server. */
  reply(payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.send(1, payload, o);
  }
}
