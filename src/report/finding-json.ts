/**
 * A finding as one line of JSON, written by hand: `JSON.stringify({ type: 'finding', ...f,
 * seqRelative })` built an object per finding (a spread, so a slow dictionary-shaped one) only to
 * throw it away, a third of an --ndjson run on a capture of a million findings. The text is the
 * same, octet for octet (test/report/finding-json.test.ts checks it against JSON.stringify over
 * hostile strings and numbers); anything but the collector's FindingRecord (its eight keys, set
 * by its constructor; nothing adds to one) with values of the declared types takes JSON.stringify.
 */
import { type Finding, FindingRecord } from '../vocabulary/findings.js';

/** A JSON number as JSON.stringify writes it (NaN and the infinities are null). */
function num(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
}

/** A number or null, as JSON. */
function numOrNull(v: number | null): string {
  return v === null ? 'null' : num(v);
}

function isNumOrNull(v: unknown): v is number | null {
  return v === null || typeof v === 'number';
}

function framesJson(frames: readonly number[]): string | null {
  let s = '[';
  for (let i = 0; i < frames.length; i++) {
    const x = frames[i];
    if (typeof x !== 'number') return null;
    s += i === 0 ? num(x) : `,${num(x)}`;
  }
  return `${s}]`;
}

/**
 * `{"type":"finding",...f,"seqRelative":…}` as JSON.stringify writes it (the --ndjson finding
 * event, ndjson.ts findingEvent).
 */
export function findingEventJson(f: Finding, seqRelative: number | null): string {
  if (
    f instanceof FindingRecord &&
    typeof f.rule === 'string' &&
    typeof f.severity === 'string' &&
    typeof f.message === 'string' &&
    isNumOrNull(f.rfcErrorCode) &&
    isNumOrNull(f.flow) &&
    isNumOrNull(f.seq) &&
    (f.from === null || typeof f.from === 'string') &&
    Array.isArray(f.frames)
  ) {
    const frames = framesJson(f.frames);
    if (frames !== null)
      return `{"type":"finding","rule":${JSON.stringify(f.rule)},"severity":${JSON.stringify(f.severity)},"rfcErrorCode":${numOrNull(f.rfcErrorCode)},"flow":${numOrNull(f.flow)},"from":${f.from === null ? 'null' : JSON.stringify(f.from)},"frames":${frames},"seq":${numOrNull(f.seq)},"message":${JSON.stringify(f.message)},"seqRelative":${numOrNull(seqRelative)}}`;
  }
  return JSON.stringify({ type: 'finding', ...f, seqRelative });
}
