/**
 * Marker mode (draft-ietf-tsvwg-tcp-ulp-frame-00 §6): a 4-octet marker every `interval` octets of
 * the TCP stream from the enablement point, holding the Next PDU Offset twice, counted from the
 * end of the marker. PDUs are known only where markers point, so a record is the stretch from one
 * PDU start a marker shows to the next (one or more ULP PDUs); markers are part of the stream.
 */
import { HEAD_BYTES, type DirectionContext } from './context.js';
import { MARKER_LEN, type TufMarker } from './types.js';

interface Span {
  spanStart: number;
  pduStart: number;
  markers: TufMarker[];
}

export class MarkerFramer {
  markers = 0;
  pdus = 0;
  splitMarkers = 0;
  private next: number;
  /** Stream offset of the next PDU start a marker announced and the stream has not reached yet. */
  private target: number | null = null;
  /** The marker that announced target. */
  private targetBy = 0;
  private open: Span | null = null;

  constructor(
    private readonly c: DirectionContext,
    readonly start: number,
    readonly interval: number,
    private readonly forced: boolean,
  ) {
    this.next = start;
  }

  advance(final: boolean): void {
    const h = this.c.hold;
    for (let guard = 0; guard < 1 << 20; guard++) {
      const mp = this.next;
      const t = this.target;
      if (t !== null && t < mp) {
        if (h.end < t) return;
        this.boundary(t);
        this.target = null;
        continue;
      }
      if (t !== null && t > mp && t < mp + MARKER_LEN) {
        this.c.find(
          'tuf.marker-offset-contradicted',
          this.c.seqOf(this.targetBy),
          h.framesIn(this.targetBy, this.targetBy + MARKER_LEN),
          `marker at seq ${this.c.seqOf(this.targetBy)} points at seq ${this.c.seqOf(t)}, inside the marker at seq ${this.c.seqOf(mp)}`,
        );
        this.target = null;
        continue;
      }
      if (mp + MARKER_LEN > h.end) {
        if (final) this.finish();
        return;
      }
      if (mp < h.base) {
        // The marker fell in octets missing from the capture.
        this.next += this.interval;
        continue;
      }
      this.readMarker(mp);
      this.next += this.interval;
      // Octets before the open span (or the next marker) are not needed again.
      const keep = Math.min(this.open ? this.open.pduStart : this.next, this.next);
      h.dropBefore(Math.min(keep, h.end));
      h.dropFramesBefore(this.open ? this.open.spanStart : keep);
    }
  }

  private readMarker(p: number): void {
    const h = this.c.hold;
    const c1 = h.u16(p);
    const c2 = h.u16(p + 2);
    const split = h.framesIn(p, p + MARKER_LEN).length > 1;
    const frames = h.framesIn(p, p + MARKER_LEN);
    const end = p + MARKER_LEN;
    const expected = this.target !== null && this.target >= end ? this.target - end : null;
    let npo = c1;
    if (c1 !== c2) {
      if (expected !== null && c2 === expected) npo = c2;
      this.c.find(
        'tuf.marker-copies-differ',
        this.c.seqOf(p),
        frames,
        `marker at seq ${this.c.seqOf(p)}: Next PDU Offset ${c1} and its copy ${c2} differ${split ? ' (the marker is split across segments: a receiver with one of them goes wrong)' : ''}`,
      );
    }
    if (this.markers === 0 && p === this.start && npo !== 0 && this.forced) {
      this.c.find(
        'tuf.first-marker-not-zero',
        this.c.seqOf(p),
        frames,
        `first marker at seq ${this.c.seqOf(p)} has Next PDU Offset ${npo}, not 0 (§6)`,
      );
    }
    this.markers++;
    if (split) this.splitMarkers++;
    let q = end + npo;
    if (expected !== null && npo !== expected) {
      this.c.find(
        'tuf.marker-offset-contradicted',
        this.c.seqOf(p),
        frames,
        `marker at seq ${this.c.seqOf(p)} points at seq ${this.c.seqOf(q)}; the marker at seq ${this.c.seqOf(this.targetBy)} before it in the same PDU points at seq ${this.c.seqOf(this.target!)}`,
      );
      q = this.target!;
    }
    const m: TufMarker = {
      offset: p,
      seq: this.c.seqOf(p),
      npo: c1,
      npo2: c2,
      split,
      targetSeq: this.c.seqOf(end + npo),
    };
    // A pointer onto the next marker's position means the PDU starts after that marker.
    if (q === this.next + this.interval) q += MARKER_LEN;
    if (q === end) {
      // A leading marker: the PDU starts right after it.
      this.boundary(p);
      this.open = { spanStart: p, pduStart: end, markers: [m] };
      this.target = null;
      return;
    }
    if (this.open) this.open.markers.push(m);
    else this.open = { spanStart: p, pduStart: -1, markers: [m] };
    this.target = q;
    this.targetBy = p;
  }

