/**
 * Reading `--json` report documents back (for `mpa-dissect merge`): a file holds one report
 * (schema mpa-dissect/report/v1) or a combined document of several (mpa-dissect/reports/v1, what
 * `--json` prints for several captures and `merge --json` prints), whose reports are taken in order.
 * Anything else is refused with one line naming the file and what is wrong: not JSON, JSON cut
 * off before its end, another program's document, another version of the schema, or a document
 * missing what the schema requires.
 */
import { COMBINED_SCHEMA } from './combined-summary.js';
import { SCHEMA_ID, type ReportDocument } from './json-report.js';

export class ReportInputError extends Error {}

/**
 * Nesting of a report mpa-dissect writes stays under a dozen levels; a text nested deeper is
 * refused before it is parsed (JSON.parse and JSON.stringify recurse: a key nested 200,000 deep
 * would overflow the stack, and 12 MB of "[" cost 750 MB).
 */
export const MAX_REPORT_DEPTH = 64;

/** One pass over a JSON text: its deepest nesting, and whether it stops inside a string or with brackets open. */
function shape(text: string): { depth: number; endsEarly: boolean } {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { depth: deepest, endsEarly: inString || depth > 0 };
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Counts in a report are whole numbers from 0 (merge adds them: -1, 1e300 or a string would print nonsense). */
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

const isCountOrNull = (v: unknown): boolean => v === null || isCount(v);
const isSeverity = (v: unknown): boolean => v === 'error' || v === 'warning' || v === 'info';
const NULLABLE_COUNTS = ['flow', 'seq', 'rfcErrorCode'] as const;

/** The required keys of ../shared/report-schema.md that merge reads, checked for their types. */
function checkReport(v: unknown, where: string): ReportDocument {
  const bad = (what: string): never => {
    throw new ReportInputError(`${where}: not a valid ${SCHEMA_ID} document: ${what}`);
  };
  if (!isObject(v)) return bad('not a JSON object');
  const cap = v['capture'];
  if (!isObject(cap)) return bad('"capture" is missing');
  if (typeof cap['path'] !== 'string') bad('capture.path is not a string');
  if (!isCount(cap['packets'])) bad('capture.packets is not a whole number from 0');
  if (cap['error'] !== undefined && cap['error'] !== null && typeof cap['error'] !== 'string')
    bad('capture.error is not a string or null');
  const sum = v['summary'];
  if (!isObject(sum)) return bad('"summary" is missing');
  for (const k of ['flows', 'mpaFlows', 'fpdus', 'errors', 'warnings', 'infos'] as const) {
    if (!isCount(sum[k])) bad(`summary.${k} is not a whole number from 0`);
  }
  const flows = v['flows'];
  if (!Array.isArray(flows)) return bad('"flows" is not an array');
  flows.forEach((f, i) => {
    if (!isObject(f) || !isCount(f['id']) || typeof f['client'] !== 'string' || typeof f['server'] !== 'string')
      bad(`flows[${i}] lacks id, client or server`);
  });
  const findings = v['findings'];
  if (!Array.isArray(findings)) return bad('"findings" is not an array');
  // A plain loop and no array or closure per finding: a report holds up to 100,000 of them.
  for (let i = 0; i < findings.length; i++) {
    const f: unknown = findings[i];
    if (!isObject(f) || typeof f['rule'] !== 'string' || !isSeverity(f['severity']))
      bad(`findings[${i}] lacks a rule or a severity`);
    // The rest of a Finding as the schema requires it: JUnit prints each of them.
    const g = f as Json;
    if (typeof g['message'] !== 'string') bad(`findings[${i}].message is not a string`);
    if (!Array.isArray(g['frames']) || !g['frames'].every(isCount))
      bad(`findings[${i}].frames is not an array of frame numbers`);
    for (const k of NULLABLE_COUNTS)
      if (!isCountOrNull(g[k])) bad(`findings[${i}].${k} is not a whole number from 0 or null`);
    if (g['from'] !== undefined && g['from'] !== null && typeof g['from'] !== 'string')
      bad(`findings[${i}].from is not a string or null`);
  }
  return v as unknown as ReportDocument;
}

function schemaOf(v: unknown): string | null {
  return isObject(v) && typeof v['schema'] === 'string' ? v['schema'] : null;
}

/** The reports a file holds, checked; throws ReportInputError with one line naming `name`. */
export function parseReports(text: string, name: string): ReportDocument[] {
  if (text.trim() === '')
    throw new ReportInputError(
      `${name}: empty (no report: did its run stop before writing one, on an unreadable capture?)`,
    );
  const sh = shape(text);
  if (sh.depth > MAX_REPORT_DEPTH)
    throw new ReportInputError(
      `${name}: nested ${sh.depth} levels deep, where a report nests under ${MAX_REPORT_DEPTH}: not an mpa-dissect report`,
    );
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    if (sh.endsEarly)
      throw new ReportInputError(
        `${name}: truncated: the JSON ends before the document does (${text.length} characters read)`,
      );
    // Said in our words, not JSON.parse's (whose text differs between Node versions and echoes
    // the input): where the JSON went wrong when the parser says, else how the file begins.
    const at = /at position (\d+)/.exec(e instanceof Error ? e.message : '');
    const head = text.length > 24 ? `${JSON.stringify(text.slice(0, 24)).slice(0, -1)}…"` : JSON.stringify(text);
    throw new ReportInputError(
      `${name}: not JSON (${at ? `invalid at character ${Number(at[1]) + 1}` : `it begins ${head}`})`,
    );
  }
  const schema = schemaOf(v);
  if (schema === SCHEMA_ID) return [checkReport(v, name)];
  if (schema === COMBINED_SCHEMA) {
    const caps = (v as Json)['captures'];
    if (!Array.isArray(caps))
      throw new ReportInputError(`${name}: not a valid ${COMBINED_SCHEMA} document: "captures" is not an array`);
    return caps.map((c, i) => {
      const s = schemaOf(c);
      if (s !== SCHEMA_ID)
        throw new ReportInputError(
          `${name}: captures[${i}]: schema ${s === null ? 'missing' : JSON.stringify(s)}, expected ${SCHEMA_ID}`,
        );
      return checkReport(c, `${name}: captures[${i}]`);
    });
  }
  if (schema !== null && /^mpa-dissect\/reports?\//.test(schema)) {
    throw new ReportInputError(
      `${name}: schema ${schema} is another version than this mpa-dissect reads (${SCHEMA_ID} or ${COMBINED_SCHEMA})`,
    );
  }
  // A generator truth file (mpa-dissect generate --truth) sits next to its capture: name it, so the
  // mistake of globbing *.json in a corpus folder is obvious.
  if (schema !== null && /^mpa-dissect\/truth\//.test(schema))
    throw new ReportInputError(
      `${name}: a generator truth file (schema ${schema}: the findings a generated capture should give), not an mpa-dissect report; run mpa-dissect --json on its capture to get a report`,
    );
  throw new ReportInputError(`${name}: not an mpa-dissect report (no "schema": "${SCHEMA_ID}")`);
}

/** The tool version a report names, for the note on reports of mixed versions. */
export function toolVersion(doc: ReportDocument): string {
  return isObject(doc.tool) && typeof doc.tool.version === 'string' ? doc.tool.version : 'unknown';
}
