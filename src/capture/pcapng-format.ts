import type { PacketRecord } from './packet.js';
import { bytes, caplenLimit, type FormatParser, type RecordSink } from './record-sink.js';
import { TsConverter } from './timestamp.js';

/**
 * pcapng: a sequence of blocks (type, total length, body, total length again). Each Section Header
 * Block sets the byte order and starts a fresh interface table; packet blocks refer to interfaces.
 */

export const BT_SHB = 0x0a0d0d0a;
export const BT_IDB = 0x00000001;
/** Obsolete Packet Block (pcapng 1.0), still written by old tools. */
export const BT_PB = 0x00000002;
export const BT_SPB = 0x00000003;
export const BT_EPB = 0x00000006;
export const BYTE_ORDER_MAGIC = 0x1a2b3c4d;

/** Room for a packet block's header, padding and options on top of its captured bytes. */
const BLOCK_OVERHEAD = 64 * 1024;

export interface PcapngInterface {
  linkType: number;
  /** 0 = not stated. */
  snaplen: number;
  ts: TsConverter;
}

/** Byte order of the section whose SHB starts at dv[pos] (12 bytes present): true = little-endian, null = bad magic. */
export function sectionByteOrder(dv: DataView, pos: number): boolean | null {
  const bom = dv.getUint32(pos + 8, true);
  if (bom === BYTE_ORDER_MAGIC) return true;
  if (dv.getUint32(pos + 8, false) === BYTE_ORDER_MAGIC) return false;
  return null;
}

function blockName(type: number): string {
  switch (type) {
    case BT_SHB:
      return 'section header block';
    case BT_IDB:
      return 'interface description block';
    case BT_PB:
      return 'packet block';
    case BT_SPB:
      return 'simple packet block';
    case BT_EPB:
      return 'enhanced packet block';
    default:
      return `block of type 0x${type.toString(16).padStart(8, '0')}`;
  }
}

function minBlockLength(type: number): number {
  switch (type) {
    case BT_SHB:
      return 28;
    case BT_IDB:
      return 20;
    case BT_SPB:
      return 16;
    case BT_PB:
    case BT_EPB:
      return 32;
    default:
      return 12;
  }
}

/** Structural check of a block's total length; null when sound. */
export function checkBlockLength(type: number, total: number): string | null {
  if (total % 4 !== 0) return `${blockName(type)} length ${total} is not a multiple of 4`;
  const min = minBlockLength(type);
  if (total < min) return `${blockName(type)} length ${total} is below the ${min}-byte minimum`;
  return null;
}

export function isPacketBlock(type: number): boolean {
  return type === BT_EPB || type === BT_SPB || type === BT_PB;
}

/** Checks the Section Header Block at dv[pos] (whole block present). */
export function checkShb(dv: DataView, pos: number, le: boolean): string | null {
  const major = dv.getUint16(pos + 12, le);
  const minor = dv.getUint16(pos + 14, le);
  if (major !== 1) return `unsupported pcapng version ${major}.${minor} (only 1.x is defined)`;
  return null;
}

/** Parses the Interface Description Block at dv[pos] (whole block present). */
export function parseIdb(dv: DataView, pos: number, total: number, le: boolean): PcapngInterface | string {
  const linkType = dv.getUint16(pos + 8, le);
  const snaplen = dv.getUint32(pos + 12, le);
  let tsresol = 6;
  let tsoffset = 0;
  const end = pos + total - 4;
  let o = pos + 16;
  while (o + 4 <= end) {
    const code = dv.getUint16(o, le);
    const len = dv.getUint16(o + 2, le);
    if (code === 0) break; // opt_endofopt
    if (o + 4 + len > end)
      return `interface description block: option ${code} of ${bytes(len)} runs past the end of the block`;
    if (code === 9 && len >= 1) tsresol = dv.getUint8(o + 4);
    else if (code === 14 && len >= 8) {
      const hi = dv.getInt32(le ? o + 8 : o + 4, le);
      const lo = dv.getUint32(le ? o + 4 : o + 8, le);
      tsoffset = hi * 4294967296 + lo;
    }
    o += 4 + ((len + 3) & ~3);
  }
  return { linkType, snaplen, ts: new TsConverter(tsresol, tsoffset) };
}

/**
 * Fills rec (all but frame and fileOffset) from the packet block (EPB, SPB or PB) at buf[pos]
 * (whole block present). Returns an error message, or null.
 */
export function fillPacket(
  type: number,
  buf: Uint8Array,
  dv: DataView,
  pos: number,
  total: number,
  le: boolean,
  ifaces: readonly PcapngInterface[],
  ifaceCount: number,
  rec: PacketRecord,
): string | null {
  let ifid: number;
  let caplen: number;
  let dataAt: number;
  let iface: PcapngInterface | undefined;
  if (type === BT_SPB) {
    ifid = 0;
    iface = ifaceCount > 0 ? ifaces[0] : undefined;
    if (iface === undefined) return 'simple packet block before any interface description block in its section';
    const orig = dv.getUint32(pos + 8, le);
    caplen = Math.min(orig, total - 16);
    if (iface.snaplen !== 0 && caplen > iface.snaplen) caplen = iface.snaplen;
    rec.origLen = orig;
    rec.tsSec = 0;
    rec.tsNsec = 0;
    dataAt = pos + 12;
  } else {
    ifid = type === BT_EPB ? dv.getUint32(pos + 8, le) : dv.getUint16(pos + 8, le);
    iface = ifid < ifaceCount ? ifaces[ifid] : undefined;
    if (iface === undefined) {
      return `${blockName(type)} refers to interface ${ifid}, but its section defines ${ifaceCount === 1 ? '1 interface' : `${ifaceCount} interfaces`}`;
    }
    caplen = dv.getUint32(pos + 20, le);
    const room = total - 32;
    if (caplen > room)
      return `${blockName(type)} says ${bytes(caplen)} captured, but the block holds only ${bytes(room)} of packet data`;
    if (iface.snaplen !== 0 && caplen > iface.snaplen) {
      return `${blockName(type)} says ${bytes(caplen)} captured, more than interface ${ifid}'s snaplen of ${iface.snaplen}`;
    }
    iface.ts.apply(dv.getUint32(pos + 12, le), dv.getUint32(pos + 16, le), rec);
    rec.origLen = dv.getUint32(pos + 24, le);
    dataAt = pos + 28;
  }
  rec.linkType = iface.linkType;
  rec.interfaceId = ifid;
  rec.data = buf.subarray(dataAt, dataAt + caplen);
  return null;
}

