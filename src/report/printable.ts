/**
 * Text taken from an input (a report's capture path or error, a rule id, a file name) shown on a
 * terminal: control characters (C0, DEL, C1) would move the cursor, clear the screen, ring the
 * bell or forge whole output lines, so each is shown as a visible escape (\x1b, \r, \n, ...).
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string): string {
  CONTROL.lastIndex = 0;
  if (!CONTROL.test(text)) return text;
  return text.replace(CONTROL, (c) => NAMED[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
