/**
 * Hostile display filters (-Y, --write-filter) and rules files (--rules) for the fuzzer: the shapes
 * that broke the tool once (flat chains of 16,000 `||`, deep nesting, backtracking `matches`
 * patterns, 5 MB rule ids, nesting 5,000 deep, /dev/zero) and random token soup around them.
 */
import type { Rand } from './mutate-capture.js';

const int = (r: Rand, n: number): number => Math.floor(r() * n);
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[int(r, xs.length)]!;

export const DEFAULT_FIELDS = [
  'frame',
  'frame.number',
  'frame.len',
  'ip.addr',
  'ip.src',
  'ipv6.addr',
  'tcp',
  'tcp.stream',
  'tcp.port',
  'tcp.srcport',
  'tcp.seq',
  'iwarp_mpa',
  'iwarp_mpa.ulpdu_length',
  'iwarp_mpa.crc',
  'iwarp_mpa.crc_status',
  'iwarp_mpa.marker_fpduptr',
  'iwarp_ddp',
  'iwarp_ddp.msn',
  'iwarp_ddp.stag',
  'iwarp_ddp.to',
  'iwarp_rdma',
  'iwarp_rdma.opcode',
  'finding',
  'finding.rule',
  'finding.message',
  'finding.severity',
];

const OPS = ['==', '!=', '>', '<', '>=', '<=', 'eq', 'ne', 'gt', 'lt', 'contains', 'matches', 'in', '~', '===', '!=='];
const JOIN = ['&&', '||', 'and', 'or', 'xor', '^^', 'not', '!'];
const PUNCT = ['(', ')', '{', '}', '[', ']', ':', '..', ',', '-', '"', "'", '\\', '$', '@', '#'];
const LITERALS = [
  '0',
  '1',
  '-1',
  '42',
  '0x',
  '0xffffffff',
  '0x1ffffffff',
  '4294967296',
  '1e309',
  '99999999999999999999999999',
  '3.14',
  'NaN',
  '"x"',
  '"abc',
  '""',
  '"\\x00"',
  '"\\u0000"',
  '"é"',
  '10.0.0.0/24',
  '10.0.0.1/33',
  '::1',
  'fd00::/129',
  '00:11:22',
  'true',
  'mpa.crc-mismatch',
];

/** Longest argument passed on a command line (Linux takes at most 128 KiB per argument). */
export const MAX_ARG = 120 * 1024;

export interface HostileFilter {
  name: string;
  text: string;
}

/** A filter expression that is large, deep, slow to match, malformed, or random. */
export function hostileFilter(r: Rand, fields: readonly string[]): HostileFilter {
  const f = () => pick(r, fields);
  switch (int(r, 10)) {
    case 0: {
      // Short terms: one argument can hold at most 128 KiB on Linux (MAX_ARG_STRLEN).
      const n = pick(r, [100, 1000, 16000, 20000]);
      const op = pick(r, ['||', '&&']);
      const term = pick(r, ['tcp', 'frame', 'iwarp_mpa', 'tcp.stream==1', 'ip']);
      return {
        name: `flat-chain-${n}`,
        text: Array.from({ length: n }, () => term)
          .join(op)
          .slice(0, MAX_ARG),
      };
    }
    case 1: {
      const n = pick(r, [100, 1000, 10000, 60000]);
      return { name: `parens-${n}`, text: '('.repeat(n) + `${f()} == 1` + ')'.repeat(n) };
    }
    case 2: {
      const n = pick(r, [100, 1000, 10000, 60000]);
      return { name: `not-chain-${n}`, text: (pick(r, ['!', 'not ', '! ']).repeat(n) + f()).slice(-MAX_ARG) };
    }
    case 3: {
      const pat = pick(r, [
        '^([a-z0-9 ]+ ?)*$',
        '(a|aa)*b',
        '(x+x+)+y',
        '^(\\w+\\s?)*$',
        '(.*)*z',
        '(a*)*(b*)*c',
        '\\1(a)',
        '(?<=a)b',
        '(?=x)',
        '[',
        '(',
        '*',
        '(?P<n>a)',
      ]);
      return {
        name: 'regex',
        text: `${pick(r, ['finding.message', 'finding.rule', 'frame', 'iwarp_mpa'])} matches "${pat}"`,
      };
    }
    case 4: {
      const n = pick(r, [1000, 100000, 120000]);
      return { name: `long-literal-${n}`, text: `finding.message contains "${'a'.repeat(n)}"` };
    }
    case 5:
      return {
        name: 'big-number',
        text: `${f()} ${pick(r, OPS)} ${pick(r, ['9'.repeat(400), '0x' + 'f'.repeat(300), '-' + '9'.repeat(50), '1e309', '1.5'])}`,
      };
    case 6: {
      const n = pick(r, [10, 1000, 20000]);
      return {
        name: `set-${n}`,
        text: `tcp.port in {${Array.from({ length: n }, (_, i) => `${i}${r() < 0.1 ? '..' + (i + 5) : ''}`).join(' ')}}`.slice(
          0,
          MAX_ARG,
        ),
      };
    }
    case 7:
      return {
        name: 'slice',
        text: `${f()}[${pick(r, ['0:4294967295', '-1', '-100000:', '1-0', '99999999999:1', ':', '0:0'])}] == ${pick(r, ['00', '00:11', '"a"'])}`,
      };
    case 8: {
      // random bytes, printable and not
      const n = 1 + int(r, 200);
      let s = '';
      for (let i = 0; i < n; i++) s += String.fromCharCode(r() < 0.8 ? 32 + int(r, 95) : 1 + int(r, 0x2fff)); // never NUL: no argv can carry it
      return { name: 'junk', text: s };
    }
    default: {
      const n = 1 + int(r, 60);
      const toks: string[] = [];
      for (let i = 0; i < n; i++) {
        const k = r();
        toks.push(
          k < 0.3
            ? f()
            : k < 0.5
              ? pick(r, OPS)
              : k < 0.65
                ? pick(r, JOIN)
                : k < 0.8
                  ? pick(r, PUNCT)
                  : pick(r, LITERALS),
        );
      }
      return { name: 'token-soup', text: toks.join(r() < 0.8 ? ' ' : '') };
    }
  }
}

