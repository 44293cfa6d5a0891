import { describe, expect, it } from 'vitest';
import type { FieldValue } from '../../src/vocabulary/fields.js';
import { compileFilter, FilterError, formatFilterError } from '../../src/report/filter/filter.js';
import { tokenize, type Token } from '../../src/report/filter/lexer.js';
import { formatExpr, parseFilter } from '../../src/report/filter/parser.js';

const FIELDS = new Set([
  'iwarp_mpa',
  'iwarp_mpa.crc_status',
  'iwarp_mpa.ulpdu_length',
  'iwarp_mpa.marker_fpduptr',
  'iwarp_mpa.private_data',
  'iwarp_mpa.m',
  'iwarp_ddp.msn',
  'finding.rule',
  'finding.from',
  'tcp.stream',
  'tcp.flags',
  'tcp.srcport',
  'tcp.dstport',
  'mac-lte.x',
  '9p',
]);
const known = (f: string): boolean => FIELDS.has(f);

type Rec = Readonly<Record<string, readonly FieldValue[]>>;

function run(filter: string, rec: Rec): boolean {
  return compileFilter(filter, known).matches((f) => rec[f]);
}

function ast(filter: string): string {
  return formatExpr(parseFilter(filter, known).expr);
}

function kinds(filter: string): string[] {
  return tokenize(filter).map((t) => (t.kind === 'cmp' ? `cmp:${t.op}` : t.kind));
}

/** Compiles, expecting a FilterError; returns it for its message and column. */
function fail(filter: string): FilterError {
  try {
    compileFilter(filter, known);
  } catch (e) {
    if (e instanceof FilterError) return e;
    throw new Error(`expected FilterError for ${JSON.stringify(filter)}, got ${String(e)}`);
  }
  throw new Error(`expected ${JSON.stringify(filter)} to fail`);
}

function tok<K extends Token['kind']>(filter: string, i: number, kind: K): Extract<Token, { kind: K }> {
  const t = tokenize(filter)[i]!;
  expect(t.kind).toBe(kind);
  return t as Extract<Token, { kind: K }>;
}

