/**
 * Display filters (-Y), in Wireshark's language: compile once, then test each record.
 * The caller supplies which field names exist and, per record, a field's values.
 */
import type { FieldValue } from '../../vocabulary/fields.js';
import type { FilterError } from './error.js';
import { compileExpr } from './evaluate.js';
import { parseFilter, type BareWord, type FieldTypes } from './parser.js';

export { FilterError } from './error.js';
export type { BareWord, FieldTypes, FilterType } from './parser.js';

export interface CompiledFilter {
  readonly text: string;
  /** True when the record whose fields `get` returns passes the filter. */
  matches(get: (field: string) => readonly FieldValue[] | undefined): boolean;
  /** Every field name the filter references, in order of first appearance. */
  readonly fields: readonly string[];
}

/**
 * Compiles filter text. Throws FilterError (never anything else for bad input) with the
 * 1-based column of the problem. An empty filter is an error here; a caller that wants
 * tshark's "-Y ''" (show everything) should skip compiling an empty string. With `types`, values
 * are checked against the fields' types as tshark checks them.
 */
export function compileFilter(
  text: string,
  known: (field: string) => boolean,
  bareWord: BareWord | null = null,
  types: FieldTypes | null = null,
): CompiledFilter {
  const { expr, fields } = parseFilter(text, known, bareWord, types);
  const pred = compileExpr(expr);
  return { text, fields, matches: (get) => pred(get) };
}

/** Control characters would shift the caret or upset the terminal: show each as one space. */
function printable(text: string): string {
  let out = '';
  for (const ch of text) out += /[\u0000-\u001f\u007f-\u009f]/.test(ch) ? ' ' : ch;
  return out;
}

/** Longest filter echoed whole under an error; a longer one is shown as a window around the caret. */
const ECHO_WIDTH = 120;

/**
 * The error as tshark shows it: the message, then the filter and a "^~~~" under the
 * offending text, both indented by four spaces. No trailing newline. A filter longer than
 * ECHO_WIDTH is cut to a window around the error ("…" where cut); an error about the whole
 * filter (its size) is its message alone.
 */
export function formatFilterError(text: string, e: FilterError): string {
  if (!e.pointed) return e.message;
  let chars = Array.from(
    printable(text.length > 4 * ECHO_WIDTH + e.column * 2 ? text.slice(0, e.column * 2 + 4 * ECHO_WIDTH) : text),
  );
  let col = Math.min(Math.max(1, e.column), chars.length + 1);
  let len = Math.max(1, Math.min(e.length, chars.length + 1 - col));
  if (chars.length > ECHO_WIDTH) {
    len = Math.min(len, ECHO_WIDTH / 2);
    const from = Math.max(0, Math.min(col - 1 - ECHO_WIDTH / 4, chars.length - ECHO_WIDTH));
    const to = Math.min(chars.length, from + ECHO_WIDTH);
    const window = chars.slice(from, to);
    if (from > 0) window.unshift('…');
    if (to < chars.length) window.push('…');
    col = col - from + (from > 0 ? 1 : 0);
    chars = window;
  }
  const pad = '    ';
  return `${e.message}\n${pad}${chars.join('')}\n${pad}${' '.repeat(col - 1)}^${'~'.repeat(len - 1)}`;
}
