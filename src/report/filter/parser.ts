/**
 * Display-filter parser: tokens to an AST, by recursive descent.
 *
 *   expr     := or
 *   or       := and (("||" | "or" | "^^" | "xor") and)*      left-associative, n-ary
 *   and      := not (("&&" | "and") not)*                     n-ary
 *   not      := ("!" | "not") not | primary
 *   primary  := "(" expr ")" | relation
 *   relation := field [ cmp operand | "contains" operand | "matches" STRING
 *                     | ["not"|"!"] "in" "{" item ([","] item)* "}" ]
 *   field    := NAME ("&" INTEGER)*                            a bare field tests presence
 *   operand  := field | INTEGER | FLOAT | STRING | BYTES | true | false
 *   item     := value [".." value]
 *
 * Precedence is Wireshark's: not binds tighter than and, and tighter than or; mixing and/or
 * without parentheses is accepted (and binds tighter). xor sits with or, as in Wireshark.
 *
 * A chain of one operator ("a || b || … ") is one node holding a list, built in a loop, so a
 * chain of any length costs no stack; only nesting (parentheses, "not", a change of operator)
 * recurses, and nesting is bounded by MAX_DEPTH.
 *
 * When the caller gives the fields' types, literals are checked against them as tshark does (a
 * string or a number too wide for an integer field, a test a type cannot take), with the caret on
 * the offending text; IPv4 and IPv6 fields take addresses and CIDR networks.
 */
import { RE2JS, RE2JSException } from 're2js';
import { formatAddress, parseCidr, type Address } from './address.js';
import { errorAt, type FilterError } from './error.js';
import { tokenize, type CmpOp, type Token } from './lexer.js';

/** A field's type as the filter sees it; 'label' is a protocol or header that is only present. */
export type FilterType =
  | { readonly kind: 'uint'; readonly bits: number }
  | { readonly kind: 'bool' | 'string' | 'bytes' | 'label' | 'ipv4' | 'ipv6' };

/** The type of a known field, or undefined for an untyped field (no checks). */
export type FieldTypes = (field: string) => FilterType | undefined;

/** tshark's names of the types, for its "(type=…)" messages. */
export function typeName(t: FilterType): string {
  switch (t.kind) {
    case 'uint': {
      const bytes = Math.ceil(t.bits / 8);
      return `Unsigned integer (${bytes} byte${bytes === 1 ? '' : 's'})`;
    }
    case 'bool':
      return 'Boolean';
    case 'string':
      return 'Character string';
    case 'bytes':
      return 'Byte sequence';
    case 'label':
      return 'Protocol';
    case 'ipv4':
      return 'IPv4 address';
    case 'ipv6':
      return 'IPv6 address';
  }
}

export type Literal =
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'string'; readonly value: string; readonly bytes: Uint8Array }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'bool'; readonly value: boolean }
  /** An IPv4 or IPv6 address or network, for address fields. */
  | { readonly type: 'addr'; readonly value: Address };

/** A field reference; mask is the AND of every "& N" applied to it, or null. */
export interface FieldRef {
  readonly kind: 'field';
  readonly name: string;
  readonly mask: bigint | null;
}

export interface ValueRef {
  readonly kind: 'value';
  readonly literal: Literal;
}

export type Operand = FieldRef | ValueRef;

export type SetItem =
  | { readonly kind: 'one'; readonly value: Literal }
  | { readonly kind: 'range'; readonly lo: Literal; readonly hi: Literal };

export type Expr =
  /** Two or more terms; xor is true when an odd number of terms are. */
  | { readonly kind: 'and' | 'or' | 'xor'; readonly terms: readonly Expr[] }
  | { readonly kind: 'not'; readonly expr: Expr }
  /** Bare field: at least one value present. */
  | { readonly kind: 'exists'; readonly field: FieldRef }
  /** Bare "field & mask": some masked value is non-zero. */
  | { readonly kind: 'nonzero'; readonly field: FieldRef }
  | { readonly kind: 'compare'; readonly op: CmpOp; readonly left: FieldRef; readonly right: Operand }
  | { readonly kind: 'contains'; readonly left: FieldRef; readonly right: Operand }
  | { readonly kind: 'matches'; readonly left: FieldRef; readonly pattern: string; readonly regex: RE2JS }
  | { readonly kind: 'in'; readonly left: FieldRef; readonly set: readonly SetItem[] };