describe('lexer', () => {
  it('reads every C-like operator, longest first', () => {
    expect(kinds('== != === !== > >= < <= && || ^^ ! ~ & ( ) { } , ..')).toEqual([
      'cmp:any_eq',
      'cmp:all_ne',
      'cmp:all_eq',
      'cmp:any_ne',
      'cmp:gt',
      'cmp:ge',
      'cmp:lt',
      'cmp:le',
      'and',
      'or',
      'xor',
      'not',
      'matches',
      'bitand',
      'lparen',
      'rparen',
      'lbrace',
      'rbrace',
      'comma',
      'dotdot',
      'eof',
    ]);
  });

  it('reads every word operator (lower case only, as Wireshark)', () => {
    expect(
      kinds('eq ne gt ge lt le any_eq all_ne all_eq any_ne and or xor not contains matches in bitand bitwise_and'),
    ).toEqual([
      'cmp:any_eq',
      'cmp:all_ne',
      'cmp:gt',
      'cmp:ge',
      'cmp:lt',
      'cmp:le',
      'cmp:any_eq',
      'cmp:all_ne',
      'cmp:all_eq',
      'cmp:any_ne',
      'and',
      'or',
      'xor',
      'not',
      'contains',
      'matches',
      'in',
      'bitand',
      'bitand',
      'eof',
    ]);
    expect(kinds('AND')).toEqual(['ident', 'eof']);
  });

  it('needs no spaces around symbols', () => {
    expect(kinds('tcp.stream==1&&!(iwarp_mpa)')).toEqual([
      'ident',
      'cmp:any_eq',
      'int',
      'and',
      'not',
      'lparen',
      'ident',
      'rparen',
      'eof',
    ]);
    expect(kinds('a!=1')).toEqual(['ident', 'cmp:all_ne', 'int', 'eof']);
  });

  it('reads field names with dots, underscores and hyphens', () => {
    expect(tok('iwarp_mpa.crc_status', 0, 'ident').name).toBe('iwarp_mpa.crc_status');
    expect(tok('mac-lte.x', 0, 'ident').name).toBe('mac-lte.x');
    expect(tok('_ws.expert', 0, 'ident').name).toBe('_ws.expert');
  });

  it('records source positions', () => {
    const ts = tokenize('  tcp.stream  >=  0x10');
    expect(ts.map((t) => [t.start, t.end, t.text])).toEqual([
      [2, 12, 'tcp.stream'],
      [14, 16, '>='],
      [18, 22, '0x10'],
      [22, 22, ''],
    ]);
  });

  it('reads integers in decimal, hex, octal and binary, of any size', () => {
    expect(tok('1234', 0, 'int').value).toBe(1234n);
    expect(tok('0x1F', 0, 'int').value).toBe(31n);
    expect(tok('0XfF', 0, 'int').value).toBe(255n);
    expect(tok('010', 0, 'int').value).toBe(8n); // leading 0 is octal, as in Wireshark
    expect(tok('0', 0, 'int').value).toBe(0n);
    expect(tok('0b101', 0, 'int').value).toBe(5n);
    expect(tok('-7', 0, 'int').value).toBe(-7n);
    expect(tok('0x1ffffffffffffffffffff', 0, 'int').value).toBe(0x1ffffffffffffffffffffn);
    expect(tok('123456789012345678901234567890', 0, 'int').value).toBe(123456789012345678901234567890n);
  });

  it('reads floats', () => {
    expect(tok('1.5', 0, 'float').value).toBe(1.5);
    expect(tok('2e3', 0, 'float').value).toBe(2000);
  });

  it('reads byte strings', () => {
    expect(Array.from(tok('aa:bb:0c', 0, 'bytes').value)).toEqual([0xaa, 0xbb, 0x0c]);
    expect(Array.from(tok('00:01', 0, 'bytes').value)).toEqual([0, 1]);
    expect(Array.from(tok('ff:', 0, 'bytes').value)).toEqual([0xff]);
  });

  it('splits a range at ".."', () => {
    expect(kinds('{1..3}')).toEqual(['lbrace', 'int', 'dotdot', 'int', 'rbrace', 'eof']);
    expect(kinds('1.5..2.5')).toEqual(['float', 'dotdot', 'float', 'eof']);
  });

  it('reads strings with C escapes', () => {
    const t = tok(String.raw`"a\"b\\c\n\t\x41\101\u00e9\U0001F600 é"`, 0, 'string');
    expect(t.value).toBe('a"b\\c\n\tAAé😀 é');
    expect(t.text).toBe(String.raw`"a\"b\\c\n\t\x41\101\u00e9\U0001F600 é"`);
    expect(tok('""', 0, 'string').value).toBe('');
  });

  it('keeps the exact octets of \\x escapes', () => {
    const t = tok(String.raw`"\xff\x00"`, 0, 'string');
    expect(Array.from(t.bytes)).toEqual([0xff, 0x00]);
  });

  it('reads raw strings, keeping backslashes', () => {
    expect(tok(String.raw`r"a\d+\"x"`, 0, 'string').value).toBe(String.raw`a\d+\"x`);
    expect(tok(String.raw`R"\\"`, 0, 'string').value).toBe(String.raw`\\`);
  });

  it('reports lexical errors with their column', () => {
    const cases: Array<[string, number, string]> = [
      ['a == "abc', 6, 'The final quote was missing from a quoted string.'],
      ['a == "abc\\', 6, 'The final quote was missing from a quoted string.'],
      ['a == r"abc', 6, 'The final quote was missing from a quoted string.'],
      ['a == "x\\qy"', 8, '\\q is not a valid character escape sequence'],
      ['a == "\\777"', 7, '\\777 is larger than 255.'],
      ['a == "\\u0041"', 7, '\\u0041 is not a valid universal character name'],
      ['a = 1', 3, '"=" was unexpected in this context; did you mean "=="?'],
      ['a | b', 3, '"|" was unexpected in this context; did you mean "||"?'],
      ['a == @', 6, '"@" was unexpected in this context.'],
      [
        'a == aa:b',
        6,
        '"aa:b" is not a valid byte string; write bytes as pairs of hex digits separated by colons, e.g. aa:bb:cc.',
      ],
      ['a\u0001', 2, 'Non-printable ASCII characters may only appear inside double-quotes.'],
    ];
    for (const [text, column, message] of cases) {
      let err: unknown;
      try {
        tokenize(text);
      } catch (e) {
        err = e;
      }
      expect(err, text).toBeInstanceOf(FilterError);
      expect((err as FilterError).message, text).toBe(message);
      expect((err as FilterError).column, text).toBe(column);
    }
  });
});

