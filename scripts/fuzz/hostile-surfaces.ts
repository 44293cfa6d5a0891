/**
 * Cases for the surfaces of issue 26 (part A): `merge` inputs (mutated reports, huge, deep or
 * garbage JSON, control characters), directories given to the CLI or to merge (many files, FIFOs,
 * symbolic-link loops, dangling links, odd names) and `--mpa`/`--tuf`/`--ulp` strings. Each case
 * says what it writes (files) and what it makes that plain files cannot be (setup: FIFOs, links),
 * and adds its own check to the fuzzer's: one line per problem, no raw control character on
 * standard error, no JavaScript word ("NaN", "[object Object]", "undefined") in what is printed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Rand } from './mutate-capture.js';

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

export interface SurfaceCase {
  name: string;
  /** Arguments, @DIR standing for the case's directory. */
  args: string[];
  files: Map<string, Uint8Array | string>;
  /** Entries plain files cannot be: FIFOs, symbolic links, many files. */
  setup?: (dir: string) => void;
  /** What the fuzzer's own checks do not see: null when the outcome is right. */
  check: (status: number | null, stderr: string) => string | null;
}

/** Raw control characters (line feed aside) in text printed from an input. */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;
const JS_WORDS = /\bNaN\b|\[object Object\]|\bundefined\b/;

function commonCheck(status: number | null, stderr: string, maxLines: number): string | null {
  if (RAW_CONTROL.test(stderr.replace(/\r\x1b\[K/g, ''))) return 'raw control character on standard error';
  // Input echoed in quotes may hold the words itself (--mpa flow=NaN): only the tool's own text is judged.
  const own = stderr.replace(/"(?:[^"\\\n]|\\.)*"/g, '""');
  if (JS_WORDS.test(own)) return `a JavaScript word on standard error: ${JS_WORDS.exec(own)![0]}`;
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  if (status === 2 && lines.length > maxLines) return `${lines.length} lines on standard error for exit 2`;
  if (lines.some((l) => l.length > 2000)) return 'a line of standard error over 2,000 characters';
  return null;
}

// --- merge -------------------------------------------------------------------------------------

/** A small valid report, as `--json` writes it (the fields merge reads; the schema's types). */
export function minimalReport(path = 'x.pcap'): Record<string, unknown> {
  return {
    schema: 'mpa-dissect/report/v1',
    tool: { name: 'mpa-dissect', version: '0.0.0' },
    capture: { path, packets: 25, format: 'pcap', bytes: 2000, error: null },
    summary: { flows: 1, mpaFlows: 1, fpdus: 19, errors: 0, warnings: 1, infos: 2 },
    flows: [{ id: 1, client: '10.0.0.1:40001', server: '10.0.0.2:4420' }],
    findings: [
      {
        rule: 'mpa.crc-mismatch',
        severity: 'warning',
        rfcErrorCode: 2,
        flow: 1,
        from: '10.0.0.1:40001',
        frames: [3],
        seq: 1000,
        message: 'm',
      },
    ],
  };
}

const HOSTILE_VALUES: readonly unknown[] = [
  -1,
  1e300,
  Number.MAX_SAFE_INTEGER + 2,
  0.5,
  'many',
  '0',
  '',
  {},
  [],
  null,
  true,
  'x\u001b[2J\u0007\r\nFORGED',
  '\u0000\u0000',
  'e\u009b31m',
  'y'.repeat(100_000),
  [1, 2, 3],
];

const KEY_PATHS: readonly string[][] = [
  ['schema'],
  ['capture'],
  ['capture', 'path'],
  ['capture', 'packets'],
  ['capture', 'error'],
  ['capture', 'bytes'],
  ['summary'],
  ['summary', 'errors'],
  ['summary', 'warnings'],
  ['summary', 'fpdus'],
  ['summary', 'flows'],
  ['flows'],
  ['findings'],
  ['tool'],
  ['tool', 'version'],
  ['findings', '0'],
  ['findings', '0', 'rule'],
  ['findings', '0', 'severity'],
  ['findings', '0', 'frames'],
  ['findings', '0', 'message'],
  ['findings', '0', 'seq'],
  ['flows', '0', 'id'],
];

function setPath(doc: Record<string, unknown>, path: readonly string[], v: unknown, del: boolean): void {
  let o: Record<string, unknown> = doc;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    if (typeof next !== 'object' || next === null) return;
    o = next as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (del) delete o[last];
  else o[last] = v;
}

