/**
 * The one error type of the display-filter compiler. It lives apart from filter.ts so the lexer
 * and parser can throw it without an import cycle; filter.ts re-exports it.
 */
export class FilterError extends Error {
  /** 1-based column (in code points) in the filter text where it went wrong. */
  readonly column: number;
  /** How many code points the offending token spans (at least 1), for the "^~~~" underline. */
  readonly length: number;

  constructor(message: string, column: number, length = 1) {
    super(message);
    this.name = 'FilterError';
    this.column = Math.max(1, column);
    this.length = Math.max(1, length);
  }
}

/** Code points, not UTF-16 units: a caret under a string holding an emoji must still line up. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** An error for the source range [start, end) given in UTF-16 indexes, as the lexer tracks them. */
export function errorAt(text: string, start: number, end: number, message: string): FilterError {
  const column = codePointLength(text.slice(0, start)) + 1;
  return new FilterError(message, column, codePointLength(text.slice(start, end)));
}