  /** A PDU starts at t: the open span (if it holds a PDU) ends there. */
  private boundary(t: number): void {
    const o = this.open;
    if (o && o.pduStart >= 0 && t > o.pduStart) this.emit(o, t);
    else if (o && o.pduStart < 0 && o.markers.length && t > o.spanStart) {
      // Octets before the first PDU start (a forced start whose first marker is not zero).
      this.open = { spanStart: o.spanStart, pduStart: t, markers: o.markers };
      return;
    }
    this.open = { spanStart: t, pduStart: t, markers: o && o.pduStart < 0 ? o.markers : [] };
  }

  private emit(o: Span, end: number): void {
    const h = this.c.hold;
    const frames = h.framesIn(o.spanStart, end);
    let inside = 0;
    for (const m of o.markers) if (m.offset >= o.pduStart && m.offset < end) inside++;
    const headEnd = Math.min(end, o.pduStart + HEAD_BYTES + MARKER_LEN * 2, h.end);
    const head: number[] = [];
    if (o.pduStart >= h.base) {
      for (let x = o.pduStart; x < headEnd && head.length < HEAD_BYTES; x++) {
        if ((x - this.start) % this.interval < MARKER_LEN && x >= this.start) continue;
        head.push(h.at(x));
      }
    }
    this.pdus++;
    this.c.emit({
      kind: 'tuf',
      mode: 'markers',
      flow: this.c.flow,
      dir: this.c.dir,
      from: this.c.from,
      to: this.c.to,
      frames,
      seq: this.c.seqOf(o.spanStart),
      start: o.spanStart,
      wireSize: end - o.spanStart,
      length: end - o.pduStart - inside * MARKER_LEN,
      key: null,
      keyOk: true,
      aligned: null,
      segments: frames.length,
      markers: o.markers,
      pduStart: o.pduStart,
      head: Uint8Array.from(head),
    });
  }

  /** A gap: PDU boundaries in it are lost; markers after it are read on the grid. */
  gap(after: number): void {
    this.open = null;
    if (this.target !== null && this.target < after) this.target = null;
    while (this.next + MARKER_LEN <= after) this.next += this.interval;
  }

  private finished = false;

  /** End of the direction: the last span ends at the end of the stream. */
  finish(closedByFin = false): void {
    if (this.finished) return;
    this.finished = true;
    const h = this.c.hold;
    const end = h.end;
    if (this.target !== null && this.target > end && closedByFin) {
      this.c.find(
        'tuf.marker-past-end',
        this.c.seqOf(this.targetBy),
        h.framesIn(this.targetBy, this.targetBy + MARKER_LEN),
        `marker at seq ${this.c.seqOf(this.targetBy)} points at seq ${this.c.seqOf(this.target)}, ${this.target - end} octets past the end of the stream (FIN at seq ${this.c.seqOf(end)})`,
      );
    }
    const o = this.open;
    if (o && o.pduStart >= 0 && end > o.pduStart) this.emit(o, end);
    this.open = null;
  }
}
