import { CRC32C_INIT, crc32cFinal, crc32cUpdate, byteSwap32 } from './crc32c.js';
import { ULPDU_HEADER_BYTES } from './ulpdu.js';

/** Markers every 512 octets from SeqStart (RFC 5044 §4.3; draft-00 §7.1). */
export const MARKER_INTERVAL = 512;
export const MARKER_LEN = 4;

export interface FramerParams {
  /** FPDUs in this direction carry markers. */
  markers: boolean;
  /** Any stream offset where a marker sits (SeqStart's stream offset, or one congruent mod 512). */
  markerBase: number;
  /** CRC negotiated: verify it. */
  crc: boolean;
  /** A diagnosed sender mistake to frame under (absent: RFC 5044 framing). */
  mistake?: FramingMistake | null;
  /**
   * Where FPDUPTR counts from: RFC 5044 §4.3 from the ULPDU_Length field ('length', the default);
   * draft-ietf-rddp-mpa-00 §6.1/§7.1 from the FPDU's first octet, the leading marker when one sits
   * there ('fpdu'): the rule of pre-standard and RDMA Consortium (Rev 0) senders.
   */
  fpduptrFrom?: 'length' | 'fpdu';
}

/**
 * How a sender that got the FPDU format wrong lays FPDUs out (sender-mistakes.ts diagnoses which).
 * Marker mistakes need nothing here: they are a different `markers` / `markerBase`.
 */
export interface FramingMistake {
  /** Rule id of the mistake (mpa.pad-miscomputed, ...): what each FPDU framed under it is marked with. */
  id: string;
  /** PAD the sender puts after the ULPDU: RFC 5044's, (ULPDU_Length+2) mod 4, or none. */
  pad: 'rfc' | 'len-plus-2' | 'none';
  /** Octets ULPDU_Length counts besides the ULPDU (2: the length field itself, 4: the CRC). */
  lengthExtra: number;
  /** ULPDU_Length sent least significant octet first. */
  lengthLittleEndian: boolean;
  /** Every FPDU differs from RFC framing (marker mistakes), not only those the rule changes. */
  always: boolean;
}

export interface MarkerInfo {
  /** Stream offset and absolute seq of the marker's first octet. */
  offset: number;
  seq: number;
  reserved: number;
  /** FPDUPTR as sent. */
  fpduptr: number;
  /** FPDUPTR the ULPDU_Length framing implies: marker offset minus the ULPDU_Length field's (0 before it). */
  expected: number;
}

/**
 * 'not-captured': octets of the FPDU were cut off by the capture's snaplen, so the CRC cannot be
 * computed (Wireshark's "unverified").
 */
export type CrcStatus = 'good' | 'bad' | 'byte-swapped' | 'unchecked' | 'not-captured';

/** One framed FPDU. */
export interface FramedFpdu {
  /** Stream offset of the FPDU's first octet (a leading marker when one sits there). */
  start: number;
  /** Stream offset and absolute seq of the ULPDU_Length field. */
  lenOffset: number;
  seq: number;
  /** ULPDU octets as framed: the ULPDU_Length field, or what a diagnosed sender mistake meant by it. */
  ulpduLength: number;
  /**
   * The ULPDU_Length field as sent, read in network byte order (RFC 5044 §4.1): differs from
   * ulpduLength only under a diagnosed length mistake (optional: records built elsewhere may
   * leave it out, meaning the same as ulpduLength).
   */
  lengthField?: number | undefined;
  /** PAD octets on the wire (the sender's, under a diagnosed PAD mistake). */
  pad: number;
  /** Octets on the wire, markers and CRC included. */
  wireSize: number;
  crcWire: number;
  crcComputed: number;
  crcStatus: CrcStatus;
  markers: readonly MarkerInfo[];
  padNonZero: boolean;
  frames: number[];
  /** First min(ulpduLength, ULPDU_HEADER_BYTES) ULPDU octets, markers removed (a view of octets nothing else writes). */
  head: Uint8Array;
  /** Rule id of the diagnosed sender mistake this FPDU was framed under, when it changed its framing (optional: records built elsewhere may leave it out). */
  senderMistake?: string | null | undefined;
  /**
   * Octets of the FPDU (markers included) the capture did not keep (a snaplen cut framed across,
   * FpduFramer.skip); absent or 0 when all were captured. `head` then holds only the ULPDU octets
   * before the first missing one.
   */
  notCaptured?: number | undefined;
  /** Markers inside the FPDU that a snaplen cut (counted, not in `markers`); absent when none. */
  markersNotCaptured?: number | undefined;
}

