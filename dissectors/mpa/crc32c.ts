/**
 * CRC-32C (Castagnoli), as MPA uses it (RFC 5044 §4.4; draft-ietf-rddp-mpa-00 §7.2): reflected
 * polynomial 0x82F63B78, initial value 0xFFFFFFFF, final xor 0xFFFFFFFF. Table-driven so the hot
 * path needs no native module.
 */
import { createRequire } from 'node:module';

const POLY = 0x82f63b78;
// Slicing-by-16: 16 tables so 16 octets are folded per step (about twice slicing-by-8 in V8).
const T = new Int32Array(16 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  for (let k = 1; k < 16; k++) {
    const prev = T[(k - 1) * 256 + n]!;
    T[k * 256 + n] = (prev >>> 8) ^ T[prev & 0xff]!;
  }
}

/** The register's value before any data. */
export const CRC32C_INIT = 0xffffffff | 0;

/**
 * SSE4.2/ARMv8 CRC32C from @node-rs/crc32 (prebuilt binaries, an optional dependency) when it
 * installed; the table code below otherwise. Native is about 4x faster on long runs; for short runs
 * the call overhead eats the gain, so they stay in JS.
 *
 * Loaded on first need, synchronously: importing the addon costs about 20 ms of start-up, more than
 * the JS code spends on a small capture. Runs use the JS code until NATIVE_AFTER octets were hashed,
 * then the addon is tried once (a missing addon is remembered as missing).
 */
type NativeCrc = (input: Buffer, initialState?: number) => number;
let native: NativeCrc | null = null;
let nativeTried = !!process.env['MPA_DISSECT_NO_NATIVE_CRC'];
const NATIVE_MIN = 256;
/** Octets hashed in JS before the addon is worth loading (about 4 ms of JS work). */
const NATIVE_AFTER = 4 * 1024 * 1024;
let hashed = 0;

function loadNative(): NativeCrc | null {
  nativeTried = true;
  try {
    native = (createRequire(import.meta.url)('@node-rs/crc32') as { crc32c: NativeCrc }).crc32c;
  } catch {
    native = null;
  }
  return native;
}

/** Which implementation long runs use (loads the addon to tell): for the bench and DEVELOPING.md. */
export function crc32cImplementation(): 'native' | 'js' {
  return (nativeTried ? native : loadNative()) ? 'native' : 'js';
}

/** Feeds buf[start, end) into a running CRC register (not yet finalized). */
export function crc32cUpdate(reg: number, buf: Uint8Array, start: number, end: number): number {
  if (end - start >= NATIVE_MIN) {
    if (native !== null) {
      // The native call chains on the finalized value: register = ~value.
      return ~native(Buffer.from(buf.buffer, buf.byteOffset + start, end - start), ~reg >>> 0);
    }
    if (!nativeTried && (hashed += end - start) > NATIVE_AFTER) loadNative();
  }
  return crc32cJs(reg, buf, start, end);
}

/** The table-driven implementation (always available; also what the tests compare native to). */
export function crc32cJs(reg: number, buf: Uint8Array, start: number, end: number): number {
  let c = reg | 0;
  let i = start;
  const end16 = end - 16;
  while (i <= end16) {
    const a = (buf[i]! | (buf[i + 1]! << 8) | (buf[i + 2]! << 16) | (buf[i + 3]! << 24)) ^ c;
    const x = buf[i + 4]! | (buf[i + 5]! << 8) | (buf[i + 6]! << 16) | (buf[i + 7]! << 24);
    const y = buf[i + 8]! | (buf[i + 9]! << 8) | (buf[i + 10]! << 16) | (buf[i + 11]! << 24);
    const z = buf[i + 12]! | (buf[i + 13]! << 8) | (buf[i + 14]! << 16) | (buf[i + 15]! << 24);
    c =
      T[3840 + (a & 0xff)]! ^
      T[3584 + ((a >>> 8) & 0xff)]! ^
      T[3328 + ((a >>> 16) & 0xff)]! ^
      T[3072 + (a >>> 24)]! ^
      T[2816 + (x & 0xff)]! ^
      T[2560 + ((x >>> 8) & 0xff)]! ^
      T[2304 + ((x >>> 16) & 0xff)]! ^
      T[2048 + (x >>> 24)]! ^
      T[1792 + (y & 0xff)]! ^
      T[1536 + ((y >>> 8) & 0xff)]! ^
      T[1280 + ((y >>> 16) & 0xff)]! ^
      T[1024 + (y >>> 24)]! ^
      T[768 + (z & 0xff)]! ^
      T[512 + ((z >>> 8) & 0xff)]! ^
      T[256 + ((z >>> 16) & 0xff)]! ^
      T[z >>> 24]!;
    i += 16;
  }
  for (; i < end; i++) c = T[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return c;
}

/** Final CRC value (unsigned) from a register. */
export function crc32cFinal(reg: number): number {
  return (reg ^ 0xffffffff) >>> 0;
}

/** CRC-32C of a whole buffer. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  return crc32cFinal(crc32cUpdate(CRC32C_INIT, buf, start, end));
}

/** Reads the CRC field as it travels: least significant octet first (SPEC-NOTES "Wire byte order"). */
export function readWireCrc(b0: number, b1: number, b2: number, b3: number): number {
  return (b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)) >>> 0;
}

export function byteSwap32(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}
