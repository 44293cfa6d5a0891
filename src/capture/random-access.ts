import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { PacketRecord } from './packet.js';
import {
  checkCaplen,
  isPcapMagic,
  parsePcapHeader,
  PCAP_FILE_HEADER,
  PCAP_RECORD_HEADER,
  type PcapFileHeader,
} from './pcap-format.js';
import {
  BT_IDB,
  BT_SHB,
  checkBlockLength,
  checkShb,
  fillPacket,
  isPacketBlock,
  parseIdb,
  sectionByteOrder,
  type PcapngInterface,
} from './pcapng-format.js';
import { HARD_MAX_CAPLEN } from './record-sink.js';
import { CaptureOpenError, openReason } from './read-capture.js';

/**
 * Reads single frames back by the fileOffset readCapture reported, without holding the capture in
 * memory (terminal UI, pcap export). Each read returns a fresh PacketRecord owning a copy of its bytes.
 */
export interface RandomAccessCapture {
  /** The record at fileOffset, numbered `frame`; null when no packet record is there. */
  read(fileOffset: number, frame: number): PacketRecord | null;
  close(): void;
}

/** Largest block read back (a packet block with its options). */
const MAX_BLOCK = HARD_MAX_CAPLEN + 64 * 1024;
const SCAN_CHUNK = 1024 * 1024;

class Reader {
  private buf = new Uint8Array(64 * 1024);
  private dv = new DataView(this.buf.buffer);
  constructor(readonly fd: number) {}

  /** Reads len bytes at off into the shared buffer; false when the file holds fewer. */
  fill(off: number, len: number): boolean {
    if (len > this.buf.length) {
      this.buf = new Uint8Array(len);
      this.dv = new DataView(this.buf.buffer);
    }
    let got = 0;
    while (got < len) {
      const n = readSync(this.fd, this.buf, got, len - got, off + got);
      if (n === 0) return false;
      got += n;
    }
    return true;
  }

  get bytes(): Uint8Array {
    return this.buf;
  }
  get view(): DataView {
    return this.dv;
  }
}

function record(frame: number, fileOffset: number): PacketRecord {
  return { frame, tsSec: 0, tsNsec: 0, linkType: 0, data: new Uint8Array(0), origLen: 0, fileOffset, interfaceId: 0 };
}

function pcapAccess(r: Reader, h: PcapFileHeader): RandomAccessCapture['read'] {
  return (off, frame) => {
    if (!Number.isSafeInteger(off) || off < PCAP_FILE_HEADER || !r.fill(off, PCAP_RECORD_HEADER)) return null;
    const dv = r.view;
    const le = h.littleEndian;
    const caplen = dv.getUint32(8, le);
    if (checkCaplen(h, caplen) !== null) return null;
    const rec = record(frame, off);
    const sec = dv.getUint32(0, le);
    const frac = dv.getUint32(4, le);
    const unit = h.nano ? 1e9 : 1e6;
    rec.tsSec = sec + Math.floor(frac / unit);
    rec.tsNsec = (frac % unit) * (h.nano ? 1 : 1000);
    rec.origLen = dv.getUint32(12, le);
    rec.linkType = h.linkType;
    if (!r.fill(off + PCAP_RECORD_HEADER, caplen)) return null;
    rec.data = r.bytes.slice(0, caplen);
    return rec;
  };
}

interface Section {
  offset: number;
  le: boolean;
  /** Interfaces in definition order, each with the offset of its IDB (valid for later blocks only). */
  ifaces: PcapngInterface[];
  ifaceOffsets: number[];
}

/**
 * pcapng needs, for a block at offset X, the section header before X and the interfaces defined
 * between it and X. Block headers are walked lazily, in large reads, only as far as asked.
 */
class PcapngIndex {
  readonly sections: Section[] = [];
  /** Offset of the next block not yet walked. */
  next = 0;
  /** The walk reached the end of the file or a block it cannot trust. */
  stopped = false;
  /** Window of the file held in `chunk` (kept between calls: reads usually move forward). */
  private readonly chunk: Reader;
  private chunkStart = 0;
  private chunkLen = 0;

  constructor(
    private readonly r: Reader,
    fd: number,
    private readonly size: number,
  ) {
    this.chunk = new Reader(fd);
  }

