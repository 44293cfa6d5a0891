/**
 * Bounded aggregates for the HTML report: a sampled line of at most `cap` bins whose width doubles
 * (neighbours merged) whenever a point falls beyond the last bin, so a connection of a million
 * FPDUs and one of ten cost the same memory, and each point costs O(1) amortised. Each bin keeps
 * the frame and seq of its first point, or of its first bad point once one arrives, for the hover.
 */
import type { SampledLine } from './model.js';

export class AdaptiveBins {
  private width: number;
  private readonly counts: Float64Array;
  private readonly frame: Float64Array;
  private readonly seq: Float64Array;
  /** 0: empty, 1: holds a point, 2: holds a bad point (its frame/seq are kept). */
  private readonly state: Uint8Array;
  private readonly label: string[];
  private used = 0;

  constructor(
    readonly series: number,
    readonly cap = 200,
    initialWidth = 1,
  ) {
    this.width = initialWidth;
    this.counts = new Float64Array(cap * series);
    this.frame = new Float64Array(cap);
    this.seq = new Float64Array(cap);
    this.state = new Uint8Array(cap);
    this.label = new Array<string>(cap).fill('');
  }

  /** The bin of `x` (widening the bins as needed); negative or non-finite x counts as 0. */
  bin(x: number): number {
    const v = x > 0 && Number.isFinite(x) ? x : 0;
    let i = Math.floor(v / this.width);
    while (i >= this.cap) {
      this.merge();
      i = Math.floor(v / this.width);
    }
    if (i >= this.used) this.used = i + 1;
    return i;
  }

  /** Counts one point of `series` at `x`; `bad` points win the bin's hover. Returns the bin. */
  add(x: number, series: number, frame: number, seq: number, bad = false, label = ''): number {
    const i = this.bin(x);
    this.counts[i * this.series + series]!++;
    this.note(i, frame, seq, bad, label);
    return i;
  }

  /** Adds `k` to a series of bin `i` (a second count for the same point). */
  count(i: number, series: number, k = 1): void {
    this.counts[i * this.series + series]! += k;
  }

  /** The bin's hover point: its first point, replaced once by its first bad point. */
  note(i: number, frame: number, seq: number, bad: boolean, label = ''): void {
    const s = this.state[i]!;
    if (s === 0 || (bad && s === 1)) {
      this.frame[i] = frame;
      this.seq[i] = seq;
      this.state[i] = bad ? 2 : 1;
      this.label[i] = label;
    }
  }

  private merge(): void {
    const S = this.series;
    const half = Math.ceil(this.used / 2);
    for (let j = 0; j < half; j++) {
      const a = 2 * j;
      const b = a + 1;
      for (let s = 0; s < S; s++) {
        this.counts[j * S + s] = this.counts[a * S + s]! + (b < this.cap ? this.counts[b * S + s]! : 0);
      }
      // The hover point: the first bad one of the two, else the first one.
      const pick = b < this.cap && this.state[b]! > this.state[a]! ? b : a;
      this.frame[j] = this.frame[pick]!;
      this.seq[j] = this.seq[pick]!;
      this.label[j] = this.label[pick]!;
      this.state[j] = Math.max(this.state[a]!, b < this.cap ? this.state[b]! : 0);
    }
    for (let j = half; j < this.cap; j++) {
      for (let s = 0; s < S; s++) this.counts[j * S + s] = 0;
      this.state[j] = 0;
      this.label[j] = '';
    }
    this.used = half;
    this.width *= 2;
  }

  /** The bins that hold something, as plain data. */
  view(): SampledLine {
    const bins: SampledLine['bins'] = [];
    for (let i = 0; i < this.used; i++) {
      if (this.state[i] === 0) continue;
      const n: number[] = [];
      for (let s = 0; s < this.series; s++) n.push(this.counts[i * this.series + s]!);
      bins.push({ x: i * this.width, n, frame: this.frame[i]!, seq: this.seq[i]!, label: this.label[i]! });
    }
    return { width: this.width, bins };
  }
}

/**
 * ULPDU_Length buckets of the size histogram: tshark's plen buckets (as `-z fpdu-sizes`), up to
 * MPA's largest ULPDU (65535, RFC 5044 §4.1). Lower bounds.
 */
export const FPDU_LENGTH_BUCKETS: readonly number[] = [
  0, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960,
];

/** The bucket of a ULPDU_Length: O(1) (its bit length picks the bucket). */
export function lengthBucket(len: number): number {
  if (len < 20) return 0;
  // 20·2^k ≤ len < 20·2^(k+1) → bucket k+1; capped at the last.
  const k = 31 - Math.clz32(Math.floor(len / 20));
  return Math.min(k + 1, FPDU_LENGTH_BUCKETS.length - 1);
}

/** Labels of the segments-per-FPDU buckets. */
export const SPAN_LABELS: readonly string[] = ['1', '2', '3', '4-7', '8+'];

export function spanBucket(segments: number): number {
  return segments <= 3 ? Math.max(0, segments - 1) : segments < 8 ? 3 : 4;
}
