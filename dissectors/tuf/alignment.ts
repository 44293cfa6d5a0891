/**
 * PDU alignment mode (draft-ietf-tsvwg-tcp-ulp-frame-00 §5): framing PDUs chained through the
 * in-order stream by their Length, each TCP segment judged by the receiver's test (§5.4), runs of
 * segments that fail it told apart as a sender split (§5.2 cases 1-5: pieces within one framing
 * PDU) or a resegmenting middlebox (§5.2 case 6: pieces across framing PDUs, none complete).
 */
import { HEAD_BYTES, type DirectionContext } from './context.js';
import { HEADER_LEN, keyHex, MAX_LENGTH } from './types.js';

/** Keys a random-key sender practically never has (RFC 1750 quality keys, §5): not evidence of framing. */
export function trivialKey(k: number): boolean {
  return k === 0 || k === 0xffffffffffff;
}

interface Run {
  count: number;
  straddle: number;
  /** Segments that start inside a framing PDU (a sender starts each send on a segment boundary, §5.1). */
  midStart: number;
  complete: boolean;
  firstSeq: number;
  lastSeq: number;
  frames: number[];
}

const RECENT = 512;

export class AlignmentFramer {
  /** Stream offset of the next framing header, or null while framing is lost. */
  pos: number | null;
  framingPdus = 0;
  alignedSegments = 0;
  unalignedSegments = 0;
  private readonly otherKeys: number[] = [];
  /** Start of the last framing PDU (its Length leads to pos). */
  private lastStart: number | null = null;
  private lastLength = 0;
  /** Where a lost chain is looked for from. */
  private scanFrom = 0;
  /** Whole segments that passed the test: start -> end (pruned as framing moves on). */
  private readonly passed = new Map<number, number>();
  /** Whole segments seen: start -> length (recent ones, for the second-key test). */
  private readonly segLen = new Map<number, number>();
  // Recent framing PDU boundaries [start, end), oldest first.
  private readonly bStart: number[] = [];
  private readonly bEnd: number[] = [];
  private run: Run | null = null;

  constructor(
    private readonly c: DirectionContext,
    readonly key: number,
    readonly start: number,
  ) {
    this.pos = start;
  }

  /** The receiver's test (§5.4) on one whole segment, before its octets are framed. */
  testSegment(a: number, b: number): boolean {
    const ok = this.passes(a, b);
    this.segLen.set(a, b - a);
    if (this.segLen.size > 64) this.segLen.delete(this.segLen.keys().next().value!);
    if (ok) this.passed.set(a, b);
    return ok;
  }

  private passes(a: number, b: number): boolean {
    const h = this.c.hold;
    if (b - a <= HEADER_LEN || !h.has(a, b)) return false;
    const k = h.u48(a + 2);
    return h.u16(a) === b - a - HEADER_LEN && (k === this.key || this.otherKeys.includes(k));
  }

  /** After framing advanced over a whole segment: count it and judge runs of failing ones. */
  classify(a: number, b: number, frame: number, passed: boolean): void {
    if (b <= this.start) return;
    // A second key learnt while framing this segment: it passes the test under that key.
    if (!passed && this.otherKeys.length && this.passes(a, b)) passed = true;
    if (passed) {
      this.alignedSegments++;
      this.checkAgainst(a, b);
      this.endRun();
      return;
    }
    this.unalignedSegments++;
    const straddle = this.boundaryInside(a, b);
    const complete = this.completeInside(a, b);
    const seq = this.c.seqOf(a);
    const r = (this.run ??= {
      count: 0,
      straddle: 0,
      midStart: 0,
      complete: false,
      firstSeq: seq,
      lastSeq: seq,
      frames: [],
    });
    r.count++;
    if (straddle) r.straddle++;
    if (!this.boundaryAt(a)) r.midStart++;
    if (complete) r.complete = true;
    r.lastSeq = seq;
    if (r.frames.length < 64) r.frames.push(frame);
  }

  private boundaryInside(a: number, b: number): boolean {
    if (this.pos !== null && this.pos > a && this.pos < b) return true;
    for (let i = this.bStart.length - 1; i >= 0; i--) {
      const s = this.bStart[i]!;
      if (s > a && s < b) return true;
      if (s <= a) break;
    }
    return false;
  }