export class PcapngParser implements FormatParser {
  readonly format = 'pcapng' as const;
  need = 12;
  private le = true;
  private inSection = false;
  private ifaces: PcapngInterface[] = [];
  /** Largest block buffered whole; bigger non-packet blocks are skipped as they stream by. */
  private limit = caplenLimit(0) + BLOCK_OVERHEAD;
  /** Bytes still to skip of an oversized block, then its trailing length to check. */
  private skip = 0;
  private skipTotal = 0;
  private skipStart = 0;

  constructor(private readonly sink: RecordSink) {}

  parse(buf: Uint8Array, dv: DataView, pos: number, end: number, base: number, eof: boolean): number {
    const sink = this.sink;
    const rec = sink.rec;
    for (;;) {
      if (this.skipTotal !== 0) {
        pos = this.skipping(dv, pos, end, base, eof);
        if (this.skipTotal !== 0 || sink.error !== null) return pos;
      }
      const left = end - pos;
      if (left < 12) {
        if (eof && left > 0)
          sink.fail(base + pos, `truncated block header: 12 bytes needed, ${bytes(left)} left in file`);
        this.need = 12;
        return pos;
      }
      let le = this.le;
      const type = dv.getUint32(pos, le);
      if (type === BT_SHB) {
        const order = sectionByteOrder(dv, pos);
        if (order === null) {
          sink.fail(
            base + pos,
            `section header block has a bad byte-order magic 0x${dv
              .getUint32(pos + 8, false)
              .toString(16)
              .padStart(8, '0')}`,
          );
          return pos;
        }
        le = order;
      } else if (!this.inSection) {
        sink.fail(base + pos, `${blockName(type)} before any section header block`);
        return pos;
      }
      const total = dv.getUint32(pos + 4, le);
      const bad = checkBlockLength(type, total);
      if (bad !== null) {
        sink.fail(base + pos, bad);
        return pos;
      }
      if (total > this.limit) {
        if (type === BT_SHB || type === BT_IDB || isPacketBlock(type)) {
          sink.fail(
            base + pos,
            `${blockName(type)} of ${bytes(total)} exceeds the ${this.limit}-byte limit for one block`,
          );
          return pos;
        }
        // A block we do not read (e.g. a large comment or secrets block): stream past it.
        this.skipTotal = total;
        this.skipStart = base + pos;
        this.skip = total - 4;
        continue;
      }
      if (total > left) {
        if (eof)
          sink.fail(
            base + pos,
            `truncated block: ${blockName(type)} length says ${bytes(total)}, ${bytes(left)} left in file`,
          );
        this.need = total;
        return pos;
      }
      const trailer = dv.getUint32(pos + total - 4, le);
      if (trailer !== total) {
        sink.fail(base + pos, `${blockName(type)} length ${total} does not match its trailing length ${trailer}`);
        return pos;
      }
      if (isPacketBlock(type)) {
        const err = fillPacket(type, buf, dv, pos, total, le, this.ifaces, this.ifaces.length, rec);
        if (err !== null) {
          sink.fail(base + pos, err);
          return pos;
        }
        rec.fileOffset = base + pos;
        pos += total;
        sink.emit();
        continue;
      }
      if (type === BT_SHB) {
        const err = checkShb(dv, pos, le);
        if (err !== null) {
          sink.fail(base + pos, err);
          return pos;
        }
        this.le = le;
        this.inSection = true;
        this.ifaces = [];
      } else if (type === BT_IDB) {
        const iface = parseIdb(dv, pos, total, le);
        if (typeof iface === 'string') {
          sink.fail(base + pos, iface);
          return pos;
        }
        this.ifaces.push(iface);
        this.limit = Math.max(this.limit, caplenLimit(iface.snaplen) + BLOCK_OVERHEAD);
      }
      pos += total;
    }
  }

  /** Consumes an oversized block's body as it streams by, then checks its trailing length. */
  private skipping(dv: DataView, pos: number, end: number, base: number, eof: boolean): number {
    const n = Math.min(this.skip, end - pos);
    this.skip -= n;
    pos += n;
    const want = this.skip + 4;
    if (end - pos < want) {
      if (eof) {
        const left = base + end - this.skipStart;
        this.sink.fail(
          this.skipStart,
          `truncated block: length says ${bytes(this.skipTotal)}, ${bytes(left)} left in file`,
        );
      }
      this.need = Math.min(want, 4);
      return pos;
    }
    const trailer = dv.getUint32(pos, this.le);
    if (trailer !== this.skipTotal) {
      this.sink.fail(this.skipStart, `block length ${this.skipTotal} does not match its trailing length ${trailer}`);
      return pos;
    }
    this.skipTotal = 0;
    return pos + 4;
  }
}
