import type { UpperFactory } from './pipeline-types.js';
import { ddpUpperFactory } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { labelUpperLayer } from '../../dissectors/ddp-rdmap/upper-layer.js';
import { portOf } from '../net/segment.js';

/** The layer above MPA the CLI runs by default: DDP/RDMAP (RFC 5041, 5040, 7306). */
export const defaultUpper: UpperFactory | null = {
  ...ddpUpperFactory(),
  // The Responder listens; without startup frames the TCP server is the best guess.
  label: (mpa, serverPort) =>
    labelUpperLayer({
      serverPort: mpa.responder ? portOf(mpa.responder) : serverPort,
      requestPd: mpa.request?.privateData ?? null,
      replyPd: mpa.reply?.privateData ?? null,
      enhanced: mpa.request?.enhanced ?? mpa.reply?.enhanced ?? false,
      requestEnhanced: mpa.request?.enhanced ?? false,
      replyEnhanced: mpa.reply?.enhanced ?? false,
    }),
};
