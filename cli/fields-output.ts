/**
 * tshark's script habits: `-T fields -e F ... [-E separator=,] [-E header=y]` prints one row per
 * record (a startup frame, an FPDU; its findings aggregated in it) and per finding about no record
 * that -Y shows, the named fields' values
 * separated by tabs; and `-G fields` lists the filter fields in tshark's tab-separated layout.
 */
import type { FieldDef, FieldValue } from '../src/vocabulary/fields.js';
import type { FieldGetter } from '../src/report/fields.js';
import { UsageError } from './options.js';
import { printable } from '../src/report/printable.js';

export interface FieldsFormat {
  fields: readonly FieldDef[];
  separator: string;
  header: boolean;
  /** 'd' double quotes, 's' single, 'n' none (tshark's -E quote). */
  quote: 'd' | 's' | 'n';
  /** Which occurrence of a repeated field: 'f' first, 'l' last, 'a' all (tshark's -E occurrence). */
  occurrence: 'f' | 'l' | 'a';
  aggregator: string;
}

function sepChar(v: string): string {
  return v === '/t' ? '\t' : v === '/s' ? ' ' : v;
}

/** Parses -T, -e and -E as tshark does; null when -T is not "fields" (the normal text output). */
export function parseFieldsOptions(
  t: string | undefined,
  e: readonly string[],
  E: readonly string[],
  lookup: (name: string) => FieldDef | undefined,
): FieldsFormat | null {
  if (t === undefined || t === 'text') {
    if (e.length) throw new UsageError('-e names the fields of -T fields; give -T fields too');
    if (E.length) throw new UsageError('-E sets the format of -T fields; give -T fields too');
    return null;
  }
  if (t === 'json' || t === 'ek' || t === 'pdml' || t === 'psml' || t === 'jsonraw') {
    throw new UsageError(
      `-T ${t} is not supported: use --json for the report or --ndjson for one JSON object per event`,
    );
  }
  if (t !== 'fields') throw new UsageError(`-T: unknown format "${t.slice(0, 40)}" (choose from fields, text)`);
  const names = e
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (names.length === 0)
    throw new UsageError('-T fields needs at least one -e FIELD (mpa-dissect -G fields lists them)');
  const bad = names.filter((n) => lookup(n) === undefined);
  if (bad.length)
    throw new UsageError(
      `-e: some fields aren't valid: ${bad.map((b) => b.slice(0, 60)).join(', ')} (mpa-dissect -G fields lists them)`,
    );
  const fmt: FieldsFormat = {
    fields: names.map((n) => lookup(n)!),
    separator: '\t',
    header: false,
    quote: 'n',
    occurrence: 'a',
    aggregator: ',',
  };
  for (const opt of E) {
    const i = opt.indexOf('=');
    const k = i < 0 ? opt : opt.slice(0, i);
    const v = i < 0 ? '' : opt.slice(i + 1);
    if (k === 'separator') fmt.separator = sepChar(v);
    else if (k === 'aggregator') fmt.aggregator = sepChar(v);
    else if (k === 'header' && (v === 'y' || v === 'n')) fmt.header = v === 'y';
    else if (k === 'quote' && (v === 'd' || v === 's' || v === 'n')) fmt.quote = v;
    else if (k === 'occurrence' && (v === 'f' || v === 'l' || v === 'a')) fmt.occurrence = v;
    else
      throw new UsageError(
        `-E: "${opt.slice(0, 60)}" is not one of separator=C, aggregator=C, header=y|n, quote=d|s|n, occurrence=f|l|a`,
      );
  }
  return fmt;
}

/** A value as tshark prints it in -T fields: hex fields as 0x..., booleans 1/0, bytes as hex. */
export function fieldValueText(f: FieldDef, v: FieldValue): string {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
  if ((typeof v === 'number' || typeof v === 'bigint') && f.base === 'hex') {
    const width = f.type === 'uint64' ? 16 : Math.max(2, Math.ceil((f.bits ?? 32) / 4));
    return `0x${v.toString(16).padStart(width, '0')}`;
  }
  // A string decoded from a packet (an NQN, an iSER key) may hold control characters: one row stays one row.
  return typeof v === 'string' ? printable(v) : String(v);
}

export function fieldsHeader(fmt: FieldsFormat): string {
  return fmt.fields.map((f) => quoted(fmt, f.abbrev)).join(fmt.separator);
}

/**
 * tshark's -E quote: d and s wrap every value. With n (the default) a value holding the separator
 * (frames 6,7,8 under -E separator=,) is wrapped in double quotes all the same, inner quotes
 * doubled as RFC 4180 does, so a CSV reader keeps the columns apart.
 */