  /**
   * A segment passing the receiver's test under the key starts a framing PDU at a (§5.4). Where the
   * chain of Lengths disagrees (it lands inside the segment, or a pending header's Length runs past
   * a), the Length that led there is wrong: reported, and framing goes on from a.
   */
  private checkAgainst(a: number, b: number): void {
    const cur = this.pos;
    if (cur === null || cur === a || cur >= b) return;
    const h = this.c.hold;
    if (cur < a) {
      if (!h.has(cur, cur + HEADER_LEN)) return;
      const len = h.u16(cur);
      const ok = this.keyOk(h.u48(cur + 2)) || this.otherKeys.includes(h.u48(cur + 2));
      if (ok && cur + HEADER_LEN + len <= a) return; // the chain reaches a on its own
      if (ok) {
        this.contradicted(cur, len, a);
        this.pos = a;
        this.run = null;
        return;
      }
    }
    if (this.lastStart !== null) this.contradicted(this.lastStart, this.lastLength, a);
    this.lastStart = null;
    this.pos = a;
    this.run = null;
    this.advance(b, false);
  }

  private contradicted(start: number, length: number, q: number): void {
    const h = this.c.hold;
    const expected = start + HEADER_LEN + length;
    this.c.find(
      'tuf.length-contradicted',
      this.c.seqOf(start),
      h.framesIn(start, Math.min(expected, q)),
      `Length ${length} of the framing PDU at seq ${this.c.seqOf(start)} puts the next header at seq ${this.c.seqOf(expected)}, but the next header under the key is at seq ${this.c.seqOf(q)} (${q < expected ? `${expected - q} octets earlier` : `${q - expected} octets later`})`,
    );
  }

  private boundaryAt(a: number): boolean {
    if (this.pos === a) return true;
    for (let i = this.bStart.length - 1; i >= 0; i--) {
      if (this.bStart[i] === a || this.bEnd[i] === a) return true;
      if (this.bEnd[i]! < a) break;
    }
    return false;
  }

  private completeInside(a: number, b: number): boolean {
    for (let i = this.bStart.length - 1; i >= 0; i--) {
      if (this.bStart[i]! < a) break;
      if (this.bEnd[i]! <= b) return true;
    }
    return false;
  }

  /** A run of segments failing the test ended (a passing segment, or the end of the stream). */
  endRun(): void {
    const r = this.run;
    this.run = null;
    if (!r) return;
    const where =
      r.count === 1 ? `segment at seq ${r.firstSeq}` : `${r.count} segments from seq ${r.firstSeq} to ${r.lastSeq}`;
    if (r.straddle === 0) {
      this.c.find(
        'tuf.sender-split',
        r.firstSeq,
        r.frames,
        `${where} fail the receiver's test (§5.4) but split only inside framing PDUs: a sender exception case (§5.2), not a middlebox`,
      );
    } else if (r.midStart > 0 && r.count >= 3) {
      // Pieces that start inside framing PDUs and end inside others: no framing-aware sender cuts so.
      this.c.find(
        'tuf.middlebox',
        r.firstSeq,
        r.frames,
        `${where} fail the receiver's test, ${r.straddle} of them cut across framing PDU boundaries and ${r.midStart} start inside a framing PDU${r.complete ? '' : ' (none holds a complete one)'}: a resegmenting middlebox (§5.2); framing was followed by chaining Lengths`,
      );
    } else {
      this.c.find(
        'tuf.two-pdus-in-segment',
        r.firstSeq,
        r.frames,
        `${r.straddle === 1 ? 'a segment' : `${r.straddle} segments`} in the ${where} carry octets of two framing PDUs (§5.1: a segment holds octets of one sending operation)`,
      );
    }
  }

  private keyOk(k: number): boolean {
    return k === this.key;
  }

  /** Frames every complete framing PDU held from pos on, up to `limit`; final: no more octets will come. */
  advance(limit: number, final: boolean): void {
    const h = this.c.hold;
    const end = Math.min(limit, h.end);
    for (let guard = 0; guard < 1 << 20; guard++) {
      if (this.pos === null) {
        if (!this.rescan(end, final)) return;
        continue;
      }
      const p = this.pos;
      if (p < h.base) {
        this.pos = null;
        this.scanFrom = h.base;
        continue;
      }
      if (p + HEADER_LEN > end) return;
      const len = h.u16(p);
      const k = h.u48(p + 2);
      let ok = this.keyOk(k) || this.otherKeys.includes(k);
      if (!ok) {
        const verdict = this.secondKey(p, len, k, end, final);
        if (verdict === 'wait') return;
        ok = verdict === 'yes';
      }
      if (!ok || len === 0) {
        this.pos = null;
        this.scanFrom = this.lastStart !== null ? this.lastStart + 1 : p + 1;
        continue;
      }
      const e = p + HEADER_LEN + len;
      if (e > end) return;
      this.frame(p, len, k);
    }
  }

