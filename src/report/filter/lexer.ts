/**
 * Display-filter lexer. Token spelling follows Wireshark's scanner (epan/dfilter/scanner.l) so
 * filters typed for tshark -Y read the same here: C-like and English operators, integers in
 * decimal, octal (leading 0), hex (0x) and binary (0b), colon-separated bytes, double-quoted
 * strings with C escapes and r"raw" strings.
 */
import { errorAt, wholeFilterError } from './error.js';

/**
 * Bounds on what one filter may be, so a hostile -Y cannot exhaust memory: far beyond any filter
 * a person writes (a chain of 16,000 "||" tests is about 64,000 tokens).
 */
export const MAX_FILTER_LENGTH = 1_000_000;
export const MAX_FILTER_TOKENS = 250_000;

/** Comparison operators, named as Wireshark names them internally. */
export type CmpOp = 'any_eq' | 'all_ne' | 'all_eq' | 'any_ne' | 'gt' | 'ge' | 'lt' | 'le';

/** Source range [start, end) in UTF-16 indexes of the filter text, and the text itself. */
interface Span {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

export type SimpleKind =
  | 'lparen'
  | 'rparen'
  | 'lbrace'
  | 'rbrace'
  | 'comma'
  | 'dotdot'
  | 'and'
  | 'or'
  | 'xor'
  | 'not'
  | 'contains'
  | 'matches'
  | 'in'
  | 'bitand'
  | 'eof';

export type Token =
  | (Span & { readonly kind: SimpleKind })
  | (Span & { readonly kind: 'cmp'; readonly op: CmpOp })
  /** A name: a field or protocol, or (on the right of a comparison) true/false or a bare word. */
  | (Span & { readonly kind: 'ident'; readonly name: string })
  | (Span & { readonly kind: 'int'; readonly value: bigint })
  | (Span & { readonly kind: 'float'; readonly value: number })
  | (Span & { readonly kind: 'bytes'; readonly value: Uint8Array })
  /** value is the decoded text; bytes are exactly the octets written (\xff stays one octet). */
  | (Span & { readonly kind: 'string'; readonly value: string; readonly bytes: Uint8Array });

const WORD_OPERATORS: Readonly<Record<string, { kind: SimpleKind } | { kind: 'cmp'; op: CmpOp }>> = {
  and: { kind: 'and' },
  or: { kind: 'or' },
  xor: { kind: 'xor' },
  not: { kind: 'not' },
  contains: { kind: 'contains' },
  matches: { kind: 'matches' },
  in: { kind: 'in' },
  bitand: { kind: 'bitand' },
  bitwise_and: { kind: 'bitand' },
  eq: { kind: 'cmp', op: 'any_eq' },
  any_eq: { kind: 'cmp', op: 'any_eq' },
  ne: { kind: 'cmp', op: 'all_ne' },
  all_ne: { kind: 'cmp', op: 'all_ne' },
  all_eq: { kind: 'cmp', op: 'all_eq' },
  any_ne: { kind: 'cmp', op: 'any_ne' },
  gt: { kind: 'cmp', op: 'gt' },
  ge: { kind: 'cmp', op: 'ge' },
  lt: { kind: 'cmp', op: 'lt' },
  le: { kind: 'cmp', op: 'le' },
};

/** Longest first, so "!==" wins over "!=" and "!". */
const SYMBOLS: ReadonlyArray<readonly [string, { kind: SimpleKind } | { kind: 'cmp'; op: CmpOp }]> = [
  ['===', { kind: 'cmp', op: 'all_eq' }],
  ['!==', { kind: 'cmp', op: 'any_ne' }],
  ['==', { kind: 'cmp', op: 'any_eq' }],
  ['!=', { kind: 'cmp', op: 'all_ne' }],
  ['>=', { kind: 'cmp', op: 'ge' }],
  ['<=', { kind: 'cmp', op: 'le' }],
  ['&&', { kind: 'and' }],
  ['||', { kind: 'or' }],
  ['^^', { kind: 'xor' }],
  ['..', { kind: 'dotdot' }],
  ['>', { kind: 'cmp', op: 'gt' }],
  ['<', { kind: 'cmp', op: 'lt' }],
  ['!', { kind: 'not' }],
  ['~', { kind: 'matches' }],
  ['&', { kind: 'bitand' }],
  ['(', { kind: 'lparen' }],
  [')', { kind: 'rparen' }],
  ['{', { kind: 'lbrace' }],
  ['}', { kind: 'rbrace' }],
  [',', { kind: 'comma' }],
];

/** Near-misses from other languages, answered with what to type instead. */
const NEAR_MISSES: Readonly<Record<string, string>> = { '=': '==', '|': '||' };

const WORD_CHAR = /[A-Za-z0-9_.:-]/;
const IDENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
/** An IPv6 address (or a prefix of one) as typed: hex groups and colons, maybe a dotted tail. */
const IPV6_LIKE = /^(?=.*::|(?:[^:]*:){7}|.*:.*\.)[0-9A-Fa-f]*:[0-9A-Fa-f:.]*(?:\/[0-9]+)?$/;
const MAX_ADDRESS_TEXT = 64;
/** An address with a CIDR prefix length ("10.0.0.0/24"). */
const CIDR_LIKE = /^[0-9A-Fa-f.:]+\/[0-9]+$/;
const BYTES = /^[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2})+$|^[0-9A-Fa-f]{2}:$/;
const FLOAT = /^-?[0-9]+(?:\.[0-9]+(?:[eE]-?[0-9]+)?|[eE]-?[0-9]+)$/;

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8');