function quoted(fmt: FieldsFormat, s: string): string {
  if (fmt.quote === 'd') return `"${s}"`;
  if (fmt.quote === 's') return `'${s}'`;
  return fmt.separator !== '' && s.includes(fmt.separator) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One row: each field's values (every occurrence, or the first or last), joined by the aggregator. */
export function fieldsRow(fmt: FieldsFormat, get: FieldGetter): string {
  return fmt.fields
    .map((f) => {
      const all = get(f.abbrev) ?? [];
      const vals = fmt.occurrence === 'a' ? all : fmt.occurrence === 'f' ? all.slice(0, 1) : all.slice(-1);
      if (vals.length === 0) return '';
      return quoted(fmt, vals.map((v) => fieldValueText(f, v)).join(fmt.aggregator));
    })
    .join(fmt.separator);
}

const FT: Record<FieldDef['type'], string> = {
  uint: 'FT_UINT32',
  uint64: 'FT_UINT64',
  bool: 'FT_BOOLEAN',
  string: 'FT_STRING',
  bytes: 'FT_BYTES',
  protocol: 'FT_PROTOCOL',
};

/** Wireshark's protocol for a field prefix: DDP and RDMAP are one dissector there. */
function protocolOf(abbrev: string): string {
  if (abbrev === '_ws.expert' || abbrev.startsWith('_ws.expert.')) return '_ws.expert';
  const p = abbrev.split('.')[0]!;
  return p === 'iwarp_ddp' || p === 'iwarp_rdma' ? 'iwarp_ddp_rdmap' : p;
}

const PROTOCOL_NAMES: Record<string, string> = {
  frame: 'Frame',
  tcp: 'Transmission Control Protocol',
  ip: 'Internet Protocol Version 4',
  ipv6: 'Internet Protocol Version 6',
  iwarp_mpa: 'iWARP Marker Protocol data unit Aligned framing',
  iwarp_ddp_rdmap: 'iWARP Direct Data Placement and Remote Direct Memory Access Protocol',
  finding: 'mpa-dissect finding (as an expert info)',
  _ws: 'Wireshark',
  '_ws.expert': 'Expert Info',
};

/** Short names as tshark -G protocols gives them (its second column). */
const SHORT_NAMES: Record<string, string> = {
  frame: 'Frame',
  tcp: 'TCP',
  ip: 'IPv4',
  ipv6: 'IPv6',
  iwarp_mpa: 'IWARP_MPA',
  iwarp_ddp_rdmap: 'IWARP_DDP_RDMAP',
  finding: 'Finding',
  '_ws.expert': 'Expert',
};

/** Each protocol's long name: the table above, else its own protocol field's name (the upper layers'). */
function protocolNames(fields: Iterable<FieldDef>): Map<string, string> {
  const names = new Map<string, string>();
  for (const f of fields) {
    const proto = protocolOf(f.abbrev);
    if (!names.has(proto)) names.set(proto, PROTOCOL_NAMES[proto] ?? proto);
    if (f.type === 'protocol' && f.abbrev === proto && PROTOCOL_NAMES[proto] === undefined) names.set(proto, f.name);
  }
  return names;
}

/** `-G protocols` as tshark prints it: "name<TAB>short name<TAB>filter name" per protocol. */
export function glossaryProtocols(fields: Iterable<FieldDef>): string {
  const out: string[] = [];
  for (const [proto, name] of protocolNames(fields))
    out.push([name, SHORT_NAMES[proto] ?? proto.toUpperCase(), proto].join('\t'));
  return out.join('\n');
}

/**
 * `-G values` as tshark prints it: "V<TAB>field<TAB>value<TAB>name" for each named value of an
 * integer field (value in hex for a hex field, as tshark), and "T<TAB>field<TAB>true<TAB>false"
 * for booleans with their own words (none here: ours are True/False).
 */
export function glossaryValues(fields: Iterable<FieldDef>): string {
  const out: string[] = [];
  for (const f of fields) {
    if (!f.strings) continue;
    const keys = Object.keys(f.strings)
      .map(Number)
      .sort((a, b) => a - b);
    for (const k of keys)
      out.push(['V', f.abbrev, f.base === 'hex' ? `0x${k.toString(16)}` : String(k), f.strings[k]!].join('\t'));
  }
  return out.join('\n');
}

/**
 * `-G fields` as tshark prints it: a "P<TAB>name<TAB>abbrev" line per protocol, then
 * "F<TAB>name<TAB>abbrev<TAB>type<TAB>protocol<TAB>base<TAB>bitmask<TAB>blurb" per field.
 */
export function glossaryFields(fields: Iterable<FieldDef>): string {
  const out: string[] = [];
  const seen = new Set<string>();
  const list = [...fields];
  const names = protocolNames(list);
  for (const f of list) {
    const proto = protocolOf(f.abbrev);
    if (!seen.has(proto)) {
      seen.add(proto);
      out.push(['P', names.get(proto) ?? proto, proto].join('\t'));
    }
    if (f.type === 'protocol' && f.abbrev === proto) continue;
    const base = f.type === 'uint' || f.type === 'uint64' ? (f.base === 'hex' ? 'BASE_HEX' : 'BASE_DEC') : 'BASE_NONE';
    out.push(
      [
        'F',
        f.name,
        f.abbrev,
        FT[f.type],
        proto,
        base,
        `0x${(f.mask ?? 0).toString(16)}`,
        f.blurb.replace(/[\t\n]/g, ' '),
      ].join('\t'),
    );
  }
  return out.join('\n');
}
