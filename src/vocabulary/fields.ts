/**
 * Field declarations, Wireshark hf-array style: each protocol declares its fields once in a
 * table; the -V tree, the JSON, the display filter and the detail views all read them.
 */

export type FieldType = 'uint' | 'uint64' | 'bool' | 'string' | 'bytes' | 'protocol';

export interface FieldDef {
  /** Filter name, Wireshark's where Wireshark has the field: "iwarp_mpa.ulpdu_length". */
  readonly abbrev: string;
  /** Label in the detail tree: "ULPDU Length". */
  readonly name: string;
  readonly type: FieldType;
  /** Display base for integers. */
  readonly base?: 'dec' | 'hex';
  /** Bit mask within the containing octets, for flag and sub-byte fields (display only). */
  readonly mask?: number;
  /** Width in bits of the containing field, when mask is given (8, 16, 32). */
  readonly bits?: number;
  /**
   * Width in bits of an unmasked integer field when it is not 32 (uint) or 64 (uint64), as
   * Wireshark's FT_UINT8/FT_UINT16: a filter value wider than this is an error, as in tshark.
   */
  readonly width?: number;
  /** Names of values (opcodes, error codes). */
  readonly strings?: Readonly<Record<number, string>>;
  /** One-line description. */
  readonly blurb: string;
}

export type FieldValue = number | bigint | string | boolean | Uint8Array;

/** One node of a detail tree. */
export interface TreeNode {
  readonly field: FieldDef;
  readonly value: FieldValue;
  /** Text shown after the label; defaults to the formatted value. */
  readonly display?: string;
  /** Offset and length within the bytes the tree describes (for -x highlighting), if known. */
  readonly offset?: number;
  readonly length?: number;
  readonly children?: readonly TreeNode[];
}

/** A field declaration: the tables read as one line per field. */
export function field(
  abbrev: string,
  name: string,
  type: FieldType,
  blurb: string,
  extra: Partial<FieldDef> = {},
): FieldDef {
  return { abbrev, name, type, blurb, ...extra };
}

/** A tree node, with only the options given (no undefined-valued keys). */
export function treeNode(
  f: FieldDef,
  value: FieldValue,
  o: { offset?: number; length?: number; display?: string; children?: readonly TreeNode[] } = {},
): TreeNode {
  const n: { -readonly [K in keyof TreeNode]: TreeNode[K] } = { field: f, value };
  if (o.display !== undefined) n.display = o.display;
  if (o.offset !== undefined) n.offset = o.offset;
  if (o.length !== undefined) n.length = o.length;
  if (o.children !== undefined) n.children = o.children;
  return n;
}

/** Builds a lookup from abbrev to field, refusing duplicates (a field is declared once). */
export function indexFields(...tables: ReadonlyArray<readonly FieldDef[]>): ReadonlyMap<string, FieldDef> {
  const m = new Map<string, FieldDef>();
  for (const t of tables) {
    for (const f of t) {
      if (m.has(f.abbrev)) throw new Error(`field ${f.abbrev} declared twice`);
      m.set(f.abbrev, f);
    }
  }
  return m;
}