/** A report text changed in one hostile way, and its name. */
function hostileReport(r: Rand): { name: string; text: string | Uint8Array } {
  const doc = minimalReport();
  const kind = int(r, 12);
  switch (kind) {
    case 0: {
      const p = pick(r, KEY_PATHS);
      const v = pick(r, HOSTILE_VALUES);
      setPath(doc, p, v, false);
      return { name: `${p.join('.')} = ${JSON.stringify(v)?.slice(0, 30)}`, text: JSON.stringify(doc) };
    }
    case 1: {
      const p = pick(r, KEY_PATHS);
      setPath(doc, p, undefined, true);
      return { name: `${p.join('.')} missing`, text: JSON.stringify(doc) };
    }
    case 2: {
      const t = JSON.stringify(doc, null, 1);
      const at = int(r, t.length);
      return { name: `cut at ${at}`, text: t.slice(0, at) };
    }
    case 3: {
      const depth = pick(r, [65, 1000, 200_000]);
      const deep = `${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}`;
      return {
        name: `a key nested ${depth} deep`,
        text: JSON.stringify({ ...doc, extra: 0 }).replace('"extra":0', `"extra":${deep}`),
      };
    }
    case 4: {
      const n = pick(r, [1000, 1_000_000, 12_000_000]);
      return { name: `${n} of "["`, text: '['.repeat(n) };
    }
    case 5: {
      const b = new Uint8Array(int(r, 4096) + 1);
      for (let i = 0; i < b.length; i++) b[i] = int(r, 256);
      return { name: `${b.length} random octets`, text: b };
    }
    case 6:
      return { name: 'NUL octets', text: new Uint8Array(int(r, 100_000) + 1) };
    case 7: {
      const n = pick(r, [1000, 20_000, 60_000]);
      const f = (doc['findings'] as object[])[0];
      doc['findings'] = Array.from({ length: n }, (_, i) => ({
        ...f,
        rule: `r${i}\u001b[${i % 40}m`,
        severity: pick(r, ['error', 'warning', 'info']),
      }));
      return { name: `${n} distinct rule ids`, text: JSON.stringify(doc) };
    }
    case 8: {
      const n = int(r, 300) + 1;
      return {
        name: `combined document of ${n} reports`,
        text: JSON.stringify({
          schema: 'mpa-dissect/reports/v1',
          captures: Array.from({ length: n }, (_, i) =>
            i % 7 === 3 ? pick(r, HOSTILE_VALUES) : minimalReport(`c${i}`),
          ),
        }),
      };
    }
    case 9:
      return {
        name: 'another schema',
        text: JSON.stringify({ ...doc, schema: pick(r, ['mpa-dissect/report/v9', 'mpa-dissect/truth/v1', 'x', 7]) }),
      };
    case 10:
      return { name: 'empty', text: pick(r, ['', ' \n', '\u0000']) };
    default: {
      // Random token soup around JSON's punctuation.
      const toks = ['{', '}', '[', ']', ',', ':', '"a"', '1', '-', 'e9', 'null', '"\\u0000"', '"\\', '\u001b'];
      let t = '';
      for (let i = int(r, 2000); i > 0; i--) t += pick(r, toks);
      return { name: 'token soup', text: t };
    }
  }
}

export function mergeCase(r: Rand): SurfaceCase {
  const files = new Map<string, Uint8Array | string>();
  const n = int(r, 3) + 1;
  const names: string[] = [];
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const h = r() < 0.25 ? { name: 'good', text: JSON.stringify(minimalReport(`ok${i}.pcap`)) } : hostileReport(r);
    const f = `r${i}.json`;
    files.set(f, h.text);
    names.push(`@DIR/${f}`);
    parts.push(h.name);
  }
  const opts = pick(r, [
    [],
    ['--json'],
    ['--junit', '@DIR/out.xml'],
    ['--fail-on', 'never'],
    ['--json', '--allow-truncated'],
  ]);
  const asDir = r() < 0.2;
  return {
    name: `merge ${opts.join(' ')} ${asDir ? 'DIR of ' : ''}${parts.join(' + ')}`.replace(/\s+/g, ' '),
    args: ['merge', ...opts, ...(asDir ? ['@DIR'] : names)],
    files,
    // One line per report left out, at most one note about the directory and one about versions.
    check: (status, stderr) => commonCheck(status, stderr, n + 2),
  };
}

// --- directories --------------------------------------------------------------------------------

