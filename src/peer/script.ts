/**
 * What an MPA peer does once in Full Operation, as a small script, and the faults it injects.
 *   script: comma-separated steps: send:N, write:N, read:N (N payload octets), terminate, pause:MS
 *   faults: crc@K (corrupt FPDU K's CRC), fpduptr@K (every marker inside FPDU K points 4 octets off),
 *           pad@K (PAD octets of FPDU K not zero), key (a wrong key in this side's startup frame),
 *           responder-first (the Responder sends its first FPDU with its Reply, before the
 *           Initiator's first FPDU: RFC 5044 §7.1.2 forbids it). K counts this side's FPDUs from 1.
 */
/** The most a message the peer sends may carry: a --script step, or a Read Response it answers with. */
export const MAX_MESSAGE = 16 * 1024 * 1024;

export type Step = { op: 'send' | 'write' | 'read'; size: number } | { op: 'terminate' } | { op: 'pause'; ms: number };

export interface Faults {
  crc: Set<number>;
  fpduptr: Set<number>;
  pad: Set<number>;
  key: boolean;
  responderFirst: boolean;
}

export class ScriptError extends Error {}

export function parseScript(text: string): Step[] {
  const steps: Step[] = [];
  for (const raw of text.split(',')) {
    const s = raw.trim();
    if (s === '') continue;
    if (s === 'terminate') {
      steps.push({ op: 'terminate' });
      continue;
    }
    const m = /^(send|write|read|pause):(\d+)$/.exec(s);
    if (!m) throw new ScriptError(`--script: "${s}" is not send:N, write:N, read:N, pause:MS or terminate`);
    const n = Number(m[2]);
    if (m[1] === 'pause') {
      // A timer past 2^31-1 ms fires at once (with a warning): an hour is more than any run needs.
      if (n > 3_600_000) throw new ScriptError(`--script: ${s}: at most 3600000 ms per pause`);
      steps.push({ op: 'pause', ms: n });
    } else {
      if (n > MAX_MESSAGE) throw new ScriptError(`--script: ${s}: at most 16 MiB per message`);
      steps.push({ op: m[1] as 'send' | 'write' | 'read', size: n });
    }
  }
  return steps;
}

export function parseFaults(list: readonly string[]): Faults {
  const f: Faults = { crc: new Set(), fpduptr: new Set(), pad: new Set(), key: false, responderFirst: false };
  for (const raw of list.flatMap((x) => x.split(','))) {
    const s = raw.trim();
    if (s === '') continue;
    if (s === 'key') f.key = true;
    else if (s === 'responder-first') f.responderFirst = true;
    else {
      const m = /^(crc|fpduptr|pad)@(\d+)$/.exec(s);
      if (!m || Number(m[2]) < 1)
        throw new ScriptError(
          `--fault: "${s}" is not crc@K, fpduptr@K, pad@K, key or responder-first (K counts this side's FPDUs from 1)`,
        );
      f[m[1] as 'crc' | 'fpduptr' | 'pad'].add(Number(m[2]));
    }
  }
  return f;
}
