/**
 * Display-filter evaluation: the AST compiled once into closures, then run per record.
 *
 * Multi-valued fields follow Wireshark ≥ 3.6: "==" is true when ANY value equals, "!=" when NO
 * value equals ("all_ne"), "===" when ALL equal, "!==" when ANY differs; ordering, contains and
 * matches are true when any value satisfies them. A comparison with an absent field is false,
 * "!=" included (tshark: "tcp.port != 80" does not match a UDP packet). The parser rejects type
 * mismatches when it knows the fields' types; values of kinds that still cannot be compared (an
 * untyped field) make that pair false rather than an error.
 *
 * and/or/xor nodes hold lists and are evaluated in loops: a chain of 16,000 tests costs no stack.
 */
import type { FieldValue } from '../../vocabulary/fields.js';
import { compareAddress, parseAddress, type Address } from './address.js';
import type { CmpOp } from './lexer.js';
import type { Expr, FieldRef, Literal, Operand, SetItem } from './parser.js';

export type FieldGetter = (field: string) => readonly FieldValue[] | undefined;
export type Predicate = (get: FieldGetter) => boolean;

/** One value to compare; raw carries a string literal's exact octets, for bytes fields. */
interface Item {
  readonly v: FieldValue;
  readonly raw?: Uint8Array;
  /** An address or network literal; field values (address strings) are compared with it. */
  readonly net?: Address;
}

const utf8 = new TextEncoder();
const latin1 = new TextDecoder('latin1');
const NONE: readonly Item[] = [];

function numeric(v: FieldValue): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  return undefined;
}

