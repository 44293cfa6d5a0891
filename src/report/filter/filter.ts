/**
 * Display filters (-Y), in Wireshark's language: compile once, then test each record.
 * The caller supplies which field names exist and, per record, a field's values.
 */
import type { FieldValue } from '../../analysis/fields.js';
import { codePointLength, FilterError } from './error.js';
import { compileExpr } from './evaluate.js';
import { parseFilter, type BareWord } from './parser.js';

export { FilterError } from './error.js';

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
 * tshark's "-Y ''" (show everything) should skip compiling an empty string.
 */
export function compileFilter(text: string, known: (field: string) => boolean, bareWord: BareWord | null = null): CompiledFilter {
  const { expr, fields } = parseFilter(text, known, bareWord);
  const pred = compileExpr(expr);
  return { text, fields, matches: (get) => pred(get) };
}

/** Control characters would shift the caret or upset the terminal: show each as one space. */
function printable(text: string): string {
  let out = '';
  for (const ch of text) out += /[\u0000-\u001f\u007f-\u009f]/.test(ch) ? ' ' : ch;
  return out;
}

/**
 * The error as tshark shows it: the message, then the filter and a "^~~~" under the
 * offending text, both indented by four spaces. No trailing newline.
 */
export function formatFilterError(text: string, e: FilterError): string {
  const shown = printable(text);
  const width = codePointLength(shown);
  const col = Math.min(Math.max(1, e.column), width + 1);
  const len = Math.max(1, Math.min(e.length, width + 1 - col));
  const pad = '    ';
  return `${e.message}\n${pad}${shown}\n${pad}${' '.repeat(col - 1)}^${'~'.repeat(len - 1)}`;
}
