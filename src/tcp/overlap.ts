/**
 * Overlap comparison: octets a segment repeats are compared with the first copy (delivered, from the
 * history ring, or held), and the differences of the current segment are gathered here for one
 * tcp.overlap-conflict finding.
 */
import type { Dir } from './direction.js';

export class OverlapCheck {
  // Conflicts of the current segment (count reset at the start of each segment).
  count = 0;
  /** Stream offset of the first differing octet. */
  first = 0;
  /** Frames that carried the first copies of differing octets. */
  readonly frames: number[] = [];

  /** Compares payload [a, b) (b <= nextOffset) with what was delivered, where history still holds it. */
  compareHistory(d: Dir, a: number, b: number, p: Uint8Array, segOff: number): void {
    const h = d.hist!;
    if (h.count === 0) return;
    const next = d.nextOffset;
    const lo = Math.max(a, next - h.cap, h.offAt(0));
    if (lo >= b) return;
    const buf = h.buf;
    const cap = h.cap;
    for (let k = h.find(lo); k < h.count; k++) {
      const rs = h.offAt(k);
      if (rs >= b) break;
      const frame = h.frameAt(k);
      if (frame === 0) continue;
      const re = k + 1 < h.count ? h.offAt(k + 1) : next;
      const s0 = rs > lo ? rs : lo;
      const e0 = re < b ? re : b;
      let ri = s0 % cap;
      for (let x = s0; x < e0; x++) {
        if (buf[ri] !== p[x - segOff]) this.conflict(x, frame);
        if (++ri === cap) ri = 0;
      }
    }
  }

  compareBytes(p: Uint8Array, pOff: number, q: Uint8Array, qOff: number, a: number, b: number, frame: number): void {
    for (let x = a; x < b; x++) {
      if (p[x - pOff] !== q[x - qOff]) this.conflict(x, frame);
    }
  }

  private conflict(off: number, frame: number): void {
    if (this.count === 0) {
      this.first = off;
      this.frames.length = 0;
    }
    this.count++;
    if (!this.frames.includes(frame)) this.frames.push(frame);
  }
}