  /** A header under another key at a chained position: a second key when the evidence says so. */
  private secondKey(p: number, len: number, k: number, end: number, final: boolean): 'yes' | 'no' | 'wait' {
    if (trivialKey(k) || len === 0) return 'no';
    const h = this.c.hold;
    const e = p + HEADER_LEN + len;
    const segPasses = this.segLen.get(p) === HEADER_LEN + len;
    let chains = false;
    if (!segPasses) {
      if (e + HEADER_LEN > end) return final ? 'no' : 'wait';
      const k2 = h.u48(e + 2);
      chains = k2 === k && h.u16(e) > 0;
    }
    if (!segPasses && !chains) return 'no';
    this.otherKeys.push(k);
    this.c.find(
      'tuf.second-key',
      this.c.seqOf(p),
      h.framesIn(p, Math.min(e, h.end)),
      `framing header at seq ${this.c.seqOf(p)} uses key 0x${keyHex(k)}; this direction's key is 0x${keyHex(this.key)} (§5: one key per direction)${segPasses ? "; its segment passes the receiver's test under it" : '; the next header chains on under it'}`,
    );
    return 'yes';
  }

  /** Framing lost: looks for the next header under the key; true when found (pos set). */
  private rescan(end: number, final: boolean): boolean {
    const h = this.c.hold;
    let from = Math.max(this.scanFrom, h.base);
    for (let q = from; q + HEADER_LEN <= end; q++) {
      if (h.u48(q + 2) !== this.key || h.u16(q) === 0) continue;
      if (this.lastStart !== null && q !== this.lastStart) this.contradicted(this.lastStart, this.lastLength, q);
      this.lastStart = null;
      this.pos = q;
      // The segments judged under the wrong Length were misjudged: the finding above says what happened.
      this.run = null;
      return true;
    }
    from = Math.max(from, end - HEADER_LEN + 1);
    this.scanFrom = from;
    if (!final) {
      h.dropBefore(Math.min(from, this.lastStart ?? from));
    }
    return false;
  }

  private frame(p: number, len: number, k: number): void {
    const h = this.c.hold;
    const e = p + HEADER_LEN + len;
    const frames = h.framesIn(p, e);
    const keyOk = this.keyOk(k);
    const aligned = this.passed.get(p) === e || (this.segLen.get(p) === e - p && this.passes(p, e));
    if (len > MAX_LENGTH) {
      this.c.find('tuf.length-too-long', this.c.seqOf(p), frames, `Length ${len} exceeds 65528 (§3: 2^16 - 8)`);
    }
    this.c.emit({
      kind: 'tuf',
      mode: 'alignment',
      flow: this.c.flow,
      dir: this.c.dir,
      from: this.c.from,
      to: this.c.to,
      frames,
      seq: this.c.seqOf(p),
      start: p,
      wireSize: e - p,
      length: len,
      key: keyHex(k),
      keyOk,
      aligned,
      segments: frames.length,
      markers: [],
      pduStart: p + HEADER_LEN,
      head: h.view(p + HEADER_LEN, Math.min(e, p + HEADER_LEN + HEAD_BYTES)).slice(),
    });
    this.framingPdus++;
    this.bStart.push(p);
    this.bEnd.push(e);
    if (this.bStart.length > RECENT) {
      this.bStart.shift();
      this.bEnd.shift();
    }
    for (const s of this.passed.keys()) if (s <= p) this.passed.delete(s);
    this.lastStart = p;
    this.lastLength = len;
    this.pos = e;
    // The last framing PDU stays held: a later header may show its Length was wrong.
    h.dropBefore(p);
    h.dropFramesBefore(p);
  }

  /** A gap in the capture: framing is looked for again after it. */
  gap(after: number): void {
    this.pos = null;
    this.lastStart = null;
    this.scanFrom = after;
    this.endRun();
  }

  finish(): void {
    this.endRun();
  }
}