describe('parser', () => {
  it('parses every comparison operator and its word form', () => {
    const ops: Array<[string, string, string]> = [
      ['==', 'eq', 'any_eq'],
      ['!=', 'ne', 'all_ne'],
      ['===', 'all_eq', 'all_eq'],
      ['!==', 'any_ne', 'any_ne'],
      ['<', 'lt', 'lt'],
      ['>', 'gt', 'gt'],
      ['<=', 'le', 'le'],
      ['>=', 'ge', 'ge'],
    ];
    for (const [sym, word, op] of ops) {
      expect(ast(`tcp.stream ${sym} 1`)).toBe(`(${op} tcp.stream 1)`);
      expect(ast(`tcp.stream ${word} 1`)).toBe(`(${op} tcp.stream 1)`);
    }
    expect(ast('tcp.stream any_eq 1')).toBe('(any_eq tcp.stream 1)');
    expect(ast('tcp.stream all_ne 1')).toBe('(all_ne tcp.stream 1)');
  });

  it('parses logical operators and their word forms', () => {
    expect(ast('tcp.stream && iwarp_mpa')).toBe('(and tcp.stream iwarp_mpa)');
    expect(ast('tcp.stream and iwarp_mpa')).toBe('(and tcp.stream iwarp_mpa)');
    expect(ast('tcp.stream || iwarp_mpa')).toBe('(or tcp.stream iwarp_mpa)');
    expect(ast('tcp.stream or iwarp_mpa')).toBe('(or tcp.stream iwarp_mpa)');
    expect(ast('tcp.stream ^^ iwarp_mpa')).toBe('(xor tcp.stream iwarp_mpa)');
    expect(ast('tcp.stream xor iwarp_mpa')).toBe('(xor tcp.stream iwarp_mpa)');
    expect(ast('!iwarp_mpa')).toBe('(not iwarp_mpa)');
    expect(ast('not iwarp_mpa')).toBe('(not iwarp_mpa)');
    expect(ast('!!iwarp_mpa')).toBe('(not (not iwarp_mpa))');
  });

  it('binds not tighter than and, and tighter than or', () => {
    expect(ast('tcp.stream || iwarp_mpa && tcp.flags')).toBe('(or tcp.stream (and iwarp_mpa tcp.flags))');
    expect(ast('tcp.stream && iwarp_mpa || tcp.flags')).toBe('(or (and tcp.stream iwarp_mpa) tcp.flags)');
    expect(ast('!tcp.stream && iwarp_mpa')).toBe('(and (not tcp.stream) iwarp_mpa)');
    expect(ast('not tcp.stream or iwarp_mpa')).toBe('(or (not tcp.stream) iwarp_mpa)');
    expect(ast('!tcp.stream == 1')).toBe('(not (any_eq tcp.stream 1))');
    expect(ast('tcp.stream and iwarp_mpa and tcp.flags')).toBe('(and tcp.stream iwarp_mpa tcp.flags)');
    expect(ast('tcp.stream or iwarp_mpa xor tcp.flags')).toBe('(xor (or tcp.stream iwarp_mpa) tcp.flags)');
  });

  it('lets parentheses override precedence', () => {
    expect(ast('(tcp.stream || iwarp_mpa) && tcp.flags')).toBe('(and (or tcp.stream iwarp_mpa) tcp.flags)');
    expect(ast('!(tcp.stream || iwarp_mpa)')).toBe('(not (or tcp.stream iwarp_mpa))');
    expect(ast('((tcp.stream == 1))')).toBe('(any_eq tcp.stream 1)');
  });

  it('reads a bare field as a presence test', () => {
    expect(parseFilter('iwarp_mpa.crc_status', known).expr).toEqual({
      kind: 'exists',
      field: { kind: 'field', name: 'iwarp_mpa.crc_status', mask: null },
    });
  });

  it('parses literals of every kind on the right', () => {
    expect(ast('tcp.stream == 0x10')).toBe('(any_eq tcp.stream 16)');
    expect(ast('tcp.stream == 99999999999999999999999')).toBe('(any_eq tcp.stream 99999999999999999999999)');
    expect(ast('tcp.stream == 1.25')).toBe('(any_eq tcp.stream 1.25)');
    expect(ast('finding.rule == "mpa.crc-mismatch"')).toBe('(any_eq finding.rule "mpa.crc-mismatch")');
    expect(ast('iwarp_mpa.private_data == 01:02:ff')).toBe('(any_eq iwarp_mpa.private_data 01:02:ff)');
    expect(ast('iwarp_mpa.m == true')).toBe('(any_eq iwarp_mpa.m true)');
    expect(ast('iwarp_mpa.m == False')).toBe('(any_eq iwarp_mpa.m false)');
  });

  it('compares a field with another field', () => {
    const r = parseFilter('tcp.srcport == tcp.dstport', known);
    expect(formatExpr(r.expr)).toBe('(any_eq tcp.srcport tcp.dstport)');
    expect(r.fields).toEqual(['tcp.srcport', 'tcp.dstport']);
  });

  it('parses contains, matches, in and not in', () => {
    expect(ast('finding.rule contains "crc"')).toBe('(contains finding.rule "crc")');
    expect(ast('iwarp_mpa.private_data contains aa:bb')).toBe('(contains iwarp_mpa.private_data aa:bb)');
    expect(ast('finding.rule matches "^mpa\\\\."')).toBe('(matches finding.rule "^mpa\\\\.")');
    expect(ast('finding.rule ~ "x"')).toBe('(matches finding.rule "x")');
    expect(ast('tcp.stream in {1, 2 5..9}')).toBe('(in tcp.stream {1 2 5..9})');
    expect(ast('tcp.stream not in {1}')).toBe('(not (in tcp.stream {1}))');
    expect(ast('tcp.stream !in {1}')).toBe('(not (in tcp.stream {1}))');
  });

  it('parses bitwise and', () => {
    expect(ast('tcp.flags & 0x02')).toBe('(& tcp.flags 0x2)');
    expect(parseFilter('tcp.flags & 0x02', known).expr.kind).toBe('nonzero');
    expect(ast('tcp.flags bitand 0x12 == 0x12')).toBe('(any_eq (& tcp.flags 0x12) 18)');
    expect(ast('tcp.flags & 0xf0 & 0x30')).toBe('(& tcp.flags 0x30)');
  });

  it('lists every referenced field once, in order', () => {
    const r = parseFilter('tcp.stream == 1 && (iwarp_mpa || tcp.stream > 2) && !finding.rule contains "x"', known);
    expect(r.fields).toEqual(['tcp.stream', 'iwarp_mpa', 'finding.rule']);
    expect(compileFilter('iwarp_mpa', known).fields).toEqual(['iwarp_mpa']);
  });

  it('accepts a field whose name starts with a digit when it exists', () => {
    expect(ast('9p')).toBe('9p');
  });
});

