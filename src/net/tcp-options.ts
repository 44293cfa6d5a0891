import { u32 } from './bytes.js';
import type { TcpOptions } from './segment.js';

/** TCP option kinds decoded (RFC 9293, 7323, 2018). */
const EOL = 0;
const NOP = 1;
const MSS = 2;
const WSCALE = 3;
const SACK_PERMITTED = 4;
const SACK = 5;
const TIMESTAMPS = 8;

export function emptyOptions(): TcpOptions {
  return { mss: null, windowScale: null, sackPermitted: false, sack: [], tsVal: null, tsEcr: null };
}

/** Length a known option must have (SACK: checked apart), or 0 when any length >= 2 will do. */
function fixedLength(kind: number): number {
  switch (kind) {
    case MSS:
      return 4;
    case WSCALE:
      return 3;
    case SACK_PERMITTED:
      return 2;
    case TIMESTAMPS:
      return 10;
    default:
      return 0;
  }
}

/**
 * Decodes the option list b[start, end) into opts. Returns null, or what is wrong with the list;
 * options before the fault stay decoded.
 */
export function parseTcpOptions(b: Uint8Array, start: number, end: number, opts: TcpOptions): string | null {
  let i = start;
  while (i < end) {
    const kind = b[i]!;
    if (kind === EOL) break;
    if (kind === NOP) {
      i++;
      continue;
    }
    if (i + 1 >= end) return `option kind ${kind} at header offset ${i - start + 20} has no room for its length byte`;
    const len = b[i + 1]!;
    if (len < 2) return `option kind ${kind} has length ${len}, below the minimum of 2`;
    if (i + len > end) return `option kind ${kind} of length ${len} runs ${i + len - end} bytes past the header`;
    const fixed = fixedLength(kind);
    if (fixed !== 0 && len !== fixed) return `option kind ${kind} has length ${len}, should be ${fixed}`;
    switch (kind) {
      case MSS:
        opts.mss = (b[i + 2]! << 8) | b[i + 3]!;
        break;
      case WSCALE:
        opts.windowScale = b[i + 2]!;
        break;
      case SACK_PERMITTED:
        opts.sackPermitted = true;
        break;
      case SACK:
        if (len < 10 || (len - 2) % 8 !== 0) return `SACK option has length ${len}, should be 2 + 8 per block`;
        for (let j = i + 2; j < i + len; j += 8) opts.sack.push([u32(b, j), u32(b, j + 4)]);
        break;
      case TIMESTAMPS:
        opts.tsVal = u32(b, i + 2);
        opts.tsEcr = u32(b, i + 6);
        break;
    }
    i += len;
  }
  return null;
}