export interface HostileRules {
  name: string;
  /** File content to write, or a path to pass as is (devices, directories, missing files). */
  content?: string | Uint8Array;
  path?: string;
}

/** A rules file that is huge, deep, of the wrong shape, not JSON, or not a file. */
export function hostileRules(r: Rand): HostileRules {
  switch (int(r, 9)) {
    case 0: {
      const d = pick(r, [100, 5000, 100000]);
      return r() < 0.5
        ? { name: `nested-array-${d}`, content: `{"rules":${'['.repeat(d)}${']'.repeat(d)}}` }
        : {
            name: `nested-object-${d}`,
            content: `{"rules":{"mpa.crc-mismatch":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}}`,
          };
    }
    case 1: {
      const n = pick(r, [10000, 1000000, 5000000]);
      return { name: `long-id-${n}`, content: `{"rules":{"${pick(r, ['a', 'mpa.', '*'])}${'x'.repeat(n)}":"off"}}` };
    }
    case 2: {
      const n = pick(r, [100000, 2000000]);
      return {
        name: `many-ids-${n}`,
        content: JSON.stringify({
          rules: Object.fromEntries(Array.from({ length: n / 20 }, (_, i) => [`mpa.rule-${i}`, 'off'])),
        }),
      };
    }
    case 3:
      return { name: 'padded', content: ' '.repeat(pick(r, [1000, 3000000])) + '{"rules":{}}' };
    case 4:
      return {
        name: 'device-or-dir',
        path: pick(r, ['/dev/zero', '/dev/urandom', '/dev/null', '/', '/nonexistent/rules.json', '/proc/self/mem']),
      };
    case 5: {
      const b = new Uint8Array(1 + int(r, 4096));
      for (let i = 0; i < b.length; i++) b[i] = int(r, 256);
      return { name: 'binary', content: b };
    }
    case 6: {
      const glob = pick(r, ['*', '**', 'mpa.*', '*'.repeat(1000) + 'a', 'mpa.' + '*a'.repeat(500), '', '.', '\u0000']);
      return {
        name: 'glob',
        content: JSON.stringify({ rules: { [glob]: pick(r, ['off', 'error', 'info', 'warning', 'bogus', '']) } }),
      };
    }
    case 7:
      return {
        name: 'wrong-types',
        content: pick(r, [
          'null',
          '[]',
          '"x"',
          '5',
          '{"rules":5}',
          '{"rules":null}',
          '{"rules":{"mpa.crc-mismatch":123}}',
          '{"rules":{"mpa.crc-mismatch":{"x":1}}}',
          '{"thresholds":{"alignment.minFpduAlignedPercent":"abc"}}',
          '{"thresholds":{"alignment.minFpduAlignedPercent":1e309}}',
          '{"thresholds":{"capture.minMpaFlows":-1}}',
          '{"thresholds":{"nope":1}}',
          '{"__proto__":{"polluted":1}}',
          '{"rules":{"__proto__":"off"}}',
          '{"rules":{"constructor":"off"}}',
          '{"unknown":1}',
          '{"rules":{}',
          '{"rules":{}}}',
          '\ufeff{"rules":{}}',
        ]),
      };
    default: {
      // a valid file with random severities
      const ids = [
        'mpa.crc-mismatch',
        'mpa.pad-not-zero',
        'ddp.*',
        'tcp.*',
        'mpa.*',
        'net.link-malformed',
        'capture.truncated',
        'mpa.lock-on-budget',
      ];
      const rules: Record<string, string> = {};
      for (let k = 0; k < 1 + int(r, 5); k++) rules[pick(r, ids)] = pick(r, ['off', 'error', 'warning', 'info']);
      return {
        name: 'valid',
        content: JSON.stringify({
          rules,
          thresholds: { 'alignment.minFpduAlignedPercent': int(r, 101), 'capture.minMpaFlows': int(r, 3) },
        }),
      };
    }
  }
}