describe('evaluation', () => {
  const rec: Rec = {
    iwarp_mpa: [true],
    'tcp.stream': [3],
    'tcp.flags': [0x12],
    'tcp.srcport': [40001],
    'tcp.dstport': [4420],
    'iwarp_mpa.ulpdu_length': [1024n],
    'iwarp_mpa.marker_fpduptr': [10, 20],
    'iwarp_mpa.m': [true],
    'iwarp_mpa.private_data': [Uint8Array.from([0x01, 0xaa, 0xbb, 0xcc, 0xff])],
    'finding.rule': ['mpa.crc-mismatch'],
    'finding.from': ['10.0.0.1:40001'],
  };
  const yes = (f: string): void => expect(run(f, rec), f).toBe(true);
  const no = (f: string): void => expect(run(f, rec), f).toBe(false);

  it('compares numbers with every operator and word form', () => {
    yes('tcp.stream == 3');
    yes('tcp.stream eq 3');
    no('tcp.stream == 4');
    yes('tcp.stream != 4');
    yes('tcp.stream ne 4');
    no('tcp.stream != 3');
    yes('tcp.stream < 4');
    yes('tcp.stream lt 4');
    no('tcp.stream < 3');
    yes('tcp.stream > 2');
    yes('tcp.stream gt 2');
    no('tcp.stream > 3');
    yes('tcp.stream <= 3');
    yes('tcp.stream le 3');
    no('tcp.stream <= 2');
    yes('tcp.stream >= 3');
    yes('tcp.stream ge 3');
    no('tcp.stream >= 4');
    yes('tcp.stream == 0x3');
    yes('tcp.stream == 03');
    yes('tcp.stream == 0b11');
    yes('tcp.stream > 2.5');
    no('tcp.stream == 3.5');
    yes('tcp.stream > -1');
  });

  it('compares number and bigint values exactly, at any size', () => {
    yes('iwarp_mpa.ulpdu_length == 1024');
    yes('iwarp_mpa.ulpdu_length == 0x400');
    const big: Rec = { 'iwarp_ddp.msn': [2n ** 64n + 1n] };
    expect(run('iwarp_ddp.msn == 18446744073709551617', big)).toBe(true);
    expect(run('iwarp_ddp.msn == 0x10000000000000001', big)).toBe(true);
    expect(run('iwarp_ddp.msn > 0xffffffffffffffff', big)).toBe(true);
    expect(run('iwarp_ddp.msn == 18446744073709551616', big)).toBe(false);
    // A number field against a bigint literal beyond 2^53 must not round to equal.
    const n: Rec = { 'iwarp_ddp.msn': [2 ** 53] };
    expect(run('iwarp_ddp.msn == 9007199254740993', n)).toBe(false);
    expect(run('iwarp_ddp.msn == 9007199254740992', n)).toBe(true);
    expect(run('iwarp_ddp.msn < 9007199254740993', n)).toBe(true);
  });

  it('compares booleans with true/false and 1/0', () => {
    yes('iwarp_mpa.m == true');
    yes('iwarp_mpa.m == TRUE');
    yes('iwarp_mpa.m == 1');
    no('iwarp_mpa.m == false');
    no('iwarp_mpa.m == 0');
    yes('iwarp_mpa.m != false');
    yes('iwarp_mpa.m != 0');
    expect(run('iwarp_mpa.m == false', { 'iwarp_mpa.m': [false] })).toBe(true);
    // Presence is not truth: a false flag is present (as in Wireshark).
    expect(run('iwarp_mpa.m', { 'iwarp_mpa.m': [false] })).toBe(true);
  });

  it('compares strings', () => {
    yes('finding.rule == "mpa.crc-mismatch"');
    no('finding.rule == "mpa.crc"');
    yes('finding.rule != "mpa.crc"');
    no('finding.rule != "mpa.crc-mismatch"');
    yes('finding.rule > "mpa.a"');
    yes('finding.rule < "mpa.d"');
    no('finding.rule < "mpa.c"');
    yes('finding.rule contains "crc"');
    no('finding.rule contains "CRC"');
    yes('finding.from == "10.0.0.1:40001"');
  });

  it('orders strings by code point (UTF-8 order)', () => {
    // U+FF5E sorts before U+1F600 in UTF-8, though not in UTF-16 code units.
    expect(run('finding.rule < "\\U0001F600"', { 'finding.rule': ['\uff5e'] })).toBe(true);
  });

  it('compares and searches bytes', () => {
    yes('iwarp_mpa.private_data == 01:aa:bb:cc:ff');
    no('iwarp_mpa.private_data == 01:aa:bb:cc');
    yes('iwarp_mpa.private_data != 01:aa:bb:cc');
    yes('iwarp_mpa.private_data > 01:aa');
    yes('iwarp_mpa.private_data contains aa:bb:cc');
    no('iwarp_mpa.private_data contains bb:aa');
    yes('iwarp_mpa.private_data contains ff:');
    yes('iwarp_mpa.private_data contains "\\xaa\\xbb"');
    const text: Rec = { 'iwarp_mpa.private_data': [new TextEncoder().encode('hello NVMe')] };
    expect(run('iwarp_mpa.private_data contains "NVMe"', text)).toBe(true);
    expect(run('iwarp_mpa.private_data == "hello NVMe"', text)).toBe(true);
  });

  it('matches regular expressions, case-insensitively unless (?-i)', () => {
    yes('finding.rule matches "^MPA\\\\.crc"');
    yes('finding.rule ~ "mismatch$"');
    no('finding.rule matches "(?-i)^MPA"');
    yes('finding.rule matches "(?-i)^mpa"');
    yes('finding.rule matches r"^mpa\\.crc"');
    no('tcp.stream matches "3"');
  });

  it('tests set membership and ranges', () => {
    yes('tcp.stream in {1 2 3}');
    yes('tcp.stream in {1, 3}');
    no('tcp.stream in {1, 2}');
    yes('tcp.stream in {0..2, 3..5}');
    yes('tcp.stream in {2.5..3.5}');
    no('tcp.stream in {4..9}');
    yes('finding.rule in {"x" "mpa.crc-mismatch"}');
    yes('tcp.stream not in {1, 2}');
    no('tcp.stream not in {3}');
  });

  it('applies bitwise masks', () => {
    yes('tcp.flags & 0x02');
    no('tcp.flags & 0x01');
    yes('tcp.flags & 0x12 == 0x12');
    no('tcp.flags & 0x13 == 0x13');
    yes('!(tcp.flags & 0x04)');
  });

  it('compares a field with a field', () => {
    yes('tcp.srcport > tcp.dstport');
    no('tcp.srcport == tcp.dstport');
    yes('tcp.srcport != tcp.dstport');
    expect(run('tcp.srcport == tcp.dstport', { 'tcp.srcport': [1, 2], 'tcp.dstport': [2, 9] })).toBe(true);
    expect(run('tcp.srcport == tcp.dstport', { 'tcp.srcport': [1] })).toBe(false);
  });

  it('combines with and, or, xor and not', () => {
    yes('tcp.stream == 3 && iwarp_mpa');
    no('tcp.stream == 3 && !iwarp_mpa');
    yes('tcp.stream == 9 || iwarp_mpa');
    no('tcp.stream == 9 or tcp.stream == 8');
    yes('tcp.stream == 3 xor tcp.stream == 9');
    no('tcp.stream == 3 ^^ iwarp_mpa');
    yes('not (tcp.stream == 9 or tcp.stream == 8)');
    // and binds tighter: true || (false && false)
    yes('tcp.stream == 3 || tcp.stream == 9 && tcp.stream == 8');
    no('(tcp.stream == 3 || tcp.stream == 9) && tcp.stream == 8');
  });

  describe('multi-valued fields (markers at 10 and 20)', () => {
    const m = 'iwarp_mpa.marker_fpduptr';
    it('== is true when any value equals', () => {
      yes(`${m} == 10`);
      yes(`${m} == 20`);
      no(`${m} == 30`);
    });
    it('!= is true when no value equals (Wireshark ≥ 3.6)', () => {
      no(`${m} != 10`);
      no(`${m} != 20`);
      yes(`${m} != 30`);
      expect(run(`${m} != 10`, rec)).toBe(run(`!(${m} == 10)`, rec));
    });
    it('=== needs all values equal, !== any value different', () => {
      no(`${m} === 10`);
      yes(`${m} !== 10`);
      expect(run(`${m} === 7`, { [m]: [7, 7] })).toBe(true);
      expect(run(`${m} !== 7`, { [m]: [7, 7] })).toBe(false);
    });
    it('ordering is true when any value satisfies it', () => {
      yes(`${m} > 15`);
      yes(`${m} < 15`);
      no(`${m} > 20`);
      no(`${m} < 10`);
      yes(`${m} >= 20`);
      yes(`${m} <= 10`);
      yes(`${m} > 15 && ${m} < 15`);
    });
  });

  describe('absent fields', () => {
    const empty: Rec = { 'tcp.stream': [] };
    for (const r of [{}, empty] as Rec[]) {
      const label = Object.keys(r).length ? 'empty array' : 'undefined';
      it(`make comparisons false, != included (${label})`, () => {
        for (const f of [
          'tcp.stream == 1',
          'tcp.stream != 1',
          'tcp.stream === 1',
          'tcp.stream !== 1',
          'tcp.stream > 0',
          'tcp.stream < 9',
          'tcp.stream >= 0',
          'tcp.stream <= 9',
          'tcp.stream contains "x"',
          'tcp.stream matches "."',
          'tcp.stream in {1}',
          'tcp.stream & 1',
          'tcp.stream',
          'tcp.stream == tcp.stream',
        ]) {
          expect(run(f, r), f).toBe(false);
        }
        expect(run('!tcp.stream', r)).toBe(true);
        expect(run('!(tcp.stream == 1)', r)).toBe(true);
        expect(run('tcp.stream not in {1}', r)).toBe(true);
      });
    }
  });

  it('treats mismatched kinds as false, never as a crash', () => {
    no('finding.rule == 1');
    no('finding.rule != 1');
    no('finding.rule > 1');
    no('tcp.stream == "3"');
    no('tcp.stream != "3"');
    no('tcp.stream contains "3"');
    no('tcp.stream == 01:02');
    no('finding.rule == true');
    no('iwarp_mpa.private_data == 1');
    no('finding.rule & 0x1');
    no('tcp.stream in {"3"}');
    no('finding.rule in {1..5}');
    expect(run('tcp.stream == 1', { 'tcp.stream': [Number.NaN] })).toBe(false);
  });

  it('compiles once and runs many times', () => {
    const f = compileFilter('tcp.stream == 1', known);
    expect(f.text).toBe('tcp.stream == 1');
    expect(f.matches(() => [1])).toBe(true);
    expect(f.matches(() => [2])).toBe(false);
    expect(f.matches(() => undefined)).toBe(false);
  });
});

