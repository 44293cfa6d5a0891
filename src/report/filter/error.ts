/**
 * The one error type of the display-filter compiler. It lives apart from filter.ts so the lexer
 * and parser can throw it without an import cycle; filter.ts re-exports it.
 */
const MAX_MESSAGE = 400;

export class FilterError extends Error {
  /** 1-based column (in code points) in the filter text where it went wrong. */
  readonly column: number;
  /** How many code points the offending token spans (at least 1), for the "^~~~" underline. */
  readonly length: number;
  /**
   * False when no one place is wrong (the whole filter is too large): the error is then shown as
   * its message alone, without echoing the filter or a caret.
   */
  readonly pointed: boolean;

  constructor(message: string, column: number, length = 1, pointed = true) {
    // Messages quote the offending token, which may be huge: keep the error a readable size.
    super(
      message.length > MAX_MESSAGE
        ? `${message.slice(0, MAX_MESSAGE / 2)}…${message.slice(-MAX_MESSAGE / 4)}`
        : message,
    );
    this.name = 'FilterError';
    this.column = Math.max(1, column);
    this.length = Math.max(1, length);
    this.pointed = pointed;
  }
}

/** An error about the filter as a whole (its size), shown without the filter text. */
export function wholeFilterError(message: string): FilterError {
  return new FilterError(message, 1, 1, false);
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