  /** Walks blocks until the one starting at or after `target` is passed. */
  walkTo(target: number): void {
    while (!this.stopped && this.next <= target) {
      if (!this.step()) this.stopped = true;
    }
  }

  /** Walks the block at `next`; false when it cannot. */
  private step(): boolean {
    const at = this.next;
    if (at + 12 > this.size) return false;
    if (at < this.chunkStart || at + 12 > this.chunkStart + this.chunkLen) {
      this.chunkLen = Math.min(SCAN_CHUNK, this.size - at);
      this.chunkStart = at;
      if (!this.chunk.fill(at, this.chunkLen)) return false;
    }
    const dv = this.chunk.view;
    const p = at - this.chunkStart;
    const sec = this.sections[this.sections.length - 1];
    let le = sec?.le ?? true;
    const type = dv.getUint32(p, le);
    if (type === BT_SHB) {
      const order = sectionByteOrder(dv, p);
      if (order === null) return false;
      le = order;
    } else if (sec === undefined) return false;
    const total = dv.getUint32(p + 4, le);
    if (checkBlockLength(type, total) !== null || at + total > this.size) return false;
    if (type === BT_SHB || type === BT_IDB) {
      if (total > MAX_BLOCK || !this.r.fill(at, total)) return false;
      if (type === BT_SHB) {
        if (checkShb(this.r.view, 0, le) !== null) return false;
        this.sections.push({ offset: at, le, ifaces: [], ifaceOffsets: [] });
      } else {
        const iface = parseIdb(this.r.view, 0, total, le);
        if (typeof iface === 'string' || sec === undefined) return false;
        sec.ifaces.push(iface);
        sec.ifaceOffsets.push(at);
      }
    }
    this.next = at + total;
    return true;
  }

  /** The section holding offset `off` (already walked). */
  sectionAt(off: number): Section | undefined {
    const s = this.sections;
    let lo = 0;
    let hi = s.length - 1;
    let found: Section | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = s[mid]!;
      if (m.offset < off) {
        found = m;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }
}

function pcapngAccess(r: Reader, index: PcapngIndex): RandomAccessCapture['read'] {
  return (off, frame) => {
    if (!Number.isSafeInteger(off) || off < 0 || off % 4 !== 0) return null;
    index.walkTo(off);
    // The walk must have passed the block at off (a bad block before it stops the walk).
    if (index.next <= off) return null;
    const sec = index.sectionAt(off);
    if (sec === undefined || !r.fill(off, 12)) return null;
    const le = sec.le;
    const type = r.view.getUint32(0, le);
    const total = r.view.getUint32(4, le);
    if (!isPacketBlock(type) || checkBlockLength(type, total) !== null || total > MAX_BLOCK || !r.fill(off, total))
      return null;
    const dv = r.view;
    if (dv.getUint32(total - 4, le) !== total) return null;
    let count = 0;
    while (count < sec.ifaceOffsets.length && sec.ifaceOffsets[count]! < off) count++;
    const rec = record(frame, off);
    if (fillPacket(type, r.bytes, dv, 0, total, le, sec.ifaces, count, rec) !== null) return null;
    rec.data = rec.data.slice();
    return rec;
  };
}

/** Opens a capture file for reading frames back by offset. Throws CaptureOpenError if it cannot. */
export async function openRandomAccess(path: string): Promise<RandomAccessCapture> {
  if (path === '-') throw new CaptureOpenError('-: standard input cannot be read back by offset');
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw new CaptureOpenError(`${path}: ${openReason(err)}`);
  }
  const close = (): void => closeSync(fd);
  const st = fstatSync(fd);
  if (st.isDirectory()) {
    close();
    throw new CaptureOpenError(`${path}: is a directory`);
  }
  const r = new Reader(fd);
  const n = Math.min(st.size, PCAP_FILE_HEADER);
  if (n >= 4 && r.fill(0, n)) {
    const dv = r.view;
    if (isPcapMagic(dv, 0) && n === PCAP_FILE_HEADER) {
      const h = parsePcapHeader(dv, 0);
      if (typeof h !== 'string') return { read: pcapAccess(r, h), close };
    } else if (dv.getUint32(0, false) === BT_SHB) {
      return { read: pcapngAccess(r, new PcapngIndex(r, fd, st.size)), close };
    }
  }
  close();
  throw new CaptureOpenError(`${path}: not a readable pcap or pcapng file`);
}