/** Integer literal as Wireshark reads it (strtoull base 0, plus 0b); undefined if not one. */
export function parseInteger(word: string): bigint | undefined {
  const neg = word.startsWith('-');
  const w = neg ? word.slice(1) : word;
  let v: bigint;
  if (/^0[xX][0-9A-Fa-f]+$/.test(w)) v = BigInt(w);
  else if (/^0[bB][01]+$/.test(w)) v = BigInt(w);
  else if (/^0[0-7]*$/.test(w)) v = w.length > 1 ? BigInt('0o' + w.slice(1)) : 0n;
  else if (/^[1-9][0-9]*$/.test(w)) v = BigInt(w);
  else return undefined;
  return neg ? -v : v;
}

function opToken(
  start: number,
  end: number,
  text: string,
  op: { kind: SimpleKind } | { kind: 'cmp'; op: CmpOp },
): Token {
  return op.kind === 'cmp' ? { start, end, text, kind: 'cmp', op: op.op } : { start, end, text, kind: op.kind };
}

function classifyWord(text: string, start: number, end: number): Token {
  const word = text.slice(start, end);
  // Tokens are written out in full, not spread from a shared object: object spread is slow when
  // the shapes vary, and a 16,000-term filter makes it show.
  const op = Object.hasOwn(WORD_OPERATORS, word) ? WORD_OPERATORS[word] : undefined;
  if (op) return opToken(start, end, word, op);
  const int = parseInteger(word);
  if (int !== undefined) return { start, end, text: word, kind: 'int', value: int };
  if (FLOAT.test(word)) return { start, end, text: word, kind: 'float', value: Number(word) };
  // Addresses are names to the lexer; the parser reads them against the field's type.
  // (An address is at most 49 characters, "/128" included: longer words are not tried, which
  // also keeps these patterns from backtracking over a hostile 100 KB word.)
  const short = word.length <= MAX_ADDRESS_TEXT;
  if (short && CIDR_LIKE.test(word)) return { start, end, text: word, kind: 'ident', name: word };
  if (word.includes(':')) {
    if (short && !BYTES.test(word) && IPV6_LIKE.test(word))
      return { start, end, text: word, kind: 'ident', name: word };
    if (BYTES.test(word)) {
      const hex = word.split(':').filter((h) => h !== '');
      return { start, end, text: word, kind: 'bytes', value: Uint8Array.from(hex, (h) => parseInt(h, 16)) };
    }
    throw errorAt(
      text,
      start,
      end,
      `"${word}" is not a valid byte string; write bytes as pairs of hex digits separated by colons, e.g. aa:bb:cc.`,
    );
  }
  // Names that start with a digit ("08", "10.0.0.1") come out as idents too: the parser knows
  // whether they are a field and says what is wrong with them in context.
  if (IDENT.test(word)) return { start, end, text: word, kind: 'ident', name: word };
  throw errorAt(text, start, end, `"${word}" was unexpected in this context.`);
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9A-Fa-f]$/.test(c);
}

