/**
 * Text taken from an input (a report's capture path or error, a rule id, a file name, a string
 * field decoded from a packet) shown on a terminal: control characters (C0, DEL, C1) would move the
 * cursor, clear the screen, ring the bell or forge whole output lines, so each is shown as a
 * visible escape (\x1b, \r, \n, ...). JSON output needs none of this: JSON.stringify escapes them.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same without line feed: for messages made of several lines on purpose (a filter and its caret). */
const CONTROL_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escapeOne = (c: string): string => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

export function printable(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, escapeOne);
}

/** printable() for a message of several lines: its line feeds kept, every other control character escaped. */
export function printableLines(text: string): string {
  CONTROL_BUT_LF.lastIndex = 0;
  if (!CONTROL_BUT_LF.test(text)) return text;
  return text.replace(CONTROL_BUT_LF, escapeOne);
}