export function dirCase(r: Rand, captures: ReadonlyMap<string, Uint8Array>): SurfaceCase {
  const files = new Map<string, Uint8Array | string>();
  const corpus = [...captures.values()];
  const real = int(r, 3);
  for (let i = 0; i < real; i++) files.set(`d/c${i}.pcap`, pick(r, corpus));
  const many = pick(r, [0, 0, 10, 300, 1000]);
  const fifos = int(r, 3);
  const loops = int(r, 2);
  const dangling = int(r, 2);
  const odd = r() < 0.3;
  const selfLink = r() < 0.3;
  const setup = (dir: string): void => {
    const d = join(dir, 'd');
    mkdirSync(d, { recursive: true });
    // Files named as captures but empty or of junk: each one a capture that says what is wrong with it.
    for (let i = 0; i < many; i++) writeFileSync(join(d, `m${String(i).padStart(5, '0')}.pcap`), i % 2 ? '' : 'junk');
    for (let i = 0; i < fifos; i++) execFileSync('mkfifo', [join(d, `fifo${i}.pcap`)]);
    for (let i = 0; i < loops; i++) {
      symlinkSync(`loop${i}b.pcap`, join(d, `loop${i}a.pcap`));
      symlinkSync(`loop${i}a.pcap`, join(d, `loop${i}b.pcap`));
    }
    for (let i = 0; i < dangling; i++) symlinkSync(`gone${i}.pcap`, join(d, `dangling${i}.pcap`));
    if (selfLink) symlinkSync('.', join(d, 'self'));
    if (odd) writeFileSync(join(d, 'odd\u001b[2J\u0007\r.pcap'), '');
    mkdirSync(join(d, 'sub.pcap'), { recursive: true });
  };
  const opts = pick(r, [
    ['-q'],
    ['--json'],
    ['-q', '--jobs', String(pick(r, [1, 2, 1024]))],
    ['-q', '--junit', '@DIR/j.xml'],
  ]);
  const extra = r() < 0.3 ? ['@DIR/d/c0.pcap'] : [];
  const withCaptures = real > 0 || many > 0;
  return {
    name: `${opts.join(' ')} DIR: ${real} captures, ${many} junk, ${fifos} FIFOs, ${loops} loops, ${dangling} dangling${odd ? ', odd name' : ''}${selfLink ? ', self link' : ''}`,
    args: [...opts, '@DIR/d', ...(real > 0 ? extra : [])],
    files,
    setup,
    check: (status, stderr) => {
      const c = commonCheck(status, stderr, withCaptures ? 1 + many + 2 : 2);
      if (c !== null) return c;
      if ((fifos || loops || dangling || odd) && !/no regular file/.test(stderr) && status !== 2)
        return 'a FIFO, link loop or dangling link skipped without a note';
      return null;
    },
  };
}

// --- --mpa / --tuf / --ulp strings -------------------------------------------------------------

const SPEC_KEYS = ['flow', 'markers', 'crc', 'seqstart', 'start', 'key', 'interval', 'proto', 'FLOW', '', ' flow'];
const SPEC_VALUES = [
  'all',
  '0',
  '1',
  '99999999999999999999',
  'port:4420',
  'port:99999999',
  'port:-1',
  '10.0.0.1:40001',
  '10.0.0.2:4420',
  '[fd00::1]:4420',
  '[::1]:99999',
  'both',
  'none',
  'c2s',
  's2c',
  'on',
  'off',
  '4294967295',
  '4294967296',
  '4294967297:',
  ':4294967296',
  '1:2',
  ':',
  '::',
  '1a2b3c4d5e6f',
  '0x1a2b3c4d5e6f',
  'fffffffffffff',
  '8',
  '65536',
  '65537',
  '-1',
  '1e3',
  'NaN',
  'smb-direct',
  'rpc-rdma',
  'iser',
  'nvme',
  'x\u001b[2J\u0007',
  '\u009b',
  'é→',
  '',
];

function specString(r: Rand): string {
  if (r() < 0.05) return pick(r, ['x', '=', ',', ',,', 'flow=', '=all']).repeat(pick(r, [1, 1000, 30_000]));
  const parts: string[] = [];
  for (let i = int(r, 5) + 1; i > 0; i--) parts.push(`${pick(r, SPEC_KEYS)}=${pick(r, SPEC_VALUES)}`);
  // A key given twice, on purpose, now and then.
  if (r() < 0.2 && parts.length > 0) parts.push(parts[0]!.replace(/=.*/, `=${pick(r, SPEC_VALUES)}`));
  return parts.join(',');
}

export function specCase(r: Rand, input: string): SurfaceCase {
  const args: string[] = [];
  const opts = int(r, 3) + 1;
  for (let i = 0; i < opts; i++) args.push(pick(r, ['--mpa', '--tuf', '--ulp']), specString(r));
  const out = pick(r, [['-q'], ['--json'], ['-V'], ['--ndjson']]);
  const several = r() < 0.15;
  return {
    name: `${args.map((a) => a.slice(0, 60)).join(' ')} ${out.join(' ')}${several ? ' (two captures)' : ''}`,
    args: [...out, ...args, input, ...(several ? [input] : [])],
    files: new Map(),
    // A refusal is one line; warnings (a selector matching nothing) are one line per option.
    check: (status, stderr) => commonCheck(status, stderr, 1 + opts * (several ? 2 : 1)),
  };
}
