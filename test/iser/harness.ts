/** The iSER dissector on the shared upper-layer harness (test/helpers/ulp-wire.ts): the initiator and the target send. */
import type { LeadingOctets, UlpConnection, UlpRecord } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { ISER } from '../../dissectors/iser/index.js';
import { RuleSink, type SendOpts, ulpConnection, UlpWire } from '../helpers/ulp-wire.js';

export class CollectSink extends RuleSink {
  constructor() {
    super(ISER.rules);
  }
}

/** The iSER CM header (4 octets) in the Request's private data unless `o` says otherwise. */
export function connection(o: Partial<UlpConnection> = {}): UlpConnection {
  return ulpConnection(3, 3260, { requestPrivateData: new Uint8Array(4), ...o });
}

export function leading(bytes: Uint8Array, length = bytes.length): LeadingOctets {
  return { bytes, length, seq: 100, fromStart: true, frames: [0, 4] };
}

export class Wire extends UlpWire<CollectSink> {
  constructor(conn: UlpConnection = connection()) {
    super(ISER, conn, new CollectSink());
  }

  initiator(payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.send(0, payload, o);
  }

  target(payload: Uint8Array, o: SendOpts = {}): UlpRecord | null {
    return this.send(1, payload, o);
  }
}
