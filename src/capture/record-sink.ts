import type { CaptureReadError, PacketRecord } from './packet.js';

/** Largest captured length accepted when the file states no snaplen (Wireshark's standard maximum). */
export const DEFAULT_MAX_CAPLEN = 262144;
/** Hard ceiling on one record, whatever the file's snaplen says: a hostile header must not drive a huge allocation. */
export const HARD_MAX_CAPLEN = 16 * 1024 * 1024;

/** Largest record a reader will buffer for a given snaplen (0 = unstated). */
export function caplenLimit(snaplen: number): number {
  return Math.min(Math.max(snaplen, DEFAULT_MAX_CAPLEN), HARD_MAX_CAPLEN);
}

/**
 * A format parser over a byte window. parse() consumes whole records from buf[pos, end) and returns
 * the position after the last one; when it stops for want of bytes it sets `need` (bytes required
 * from the returned position). With eof set it either consumes everything or reports an error.
 */
export interface FormatParser {
  readonly format: 'pcap' | 'pcapng';
  need: number;
  parse(buf: Uint8Array, dv: DataView, pos: number, end: number, base: number, eof: boolean): number;
}

/**
 * Where parsers put records: one reused PacketRecord, the counters of the summary, and the first
 * error. Parsers fill `rec` (all but frame) and call emit().
 */
export class RecordSink {
  readonly rec: PacketRecord = {
    frame: 0,
    tsSec: 0,
    tsNsec: 0,
    linkType: 0,
    data: new Uint8Array(0),
    origLen: 0,
    fileOffset: 0,
    interfaceId: 0,
  };
  packets = 0;
  bytes = 0;
  readonly linkTypes: number[] = [];
  error: CaptureReadError | null = null;
  /** Records beyond this many are not handed out (tshark -c); `full` tells the reader to stop. */
  limit = Infinity;
  full = false;
  private lastLinkType = -1;

  constructor(
    readonly file: string,
    private readonly onPacket: (p: PacketRecord) => void,
  ) {}

  emit(): void {
    if (this.packets >= this.limit) {
      this.full = true;
      return;
    }
    const rec = this.rec;
    rec.frame = ++this.packets;
    this.bytes += rec.data.length;
    if (rec.linkType !== this.lastLinkType) {
      this.lastLinkType = rec.linkType;
      if (!this.linkTypes.includes(rec.linkType)) this.linkTypes.push(rec.linkType);
    }
    this.onPacket(rec);
  }

  /** Records the reason reading stops; the frame is the one the bad record would have been. */
  fail(offset: number, message: string): void {
    // Beyond the -c limit nothing more is read: a bad record there is none of the reader's business.
    if (this.error === null && this.packets < this.limit)
      this.error = { file: this.file, offset, frame: this.packets + 1, message };
  }
}

/** "1514 bytes" / "1 byte". */
export function bytes(n: number): string {
  return n === 1 ? '1 byte' : `${n} bytes`;
}
