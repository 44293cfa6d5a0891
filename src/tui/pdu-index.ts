/**
 * The compact per-item index the terminal UI browses: a few numbers per startup frame, FPDU or
 * standalone finding, in growable typed arrays (columns), never an object per PDU. Everything the
 * PDU list shows comes from here; the detail tree and the octets are rebuilt on demand
 * (src/tui/capture-model.ts) from these numbers and the frames read back from the file.
 */

export const KIND_REQUEST = 0;
export const KIND_REPLY = 1;
export const KIND_FPDU = 2;
/** A finding that belongs to no record (a gap, a TCP close, a read error). */
export const KIND_FINDING = 3;
/** A TUF framing PDU (alignment mode) or marker-delimited PDU (marker mode). */
export const KIND_TUF = 4;

/** Verdict bits, one byte per item. */
export const V_CRC_BAD = 1;
export const V_MARKER_BAD = 2;
export const V_PAD_NONZERO = 4;
export const V_AFTER_ERROR = 8;
export const V_ERROR = 16;
export const V_WARNING = 32;
export const V_INFO = 64;
export const V_BAD_KEY = 128;

export const CRC_CODES = ['unchecked', 'good', 'bad', 'byte-swapped', 'not-captured'] as const;
export type CrcCode = (typeof CRC_CODES)[number];

type Growable = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

