/**
 * Generated frames as a capture file: classic pcap (src/report/pcap-writer.ts) or pcapng with one
 * Section Header, one Interface Description (microsecond timestamps, the default if_tsresol) and
 * an Enhanced Packet Block per frame (pcapng draft, sections 4.1, 4.2, 4.3), little-endian.
 */
import { buildPcap, LINKTYPE_ETHERNET, type PcapFrame } from '../report/pcap-writer.js';
import { concat } from './frames.js';

export type CaptureFormat = 'pcap' | 'pcapng';

/** The format a file name asks for: .pcapng (or .pcapng.gz is not written) is pcapng, else pcap. */
export function formatOf(path: string): CaptureFormat {
  return /\.pcapng$/i.test(path) ? 'pcapng' : 'pcap';
}

function block(type: number, body: Uint8Array): Uint8Array {
  const padded = (body.length + 3) & ~3;
  const total = 12 + padded;
  const b = new Uint8Array(total);
  const v = new DataView(b.buffer);
  v.setUint32(0, type, true);
  v.setUint32(4, total, true);
  b.set(body, 8);
  v.setUint32(total - 4, total, true);
  return b;
}

/** The pcapng Section Header Block's body: little-endian, version 1.0, section length unknown. */
export function sectionHeaderBody(): Uint8Array {
  const shb = new Uint8Array(16);
  const sv = new DataView(shb.buffer);
  sv.setUint32(0, 0x1a2b3c4d, true); // byte-order magic
  sv.setUint16(4, 1, true);
  sv.setUint16(6, 0, true);
  sv.setBigInt64(8, -1n, true); // section length unknown
  return shb;
}

/** The pcapng Interface Description Block's body for one link type. */
export function interfaceBody(linkType: number): Uint8Array {
  const idb = new Uint8Array(8);
  const iv = new DataView(idb.buffer);
  iv.setUint16(0, linkType, true);
  iv.setUint32(4, 262144, true); // snaplen
  return idb;
}

function pcapng(linkType: number, frames: readonly PcapFrame[]): Uint8Array {
  const parts: Uint8Array[] = [block(0x0a0d0d0a, sectionHeaderBody()), block(1, interfaceBody(linkType))];
  for (const f of frames) {
    const body = new Uint8Array(20 + f.data.length);
    const v = new DataView(body.buffer);
    const ts = BigInt(f.tsSec) * 1_000_000n + BigInt(Math.floor(f.tsNsec / 1000));
    v.setUint32(0, 0, true); // interface 0
    v.setUint32(4, Number(ts >> 32n), true);
    v.setUint32(8, Number(ts & 0xffffffffn), true);
    v.setUint32(12, f.data.length, true);
    v.setUint32(16, f.origLen ?? f.data.length, true);
    body.set(f.data, 20);
    parts.push(block(6, body));
  }
  return concat(...parts);
}

/** The bytes of a capture file holding `frames` (Ethernet unless told otherwise). */
export function captureFile(
  frames: readonly PcapFrame[],
  format: CaptureFormat,
  linkType = LINKTYPE_ETHERNET,
): Uint8Array {
  return format === 'pcapng' ? pcapng(linkType, frames) : buildPcap(linkType, frames);
}
