/**
 * The receiving half of the peer: the startup frame, then FPDUs with the markers taken out by
 * their stream offset from SeqStart (RFC 5044 §4.3), handing out each ULPDU. The peer needs only
 * enough of what it receives to follow the exchange (the other side's startup frame, its first
 * FPDU, the Read Requests it must answer); checking is the analyzer's job.
 */
export interface ReceivedStartup {
  key: string;
  m: boolean;
  c: boolean;
  /** Rejected Connection bit (meaningful in a Reply). */
  r: boolean;
  /** The enhanced-startup bit (RFC 6581). */
  enhanced: boolean;
  rev: number;
  /** PD_Length as sent; over MAX_PD_LENGTH the Private Data is not waited for (privateData is empty). */
  pdLength: number;
  privateData: Uint8Array;
}

/** RFC 5044 §7.1.1: Private Data is at most 512 octets; a receiver closes on a larger PD_Length. */
export const MAX_PD_LENGTH = 512;

export class Deframer {
  private buf = new Uint8Array(64 * 1024);
  private used = 0;
  private startup: ReceivedStartup | null = null;
  /** Octets of the FPDU stream seen so far (markers included): the offset from SeqStart. */
  private rel = 0;
  /** Marker octets still to drop. */
  private skip = 0;
  markers = false;
  fpdus = 0;
  /** Octets received in all (the startup frame included): for saying where a run stopped. */
  received = 0;
  /** Set once the startup frame is known bad (PD_Length over the limit): nothing more is taken in. */
  stopped = false;

  constructor(
    private readonly onStartup: (s: ReceivedStartup) => void,
    private readonly onUlpdu: (u: Uint8Array) => void,
  ) {}

  /** Octets of the startup frame received so far (0 once it is complete). */
  get startupOctets(): number {
    return this.startup === null ? this.used : 0;
  }

  /** The startup frame's length once its header is in (20 + PD_Length), else 20. */
  get startupLength(): number {
    return this.startup === null ? this.startupNeed() : 0;
  }

  push(chunk: Uint8Array): void {
    this.received += chunk.length;
    if (this.stopped) return;
    let i = 0;
    while (this.startup === null) {
      const n = Math.min(chunk.length - i, this.startupNeed() - this.used);
      this.append(chunk.subarray(i, i + n));
      i += n;
      if (this.used >= 20 && ((this.buf[18]! << 8) | this.buf[19]!) > MAX_PD_LENGTH) {
        // Not waiting for up to 64 KiB of Private Data the frame may not carry (RFC 5044 §7.1.1).
        this.stopped = true;
        this.startup = this.header(0);
        this.onStartup(this.startup);
        return;
      }
      if (this.used < this.startupNeed()) {
        if (i >= chunk.length) return;
        continue;
      }
      this.startup = this.header((this.buf[18]! << 8) | this.buf[19]!);
      this.used = 0;
      this.onStartup(this.startup);
    }
    // FPDU stream: drop markers by offset, keep the rest.
    for (; i < chunk.length; ) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        this.rel += n;
        i += n;
        continue;
      }
      if (this.markers && this.rel % 512 === 0) {
        this.skip = 4;
        continue;
      }
      const toMarker = this.markers ? 512 - (this.rel % 512) : Infinity;
      const n = Math.min(chunk.length - i, toMarker);
      this.append(chunk.subarray(i, i + n));
      this.rel += n;
      i += n;
    }
    this.frames();
  }

  private header(pdTaken: number): ReceivedStartup {
    const b = this.buf;
    return {
      key: String.fromCharCode(...b.subarray(0, 16)),
      m: (b[16]! & 0x80) !== 0,
      c: (b[16]! & 0x40) !== 0,
      r: (b[16]! & 0x20) !== 0,
      enhanced: (b[16]! & 0x10) !== 0,
      rev: b[17]!,
      pdLength: (b[18]! << 8) | b[19]!,
      privateData: b.slice(20, 20 + pdTaken),
    };
  }

  private startupNeed(): number {
    return this.used >= 20 ? 20 + ((this.buf[18]! << 8) | this.buf[19]!) : 20;
  }

  private frames(): void {
    let pos = 0;
    for (;;) {
      if (this.used - pos < 2) break;
      const len = (this.buf[pos]! << 8) | this.buf[pos + 1]!;
      const pad = (4 - ((2 + len) % 4)) % 4;
      const size = 2 + len + pad + 4;
      if (this.used - pos < size) break;
      this.fpdus++;
      this.onUlpdu(this.buf.slice(pos + 2, pos + 2 + len));
      pos += size;
    }
    if (pos > 0) {
      this.buf.copyWithin(0, pos, this.used);
      this.used -= pos;
    }
  }

  private append(b: Uint8Array): void {
    if (this.used + b.length > this.buf.length) {
      const bigger = new Uint8Array(Math.max(this.buf.length * 2, this.used + b.length));
      bigger.set(this.buf.subarray(0, this.used));
      this.buf = bigger;
    }
    this.buf.set(b, this.used);
    this.used += b.length;
  }
}
