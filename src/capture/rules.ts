import type { RuleDef } from '../vocabulary/findings.js';

/** Rules of this layer (ids, severities, references). Joined into the catalog by src/analysis/rules-catalog.ts. */
export const CAPTURE_RULES: readonly RuleDef[] = [
  {
    id: 'capture.read-error',
    severity: 'error',
    ref: null,
    rfcErrorCode: null,
    summary: 'The capture file could not be read to its end',
    explanation:
      'The reader stopped at a record or block it cannot parse: a bad magic number, a length that is not a multiple of 4 or below the minimum, ' +
      'a captured length above the snaplen or the per-record limit, an interface the section never defined, or an I/O error. ' +
      'Every packet before that point was analyzed; nothing after it was. The message names the byte offset and the frame number ' +
      'the bad record would have had: look there with a hex viewer, or try `editcap` or `pcapfix` to salvage the rest.',
  },
  {
    id: 'capture.truncated',
    severity: 'warning',
    ref: null,
    rfcErrorCode: null,
    summary: 'The capture file ends in the middle of a record',
    explanation:
      'The last record or block header promises more bytes than the file holds, as happens when the capturing process was killed ' +
      'or the file was copied while still being written. Every complete packet before it was analyzed; the partial one was dropped. ' +
      'Flows that were open at that point end without FIN or RST.',
  },
];
