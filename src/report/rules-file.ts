/**
 * --rules FILE: a JSON document that turns rules off, changes their severity and sets thresholds.
 *
 *   { "rules": { "mpa.pad-not-zero": "off", "mpa.crc-mismatch": "warning", "ddp.*": "info" },
 *     "thresholds": { "alignment.minFpduAlignedPercent": 90 } }
 *
 * A rule's value is "off", "on" (its catalog severity), "error", "warning" or "info". A key
 * ending in ".*" applies to every rule with that prefix; an exact id wins over a pattern. Anything
 * the file gets wrong is an error naming the file and the problem: a typo must not silently
 * leave a CI gate open.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { RuleDef, Severity } from '../vocabulary/findings.js';
import type { RuleOverrides } from '../analysis/rules-catalog.js';
import { allRules } from '../analysis/rules-catalog.js';
import { NO_THRESHOLDS, THRESHOLD_KEYS, type Thresholds } from '../analysis/thresholds.js';

export class RulesFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RulesFileError';
  }
}

export interface RulesConfig {
  overrides: RuleOverrides;
  thresholds: Thresholds;
}

const SETTINGS = ['off', 'on', 'error', 'warning', 'info'] as const;
type Setting = (typeof SETTINGS)[number];

/** A rules file is a few lines of JSON; anything larger is a mistake (or /dev/zero). */
export const MAX_RULES_FILE_BYTES = 1024 * 1024;
/** Longest id or key echoed back in an error, and looked at for a "did you mean". */
const MAX_ECHO = 60;
const MAX_SUGGEST_LENGTH = 64;

/** A name from the file, quoted for an error message, cut to MAX_ECHO characters. */
function echo(s: string): string {
  const cut = s.length > MAX_ECHO ? `${s.slice(0, MAX_ECHO)}…` : s;
  return JSON.stringify(cut).replace(/…"$/, '"…');
}

/**
 * A value from the file, for an error message: short scalars as written, anything else by kind.
 * Never JSON.stringify of the whole value: a value nested 5,000 deep would overflow the stack.
 */
function describe(v: unknown): string {
  if (typeof v === 'string') return echo(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Levenshtein distance, to suggest the id a typo meant. */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

function suggest(word: string, candidates: readonly string[]): string {
  // Edit distance costs length × length: only short words can be typos of an id worth suggesting.
  if (word.length > MAX_SUGGEST_LENGTH) return '';
  // A truncated name ("alignment.minFpduAligned") is a typo too, however far in edit distance.
  const extended = candidates.find((c) => word.length >= 6 && c.startsWith(word));
  if (extended) return `; did you mean "${extended}"?`;
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(word.length / 4)) ? `; did you mean "${best}"?` : '';
}

/** Parses the text of a rules file; `name` is how errors name the file. */
export function parseRulesFile(name: string, text: string, rules: readonly RuleDef[] = allRules()): RulesConfig {
  const fail = (msg: string): never => {
    throw new RulesFileError(`${name}: ${msg}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail(`not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!isRecord(doc)) return fail('must be a JSON object with "rules" and/or "thresholds"');
  for (const k of Object.keys(doc)) {
    if (k !== 'rules' && k !== 'thresholds' && k !== '$comment')
      fail(`unknown key ${echo(k)} (expected "rules", "thresholds" or "$comment")`);
  }
  const ids = rules.map((r) => r.id);
  const byId = new Map(rules.map((r) => [r.id, r]));
  const severity = new Map<string, Severity>();
  const disabled = new Set<string>();
  const exact = new Map<string, Setting>();
  const patterns: Array<[string, Setting]> = [];
  const rulesDoc = doc['rules'] ?? {};
  if (!isRecord(rulesDoc)) fail('"rules" must be an object of rule id to "off", "on", "error", "warning" or "info"');
  for (const [id, v] of Object.entries(rulesDoc as Record<string, unknown>)) {
    if (typeof v !== 'string' || !(SETTINGS as readonly string[]).includes(v)) {
      fail(`rule ${echo(id)}: ${describe(v)} is not one of "off", "on", "error", "warning", "info"`);
    }
    const setting = v as Setting;
    if (id.endsWith('.*') || id === '*') {
      const prefix = id === '*' ? '' : id.slice(0, -1);
      if (!ids.some((x) => x.startsWith(prefix)))
        fail(`pattern ${echo(id)} matches no rule (mpa-dissect rules lists them)`);
      patterns.push([prefix, setting]);
    } else {
      if (!byId.has(id)) fail(`unknown rule ${echo(id)} (mpa-dissect rules lists them)${suggest(id, ids)}`);
      exact.set(id, setting);
    }
  }
  // Longer (more specific) patterns win over shorter ones; exact ids over any pattern.
  patterns.sort((a, b) => a[0].length - b[0].length);
  for (const r of rules) {
    let s: Setting | undefined;
    for (const [prefix, setting] of patterns) if (r.id.startsWith(prefix)) s = setting;
    s = exact.get(r.id) ?? s;
    if (s === undefined || s === 'on') continue;
    if (s === 'off') disabled.add(r.id);
    else if (s !== r.severity) severity.set(r.id, s);
  }
  const thresholds: Thresholds = { ...NO_THRESHOLDS };
  const th = doc['thresholds'] ?? {};
  if (!isRecord(th)) fail('"thresholds" must be an object, e.g. { "alignment.minFpduAlignedPercent": 90 }');
  const names = Object.keys(THRESHOLD_KEYS);
  for (const [k, v] of Object.entries(th as Record<string, unknown>)) {
    const spec = THRESHOLD_KEYS[k];
    if (!spec) return fail(`unknown threshold ${echo(k)} (known: ${names.join(', ')})${suggest(k, names)}`);
    if (
      typeof v !== 'number' ||
      !Number.isFinite(v) ||
      v < spec.min ||
      v > spec.max ||
      (spec.integer && !Number.isInteger(v))
    ) {
      return fail(
        `threshold "${k}": ${describe(v)} must be ${spec.integer ? 'an integer' : 'a number'} from ${spec.min}${spec.max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${spec.max}`}`,
      );
    }
    thresholds[spec.key] = v;
  }
  return { overrides: { severity, disabled }, thresholds };
}

/**
 * Reads at most MAX_RULES_FILE_BYTES + 1 octets, in chunks, so an endless file (/dev/zero, a pipe
 * that never closes its writer aside) is refused at once instead of read forever.
 */
function readCapped(path: string): Buffer | null {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(MAX_RULES_FILE_BYTES + 1);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    return got > MAX_RULES_FILE_BYTES ? null : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Reads and parses a rules file. Throws RulesFileError naming the file. */
export function loadRulesFile(path: string): RulesConfig {
  let text: string;
  try {
    const data = readCapped(path);
    if (data === null)
      throw new RulesFileError(
        `${path}: larger than ${MAX_RULES_FILE_BYTES / 1024 / 1024} MB; a rules file is a small JSON document`,
      );
    text = data.toString('utf8');
  } catch (e) {
    if (e instanceof RulesFileError) throw e;
    const code = (e as NodeJS.ErrnoException | null)?.code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : e instanceof Error
              ? e.message
              : String(e);
    throw new RulesFileError(`${path}: cannot read the rules file: ${why}`);
  }
  return parseRulesFile(path, text);
}