export interface ParseResult {
  readonly expr: Expr;
  /** Every field named, in order of first appearance. */
  readonly fields: readonly string[];
}

/**
 * Whether an unquoted word compared with `field` stands for itself as a string, as an address
 * does for Wireshark's typed address fields ("ip.src == 10.0.0.1"). Other bare words stay errors.
 */
export type BareWord = (field: string, word: string) => boolean;

/** Deep enough for any filter a person writes; stops "((((…" from overflowing the JS stack. */
const MAX_DEPTH = 500;

const KEYWORDS = new Set([
  'and',
  'or',
  'xor',
  'not',
  'contains',
  'matches',
  'in',
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'any_eq',
  'all_ne',
  'all_eq',
  'any_ne',
  'bitand',
  'bitwise_and',
]);

/**
 * Wireshark's "matches" is case-insensitive unless the pattern says (?-i). RE2 (re2js) matches in
 * time linear in the input, so no pattern can hang the tool on a long field; it takes RE2 syntax,
 * which is PCRE2's without backreferences and lookaround (docs/filters-and-fields.md, "Display filters").
 */
function compileRegex(pattern: string): RE2JS {
  return RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE);
}

/**
 * RE2's time is linear in the text but proportional to the program's size too ("[a-z]{1000}"
 * repeated is ten thousand instructions, tens of milliseconds per kilobyte in re2js), and re2js
 * sets no size limit of its own. Patterns people write are a few dozen instructions.
 */
export const MAX_REGEX_INSTRUCTIONS = 1000;