/** PAD octets RFC 5044 §4.2 requires after a ULPDU of `len` octets: ULPDU_Length + PAD + 2 a multiple of 4. */
export function rfcPad(len: number): number {
  return (4 - ((2 + len) % 4)) % 4;
}

/** ULPDU octets a ULPDU_Length field of octets `hi`, `lo` announces, read as the sender's mistake (if any) says. */
export function framedUlpduLength(mk: FramingMistake | null | undefined, hi: number, lo: number): number {
  if (!mk) return (hi << 8) | lo;
  const raw = mk.lengthLittleEndian ? (lo << 8) | hi : (hi << 8) | lo;
  return Math.max(0, raw - mk.lengthExtra);
}

/** PAD octets after a ULPDU of `len` octets, as the sender's mistake (if any) lays them out. */
export function framedPad(mk: FramingMistake | null | undefined, len: number): number {
  if (!mk || mk.pad === 'rfc') return rfcPad(len);
  return mk.pad === 'len-plus-2' ? (2 + len) % 4 : 0;
}

/** The ULPDU_Length field as sent (a record without lengthField was framed as its field says). */
export function lengthFieldOf(f: FramedFpdu): number {
  return f.lengthField ?? f.ulpduLength;
}

/** What a framer hands its FPDUs to: an object, so that a framer needs no closure of its own. */
export interface FpduSink {
  /** Called per FPDU; return false to stop framing. */
  onFpdu(f: FramedFpdu): boolean | void;
}

const EMPTY_HEAD = new Uint8Array(0);

/**
 * ULPDU heads are carved out of 8 KiB slabs: an array of its own per FPDU (up to 96 octets, so off
 * V8's heap, with a backing store each) was the largest single cost of framing small FPDUs. A slab is
 * never reused (a new one follows when it is full), so a head stays valid as long as its record
 * lives; a record kept long keeps at most its slab's 8 KiB alive.
 */
const HEAD_SLAB = 8192;
let headSlab = new Uint8Array(HEAD_SLAB);
let headSlabUsed = 0;
function newHead(n: number): Uint8Array {
  if (headSlabUsed + n > HEAD_SLAB) {
    headSlab = new Uint8Array(HEAD_SLAB);
    headSlabUsed = 0;
  }
  const h = headSlab.subarray(headSlabUsed, headSlabUsed + n);
  headSlabUsed += n;
  return h;
}
/** Never written: the frames of the FPDU in progress until its first octet (then an array of exactly one). */
const NO_FRAMES: number[] = [];
/** Never written: every framer replaces it with its own array before the first push. */
const NO_MARKERS: MarkerInfo[] = [];
const PH_LEN = 0;
const PH_BODY = 1;
const PH_CRC = 2;

/**
 * Frames FPDUs out of one direction's in-order bytes: ULPDU_Length | ULPDU | PAD | CRC with markers
 * removed wherever they fall. Streaming: state carries across chunks, nothing is copied but the
 * few header octets handed upward. The CRC covers the raw octets from the FPDU's first octet through
 * the last PAD octet, so markers inside are covered by simply running the CRC over the raw bytes
 * (draft-00 §7.2). Every FPDU starts 4-aligned relative to SeqStart, so a marker can never split the
 * length or CRC field: it sits before the length field, inside ULPDU/PAD, or between PAD and CRC.
 */
