/**
 * Display-filter parser: tokens to an AST, by recursive descent.
 *
 *   expr     := or
 *   or       := and (("||" | "or" | "^^" | "xor") and)*      left-associative
 *   and      := not (("&&" | "and") not)*                     left-associative
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
 */
import { errorAt, type FilterError } from './error.js';
import { tokenize, type CmpOp, type Token } from './lexer.js';

export type Literal =
  | { readonly type: 'int'; readonly value: bigint }
  | { readonly type: 'float'; readonly value: number }
  | { readonly type: 'string'; readonly value: string; readonly bytes: Uint8Array }
  | { readonly type: 'bytes'; readonly value: Uint8Array }
  | { readonly type: 'bool'; readonly value: boolean };

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
  | { readonly kind: 'and' | 'or' | 'xor'; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'not'; readonly expr: Expr }
  /** Bare field: at least one value present. */
  | { readonly kind: 'exists'; readonly field: FieldRef }
  /** Bare "field & mask": some masked value is non-zero. */
  | { readonly kind: 'nonzero'; readonly field: FieldRef }
  | { readonly kind: 'compare'; readonly op: CmpOp; readonly left: FieldRef; readonly right: Operand }
  | { readonly kind: 'contains'; readonly left: FieldRef; readonly right: Operand }
  | { readonly kind: 'matches'; readonly left: FieldRef; readonly pattern: string; readonly regex: RegExp }
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
  'and', 'or', 'xor', 'not', 'contains', 'matches', 'in', 'eq', 'ne', 'gt', 'ge', 'lt', 'le',
  'any_eq', 'all_ne', 'all_eq', 'any_ne', 'bitand', 'bitwise_and',
]);

/** Wireshark's "matches" is case-insensitive unless the pattern starts with (?-i). */
function compileRegex(pattern: string): RegExp {
  if (pattern.startsWith('(?-i)')) return new RegExp(pattern.slice(5));
  if (pattern.startsWith('(?i)')) return new RegExp(pattern.slice(4), 'i');
  return new RegExp(pattern, 'i');
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
  ) {}

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

  private parseOr(): Expr {
    let left = this.parseAnd();
    for (let t = this.peek(); t.kind === 'or' || t.kind === 'xor'; t = this.peek()) {
      this.next();
      if (this.peek().kind === 'eof') throw this.missing(t, 'an expression');
      left = { kind: t.kind, left, right: this.parseAnd() };
    }
    return left;
  }

  private parseAnd(): Expr {
    let left = this.parseNot();
    for (let t = this.peek(); t.kind === 'and'; t = this.peek()) {
      this.next();
      if (this.peek().kind === 'eof') throw this.missing(t, 'an expression');
      left = { kind: 'and', left, right: this.parseNot() };
    }
    return left;
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
    return this.parseMask(t.name);
  }

  private parseMask(name: string): FieldRef {
    let mask: bigint | null = null;
    for (let op = this.peek(); op.kind === 'bitand'; op = this.peek()) {
      this.next();
      const m = this.peek();
      if (m.kind === 'eof') throw this.missing(op, 'an integer mask');
      if (m.kind !== 'int') throw this.at(m, `${shown(op)} needs an integer mask on its right, not ${shown(m)}.`);
      this.next();
      mask = mask === null ? m.value : mask & m.value;
    }
    return { kind: 'field', name, mask };
  }

  private parseRelation(): Expr {
    const left = this.parseField();
    const t = this.peek();
    switch (t.kind) {
      case 'cmp':
        this.next();
        return { kind: 'compare', op: t.op, left, right: this.parseOperand(t, left.name) };
      case 'contains':
        this.next();
        return { kind: 'contains', left, right: this.parseOperand(t, left.name) };
      case 'matches': {
        this.next();
        const p = this.peek();
        if (p.kind === 'eof') throw this.missing(t, 'a quoted regular expression');
        if (p.kind !== 'string') {
          throw this.at(p, `${shown(t)} needs a quoted regular expression on its right, not ${shown(p)}.`);
        }
        this.next();
        try {
          return { kind: 'matches', left, pattern: p.value, regex: compileRegex(p.value) };
        } catch (e) {
          // V8 repeats the pattern in its message ("Invalid regular expression: /(/i: …"); keep the reason.
          const why = (e instanceof Error ? e.message : String(e)).replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '');
          throw this.at(p, `${p.text} is not a valid regular expression: ${why}`);
        }
      }
      case 'in':
        this.next();
        return { kind: 'in', left, set: this.parseSet(t, left.name) };
      case 'not': {
        // "field not in {…}"; any other "not" after a field is out of place.
        const n = this.peek(1);
        if (n.kind !== 'in') throw this.unexpected(t);
        this.next();
        this.next();
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
    if (t.kind === 'ident') {
      if (this.known(t.name)) {
        this.next();
        this.noteField(t.name);
        return this.parseMask(t.name);
      }
      return { kind: 'value', literal: this.parseValue(field) };
    }
    return { kind: 'value', literal: this.parseValue(field) };
  }

  /** A literal value (never a field); `field` is the one it is compared with. */
  private parseValue(field: string): Literal {
    const t = this.peek();
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

function bareWordMessage(word: string): string {
  const q = quote(word);
  const advice = `to compare with the string, write it in double quotes: ${q}`;
  if (/^[0-9]/.test(word)) return `${q} is not a valid number; ${advice}.`;
  // Hex digits with no separator may be meant as bytes ("deadbeef"); say how to write those.
  const bytesHint = /^(?:[0-9A-Fa-f]{2})+$/.test(word) ? `, or for bytes: ${word.match(/../g)!.join(':')}` : '';
  return `${q} is neither a field nor a value; ${advice}${bytesHint}.`;
}

/** Parses filter text to an AST, checking every field name against `known`. Throws FilterError. */
export function parseFilter(text: string, known: (field: string) => boolean, bareWord: BareWord | null = null): ParseResult {
  return new Parser(text, tokenize(text), known, bareWord).parse();
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
      return `(${e.kind} ${formatExpr(e.left)} ${formatExpr(e.right)})`;
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
