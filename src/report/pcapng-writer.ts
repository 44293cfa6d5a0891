/**
 * pcapng output (draft-ietf-opsawg-pcapng, sections 3 and 4): blocks built in memory one at a time
 * and written through a 1 MiB buffer. Every block is type, total length, body padded to 32 bits,
 * total length again; options are code, length, value padded to 32 bits, closed by opt_endofopt.
 * Either byte order: a section copied from an input keeps the input's, so its options (written in
 * that order) stay valid byte for byte.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

export const BT_SHB = 0x0a0d0d0a;
export const BT_IDB = 0x00000001;
export const BT_EPB = 0x00000006;
export const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

/** opt_endofopt and opt_comment (section 3.5), valid in every block. */
export const OPT_ENDOFOPT = 0;
export const OPT_COMMENT = 1;
/** if_tsresol (section 4.2): one octet, 10^-v. */
export const IF_TSRESOL = 9;
/** shb_userappl (section 4.1). */
export const SHB_USERAPPL = 4;

/** One option as written: its code and its value. */
export interface PcapngOption {
  code: number;
  value: Uint8Array;
}

const utf8 = new TextEncoder();

/** An opt_comment (or any UTF-8 string option). Strings longer than an option can hold are cut (callers cap far below). */
export function stringOption(code: number, text: string): PcapngOption {
  const v = utf8.encode(text);
  return { code, value: v.length > 0xffff ? v.subarray(0, 0xffff) : v };
}

export const pad4 = (n: number): number => (n + 3) & ~3;

/** Octets the options take, opt_endofopt included (0 when there are none: the field is then left out). */
export function optionsLength(opts: readonly PcapngOption[], raw = 0): number {
  if (opts.length === 0 && raw === 0) return 0;
  let n = raw + 4;
  for (const o of opts) n += 4 + pad4(o.value.length);
  return n;
}

/** Writes `opts` at out[at] (then opt_endofopt); returns the position after them. */
export function putOptions(
  out: Uint8Array,
  dv: DataView,
  at: number,
  opts: readonly PcapngOption[],
  le: boolean,
): number {
  for (const o of opts) {
    dv.setUint16(at, o.code, le);
    dv.setUint16(at + 2, o.value.length, le);
    out.set(o.value, at + 4);
    at += 4 + pad4(o.value.length); // padding octets are zero: the block is freshly allocated
  }
  dv.setUint32(at, 0, le); // opt_endofopt: code 0, length 0
  return at + 4;
}

/** A block of `bodyLength` octets (padded): the array, its view, and the header and trailer written. */
export function newBlock(type: number, bodyLength: number, le: boolean): { b: Uint8Array; v: DataView } {
  const total = 12 + pad4(bodyLength);
  const b = new Uint8Array(total);
  const v = new DataView(b.buffer);
  v.setUint32(0, type, le);
  v.setUint32(4, total, le);
  v.setUint32(total - 4, total, le);
  return { b, v };
}

/** Section Header Block: version 1.0, section length unknown (-1), as a streaming writer must say. */
export function shbBlock(le: boolean, opts: readonly PcapngOption[]): Uint8Array {
  const ol = optionsLength(opts);
  const { b, v } = newBlock(BT_SHB, 16 + ol, le);
  v.setUint32(8, BYTE_ORDER_MAGIC, le);
  v.setUint16(12, 1, le);
  v.setUint16(14, 0, le);
  v.setInt32(16, -1, le);
  v.setInt32(20, -1, le);
  if (ol) putOptions(b, v, 24, opts, le);
  return b;
}

/** Interface Description Block. */
export function idbBlock(linkType: number, snaplen: number, le: boolean, opts: readonly PcapngOption[]): Uint8Array {
  const ol = optionsLength(opts);
  const { b, v } = newBlock(BT_IDB, 8 + ol, le);
  v.setUint16(8, linkType, le);
  v.setUint32(12, snaplen, le);
  if (ol) putOptions(b, v, 16, opts, le);
  return b;
}

/**
 * Enhanced Packet Block: `data` captured of `origLen`, timestamp `tsHi`:`tsLo` in the interface's
 * units, then `raw` options copied from an input block (in this byte order, without its
 * opt_endofopt) and `opts`.
 */
export function epbBlock(
  type: number,
  head: { ifid: number; tsHi: number; tsLo: number; origLen: number },
  data: Uint8Array,
  le: boolean,
  raw: Uint8Array | null,
  opts: readonly PcapngOption[],
): Uint8Array {
  const dataLen = pad4(data.length);
  const rawLen = raw?.length ?? 0;
  const ol = optionsLength(opts, rawLen);
  const { b, v } = newBlock(type, 20 + dataLen + ol, le);
  if (type === BT_EPB) v.setUint32(8, head.ifid, le);
  else v.setUint16(8, head.ifid, le); // obsolete Packet Block: interface and drops count are 16 bits each
  v.setUint32(12, head.tsHi >>> 0, le);
  v.setUint32(16, head.tsLo >>> 0, le);
  v.setUint32(20, data.length, le);
  v.setUint32(24, head.origLen >>> 0, le);
  b.set(data, 28);
  if (ol) {
    let at = 28 + dataLen;
    if (raw) {
      b.set(raw, at);
      at += rawLen;
    }
    putOptions(b, v, at, opts, le);
  }
  return b;
}

/**
 * `sec` seconds and `frac` units of 1/`unit` second as the 64-bit count of units a packet block
 * holds, split into its high and low 32 bits without leaving exact double arithmetic (sec * 1e9
 * passes 2^53).
 */
export function splitTimestamp(sec: number, frac: number, unit: number): [number, number] {
  const s = Math.max(0, Math.floor(sec));
  const sh = Math.floor(s / 65536);
  const sl = s % 65536;
  const a = sh * unit; // < 2^16 * 2^32: exact
  const ah = Math.floor(a / 65536);
  const al = a % 65536;
  const c = al * 65536 + sl * unit + frac; // < 2^33 + 2^46: exact
  return [ah + Math.floor(c / 4294967296), c % 4294967296];
}

/** Buffered output to a file; errors are the errno errors of open and write (the caller names the file). */
export class BlockFile {
  private readonly fd: number;
  private buf = new Uint8Array(1 << 20);
  private used = 0;
  private closed = false;

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  write(block: Uint8Array): void {
    if (this.used + block.length > this.buf.length) this.flush();
    if (block.length > this.buf.length) {
      writeAll(this.fd, block);
      return;
    }
    this.buf.set(block, this.used);
    this.used += block.length;
  }

  flush(): void {
    if (this.used > 0) writeAll(this.fd, this.buf.subarray(0, this.used));
    this.used = 0;
  }

  /** Flushes and closes; the descriptor is closed even when the last flush fails (which throws). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }
}

function writeAll(fd: number, b: Uint8Array): void {
  let off = 0;
  while (off < b.length) off += writeSync(fd, b, off, b.length - off);
}
