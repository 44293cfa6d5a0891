/**
 * Tab in the filter prompt: the field name being typed completed from the names a filter may use
 * (FILTER_FIELDS, the registry `-G fields` prints), as termshark and Wireshark's filter bar do.
 */
import { FILTER_FIELDS } from '../report/fields.js';

/** Every name a filter may start a test with, sorted (fields and their protocols). */
let names: readonly string[] | null = null;
function allNames(): readonly string[] {
  if (names === null) {
    const set = new Set<string>();
    for (const k of FILTER_FIELDS.keys()) {
      set.add(k);
      set.add(k.split('.')[0]!);
    }
    names = [...set].sort();
  }
  return names;
}

/** The name being typed at the end of `text` (field names: letters, digits, _ . -). */
const TAIL = /[A-Za-z_][A-Za-z0-9_.-]*$/;

export interface Completion {
  /** The text with the name completed as far as the candidates agree. */
  readonly text: string;
  /** The names that start with what was typed (all of them when several remain). */
  readonly candidates: readonly string[];
}

/** Completes the name at the end of `text`; null when there is no name there or nothing matches. */
export function completeField(text: string): Completion | null {
  const m = TAIL.exec(text);
  if (!m) return null;
  const typed = m[0];
  const found = allNames().filter((n) => n.startsWith(typed));
  if (found.length === 0) return null;
  let common = found[0]!;
  for (const n of found) {
    let k = 0;
    while (k < common.length && k < n.length && common[k] === n[k]) k++;
    common = common.slice(0, k);
  }
  return { text: text.slice(0, text.length - typed.length) + common, candidates: found };
}
