/**
 * The MpaContext handed to the layer above MPA (DDP/RDMAP) when it is created: the startup Rev, who
 * initiated, and RFC 6581's enhanced block (peer-to-peer mode, the RTR type, IRD/ORD), as far as the
 * startup frames were captured.
 */
import type { StartupRecord } from './startup.js';
import type { MpaContext } from './ulpdu.js';

/** The context of a connection whose startup frames are `req` and `rep` (either may be missing). */
export function upperContext(req: StartupRecord | null, rep: StartupRecord | null): MpaContext {
  const qb = req?.enhancedBlock ?? null;
  const pb = rep?.enhancedBlock ?? null;
  const p2p = !!(qb?.p2p && pb?.p2p);
  const rtr = p2p && pb ? (pb.rtr.send ? 'send' : pb.rtr.write ? 'write' : pb.rtr.read ? 'read' : null) : null;
  return sharedContext({
    rev: rep?.rev ?? req?.rev ?? null,
    initiatorDir: req ? req.dir : rep ? ((1 - rep.dir) as 0 | 1) : null,
    p2p,
    rtr,
    requestIrd: qb?.ird ?? null,
    requestOrd: qb?.ord ?? null,
    replyIrd: pb?.ird ?? null,
    replyOrd: pb?.ord ?? null,
  });
}

/**
 * Contexts handed to the layer above, one frozen object per distinct value: the connections of a
 * capture mostly negotiate alike, and the layer above keeps its context as long as the flow is open
 * (100,000 open flows held 100,000 equal objects). Bounded: beyond CONTEXTS_KEPT distinct values a
 * flow keeps its own.
 */
const contexts = new Map<string, Readonly<MpaContext>>();
const CONTEXTS_KEPT = 256;
function sharedContext(c: MpaContext): MpaContext {
  const key = `${c.rev}|${c.initiatorDir}|${c.p2p}|${c.rtr}|${c.requestIrd}|${c.requestOrd}|${c.replyIrd}|${c.replyOrd}`;
  const have = contexts.get(key);
  if (have) return have;
  if (contexts.size >= CONTEXTS_KEPT) return c;
  const frozen = Object.freeze(c);
  contexts.set(key, frozen);
  return frozen;
}
