/**
 * Test-side DDP helpers: the ULPDU builders (src/generate/ddp-ulpdu.ts, re-exported), the MPA
 * hand-off record and marker-less FPDUs with PAD and CRC-32C. Layouts: SPEC-NOTES Part 2.
 */

import type { MpaContext, Ulpdu } from '../../dissectors/mpa/ulpdu.js';
export * from '../../src/generate/ddp-ulpdu.js';

// ---------------------------------------------------------------------------------------------
// Hand-off and MPA framing
// ---------------------------------------------------------------------------------------------

let nextFrame = 1;

/** Wraps ULPDU octets into the MPA hand-off record (head = first 96 octets). */
export function ulpdu(ul: Uint8Array, o: Partial<Omit<Ulpdu, 'head' | 'length'>> & { length?: number } = {}): Ulpdu {
  const frames = o.frames ?? [nextFrame++];
  return {
    flow: o.flow ?? 1,
    dir: o.dir ?? 0,
    from: o.from ?? ((o.dir ?? 0) === 0 ? '10.0.0.1:40001' : '10.0.0.2:4420'),
    seq: o.seq ?? 1000,
    length: o.length ?? ul.length,
    head: ul.slice(0, 96),
    frames,
    crc: o.crc ?? 'good',
    afterError: o.afterError ?? false,
  };
}

/** Feeds ULPDUs of one direction with consecutive sequence numbers (each FPDU's wire size). */
export class Stream {
  seq: number;
  frame: number;
  constructor(
    readonly dir: 0 | 1,
    seq = 1000,
    frame = 1,
  ) {
    this.seq = seq;
    this.frame = frame;
  }
  next(ul: Uint8Array, o: Partial<Ulpdu> = {}): Ulpdu {
    const u = ulpdu(ul, { dir: this.dir, seq: this.seq, frames: [this.frame], ...o });
    this.seq = (this.seq + fpduSize(ul.length)) >>> 0;
    this.frame += 2;
    return u;
  }
}

/** Octets of a marker-less FPDU carrying `len` ULPDU octets: 2 + len + PAD + 4. */
export function fpduSize(len: number): number {
  return 2 + len + ((4 - ((2 + len) % 4)) % 4) + 4;
}

export function crc32c(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

/**
 * A marker-less FPDU: ULPDU_Length (BE16), ULPDU, PAD to a multiple of 4, CRC-32C sent least
 * significant octet first (SPEC-NOTES "CRC32c"). With `crc: false` the CRC field is 0.
 */
export function fpdu(ul: Uint8Array, o: { crc?: boolean } = {}): Uint8Array {
  const pad = (4 - ((2 + ul.length) % 4)) % 4;
  const out = new Uint8Array(2 + ul.length + pad + 4);
  out[0] = (ul.length >> 8) & 0xff;
  out[1] = ul.length & 0xff;
  out.set(ul, 2);
  if (o.crc ?? true) new DataView(out.buffer).setUint32(out.length - 4, crc32c(out.subarray(0, out.length - 4)), true);
  return out;
}

/** An MpaContext with defaults for a captured Rev 1 startup, Initiator = direction 0, no RFC 6581. */
export function mpaContext(o: Partial<MpaContext> = {}): MpaContext {
  return {
    rev: 1,
    initiatorDir: 0,
    p2p: false,
    rtr: null,
    requestIrd: null,
    requestOrd: null,
    replyIrd: null,
    replyOrd: null,
    ...o,
  };
}

/** Parses "00 16 41 43 ..." hex text. */
export function hex(s: string): Uint8Array {
  const t = s.replace(/[^0-9a-fA-F]/g, '');
  const out = new Uint8Array(t.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(t.slice(i * 2, i * 2 + 2), 16);
  return out;
}
