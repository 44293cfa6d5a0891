/**
 * Findings as pcapng packet comments (opt_comment of the Enhanced Packet Block), which Wireshark
 * shows as `frame.comment` and under Expert Information → Comments. Each finding becomes one
 * comment on every frame it names: severity, rule id, MPA error code, stream, seq and message.
 *
 * Bounded: a message is cut at MAX_MESSAGE characters and its control characters are escaped (a
 * comment is one line in Wireshark's packet list); a frame holds at most MAX_PER_FRAME comments
 * (then one saying how many more); at most MAX_COMMENTS are held in all, the rest counted.
 */
import type { Finding } from '../vocabulary/findings.js';
import { printable } from './printable.js';

export const MAX_MESSAGE = 1000;
export const MAX_PER_FRAME = 32;
export const MAX_COMMENTS = 200_000;
/** Findings that name no frame go to the section header's comments, at most this many. */
export const MAX_SECTION_COMMENTS = 1000;

/** The comment text of a finding: `mpa-dissect: error mpa.crc-mismatch [MPA error 2] stream 0 seq 1234: message`. */
export function findingComment(f: Finding): string {
  const code = f.rfcErrorCode !== null ? ` [MPA error ${f.rfcErrorCode}]` : '';
  // Stream numbers as Wireshark's tcp.stream, from 0 (the JSON report's flow id minus one).
  const stream = f.flow !== null ? ` stream ${f.flow - 1}` : '';
  const seq = f.seq !== null ? ` seq ${f.seq}` : '';
  let msg = f.message.length > MAX_MESSAGE ? `${f.message.slice(0, MAX_MESSAGE)}…` : f.message;
  msg = printable(msg);
  return `mpa-dissect: ${f.severity} ${printable(f.rule)}${code}${stream}${seq}: ${msg}`;
}

/** Comments per frame, filled as findings arrive and taken as frames are written. */
export class FrameComments {
  private readonly byFrame = new Map<number, string[]>();
  private readonly extra = new Map<number, number>();
  /** Comments of findings naming no frame (capture-level): for the section header. */
  readonly section: string[] = [];
  private held = 0;
  /** Comments not kept: beyond MAX_COMMENTS or MAX_SECTION_COMMENTS. */
  dropped = 0;
  /** Comments that came for a frame already written (a streaming writer's window had passed it). */
  late = 0;
  /** Frames at or below this number were already written (a streaming writer): their comments come too late. */
  written = 0;

  add(f: Finding): void {
    if (f.frames.length === 0) {
      if (this.section.length < MAX_SECTION_COMMENTS) this.section.push(findingComment(f));
      else this.dropped++;
      return;
    }
    let text: string | null = null;
    let last = -1;
    for (const fr of f.frames) {
      if (fr === last) continue; // a frame named twice gets the comment once
      last = fr;
      if (fr <= this.written) {
        this.late++;
        continue;
      }
      let list = this.byFrame.get(fr);
      if (list && list.length >= MAX_PER_FRAME) {
        this.extra.set(fr, (this.extra.get(fr) ?? 0) + 1);
        continue;
      }
      if (this.held >= MAX_COMMENTS) {
        this.dropped++;
        continue;
      }
      text ??= findingComment(f);
      if (!list) this.byFrame.set(fr, (list = []));
      list.push(text);
      this.held++;
    }
  }

  /** The comments of `frame` (empty when none). */
  get(frame: number): readonly string[] {
    const list = this.byFrame.get(frame);
    if (!list) return NONE;
    const more = this.extra.get(frame);
    if (more === undefined) return list;
    return [...list, `mpa-dissect: ${more} more ${more === 1 ? 'finding' : 'findings'} on this frame (see the report)`];
  }

  /** Forgets the comments of `frame` (a streaming writer has written it). */
  forget(frame: number): void {
    const list = this.byFrame.get(frame);
    if (!list) return;
    this.byFrame.delete(frame);
    this.extra.delete(frame);
    this.held -= list.length;
  }

  get size(): number {
    return this.held;
  }
}

const NONE: readonly string[] = [];
