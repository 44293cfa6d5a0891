/**
 * tshark options that change how things are shown: `-t FORMAT` (the time column) and `-o
 * NAME:VALUE` (Wireshark preferences; only tcp.relative_sequence_numbers has a meaning here).
 */
import { TIME_FORMATS, TIME_FORMAT_WORDS, type TimeFormat } from '../src/report/time-format.js';
import { UsageError } from './options.js';

/** `-t`: one of tshark's formats (undefined: the default, r). */
export function parseTimeFormat(v: string | undefined): TimeFormat | undefined {
  if (v === undefined) return undefined;
  if ((TIME_FORMATS as readonly string[]).includes(v)) return v as TimeFormat;
  const shown = JSON.stringify(v.slice(0, 40));
  throw new UsageError(
    `-t: invalid time stamp type ${shown}; it must be one of ${TIME_FORMATS.map((t) => `${t} (${TIME_FORMAT_WORDS[t]})`).join(', ')}`,
  );
}

export interface Preferences {
  /** tcp.relative_sequence_numbers: relative sequence numbers (Wireshark's default) or absolute. */
  relativeSeq: boolean;
}

/**
 * `-o NAME:VALUE`, as tshark: the last one given wins. Booleans are TRUE or FALSE in any case, as
 * Wireshark reads them. Any other preference is refused with one line saying why: there is no
 * Wireshark preference table here, and what Decode As and protocol preferences do is --mpa and --ulp.
 */
export function parsePreferences(list: readonly string[]): Preferences {
  const prefs: Preferences = { relativeSeq: true };
  for (const item of list) {
    const i = item.indexOf(':');
    const name = (i < 0 ? item : item.slice(0, i)).trim();
    const value = i < 0 ? '' : item.slice(i + 1).trim();
    const shown = JSON.stringify(item.length > 60 ? `${item.slice(0, 60)}…` : item);
    if (i < 0)
      throw new UsageError(`-o ${shown}: give a preference as NAME:VALUE (tcp.relative_sequence_numbers:FALSE)`);
    if (name !== 'tcp.relative_sequence_numbers')
      throw new UsageError(
        `-o ${shown}: only tcp.relative_sequence_numbers is a preference here (mpa-dissect reads no Wireshark preferences; --mpa, --tuf and --ulp do what Decode As does)`,
      );
    const v = value.toUpperCase();
    if (v !== 'TRUE' && v !== 'FALSE')
      throw new UsageError(`-o ${shown}: tcp.relative_sequence_numbers is TRUE or FALSE`);
    prefs.relativeSeq = v === 'TRUE';
  }
  return prefs;
}
