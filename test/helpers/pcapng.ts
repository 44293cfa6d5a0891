/**
 * Builders for capture files in either byte order: classic pcap (µs and ns) and pcapng blocks,
 * so capture tests make their input in-test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { concat as cat } from '../../src/generate/frames.js';
export { cat };

export interface PcapRec {
  sec: number;
  /** Microseconds or nanoseconds, as the file's magic says. */
  frac: number;
  data: Uint8Array;
  origLen?: number;
  /** Overrides the captured-length field (for broken files). */
  caplen?: number;
}

export interface PcapOpts {
  le?: boolean;
  nano?: boolean;
  snaplen?: number;
  linkType?: number;
  major?: number;
}

export function pcapFileHeader(o: PcapOpts = {}): Uint8Array {
  const le = o.le ?? true;
  const h = new Uint8Array(24);
  const v = new DataView(h.buffer);
  v.setUint32(0, o.nano ? 0xa1b23c4d : 0xa1b2c3d4, le);
  v.setUint16(4, o.major ?? 2, le);
  v.setUint16(6, 4, le);
  v.setUint32(16, o.snaplen ?? 262144, le);
  v.setUint32(20, o.linkType ?? 1, le);
  return h;
}

export function pcapRec(r: PcapRec, le = true): Uint8Array {
  const b = new Uint8Array(16 + r.data.length);
  const v = new DataView(b.buffer);
  v.setUint32(0, r.sec, le);
  v.setUint32(4, r.frac, le);
  v.setUint32(8, r.caplen ?? r.data.length, le);
  v.setUint32(12, r.origLen ?? r.data.length, le);
  b.set(r.data, 16);
  return b;
}

export function pcapFile(o: PcapOpts, recs: readonly PcapRec[]): Uint8Array {
  return cat(pcapFileHeader(o), ...recs.map((r) => pcapRec(r, o.le ?? true)));
}

/** A pcapng block: type, total length, body padded to 4, total length. */
export function block(
  type: number,
  body: Uint8Array,
  le = true,
  totalOverride?: number,
  trailerOverride?: number,
): Uint8Array {
  const padded = (body.length + 3) & ~3;
  const total = 12 + padded;
  const b = new Uint8Array(total);
  const v = new DataView(b.buffer);
  v.setUint32(0, type, le);
  v.setUint32(4, totalOverride ?? total, le);
  b.set(body, 8);
  v.setUint32(total - 4, trailerOverride ?? totalOverride ?? total, le);
  return b;
}

/** Options list (code, length, value padded to 4) ending with opt_endofopt. */
export function options(le: boolean, opts: ReadonlyArray<[number, Uint8Array]>): Uint8Array {
  if (opts.length === 0) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  for (const [code, value] of opts) {
    const h = new Uint8Array(4 + ((value.length + 3) & ~3));
    const v = new DataView(h.buffer);
    v.setUint16(0, code, le);
    v.setUint16(2, value.length, le);
    h.set(value, 4);
    parts.push(h);
  }
  parts.push(new Uint8Array(4));
  return cat(...parts);
}

export function shb(le = true, major = 1): Uint8Array {
  const body = new Uint8Array(16);
  const v = new DataView(body.buffer);
  v.setUint32(0, 0x1a2b3c4d, le);
  v.setUint16(4, major, le);
  v.setUint16(6, 0, le);
  v.setInt32(8, -1, le);
  v.setInt32(12, -1, le);
  return block(0x0a0d0d0a, body, le);
}

export interface IdbOpts {
  snaplen?: number;
  tsresol?: number;
  tsoffset?: bigint;
  le?: boolean;
}

export function idb(linkType: number, o: IdbOpts = {}): Uint8Array {
  const le = o.le ?? true;
  const head = new Uint8Array(8);
  const v = new DataView(head.buffer);
  v.setUint16(0, linkType, le);
  v.setUint32(4, o.snaplen ?? 0, le);
  const opts: Array<[number, Uint8Array]> = [[2, new TextEncoder().encode('eth0')]];
  if (o.tsresol !== undefined) opts.push([9, Uint8Array.of(o.tsresol)]);
  if (o.tsoffset !== undefined) {
    const x = new Uint8Array(8);
    new DataView(x.buffer).setBigInt64(0, o.tsoffset, le);
    opts.push([14, x]);
  }
  return block(1, cat(head, options(le, opts)), le);
}

export interface EpbOpts {
  origLen?: number;
  caplen?: number;
  le?: boolean;
  comment?: string;
}

/** Enhanced Packet Block; ts counts the interface's if_tsresol units. */
export function epb(ifid: number, ts: bigint, data: Uint8Array, o: EpbOpts = {}): Uint8Array {
  const le = o.le ?? true;
  const head = new Uint8Array(20);
  const v = new DataView(head.buffer);
  v.setUint32(0, ifid, le);
  v.setUint32(4, Number(ts >> 32n), le);
  v.setUint32(8, Number(ts & 0xffffffffn), le);
  v.setUint32(12, o.caplen ?? data.length, le);
  v.setUint32(16, o.origLen ?? data.length, le);
  const padded = new Uint8Array((data.length + 3) & ~3);
  padded.set(data);
  const opts = o.comment === undefined ? new Uint8Array(0) : options(le, [[1, new TextEncoder().encode(o.comment)]]);
  return block(6, cat(head, padded, opts), le);
}

/** Obsolete Packet Block (type 2). */
export function pb(ifid: number, ts: bigint, data: Uint8Array, le = true): Uint8Array {
  const head = new Uint8Array(20);
  const v = new DataView(head.buffer);
  v.setUint16(0, ifid, le);
  v.setUint32(4, Number(ts >> 32n), le);
  v.setUint32(8, Number(ts & 0xffffffffn), le);
  v.setUint32(12, data.length, le);
  v.setUint32(16, data.length, le);
  return block(2, cat(head, data), le);
}

/** Simple Packet Block: original length, then the bytes kept. */
export function spb(origLen: number, data: Uint8Array, le = true): Uint8Array {
  const head = new Uint8Array(4);
  new DataView(head.buffer).setUint32(0, origLen, le);
  return block(3, cat(head, data), le);
}

/** A block of a type readers do not know (custom, statistics, name resolution...). */
export function unknownBlock(type: number, size: number, le = true): Uint8Array {
  const body = new Uint8Array(size);
  for (let i = 0; i < size; i++) body[i] = (i * 7) & 0xff;
  return block(type, body, le);
}

let dir: string | null = null;
let n = 0;

/** Writes bytes to a fresh temporary file and returns its path (removeTempFiles() deletes them). */
export function tempFile(bytes: Uint8Array, name = 'cap'): string {
  dir ??= mkdtempSync(join(tmpdir(), 'mpa-dissect-capture-'));
  const p = join(dir, `${name}-${n++}`);
  writeFileSync(p, bytes);
  return p;
}

/** Deletes the files tempFile() wrote: call from afterAll. */
export function removeTempFiles(): void {
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  dir = null;
}

/** Distinct, recognisable frame bytes. */
export function bytesOf(len: number, seed: number): Uint8Array {
  const b = new Uint8Array(len);
  for (let i = 0; i < len; i++) b[i] = (seed * 31 + i * 13) & 0xff;
  return b;
}
