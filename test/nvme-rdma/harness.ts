/** The NVMe/RDMA dissector on the shared upper-layer harness (test/helpers/ulp-wire.ts): the host sends commands, the controller completions. */
import type { UlpConnection, UlpRecord } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { NVME_RDMA } from '../../dissectors/nvme-rdma/index.js';
import { RuleSink, type SendOpts, ulpConnection, UlpWire } from '../helpers/ulp-wire.js';

export class CollectSink extends RuleSink {
  constructor() {
    super(NVME_RDMA.rules);
  }
}

export function connection(o: Partial<UlpConnection> = {}): UlpConnection {
  return ulpConnection(3, 4420, o);
}

export class Wire extends UlpWire<CollectSink> {
  constructor(conn: UlpConnection = connection(), shared?: Map<string, unknown>, sink?: CollectSink) {
    super(NVME_RDMA, conn, sink ?? new CollectSink(), shared);
  }

  /** A command capsule from the host (direction 0). */
  command(payload: Uint8Array, o: { captured?: number } = {}): UlpRecord | null {
    return this.send(0, payload, o);
  }

  /** A response capsule from the controller. */
  complete(payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.send(1, payload, o);
  }
}