function regexSize(re: RE2JS): number {
  const prog: unknown = (re.re2() as { prog?: unknown }).prog;
  const numInst = (prog as { numInst?: unknown } | undefined)?.numInst;
  return typeof numInst === 'function' ? Number(numInst.call(prog)) : 0;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

/** A token as typed, in quotes; a string literal already has its own. */
function shown(t: Token): string {
  return t.kind === 'string' ? t.text : `"${t.text}"`;
}

class Parser {
  private pos = 0;
  private depth = 0;
  private readonly fields: string[] = [];

  constructor(
    private readonly text: string,
    private readonly tokens: readonly Token[],
    private readonly known: (field: string) => boolean,
    private readonly bareWord: BareWord | null = null,
    private readonly types: FieldTypes | null = null,
  ) {}

  private typeOf(field: string): FilterType | undefined {
    return this.types?.(field);
  }

  parse(): ParseResult {
    if (this.peek().kind === 'eof') {
      throw errorAt(this.text, 0, this.text.length, 'The filter expression is empty.');
    }
    const expr = this.parseOr();
    const t = this.peek();
    if (t.kind === 'rparen') throw this.at(t, '")" has no matching "(".');
    if (t.kind !== 'eof') throw this.unexpected(t);
    return { expr, fields: this.fields };
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!;
  }

  private next(): Token {
    const t = this.peek();
    if (t.kind !== 'eof') this.pos++;
    return t;
  }

  private at(t: Token, message: string): FilterError {
    return errorAt(this.text, t.start, t.end, message);
  }

  /** atTestStart: the token stands where a test should begin, so a value there is a misplaced operand. */
  private unexpected(t: Token, atTestStart = false): FilterError {
    if (t.kind === 'eof') return this.at(t, 'Unexpected end of filter expression.');
    let hint = '.';
    if (t.kind === 'ident' && KEYWORDS.has(t.name.toLowerCase())) hint = `; did you mean "${t.name.toLowerCase()}"?`;
    else if (atTestStart && (t.kind === 'int' || t.kind === 'float' || t.kind === 'string' || t.kind === 'bytes')) {
      hint = '; a test starts with a field name.';
    }
    return this.at(t, `${shown(t)} was unexpected in this context${hint}`);
  }

  /** The token after an operator is missing: point at the operator, which is what needs it. */
  private missing(op: Token, what: string): FilterError {
    return this.at(op, `${shown(op)} needs ${what} on its right.`);
  }

  private enter(t: Token): void {
    if (++this.depth > MAX_DEPTH) throw this.at(t, 'The filter expression is nested too deeply.');
  }

  /**
   * or/xor chains, left-associative: "a || b || c" is one node of three terms; where the operator
   * changes ("a || b ^^ c"), the chain so far becomes the first term of the next node, which
   * counts as nesting.
   */
  private parseOr(): Expr {
    const first = this.parseAnd();
    let kind: 'or' | 'xor' | null = null;
    let terms: Expr[] = [first];
    let nested = 0;
    for (let t = this.peek(); t.kind === 'or' || t.kind === 'xor'; t = this.peek()) {
      this.next();
      if (this.peek().kind === 'eof') throw this.missing(t, 'an expression');
      if (kind !== null && kind !== t.kind) {
        this.enter(t);
        nested++;
        terms = [{ kind, terms }];
      }
      kind = t.kind;
      terms.push(this.parseAnd());
    }
    this.depth -= nested;
    return kind === null ? first : { kind, terms };
  }

  private parseAnd(): Expr {
    const first = this.parseNot();
    if (this.peek().kind !== 'and') return first;
    const terms: Expr[] = [first];
    for (let t = this.peek(); t.kind === 'and'; t = this.peek()) {
      this.next();
      if (this.peek().kind === 'eof') throw this.missing(t, 'an expression');
      terms.push(this.parseNot());
    }
    return { kind: 'and', terms };
  }

  private parseNot(): Expr {
    const t = this.peek();
    if (t.kind !== 'not') return this.parsePrimary();
    this.next();
    if (this.peek().kind === 'eof') throw this.missing(t, 'an expression');
    this.enter(t);
    const expr = this.parseNot();
    this.depth--;
    return { kind: 'not', expr };
  }

  private parsePrimary(): Expr {
    const t = this.peek();
    if (t.kind === 'lparen') {
      this.next();
      this.enter(t);
      if (this.peek().kind === 'eof') throw this.at(t, '"(" has no matching ")".');
      const expr = this.parseOr();
      this.depth--;
      const close = this.peek();
      if (close.kind === 'eof') throw this.at(t, '"(" has no matching ")".');
      if (close.kind !== 'rparen') throw this.unexpected(close);
      this.next();
      return expr;
    }
    if (t.kind === 'ident') return this.parseRelation();
    throw this.unexpected(t, true);
  }

  private noteField(name: string): void {
    if (!this.fields.includes(name)) this.fields.push(name);
  }

  /** A field on the left of a test: it must exist, whatever it looks like. */
  private parseField(): FieldRef {
    const t = this.next();
    if (t.kind !== 'ident') throw this.unexpected(t);
    if (!this.known(t.name)) throw this.at(t, `${quote(t.name)} is neither a field nor a protocol name.`);
    this.noteField(t.name);
    return this.parseMask(t);
  }

  private parseMask(name: Token & { kind: 'ident' }): FieldRef {
    let mask: bigint | null = null;
    for (let op = this.peek(); op.kind === 'bitand'; op = this.peek()) {
      this.next();
      const m = this.peek();
      if (m.kind === 'eof') throw this.missing(op, 'an integer mask');
      const type = this.typeOf(name.name);
      if (type && type.kind !== 'uint' && type.kind !== 'bool') {
        throw this.at(
          name,
          `${name.name} (type=${typeName(type)}) cannot be masked with "${op.text}"; only integer fields can.`,
        );
      }
      if (m.kind !== 'int') {
        if (type) throw this.at(m, `${shown(m)} is not a valid arithmetic operand.`);
        throw this.at(m, `${shown(op)} needs an integer mask on its right, not ${shown(m)}.`);
      }
      this.next();
      mask = mask === null ? m.value : mask & m.value;
    }
    return { kind: 'field', name: name.name, mask };
  }

  /** tshark refuses a test the field's type cannot take ("msn contains 5", "iwarp_ddp == 1"). */
  private checkTestable(field: Token, what: string, allowed: ReadonlyArray<FilterType['kind']>): void {
    if (field.kind !== 'ident') return;
    const type = this.typeOf(field.name);
    if (type && !allowed.includes(type.kind)) {
      const hint = type.kind === 'label' ? `; name ${field.name} alone to test that it is present` : '';
      throw this.at(field, `${field.name} (type=${typeName(type)}) cannot participate in ${what} comparison${hint}.`);
    }
  }

  private parseRelation(): Expr {
    const fieldTok = this.peek();
    const left = this.parseField();
    const t = this.peek();
    switch (t.kind) {
      case 'cmp':
        this.next();
        this.checkTestable(fieldTok, t.text, ['uint', 'bool', 'string', 'bytes', 'ipv4', 'ipv6']);
        return { kind: 'compare', op: t.op, left, right: this.parseOperand(t, left.name) };
      case 'contains':
        this.next();
        this.checkTestable(fieldTok, 'contains', ['string', 'bytes']);
        return { kind: 'contains', left, right: this.parseOperand(t, left.name) };
      case 'matches': {
        this.next();
        this.checkTestable(fieldTok, 'matches', ['string', 'bytes']);
        const p = this.peek();
        if (p.kind === 'eof') throw this.missing(t, 'a quoted regular expression');
        if (p.kind !== 'string') {
          throw this.at(p, `${shown(t)} needs a quoted regular expression on its right, not ${shown(p)}.`);
        }
        this.next();
        try {
          const regex = compileRegex(p.value);
          const size = regexSize(regex);
          if (size > MAX_REGEX_INSTRUCTIONS) {
            throw this.at(
              p,
              `${p.text} is too large a regular expression for a display filter (${size} RE2 instructions, at most ${MAX_REGEX_INSTRUCTIONS}).`,
            );
          }
          return { kind: 'matches', left, pattern: p.value, regex };
        } catch (e) {
          if (!(e instanceof RE2JSException)) throw e;
          // re2js says "error parsing regexp: invalid escape sequence: `\1`"; keep the reason, and
          // say why a PCRE2 construct Wireshark takes is refused here.
          const why = e.message.replace(/^error parsing regexp: /, '').replace('`(?i)', '`');
          const pcre = /invalid escape sequence|unsupported Perl syntax|invalid named capture|nested repetition/.test(
            why,
          )
            ? ' (RE2 syntax: no backreferences, lookaround or other PCRE2-only constructs; see docs/filters-and-fields.md)'
            : '';
          throw this.at(p, `${p.text} is not a valid regular expression: ${why}${pcre}`);
        }
      }
      case 'in':
        this.next();
        this.checkTestable(fieldTok, 'in', ['uint', 'bool', 'string', 'bytes', 'ipv4', 'ipv6']);
        return { kind: 'in', left, set: this.parseSet(t, left.name) };
      case 'not': {
        // "field not in {…}"; any other "not" after a field is out of place.
        const n = this.peek(1);
        if (n.kind !== 'in') throw this.unexpected(t);
        this.next();
        this.next();
        this.checkTestable(fieldTok, 'in', ['uint', 'bool', 'string', 'bytes', 'ipv4', 'ipv6']);
        return { kind: 'not', expr: { kind: 'in', left, set: this.parseSet(n, left.name) } };
      }
      default:
        return left.mask === null ? { kind: 'exists', field: left } : { kind: 'nonzero', field: left };
    }
  }

  /** The right-hand side of a comparison: a field, or a value. */
  private parseOperand(op: Token, field: string): Operand {
    const t = this.peek();
    if (t.kind === 'eof') throw this.missing(op, 'a value');
    if (t.kind === 'ident' && this.known(t.name)) {
      this.next();
      this.noteField(t.name);
      const a = this.typeOf(field);
      const b = this.typeOf(t.name);
      if (a && b && !compatible(a, b)) throw this.at(t, `${field} and ${t.name} are not of compatible types.`);
      return this.parseMask(t);
    }
    return { kind: 'value', literal: this.parseValue(field) };
  }

  /** A literal value (never a field); `field` is the one it is compared with. */
  private parseValue(field: string): Literal {
    const t = this.peek();
    const type = this.typeOf(field);
    if (type && t.kind !== 'eof') {
      const lit = this.typedValue(t, field, type);
      if (lit !== null) {
        this.next();
        return lit;
      }
    }
    switch (t.kind) {
      case 'int':
        this.next();
        return { type: 'int', value: t.value };
      case 'float':
        this.next();
        return { type: 'float', value: t.value };
      case 'string':
        this.next();
        return { type: 'string', value: t.value, bytes: t.bytes };
      case 'bytes':
        this.next();
        return { type: 'bytes', value: t.value };
      case 'ident': {
        const lower = t.name.toLowerCase();
        if (lower === 'true' || lower === 'false') {
          this.next();
          return { type: 'bool', value: lower === 'true' };
        }
        if (this.bareWord?.(field, t.name)) {
          this.next();
          return { type: 'string', value: t.name, bytes: new TextEncoder().encode(t.name) };
        }
        throw this.at(t, bareWordMessage(t.name));
      }
      case 'eof':
        throw this.unexpected(t);
      default:
        throw this.unexpected(t);
    }
  }

  /**
   * A value token read against the field's type, as tshark reads it: the literal, an error for a
   * value the type cannot hold, or null to fall back to the untyped reading (a token that is not
   * a value, such as an operator, whose error that reading gives).
   */
  private typedValue(t: Token, field: string, type: FilterType): Literal | null {
    const isValue =
      t.kind === 'int' || t.kind === 'float' || t.kind === 'string' || t.kind === 'bytes' || t.kind === 'ident';
    if (!isValue) return null;
    const word = t.kind === 'string' ? t.value : t.text;
    switch (type.kind) {
      case 'uint': {
        if (t.kind === 'string') throw this.at(t, `${typeName(type)} cannot be converted from a string (${t.text}).`);
        if (t.kind === 'ident' && !/^(true|false)$/i.test(t.name) && !this.bareWord?.(field, t.name)) return null;
        if (t.kind !== 'int') throw this.at(t, `"${word}" is not a valid number.`);
        const max = (1n << BigInt(type.bits)) - 1n;
        if (t.value > max) throw this.at(t, `"${word}" too big for this field, maximum ${max}.`);
        if (t.value < 0n) throw this.at(t, `"${word}" too small for this field, minimum 0.`);
        return { type: 'int', value: t.value };
      }
      case 'bool': {
        if (t.kind === 'string') throw this.at(t, `${typeName(type)} cannot be converted from a string (${t.text}).`);
        if (t.kind === 'int') return { type: 'int', value: t.value };
        if (t.kind === 'ident' && /^(true|false)$/i.test(t.name))
          return { type: 'bool', value: t.name.toLowerCase() === 'true' };
        if (t.kind === 'ident') return null;
        throw this.at(t, `"${word}" is not a valid boolean.`);
      }
      case 'ipv4':
      case 'ipv6': {
        const family = type.kind === 'ipv4' ? 4 : 6;
        // An unknown name might be meant as a host name; we resolve none, so say what works.
        const a = parseCidr(word, family);
        if (typeof a === 'string') throw this.at(t, a);
        return { type: 'addr', value: a };
      }
      case 'string':
        // tshark reads an unquoted number as the string of its digits.
        if (t.kind === 'int' || t.kind === 'float')
          return { type: 'string', value: t.text, bytes: new TextEncoder().encode(t.text) };
        return null;
      case 'bytes':
        if (t.kind === 'int' || t.kind === 'float') {
          throw this.at(
            t,
            `"${word}" is not a valid byte string; write bytes as pairs of hex digits separated by colons, e.g. aa:bb:cc.`,
          );
        }
        return null;
      case 'label':
        return null;
    }
  }

  private parseSet(op: Token, field: string): SetItem[] {
    const open = this.peek();
    if (open.kind === 'eof') throw this.missing(op, 'a set such as {1, 2, 5..9}');
    if (open.kind !== 'lbrace') {
      throw this.at(open, `${shown(op)} needs a set such as {1, 2, 5..9} on its right, not ${shown(open)}.`);
    }
    this.next();
    const items: SetItem[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') throw this.at(open, '"{" has no matching "}".');
      if (t.kind === 'rbrace') {
        if (items.length === 0) throw this.at(t, 'A set needs at least one value.');
        this.next();
        return items;
      }
      if (items.length > 0 && t.kind === 'comma') {
        this.next();
        continue;
      }
      const lo = this.parseValue(field);
      const dots = this.peek();
      if (dots.kind !== 'dotdot') {
        items.push({ kind: 'one', value: lo });
        continue;
      }
      this.next();
      if (this.peek().kind === 'eof') throw this.missing(dots, 'the end of the range');
      const hiTok = this.peek();
      const hi = this.parseValue(field);
      if ((lo.type !== 'int' && lo.type !== 'float') || (hi.type !== 'int' && hi.type !== 'float')) {
        throw errorAt(this.text, t.start, hiTok.end, 'A range in a set needs numbers at both ends.');
      }
      items.push({ kind: 'range', lo, hi });
    }
  }
}

/** Whether two fields' values can be compared: numbers with numbers, text and octets together. */
function compatible(a: FilterType, b: FilterType): boolean {
  const group = (t: FilterType): string =>
    t.kind === 'uint' || t.kind === 'bool' ? 'number' : t.kind === 'string' || t.kind === 'bytes' ? 'octets' : t.kind;
  return group(a) === group(b) && a.kind !== 'label';
}
function bareWordMessage(word: string): string {
  const q = quote(word);
  const advice = `to compare with the string, write it in double quotes: ${q}`;
  if (/^[0-9]/.test(word)) return `${q} is not a valid number; ${advice}.`;
  // Hex digits with no separator may be meant as bytes ("deadbeef"); say how to write those.
  const bytesHint = /^(?:[0-9A-Fa-f]{2})+$/.test(word) ? `, or for bytes: ${word.match(/../g)!.join(':')}` : '';
  return `${q} is neither a field nor a value; ${advice}${bytesHint}.`;
}

/** Parses filter text to an AST, checking every field name against `known`. Throws FilterError. */
export function parseFilter(
  text: string,
  known: (field: string) => boolean,
  bareWord: BareWord | null = null,
  types: FieldTypes | null = null,
): ParseResult {
  return new Parser(text, tokenize(text), known, bareWord, types).parse();
}

function formatLiteral(l: Literal): string {
  switch (l.type) {
    case 'int':
      return l.value.toString();
    case 'float':
      return String(l.value);
    case 'string':
      return quote(l.value);
    case 'bytes':
      return Array.from(l.value, (b) => b.toString(16).padStart(2, '0')).join(':');
    case 'bool':
      return String(l.value);
    case 'addr':
      return formatAddress(l.value);
  }
}

function formatField(f: FieldRef): string {
  return f.mask === null ? f.name : `(& ${f.name} 0x${f.mask.toString(16)})`;
}

function formatOperand(o: Operand): string {
  return o.kind === 'field' ? formatField(o) : formatLiteral(o.literal);
}

/** S-expression form of an AST, for tests and debugging: "(or (and a b) c)". */
export function formatExpr(e: Expr): string {
  switch (e.kind) {
    case 'and':
    case 'or':
    case 'xor':
      return `(${e.kind} ${e.terms.map(formatExpr).join(' ')})`;
    case 'not':
      return `(not ${formatExpr(e.expr)})`;
    case 'exists':
      return formatField(e.field);
    case 'nonzero':
      return formatField(e.field);
    case 'compare':
      return `(${e.op} ${formatField(e.left)} ${formatOperand(e.right)})`;
    case 'contains':
      return `(contains ${formatField(e.left)} ${formatOperand(e.right)})`;
    case 'matches':
      return `(matches ${formatField(e.left)} ${quote(e.pattern)})`;
    case 'in':
      return `(in ${formatField(e.left)} {${e.set
        .map((i) => (i.kind === 'one' ? formatLiteral(i.value) : `${formatLiteral(i.lo)}..${formatLiteral(i.hi)}`))
        .join(' ')}})`;
  }
}