export class FpduFramer {
  private pos: number;
  private nextMarker: number;
  private phase = PH_LEN;
  private got = 0; // octets of the length or CRC field collected
  private lenHi = 0;
  /** CRC field octets as they arrive, first octet least significant (wire order). */
  private crcWire = 0;
  private mGot = 0;
  /** Marker octets as they arrive, big-endian. */
  private mWord = 0;
  private mOffset = 0;
  private reg = CRC32C_INIT;
  private fpduStart: number;
  private lenOffset = 0;
  private ulpduLength = 0;
  private lengthField = 0;
  private pad = 0;
  private bodyLeft = 0;
  private padNonZero = false;
  /** The FPDU in progress is laid out differently from RFC 5044 under params.mistake. */
  private mistaken = false;
  /** Markers of the FPDU in progress; the shared empty array until one is seen (most FPDUs have none). */
  private markers: MarkerInfo[] = NO_MARKERS;
  private frames: number[] = NO_FRAMES;
  private lastFrame = -1;
  /**
   * Leading ULPDU octets of the FPDU in progress, in an array of their exact size (a view into a head
   * slab) taken when ULPDU_Length is known and handed over whole with the FPDU (no copy).
   */
  private head: Uint8Array = EMPTY_HEAD;
  private stopped = false;
  /** Octets of the FPDU in progress skipped as not captured, and the ULPDU+PAD octets seen before the first. */
  private missing = 0;
  private capturedPrefix = 0;
  /** The marker in progress lost octets to a skipped hole: counted, never checked. */
  private markerCut = false;
  /** Markers of the FPDU in progress lost to a skipped hole. */
  private cutMarkers = 0;
  /**
   * Octets of an untagged ULPDU longer than its head to keep for an upper layer (SMB Direct,
   * RPC-over-RDMA, ...): 0 keeps none. Set by the direction from what the layer above asks for; it
   * drops to 0 once that layer found nothing to decode on the connection.
   */
  bodyBound = 0;
  /** The same for tagged ULPDUs: 0 (the bulk) unless the layer above waits for placed data. */
  taggedBound = 0;
  /** Where the untagged ULPDU in progress is copied (reused: valid until the next FPDU's body). */
  private scratch: Uint8Array = EMPTY_HEAD;
  private bodyLen = 0;
  private bodyFpdu: FramedFpdu | null = null;
  private lastBody: Uint8Array | null = null;

  // Alignment counters (draft-00 glossary): per TCP segment delivered whole.
  segments = 0;
  fpduAligned = 0;
  headerAligned = 0;
  spanning = 0;
  markerCount = 0;
  private segAligned = false;

  constructor(
    readonly params: FramerParams,
    startOffset: number,
    /** Absolute seq of stream offset 0 (seq = (baseSeq + offset) mod 2^32). */
    private readonly baseSeq: number,
    /** Gets each FPDU; returning false stops framing (used when probing). */
    private readonly sink: FpduSink,
  ) {
    this.pos = startOffset;
    this.fpduStart = startOffset;
    const d = (((params.markerBase - startOffset) % MARKER_INTERVAL) + MARKER_INTERVAL) % MARKER_INTERVAL;
    this.nextMarker = startOffset + d;
  }

  get position(): number {
    return this.pos;
  }

