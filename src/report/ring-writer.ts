/**
 * -w in live mode: every captured packet to a pcap file (nanosecond timestamps, original lengths),
 * or with -b a ring of files as tshark/dumpcap name them: PREFIX_NNNNN_YYYYMMDDhhmmss.EXT, a new
 * file once the current one reaches `filesize` octets, the oldest deleted beyond `files`. Each
 * file is a complete pcap on its own (header first); records are flushed at least every second
 * and at close, so a file another program reads during the run is at most a second behind.
 */
import { rmSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { PacketRecord } from '../capture/packet.js';
import { PcapFileWriter } from './pcap-writer.js';

export interface RingOptions {
  /** Switch to a new file once this many octets are written (-b filesize); null: one file. */
  fileSize: number | null;
  /** Keep at most this many files (-b files); null: keep all. */
  files: number | null;
}

const PCAP_HEADER = 24;
const RECORD_HEADER = 16;

function stamp(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export class CaptureFileWriter {
  private cur: PcapFileWriter | null = null;
  private size = 0;
  private seq = 0;
  private linkType = -1;
  private readonly written: string[] = [];
  private lastFlush = Date.now();

  constructor(
    private readonly path: string,
    private readonly ring: RingOptions = { fileSize: null, files: null },
  ) {}

  /** The files written so far (those still kept), oldest first. */
  files(): readonly string[] {
    return this.written;
  }

  /** Opens the first file now (so a bad path fails before capturing), with the capture's link type. */
  start(linkType: number): void {
    if (this.cur === null) this.open(linkType);
  }

  write(p: PacketRecord): void {
    if (this.cur === null) this.open(p.linkType);
    const need = RECORD_HEADER + p.data.length;
    if (this.ring.fileSize !== null && this.size > PCAP_HEADER && this.size + need > this.ring.fileSize) {
      this.cur!.close();
      this.open(this.linkType);
    }
    this.cur!.write({ tsSec: p.tsSec, tsNsec: p.tsNsec, data: p.data, origLen: p.origLen });
    this.size += need;
    const now = Date.now();
    if (now - this.lastFlush >= 1000) this.flush(now);
  }

  /** Writes out what is buffered (also called on the source's ticks, so a quiet capture is on disk). */
  flush(now = Date.now()): void {
    this.lastFlush = now;
    this.cur?.flush();
  }

  close(linkType: number): void {
    if (this.cur === null) this.open(linkType); // no packet: still a valid (empty) capture
    this.cur!.close();
  }

  private open(linkType: number): void {
    this.linkType = linkType;
    let name = this.path;
    if (this.ring.fileSize !== null) {
      this.seq++;
      const ext = extname(this.path);
      const stem = basename(this.path, ext);
      name = join(dirname(this.path), `${stem}_${String(this.seq).padStart(5, '0')}_${stamp(new Date())}${ext}`);
    }
    this.cur = new PcapFileWriter(name, linkType, true);
    this.cur.flush(); // the header is on disk at once: the file is a valid (empty) capture
    this.size = PCAP_HEADER;
    this.written.push(name);
    if (this.ring.files !== null) {
      while (this.written.length > this.ring.files) rmSync(this.written.shift()!, { force: true });
    }
  }
}
