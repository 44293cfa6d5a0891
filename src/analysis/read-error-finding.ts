import { readErrorRule } from '../capture/read-capture.js';
import type { CaptureReadError } from '../capture/packet.js';
import type { FindingSink } from '../vocabulary/findings.js';

/** Why reading stopped early, as the last finding of the run (after every flow has ended). */
export function reportReadError(findings: FindingSink, e: CaptureReadError): void {
  findings.report(readErrorRule(e), {
    flow: null,
    from: null,
    frames: e.frame > 0 ? [e.frame] : [],
    seq: null,
    message: `${e.file}: offset ${e.offset}, frame ${e.frame}: ${e.message}`,
  });
}