function grow<T extends Growable>(a: T, need: number): T {
  if (need <= a.length) return a;
  const C = a.constructor as new (n: number) => T;
  const b = new C(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

/** A growable column of unsigned 32-bit numbers (frame numbers, item numbers). */
export class U32List {
  data = new Uint32Array(64);
  length = 0;
  push(v: number): void {
    this.data = grow(this.data, this.length + 1);
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
  clear(): void {
    this.length = 0;
  }
  /** Bytes held (for the memory figure). */
  get bytes(): number {
    return this.data.byteLength;
  }
}

export class PduIndex {
  count = 0;
  kind = new Uint8Array(1024);
  dir = new Uint8Array(1024);
  verdict = new Uint8Array(1024);
  crc = new Uint8Array(1024);
  /** Octets between the FPDU's first octet and its ULPDU_Length field (a leading marker). */
  lenDelta = new Uint8Array(1024);
  pad = new Uint8Array(1024);
  /** Flow id (1-based, as the pipeline numbers flows; 0 for a capture-wide finding). */
  flow = new Uint32Array(1024);
  seq = new Uint32Array(1024);
  ulpduLength = new Uint32Array(1024);
  /** The ULPDU_Length field as sent (FPDUs): differs from ulpduLength under a diagnosed length mistake. */
  lengthField = new Uint16Array(1024);
  wireSize = new Uint32Array(1024);
  crcWire = new Uint32Array(1024);
  crcComputed = new Uint32Array(1024);
  /** Stream offset of the first octet (FPDUs). */
  start = new Float64Array(1024);
  /** Seconds since the first packet. */
  time = new Float64Array(1024);
  frameAt = new Uint32Array(1024);
  frameCount = new Uint16Array(1024);
  markerAt = new Uint32Array(1024);
  markerCount = new Uint16Array(1024);
  /** First of this item's findings in the model's finding list, and how many (-1: none kept). */
  findingAt = new Int32Array(1024);
  findingCount = new Uint16Array(1024);
  /** Startup and TUF items: index of the record in the model's list of them. */
  ref = new Int32Array(1024);

  /** Frame numbers of every item, back to back. */
  readonly frames = new U32List();
  /** Marker columns, back to back. */
  mOffset = new Float64Array(256);
  mSeq = new Uint32Array(256);
  mReserved = new Uint16Array(256);
  mFpduptr = new Uint16Array(256);
  mExpected = new Int32Array(256);
  markers = 0;

  /** Reserves item `count` and returns its number. */
  add(kind: number, flow: number, dir: number, time: number, frames: readonly number[]): number {
    const i = this.count;
    const n = i + 1;
    if (n > this.kind.length) {
      this.kind = grow(this.kind, n);
      this.dir = grow(this.dir, n);
      this.verdict = grow(this.verdict, n);
      this.crc = grow(this.crc, n);
      this.lenDelta = grow(this.lenDelta, n);
      this.pad = grow(this.pad, n);
      this.flow = grow(this.flow, n);
      this.seq = grow(this.seq, n);
      this.ulpduLength = grow(this.ulpduLength, n);
      this.lengthField = grow(this.lengthField, n);
      this.wireSize = grow(this.wireSize, n);
      this.crcWire = grow(this.crcWire, n);
      this.crcComputed = grow(this.crcComputed, n);
      this.start = grow(this.start, n);
      this.time = grow(this.time, n);
      this.frameAt = grow(this.frameAt, n);
      this.frameCount = grow(this.frameCount, n);
      this.markerAt = grow(this.markerAt, n);
      this.markerCount = grow(this.markerCount, n);
      this.findingAt = grow(this.findingAt, n);
      this.findingCount = grow(this.findingCount, n);
      this.ref = grow(this.ref, n);
    }
    this.kind[i] = kind;
    this.flow[i] = flow;
    this.dir[i] = dir;
    this.time[i] = time;
    this.verdict[i] = 0;
    this.crc[i] = 0;
    this.lenDelta[i] = 0;
    this.pad[i] = 0;
    this.seq[i] = 0;
    this.ulpduLength[i] = 0;
    this.lengthField[i] = 0;
    this.wireSize[i] = 0;
    this.crcWire[i] = 0;
    this.crcComputed[i] = 0;
    this.start[i] = 0;
    this.markerAt[i] = this.markers;
    this.markerCount[i] = 0;
    this.findingAt[i] = -1;
    this.findingCount[i] = 0;
    this.ref[i] = -1;
    this.frameAt[i] = this.frames.length;
    const fc = Math.min(frames.length, 0xffff);
    this.frameCount[i] = fc;
    for (let k = 0; k < fc; k++) this.frames.push(frames[k]!);
    this.count = n;
    return i;
  }

  addMarker(i: number, offset: number, seq: number, reserved: number, fpduptr: number, expected: number): void {
    const n = this.markers + 1;
    if (n > this.mSeq.length) {
      this.mOffset = grow(this.mOffset, n);
      this.mSeq = grow(this.mSeq, n);
      this.mReserved = grow(this.mReserved, n);
      this.mFpduptr = grow(this.mFpduptr, n);
      this.mExpected = grow(this.mExpected, n);
    }
    const m = this.markers;
    this.mOffset[m] = offset;
    this.mSeq[m] = seq;
    this.mReserved[m] = reserved;
    this.mFpduptr[m] = fpduptr;
    this.mExpected[m] = expected;
    this.markers = n;
    this.markerCount[i]!++;
  }

  framesOf(i: number): number[] {
    const out: number[] = [];
    const at = this.frameAt[i]!;
    for (let k = 0; k < this.frameCount[i]!; k++) out.push(this.frames.get(at + k));
    return out;
  }

  firstFrame(i: number): number {
    return this.frameCount[i]! > 0 ? this.frames.get(this.frameAt[i]!) : 0;
  }

  /** Bytes the columns hold (the memory figure of the bench). */
  get bytes(): number {
    let b =
      this.frames.bytes +
      this.mOffset.byteLength +
      this.mSeq.byteLength +
      this.mReserved.byteLength +
      this.mFpduptr.byteLength +
      this.mExpected.byteLength;
    for (const a of [
      this.kind,
      this.dir,
      this.verdict,
      this.crc,
      this.lenDelta,
      this.pad,
      this.flow,
      this.seq,
      this.ulpduLength,
      this.lengthField,
      this.wireSize,
      this.crcWire,
      this.crcComputed,
      this.start,
      this.time,
      this.frameAt,
      this.frameCount,
      this.markerAt,
      this.markerCount,
      this.findingAt,
      this.findingCount,
      this.ref,
    ])
      b += a.byteLength;
    return b;
  }
}