/** Reads a quoted string whose opening quote (or the r of r") is at start. */
function readString(text: string, start: number): { token: Token; end: number } {
  const raw = text[start] === 'r' || text[start] === 'R';
  let i = start + (raw ? 2 : 1);
  const out: number[] = [];
  const pushText = (s: string): void => {
    for (const b of utf8.encode(s)) out.push(b);
  };
  for (;;) {
    if (i >= text.length) {
      throw errorAt(text, start, text.length, 'The final quote was missing from a quoted string.');
    }
    const c = text[i]!;
    if (c === '"') {
      i++;
      break;
    }
    if (c !== '\\') {
      // Take a whole code point so astral characters encode correctly.
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      pushText(ch);
      i += ch.length;
      continue;
    }
    const n = text[i + 1];
    if (n === undefined) {
      throw errorAt(text, start, text.length, 'The final quote was missing from a quoted string.');
    }
    if (raw) {
      // Raw strings keep the backslash; \" and \\ only stop the quote from ending the string.
      pushText('\\' + n);
      i += 2;
      continue;
    }
    const simple: Readonly<Record<string, number>> = {
      a: 7,
      b: 8,
      f: 12,
      n: 10,
      r: 13,
      t: 9,
      v: 11,
      '\\': 92,
      "'": 39,
      '"': 34,
    };
    if (simple[n] !== undefined) {
      out.push(simple[n]);
      i += 2;
    } else if (/[0-7]/.test(n)) {
      let j = i + 1;
      while (j < i + 4 && j < text.length && /[0-7]/.test(text[j]!)) j++;
      const v = parseInt(text.slice(i + 1, j), 8);
      if (v > 0xff) throw errorAt(text, i, j, `${text.slice(i, j)} is larger than 255.`);
      out.push(v);
      i = j;
    } else if (n === 'x') {
      let j = i + 2;
      while (j < i + 4 && isHex(text[j])) j++;
      if (j === i + 2) throw errorAt(text, i, i + 2, '\\x is not a valid character escape sequence');
      out.push(parseInt(text.slice(i + 2, j), 16));
      i = j;
    } else if (n === 'u' || n === 'U') {
      const digits = n === 'u' ? 4 : 8;
      let j = i + 2;
      while (j < i + 2 + digits && isHex(text[j])) j++;
      const cp = parseInt(text.slice(i + 2, j), 16);
      // Same limits as Wireshark (and C): full width, a real code point, not a surrogate, and
      // not a basic character that could have been typed directly.
      const ok =
        j === i + 2 + digits &&
        cp <= 0x10ffff &&
        !(cp >= 0xd800 && cp <= 0xdfff) &&
        (cp >= 0xa0 || cp === 0x24 || cp === 0x40 || cp === 0x60);
      if (!ok) throw errorAt(text, i, j, `${text.slice(i, j)} is not a valid universal character name`);
      pushText(String.fromCodePoint(cp));
      i = j;
    } else {
      throw errorAt(text, i, i + 2, `\\${n} is not a valid character escape sequence`);
    }
  }
  const bytes = Uint8Array.from(out);
  return {
    token: { start, end: i, text: text.slice(start, i), kind: 'string', value: utf8Decoder.decode(bytes), bytes },
    end: i,
  };
}

/** Splits a filter into tokens, ending with one 'eof' token. Throws FilterError. */
export function tokenize(text: string): Token[] {
  if (text.length > MAX_FILTER_LENGTH) {
    throw wholeFilterError(
      `The filter expression is too large: ${text.length} characters (at most ${MAX_FILTER_LENGTH}); use a set, field in {…}, for long lists of values.`,
    );
  }
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    if (tokens.length >= MAX_FILTER_TOKENS) {
      throw wholeFilterError(
        `The filter expression is too large: more than ${MAX_FILTER_TOKENS} names, values and operators; use a set, field in {…}, for long lists of values.`,
      );
    }
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '"' || ((c === 'r' || c === 'R') && text[i + 1] === '"')) {
      const { token, end } = readString(text, i);
      tokens.push(token);
      i = end;
      continue;
    }
    // A word: name, number or bytes. A leading '-' belongs to a negative number.
    // "::1" is an IPv6 address, so a word may start with "::".
    if (
      /[A-Za-z0-9_]/.test(c) ||
      (c === '-' && /[0-9]/.test(text[i + 1] ?? '')) ||
      (c === ':' && text[i + 1] === ':')
    ) {
      let j = i + 1;
      // ".." never belongs to a word: it separates a range's ends ("1..3").
      while (j < text.length && WORD_CHAR.test(text[j]!) && !(text[j] === '.' && text[j + 1] === '.')) j++;
      // A CIDR prefix length belongs to the address before it ("10.0.0.0/24", "fd00::/64").
      if (text[j] === '/' && /[0-9]/.test(text[j + 1] ?? '') && /[.:]/.test(text.slice(i, j))) {
        j++;
        while (j < text.length && /[0-9]/.test(text[j]!)) j++;
      }
      tokens.push(classifyWord(text, i, j));
      i = j;
      continue;
    }
    const sym = SYMBOLS.find(([s]) => text.startsWith(s, i));
    if (sym) {
      const [s, kind] = sym;
      tokens.push(opToken(i, i + s.length, s, kind));
      i += s.length;
      continue;
    }
    const cp = text.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    if (cp < 0x20 || cp === 0x7f) {
      throw errorAt(text, i, i + 1, 'Non-printable ASCII characters may only appear inside double-quotes.');
    }
    const hint = NEAR_MISSES[ch];
    throw errorAt(
      text,
      i,
      i + ch.length,
      hint
        ? `"${ch}" was unexpected in this context; did you mean "${hint}"?`
        : `"${ch}" was unexpected in this context.`,
    );
  }
  tokens.push({ start: text.length, end: text.length, text: '', kind: 'eof' });
  return tokens;
}