/** Numbers and bigints compare exactly across kinds with < and >; NaN compares with nothing. */
function numCmp(a: number | bigint, b: number | bigint): number | undefined {
  if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Code-point order, which is the UTF-8 byte order Wireshark compares strings in. */
function strCmp(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return x.done && y.done ? 0 : x.done ? -1 : 1;
    const cx = x.value.codePointAt(0)!;
    const cy = y.value.codePointAt(0)!;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

function bytesCmp(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}

function asBytes(it: Item): Uint8Array | undefined {
  if (it.v instanceof Uint8Array) return it.v;
  if (typeof it.v === 'string') return it.raw ?? utf8.encode(it.v);
  return undefined;
}

/** Three-way comparison, or undefined when the two kinds of value do not compare. */
function compareValues(a: Item, b: Item): number | undefined {
  if (b.net) {
    const v = typeof a.v === 'string' ? parseAddress(a.v, b.net.family) : undefined;
    return v === undefined ? undefined : compareAddress(v, b.net);
  }
  const na = numeric(a.v);
  const nb = numeric(b.v);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined ? numCmp(na, nb) : undefined;
  if (typeof a.v === 'string' && typeof b.v === 'string') return strCmp(a.v, b.v);
  // A bytes field against a string (or the reverse) compares octets, as Wireshark allows.
  if (a.v instanceof Uint8Array || b.v instanceof Uint8Array) {
    const x = asBytes(a);
    const y = asBytes(b);
    return x && y ? bytesCmp(x, y) : undefined;
  }
  return undefined;
}

function indexOfBytes(hay: Uint8Array, needle: Uint8Array): number {
  if (needle.length === 0) return 0;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function containsValue(a: Item, b: Item): boolean {
  if (typeof a.v === 'string' && typeof b.v === 'string' && b.raw === undefined) return a.v.includes(b.v);
  const x = asBytes(a);
  const y = asBytes(b);
  return x !== undefined && y !== undefined && indexOfBytes(x, y) >= 0;
}

function literalItem(l: Literal): Item {
  switch (l.type) {
    case 'string':
      // Only keep the octets when they differ from the text's UTF-8 ("\xff"), to keep the fast path.
      return bytesCmp(utf8.encode(l.value), l.bytes) === 0 ? { v: l.value } : { v: l.value, raw: l.bytes };
    case 'addr':
      return { v: '', net: l.value };
    default:
      return { v: l.value };
  }
}

function masked(v: FieldValue, mask: bigint): Item | undefined {
  let n: bigint;
  if (typeof v === 'bigint') n = v;
  else if (typeof v === 'number' && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === 'boolean') n = v ? 1n : 0n;
  else return undefined;
  return { v: n & mask };
}

function fieldItems(f: FieldRef, get: FieldGetter): readonly Item[] {
  const vs = get(f.name);
  if (!vs || vs.length === 0) return NONE;
  const out: Item[] = [];
  for (const v of vs) {
    if (f.mask === null) out.push({ v });
    else {
      const m = masked(v, f.mask);
      if (m) out.push(m);
    }
  }
  return out;
}

function operandItems(o: Operand): (get: FieldGetter) => readonly Item[] {
  if (o.kind === 'field') return (get) => fieldItems(o, get);
  const items = [literalItem(o.literal)];
  return () => items;
}

const some = <T>(xs: readonly T[], f: (x: T) => boolean): boolean => xs.some(f);
const every = <T>(xs: readonly T[], f: (x: T) => boolean): boolean => xs.every(f);

type PairTest = (L: readonly Item[], R: readonly Item[]) => boolean;

const ordered =
  (ok: (c: number) => boolean): PairTest =>
  (L, R) =>
    some(L, (a) =>
      some(R, (b) => {
        const c = compareValues(a, b);
        return c !== undefined && ok(c);
      }),
    );

const PAIR_TESTS: Readonly<Record<string, PairTest>> = {
  any_eq: ordered((c) => c === 0),
  any_ne: ordered((c) => c !== 0),
  all_eq: (L, R) => every(L, (a) => every(R, (b) => compareValues(a, b) === 0)),
  all_ne: (L, R) =>
    every(L, (a) =>
      every(R, (b) => {
        const c = compareValues(a, b);
        return c !== undefined && c !== 0;
      }),
    ),
  gt: ordered((c) => c > 0),
  ge: ordered((c) => c >= 0),
  lt: ordered((c) => c < 0),
  le: ordered((c) => c <= 0),
};

type SetTest = (a: Item) => boolean;

function setTest(set: readonly SetItem[]): SetTest {
  const tests = set.map((s): SetTest => {
    if (s.kind === 'one') {
      const v = literalItem(s.value);
      return (a) => compareValues(a, v) === 0;
    }
    const lo = literalItem(s.lo);
    const hi = literalItem(s.hi);
    return (a) => {
      const l = compareValues(a, lo);
      const h = compareValues(a, hi);
      return l !== undefined && h !== undefined && l >= 0 && h <= 0;
    };
  });
  return (a) => tests.some((t) => t(a));
}

/**
 * The common test "field OP literal", without wrapping each value in an Item: a filter of
 * thousands of such tests runs per record, so this path allocates nothing. Same semantics as
 * PAIR_TESTS with one literal on the right.
 */
function compareWithLiteral(name: string, op: CmpOp, lit: Item): Predicate {
  const one: { v: FieldValue } = { v: 0 };
  const cmp = (v: FieldValue): number | undefined => {
    one.v = v;
    return compareValues(one, lit);
  };
  const every = op === 'all_eq' || op === 'all_ne';
  const ok: (c: number | undefined) => boolean =
    op === 'any_eq' || op === 'all_eq'
      ? (c) => c === 0
      : op === 'any_ne' || op === 'all_ne'
        ? (c) => c !== undefined && c !== 0
        : op === 'gt'
          ? (c) => c !== undefined && c > 0
          : op === 'ge'
            ? (c) => c !== undefined && c >= 0
            : op === 'lt'
              ? (c) => c !== undefined && c < 0
              : (c) => c !== undefined && c <= 0;
  return (get) => {
    const vs = get(name);
    if (!vs || vs.length === 0) return false;
    if (every) {
      for (const v of vs) if (!ok(cmp(v))) return false;
      return true;
    }
    for (const v of vs) if (ok(cmp(v))) return true;
    return false;
  };
}

/** Compiles an AST into a predicate over a record's field values. */
export function compileExpr(e: Expr): Predicate {
  switch (e.kind) {
    case 'and': {
      const ts = e.terms.map(compileExpr);
      return (get) => {
        for (const t of ts) if (!t(get)) return false;
        return true;
      };
    }
    case 'or': {
      const ts = e.terms.map(compileExpr);
      return (get) => {
        for (const t of ts) if (t(get)) return true;
        return false;
      };
    }
    case 'xor': {
      const ts = e.terms.map(compileExpr);
      return (get) => {
        let odd = false;
        for (const t of ts) if (t(get)) odd = !odd;
        return odd;
      };
    }
    case 'not': {
      const x = compileExpr(e.expr);
      return (get) => !x(get);
    }
    case 'exists': {
      const name = e.field.name;
      return (get) => (get(name)?.length ?? 0) > 0;
    }
    case 'nonzero': {
      const f = e.field;
      return (get) => fieldItems(f, get).some((i) => i.v !== 0n);
    }
    case 'compare': {
      const left = e.left;
      if (e.right.kind === 'value' && left.mask === null)
        return compareWithLiteral(left.name, e.op, literalItem(e.right.literal));
      const right = operandItems(e.right);
      const test = PAIR_TESTS[e.op]!;
      return (get) => {
        const L = fieldItems(left, get);
        if (L.length === 0) return false;
        const R = right(get);
        return R.length > 0 && test(L, R);
      };
    }
    case 'contains': {
      const left = e.left;
      const right = operandItems(e.right);
      return (get) => {
        const L = fieldItems(left, get);
        if (L.length === 0) return false;
        const R = right(get);
        return some(L, (a) => some(R, (b) => containsValue(a, b)));
      };
    }
    case 'matches': {
      const left = e.left;
      const re = e.regex;
      return (get) =>
        fieldItems(left, get).some((a) =>
          typeof a.v === 'string' ? re.test(a.v) : a.v instanceof Uint8Array ? re.test(latin1.decode(a.v)) : false,
        );
    }
    case 'in': {
      const left = e.left;
      const test = setTest(e.set);
      return (get) => fieldItems(left, get).some(test);
    }
  }
}