describe('errors', () => {
  const cases: Array<[string, string, number, number?]> = [
    // unknown field: at the field's column
    ['foo.bar == 1', '"foo.bar" is neither a field nor a protocol name.', 1, 7],
    ['tcp.stream == 1 && foo.bar', '"foo.bar" is neither a field nor a protocol name.', 20, 7],
    ['!(nope)', '"nope" is neither a field nor a protocol name.', 3],
    ['10.0.0.1 == 1', '"10.0.0.1" is neither a field nor a protocol name.', 1],
    // bare words on the right
    [
      'finding.rule == mpa',
      '"mpa" is neither a field nor a value; to compare with the string, write it in double quotes: "mpa".',
      17,
      3,
    ],
    [
      'iwarp_mpa.private_data == deadbeef',
      '"deadbeef" is neither a field nor a value; to compare with the string, write it in double quotes: "deadbeef", or for bytes: de:ad:be:ef.',
      27,
    ],
    [
      'finding.from == 10.0.0.1',
      '"10.0.0.1" is not a valid number; to compare with the string, write it in double quotes: "10.0.0.1".',
      17,
    ],
    [
      'tcp.stream == 08',
      '"08" is not a valid number; to compare with the string, write it in double quotes: "08".',
      15,
    ],
    // unterminated string: at the opening quote
    ['finding.rule == "mpa.crc', 'The final quote was missing from a quoted string.', 17, 8],
    // unexpected tokens
    ['tcp.stream == 1 2', '"2" was unexpected in this context.', 17],
    ['tcp.stream == == 1', '"==" was unexpected in this context.', 15, 2],
    ['tcp.stream 1', '"1" was unexpected in this context.', 12],
    ['tcp.stream == 1 && 2', '"2" was unexpected in this context; a test starts with a field name.', 20],
    ['"x" == finding.rule', '"x" was unexpected in this context; a test starts with a field name.', 1, 3],
    ['tcp.stream == 1 AND iwarp_mpa', '"AND" was unexpected in this context; did you mean "and"?', 17, 3],
    ['tcp.stream not 1', '"not" was unexpected in this context.', 12],
    ['tcp.stream == 1 == 1', '"==" was unexpected in this context.', 17],
    ['tcp.flags & "x"', '"&" needs an integer mask on its right, not "x".', 13],
    ['finding.rule matches 1', '"matches" needs a quoted regular expression on its right, not "1".', 22],
    ['finding.rule matches "("', '"(" is not a valid regular expression: missing closing ): `(`', 22, 3],
    ['tcp.stream in 1', '"in" needs a set such as {1, 2, 5..9} on its right, not "1".', 15],
    ['tcp.stream in {}', 'A set needs at least one value.', 16],
    ['tcp.stream in {"a".."b"}', 'A range in a set needs numbers at both ends.', 16, 8],
    // missing right operand: at the operator that needs it
    ['tcp.stream ==', '"==" needs a value on its right.', 12, 2],
    ['tcp.stream eq  ', '"eq" needs a value on its right.', 12, 2],
    ['finding.rule contains', '"contains" needs a value on its right.', 14, 8],
    ['tcp.stream == 1 &&', '"&&" needs an expression on its right.', 17, 2],
    ['tcp.stream == 1 or', '"or" needs an expression on its right.', 17, 2],
    ['!', '"!" needs an expression on its right.', 1],
    ['tcp.flags &', '"&" needs an integer mask on its right.', 11],
    ['finding.rule matches', '"matches" needs a quoted regular expression on its right.', 14, 7],
    ['tcp.stream in', '"in" needs a set such as {1, 2, 5..9} on its right.', 12, 2],
    ['tcp.stream in {1..', '".." needs the end of the range on its right.', 17, 2],
    // unbalanced parentheses and braces
    ['(tcp.stream == 1', '"(" has no matching ")".', 1],
    ['((tcp.stream == 1)', '"(" has no matching ")".', 1],
    ['(', '"(" has no matching ")".', 1],
    ['tcp.stream == 1)', '")" has no matching "(".', 16],
    ['(iwarp_mpa))', '")" has no matching "(".', 12],
    ['()', '")" was unexpected in this context.', 2],
    ['tcp.stream in {1, 2', '"{" has no matching "}".', 15],
    // empty
    ['', 'The filter expression is empty.', 1],
    ['   ', 'The filter expression is empty.', 1, 3],
  ];
  for (const [text, message, column, length] of cases) {
    it(`${JSON.stringify(text)} → column ${column}`, () => {
      const e = fail(text);
      expect(e.message).toBe(message);
      expect(e.column).toBe(column);
      if (length !== undefined) expect(e.length).toBe(length);
    });
  }

  it('counts columns in code points', () => {
    const e = fail('finding.rule == "😀😀" && nope');
    expect(e.column).toBe(25);
  });

  it('refuses absurd nesting with a FilterError, not a stack overflow', () => {
    expect(fail('('.repeat(100_000)).message).toBe('The filter expression is nested too deeply.');
    expect(fail('!'.repeat(100_000) + 'iwarp_mpa').message).toBe('The filter expression is nested too deeply.');
    expect(ast('('.repeat(100) + 'iwarp_mpa' + ')'.repeat(100))).toBe('iwarp_mpa');
  });

  it('throws nothing but FilterError on arbitrary input', () => {
    // Seeded generator: the same random filters every run.
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const parts = [
      'tcp.stream',
      'iwarp_mpa',
      'nope',
      '==',
      '!=',
      '<',
      '&&',
      '||',
      '!',
      'not',
      'and',
      '(',
      ')',
      '{',
      '}',
      '..',
      ',',
      '"a',
      '"x"',
      '\\',
      '1',
      '0x',
      '0xff',
      'aa:bb',
      'aa:',
      ':',
      '&',
      'in',
      'contains',
      'matches',
      '~',
      'true',
      ' ',
      '\t',
      'é',
      '\u0000',
      '=',
      '|',
      'r"',
    ];
    for (let i = 0; i < 3000; i++) {
      let f = '';
      const n = rnd(8);
      for (let j = 0; j < n; j++) f += parts[rnd(parts.length)]! + (rnd(2) ? ' ' : '');
      try {
        compileFilter(f, known).matches(() => [1]);
      } catch (e) {
        expect(e, f).toBeInstanceOf(FilterError);
        const fe = e as FilterError;
        expect(fe.column, f).toBeGreaterThanOrEqual(1);
        expect(fe.column, f).toBeLessThanOrEqual(f.length + 1);
      }
    }
  });
});