  /** True between FPDUs (nothing of the next FPDU consumed yet). */
  get atBoundary(): boolean {
    return this.phase === PH_LEN && this.pos === this.fpduStart;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Frames that carried the FPDU in progress (for a finding when it is cut off). */
  get pendingFrames(): readonly number[] {
    return this.frames;
  }

  /** Stream offset where the FPDU in progress started. */
  get pendingStart(): number {
    return this.fpduStart;
  }

  get pendingSeq(): number {
    return (this.baseSeq + (this.got > 0 || this.phase !== PH_LEN ? this.lenOffset : this.fpduStart)) >>> 0;
  }

  /** Feeds data[from, to) whose first octet is at stream offset `offset` (must equal position). */
  push(
    data: Uint8Array,
    offset: number,
    frame: number,
    segStart = false,
    segEnd = false,
    from = 0,
    to = data.length,
  ): void {
    if (this.stopped) return;
    if (offset !== this.pos) throw new Error(`framer fed offset ${offset}, expected ${this.pos}`);
    const whole = segStart && segEnd;
    if (whole) {
      this.segments++;
      this.segAligned = this.atBoundary;
      if (this.segAligned) this.fpduAligned++;
    }
    const markers = this.params.markers;
    let i = from;
    // The CRC covers raw octets, markers included, from the FPDU's first octet to the CRC field:
    // it runs once per contiguous covered run of this chunk instead of once per field.
    let crcFrom = this.phase === PH_CRC && this.got > 0 ? -1 : from;
    while (i < to) {
      if (this.lastFrame !== frame) {
        // A literal, not a push onto []: the array handed on (and kept by records) has room for one
        // frame, not the 17 a first push reserves.
        if (this.frames === NO_FRAMES) this.frames = [frame];
        else this.frames.push(frame);
        this.lastFrame = frame;
      }
      if (markers && (this.mGot > 0 || this.pos === this.nextMarker)) {
        // Marker octets: collected for checking, covered by the CRC like any octet of the FPDU.
        if (this.mGot === 0) this.mOffset = this.pos;
        const k = Math.min(MARKER_LEN - this.mGot, to - i);
        for (let j = 0; j < k; j++) this.mWord = ((this.mWord << 8) | data[i + j]!) >>> 0;
        this.mGot += k;
        i += k;
        this.pos += k;
        if (this.mGot === MARKER_LEN) this.finishMarker();
        continue;
      }
      const limit = markers ? Math.min(to, i + (this.nextMarker - this.pos)) : to;
      if (this.phase === PH_BODY) {
        const k = Math.min(limit - i, this.bodyLeft);
        const done = this.ulpduLength + this.pad - this.bodyLeft; // ULPDU+PAD octets already seen
        if (this.bodyBound > 0 || this.taggedBound > 0) this.copyBody(data, i, k, done);
        if (done < ULPDU_HEADER_BYTES && done < this.ulpduLength) {
          const n = Math.min(k, ULPDU_HEADER_BYTES - done, this.ulpduLength - done);
          const head = this.head;
          for (let j = 0; j < n; j++) head[done + j] = data[i + j]!;
        }
        if (done + k > this.ulpduLength) {
          // PAD octets are in this run: PAD must be zero (RFC 5044 §4.2).
          for (let j = Math.max(0, this.ulpduLength - done); j < k; j++) if (data[i + j] !== 0) this.padNonZero = true;
        }
        i += k;
        this.pos += k;
        this.bodyLeft -= k;
        if (this.bodyLeft === 0) {
          this.phase = PH_CRC;
          this.got = 0;
        }
      } else if (this.phase === PH_LEN) {
        const b = data[i]!;
        if (this.got === 0) {
          this.lenOffset = this.pos;
          this.lenHi = b;
          this.got = 1;
        } else {
          const mk = this.params.mistake;
          this.lengthField = (this.lenHi << 8) | b;
          if (mk) this.lengthUnder(mk, b);
          else {
            this.ulpduLength = (this.lenHi << 8) | b;
            this.pad = (4 - ((2 + this.ulpduLength) % 4)) % 4;
          }
          this.head = this.ulpduLength > 0 ? newHead(Math.min(this.ulpduLength, ULPDU_HEADER_BYTES)) : EMPTY_HEAD;
          this.bodyLeft = this.ulpduLength + this.pad; // never 0 under RFC framing: 2+len+pad is a multiple of 4
          this.phase = this.bodyLeft === 0 ? PH_CRC : PH_BODY;
          this.got = 0;
        }
        i++;
        this.pos++;
      } else {
        if (crcFrom >= 0) {
          // Coverage ends where the CRC field begins (a marker just before it is covered).
          this.reg = crc32cUpdate(this.reg, data, crcFrom, i);
          crcFrom = -1;
        }
        const k = Math.min(4 - this.got, limit - i);
        for (let j = 0; j < k; j++) this.crcWire = (this.crcWire | (data[i + j]! << (8 * (this.got + j)))) >>> 0;
        this.got += k;
        i += k;
        this.pos += k;
        if (this.got === 4) {
          this.finishFpdu();
          if (this.stopped) return;
          crcFrom = i;
        }
      }
    }
    if (crcFrom >= 0 && crcFrom < to) this.reg = crc32cUpdate(this.reg, data, crcFrom, to);
    if (whole && this.segAligned && this.atBoundary) this.headerAligned++;
  }

  /** ULPDU_Length and PAD as a sender with this mistake meant them (second length octet `lo`). */
  private lengthUnder(mk: FramingMistake, lo: number): void {
    const raw = mk.lengthLittleEndian ? (lo << 8) | this.lenHi : (this.lenHi << 8) | lo;
    const len = framedUlpduLength(mk, this.lenHi, lo);
    const padRfc = rfcPad(len);
    this.ulpduLength = len;
    this.pad = framedPad(mk, len);
    this.mistaken = mk.always || this.pad !== padRfc || raw !== len || (mk.lengthLittleEndian && lo !== this.lenHi);
  }

  private finishMarker(): void {
    if (this.markerCut) {
      // Part of it was never captured: it is there (counted), its value unknown (not checked).
      this.markerCut = false;
      this.markerCount++;
      this.cutMarkers++;
      this.mGot = 0;
      this.mWord = 0;
      this.nextMarker += MARKER_INTERVAL;
      return;
    }
    const w = this.mWord;
    const origin = this.params.fpduptrFrom === 'fpdu' ? this.fpduStart : this.lenOffset;
    if (this.markers === NO_MARKERS) this.markers = [];
    this.markers.push({
      offset: this.mOffset,
      seq: (this.baseSeq + this.mOffset) >>> 0,
      reserved: w >>> 16,
      fpduptr: w & 0xffff,
      // RFC 5044 §4.3: FPDUPTR counts from the ULPDU_Length field to the marker; a marker that
      // falls between FPDUs belongs to the following FPDU and carries 0. (draft-00 counted from the
      // FPDU's first octet, `fpduptrFrom: 'fpdu'`; the independent reference encoder confirms RFC
      // 5044's reading for Rev 1 and 2.)
      expected: this.phase === PH_LEN && this.got === 0 ? 0 : this.mOffset - origin,
    });
    this.markerCount++;
    this.mGot = 0;
    this.mWord = 0;
    this.nextMarker += MARKER_INTERVAL;
  }

  /**
   * Octets [offset, offset + length) were sent but the capture did not keep them (a snaplen cut: the
   * TCP layer knows exactly how many). When they fall after the ULPDU_Length field of the FPDU in
   * progress and end no later than its CRC, framing goes on across them: the next FPDU starts where
   * ULPDU_Length says (RFC 5044 §4.1), markers where SeqStart says (§4.3). The FPDU is handed on with
   * its CRC 'not-captured'. Returns false, consuming nothing, when the hole reaches the next FPDU's
   * ULPDU_Length field (or this one's): only a search can find framing again then.
   */
  skip(offset: number, length: number): boolean {
    if (this.stopped || offset !== this.pos || this.phase === PH_LEN || length <= 0) return false;
    if (offset + length > this.pendingEnd()) return false;
    const markers = this.params.markers;
    if (this.missing === 0) {
      this.capturedPrefix =
        this.phase === PH_BODY ? this.ulpduLength + this.pad - this.bodyLeft : this.ulpduLength + this.pad;
    }
    this.missing += length;
    let left = length;
    while (left > 0) {
      if (markers && (this.mGot > 0 || this.pos === this.nextMarker)) {
        if (this.mGot === 0) this.mOffset = this.pos;
        const k = Math.min(MARKER_LEN - this.mGot, left);
        this.markerCut = true;
        this.mGot += k;
        this.pos += k;
        left -= k;
        if (this.mGot === MARKER_LEN) this.finishMarker();
        continue;
      }
      const room = markers ? Math.min(left, this.nextMarker - this.pos) : left;
      if (this.phase === PH_BODY) {
        const k = Math.min(room, this.bodyLeft);
        this.bodyLeft -= k;
        this.pos += k;
        left -= k;
        if (this.bodyLeft === 0) {
          this.phase = PH_CRC;
          this.got = 0;
        }
      } else {
        const k = Math.min(room, 4 - this.got);
        this.got += k;
        this.pos += k;
        left -= k;
        if (this.got === 4) {
          this.finishFpdu();
          if (this.stopped) return true;
        }
      }
    }
    return true;
  }

  /** Stream offset just past the CRC of the FPDU in progress (its ULPDU_Length known). */
  private pendingEnd(): number {
    let q = this.pos;
    let rem = this.bodyLeft + (this.phase === PH_BODY ? 4 : 4 - this.got);
    if (!this.params.markers) return q + rem;
    let nm = this.nextMarker;
    if (this.mGot > 0) {
      q = this.mOffset + MARKER_LEN;
      nm = this.mOffset + MARKER_INTERVAL;
    }
    // A marker that starts before the CRC's last octet sits inside the FPDU and pushes it on; one
    // right after the CRC belongs to the next FPDU.
    while (nm < q + rem) {
      rem -= nm - q;
      q = nm + MARKER_LEN;
      nm += MARKER_INTERVAL;
    }
    return q + rem;
  }

  /**
   * Keeps the octets of an untagged ULPDU (T bit clear, RFC 5041 §4) longer than the head: an upper
   * layer reads a Send's whole payload. A tagged ULPDU's payload is data placed, kept only while
   * the upper layer waits for a structure in it (taggedBound).
   */
  private copyBody(data: Uint8Array, i: number, k: number, done: number): void {
    if (done === 0 && k > 0) {
      const bound = (data[i]! & 0x80) === 0 ? this.bodyBound : this.taggedBound;
      this.bodyLen = this.ulpduLength > ULPDU_HEADER_BYTES ? Math.min(this.ulpduLength, bound) : 0;
      if (this.bodyLen > this.scratch.length) {
        const s = new Uint8Array(Math.max(this.bodyLen, Math.min(bound, 2 * this.scratch.length)));
        this.scratch = s;
      }
    }
    if (done < this.bodyLen) {
      const n = Math.min(k, this.bodyLen - done);
      this.scratch.set(data.subarray(i, i + n), done);
    }
  }

  /**
   * The untagged ULPDU octets (markers removed, at most bodyBound) of `f` when `f` is the FPDU just
   * framed and it was longer than its head; null otherwise. Valid until the next FPDU is framed.
   */
  bodyOf(f: FramedFpdu): Uint8Array | null {
    return f === this.bodyFpdu ? this.lastBody : null;
  }

  private finishFpdu(): void {
    const wire = this.crcWire;
    this.crcWire = 0;
    const computed = crc32cFinal(this.reg);
    const missing = this.missing;
    let status: CrcStatus = 'unchecked';
    if (this.params.crc)
      status =
        missing > 0
          ? 'not-captured'
          : computed === wire
            ? 'good'
            : byteSwap32(computed) === wire
              ? 'byte-swapped'
              : 'bad';
    let head = this.head;
    let bodyLen = this.bodyLen;
    if (missing > 0) {
      // Only the octets before the first missing one are known: nothing after a hole is made up.
      if (this.capturedPrefix < head.length) head = head.subarray(0, this.capturedPrefix);
      if (this.capturedPrefix < bodyLen) bodyLen = this.capturedPrefix;
      this.missing = 0;
    }
    if (this.frames.length > 1) this.spanning++;
    const f: FramedFpdu = {
      start: this.fpduStart,
      lenOffset: this.lenOffset,
      seq: (this.baseSeq + this.lenOffset) >>> 0,
      ulpduLength: this.ulpduLength,
      lengthField: this.lengthField,
      pad: this.pad,
      wireSize: this.pos - this.fpduStart,
      crcWire: wire,
      crcComputed: computed,
      crcStatus: status,
      markers: this.markers,
      padNonZero: this.padNonZero,
      frames: this.frames === NO_FRAMES ? [] : this.frames,
      head,
      senderMistake: this.mistaken ? this.params.mistake!.id : null,
    };
    if (missing > 0) f.notCaptured = missing;
    if (this.cutMarkers > 0) {
      f.markersNotCaptured = this.cutMarkers;
      this.cutMarkers = 0;
    }
    this.bodyFpdu = f;
    this.lastBody = bodyLen > 0 ? this.scratch.subarray(0, bodyLen) : null;
    this.bodyLen = 0;
    this.mistaken = false;
    this.phase = PH_LEN;
    this.got = 0;
    this.fpduStart = this.pos;
    this.reg = CRC32C_INIT;
    this.markers = NO_MARKERS;
    this.head = EMPTY_HEAD;
    this.frames = NO_FRAMES;
    this.lastFrame = -1;
    this.padNonZero = false;
    if (this.sink.onFpdu(f) === false) this.stopped = true;
  }
}
