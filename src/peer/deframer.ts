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
  rev: number;
  privateData: Uint8Array;
}

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

  constructor(
    private readonly onStartup: (s: ReceivedStartup) => void,
    private readonly onUlpdu: (u: Uint8Array) => void,
  ) {}

  push(chunk: Uint8Array): void {
    let i = 0;
    while (this.startup === null) {
      const n = Math.min(chunk.length - i, this.startupNeed() - this.used);
      this.append(chunk.subarray(i, i + n));
      i += n;
      if (this.used < this.startupNeed()) {
        if (i >= chunk.length) return;
        continue;
      }
      const b = this.buf;
      const pdLen = (b[18]! << 8) | b[19]!;
      this.startup = {
        key: String.fromCharCode(...b.subarray(0, 16)),
        m: (b[16]! & 0x80) !== 0,
        c: (b[16]! & 0x40) !== 0,
        rev: b[17]!,
        privateData: b.slice(20, 20 + pdLen),
      };
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