describe('formatFilterError', () => {
  it('shows the message, the filter and a caret under the problem', () => {
    const text = 'tcp.stream == 1 && foo.bar';
    expect(formatFilterError(text, fail(text))).toBe(
      [
        '"foo.bar" is neither a field nor a protocol name.',
        '    tcp.stream == 1 && foo.bar',
        '                       ^~~~~~~',
      ].join('\n'),
    );
  });

  it('puts a single caret under a one-character token', () => {
    const text = 'tcp.stream == 1)';
    expect(formatFilterError(text, fail(text)).split('\n')[2]).toBe('                   ^');
  });

  it('underlines an unterminated string to the end', () => {
    const text = 'finding.rule == "abc';
    expect(formatFilterError(text, fail(text)).split('\n')[2]).toBe('                    ^~~~');
  });

  it('keeps the caret aligned when the filter holds tabs or control characters', () => {
    const text = 'tcp.stream\t==\t1 )';
    const lines = formatFilterError(text, fail(text)).split('\n');
    expect(lines[1]).toBe('    tcp.stream == 1 )');
    expect(lines[2]).toBe('                    ^');
  });

  it('handles the empty filter', () => {
    expect(formatFilterError('', fail(''))).toBe('The filter expression is empty.\n    \n    ^');
  });

  it('clamps a column past the end', () => {
    expect(formatFilterError('abc', new FilterError('x', 99, 5))).toBe('x\n    abc\n       ^');
  });
});
