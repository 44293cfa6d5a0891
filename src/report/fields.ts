/**
 * What a display filter (-Y, --write-filter) can name, and each event's values for those names.
 *
 * The protocol fields are the declared tables (MPA, DDP, RDMAP): a record's values are read off
 * its detail tree, so the filter, -V and the tables never disagree. This module adds the fields
 * of the event itself (frame numbers, flow, endpoints) and of findings, in Wireshark's spelling
 * where Wireshark has one.
 */
import { indexFields, treeNode, type FieldDef, type FieldValue, type TreeNode } from '../vocabulary/fields.js';
import type { Finding } from '../vocabulary/findings.js';
import { MPA_FIELD_LIST } from '../../dissectors/mpa/fields.js';
import { mpaFpduTree, mpaStartupTree } from '../../dissectors/mpa/tree.js';
import { DDP_ANALYSIS_FIELDS, DDP_FIELDS, RDMA_FIELDS } from '../../dissectors/ddp-rdmap/fields.js';
import { ddpTree } from '../../dissectors/ddp-rdmap/tree.js';
import { isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { compileFilter, type CompiledFilter, type FilterType } from './filter/filter.js';
import { isFpdu, isTuf, type EventGroup, type MpaRecord } from './events.js';
import { TUF_FIELD_LIST } from '../../dissectors/tuf/fields.js';
import { tufTree } from '../../dissectors/tuf/tree.js';
import { ULP_SPECS } from '../analysis/ulp-specs.js';
import { isFrameFact, type FrameFacts } from './frame-facts.js';

const f = (
  abbrev: string,
  name: string,
  type: FieldDef['type'],
  blurb: string,
  extra: Partial<FieldDef> = {},
): FieldDef => ({
  abbrev,
  name,
  type,
  blurb,
  ...extra,
});

/** Fields of events and findings (not of a protocol header). */
export const REPORT_FIELDS: readonly FieldDef[] = [
  f('frame', 'Frame', 'protocol', 'Any event that names frames (bare "-Y frame", as in tshark)'),
  f(
    'frame.number',
    'Frame Number',
    'uint',
    'Frames that carried the record, or that the finding names (any of them matches)',
  ),
  f('tcp', 'Transmission Control Protocol', 'protocol', 'Any event of a TCP flow'),
  f(
    'tcp.stream',
    'Stream index',
    'uint',
    "TCP stream index as in Wireshark, counted from 0: the JSON report's flow id minus 1",
  ),
  f('tcp.srcport', 'Source Port', 'uint', 'TCP port of the sender', { width: 16 }),
  f('tcp.dstport', 'Destination Port', 'uint', 'TCP port of the receiver', { width: 16 }),
  f('tcp.port', 'Source or Destination Port', 'uint', 'Either TCP port', { width: 16 }),
  f('ip', 'Internet Protocol Version 4', 'protocol', 'Any event of an IPv4 flow'),
  f('ip.src', 'Source Address', 'string', 'IPv4 address of the sender: ip.src == 10.0.0.1, ip.src == 10.0.0.0/24'),
  f('ip.dst', 'Destination Address', 'string', 'IPv4 address of the receiver'),
  f('ip.addr', 'Source or Destination Address', 'string', 'Either IPv4 address'),
  f('ipv6', 'Internet Protocol Version 6', 'protocol', 'Any event of an IPv6 flow'),
  f(
    'ipv6.src',
    'Source Address',
    'string',
    'IPv6 address of the sender (RFC 5952 form): ipv6.src == fd00::1, ipv6.src == fd00::/64',
  ),
  f('ipv6.dst', 'Destination Address', 'string', 'IPv6 address of the receiver'),
  f('ipv6.addr', 'Source or Destination Address', 'string', 'Either IPv6 address'),
  // Per-frame facts (src/report/frame-facts.ts): one value per frame that carried the record.
  f('frame.time', 'Arrival Time', 'string', 'Absolute time the frame was captured, as tshark prints it (local time)'),
  f('frame.time_epoch', 'Epoch Time', 'string', 'Seconds since the epoch when the frame was captured'),
  f('frame.time_relative', 'Time since reference or first frame', 'string', 'Seconds since the first frame'),
  f('frame.time_delta', 'Time delta from previous captured frame', 'string', 'Seconds since the frame before'),
  f('frame.len', 'Frame length on the wire', 'uint', 'Octets of the frame as sent'),
  f('frame.cap_len', 'Frame length stored into the capture file', 'uint', 'Octets of the frame captured'),
  f(
    'tcp.seq',
    'Sequence Number',
    'uint',
    'Relative to the SYN (or the first octet seen) as in Wireshark; absolute with -o tcp.relative_sequence_numbers:FALSE',
  ),
  f('tcp.seq_raw', 'Sequence Number (raw)', 'uint', 'Absolute TCP sequence number of the segment'),
  f(
    'tcp.ack',
    'Acknowledgment Number',
    'uint',
    'Relative as tcp.seq (absolute with tcp.relative_sequence_numbers:FALSE)',
  ),
  f('tcp.ack_raw', 'Acknowledgment number (raw)', 'uint', 'Absolute TCP acknowledgement number'),
  f('tcp.len', 'TCP Segment Len', 'uint', 'Payload octets of the segment'),
  f('tcp.flags', 'Flags', 'uint', 'TCP flags (12 bits)', { base: 'hex', width: 16, bits: 16 }),
  f('tcp.flags.fin', 'Fin', 'bool', 'FIN flag', { mask: 0x1, bits: 12 }),
  f('tcp.flags.syn', 'Syn', 'bool', 'SYN flag', { mask: 0x2, bits: 12 }),
  f('tcp.flags.reset', 'Reset', 'bool', 'RST flag', { mask: 0x4, bits: 12 }),
  f('tcp.flags.push', 'Push', 'bool', 'PSH flag', { mask: 0x8, bits: 12 }),
  f('tcp.flags.ack', 'Acknowledgment', 'bool', 'ACK flag', { mask: 0x10, bits: 12 }),
  f('tcp.flags.urg', 'Urgent', 'bool', 'URG flag', { mask: 0x20, bits: 12 }),
  f('tcp.flags.ece', 'ECN-Echo', 'bool', 'ECE flag', { mask: 0x40, bits: 12 }),
  f('tcp.flags.cwr', 'Congestion Window Reduced', 'bool', 'CWR flag', { mask: 0x80, bits: 12 }),
  f('finding', 'Finding', 'protocol', 'A finding (on a record: any finding raised on it)'),
  f('finding.rule', 'Rule', 'string', 'Rule id, e.g. "mpa.crc-mismatch" (mpa-dissect rules lists them)'),
  f('finding.severity', 'Severity', 'string', '"error", "warning" or "info" (after --rules overrides)'),
  f(
    'finding.code',
    'MPA error code',
    'uint',
    'RFC 5044/6581 MPA error code of the rule (absent when the rule has none)',
  ),
  f('finding.message', 'Message', 'string', 'What was found, in words'),
  f('finding.from', 'Sender', 'string', 'ADDR:PORT of the sender the finding is about'),
  f('finding.seq', 'Sequence number', 'uint', 'Absolute TCP sequence number the finding points at'),
  // Findings as tshark exposes expert infos, so scripts written for tshark read them unchanged.
  f('_ws.expert', 'Expert Info', 'protocol', 'A finding, as "Expert Info (Severity/Protocol): message"'),
  f('_ws.expert.message', 'Message', 'string', "The finding's message (finding.message)"),
  f(
    '_ws.expert.severity',
    'Severity level',
    'uint',
    "Wireshark's expert severity: 8388608 error, 6291456 warning, 4194304 note (our info)",
    { strings: { 8388608: 'Error', 6291456: 'Warning', 4194304: 'Note' } },
  ),
];

/** Wireshark's expert severities (epan/proto.h PI_ERROR, PI_WARN, PI_NOTE) for ours. */
const EXPERT_SEVERITY = { error: 0x00800000, warning: 0x00600000, info: 0x00400000 } as const;
const EXPERT_WORD = { error: 'Error', warning: 'Warning', info: 'Note' } as const;

/** Names of the upper layers' fields: read off a record's tree like the iwarp_ ones. */

/** Every name a filter may use, declared once. */
export const FILTER_FIELDS: ReadonlyMap<string, FieldDef> = indexFields(
  MPA_FIELD_LIST,
  DDP_FIELDS,
  RDMA_FIELDS,
  DDP_ANALYSIS_FIELDS,
  TUF_FIELD_LIST,
  ...ULP_SPECS.map((s) => s.fields),
  REPORT_FIELDS,
);

/** The upper layers' field names: found in a record's tree (its ULP record), like the iwarp_* ones. */

export function knownField(name: string): boolean {
  return FILTER_FIELDS.has(name);
}

const ADDRESS_FIELDS: ReadonlySet<string> = new Set(['ip.src', 'ip.dst', 'ip.addr']);
const IPV6_FIELDS: ReadonlySet<string> = new Set(['ipv6.src', 'ipv6.dst', 'ipv6.addr']);
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** Lets "ip.src == 10.0.0.1" be written unquoted, as in Wireshark (the values are strings here). */
export function addressWord(field: string, word: string): boolean {
  return ADDRESS_FIELDS.has(field) && IPV4.test(word);
}

/**
 * A field's type as the display filter checks it (tshark's type errors). Address fields hold
 * strings but filter as addresses (CIDR included); integers are as wide as Wireshark's.
 */
export function filterType(name: string): FilterType | undefined {
  const d = FILTER_FIELDS.get(name);
  if (!d) return undefined;
  if (ADDRESS_FIELDS.has(name)) return { kind: 'ipv4' };
  if (IPV6_FIELDS.has(name)) return { kind: 'ipv6' };
  switch (d.type) {
    case 'protocol':
      return { kind: 'label' };
    case 'uint':
    case 'uint64':
      return {
        kind: 'uint',
        bits: d.width ?? (d.mask !== undefined ? d.bits : undefined) ?? (d.type === 'uint64' ? 64 : 32),
      };
    case 'bool':
    case 'string':
    case 'bytes':
      return { kind: d.type };
  }
}

/** Compiles a display filter over these fields, with tshark's type checks: what -Y uses. */
export function compileEventFilter(text: string): CompiledFilter {
  return compileFilter(text, knownField, addressWord, filterType);
}

export type FieldGetter = (name: string) => readonly FieldValue[] | undefined;
type FieldMap = Map<string, FieldValue[]>;

function add(m: FieldMap, k: string, v: FieldValue): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

/** "10.0.0.1:40001" or "[fd00::1]:40009" to address, port and family. */
export function splitEndpoint(ep: string): { addr: string; port: number; v6: boolean } | null {
  const m = /^\[(.*)\]:(\d+)$/.exec(ep) ?? /^([^:]*):(\d+)$/.exec(ep);
  if (!m) return null;
  return { addr: m[1]!, port: Number(m[2]), v6: ep.startsWith('[') };
}

function endpoints(m: FieldMap, from: string | null, to: string | null): void {
  const s = from ? splitEndpoint(from) : null;
  const d = to ? splitEndpoint(to) : null;
  const any = s ?? d;
  if (any) add(m, any.v6 ? 'ipv6' : 'ip', any.v6 ? 'IPv6' : 'IPv4');
  if (s) {
    add(m, 'tcp.srcport', s.port);
    add(m, 'tcp.port', s.port);
    add(m, s.v6 ? 'ipv6.src' : 'ip.src', s.addr);
    add(m, s.v6 ? 'ipv6.addr' : 'ip.addr', s.addr);
  }
  if (d) {
    add(m, 'tcp.dstport', d.port);
    add(m, 'tcp.port', d.port);
    add(m, d.v6 ? 'ipv6.dst' : 'ip.dst', d.addr);
    add(m, d.v6 ? 'ipv6.addr' : 'ip.addr', d.addr);
  }
}

/** Wireshark's tcp.stream counts from 0; our flow ids (the report's contract) from 1. */
export function tcpStream(flowId: number): number {
  return flowId - 1;
}

function flatten(m: FieldMap, nodes: readonly TreeNode[]): void {
  for (const n of nodes) {
    add(m, n.field.abbrev, n.value);
    if (n.children) flatten(m, n.children);
  }
}

/** The detail tree of a record: MPA, then DDP/RDMAP when the FPDU carried a segment. */
export function recordTree(r: MpaRecord): TreeNode[] {
  if (isTuf(r)) return tufTree(r);
  if (!isFpdu(r)) return mpaStartupTree(r);
  const t = mpaFpduTree(r);
  return isDdpSegmentRecord(r.upper) ? [...t, ...ddpTree(r.upper), ...(r.upper.ulp?.tree ?? [])] : t;
}

function findingOnly(m: FieldMap, x: Finding): void {
  add(m, 'finding', 'Finding');
  add(m, 'finding.rule', x.rule);
  add(m, 'finding.severity', x.severity);
  if (x.rfcErrorCode !== null) add(m, 'finding.code', x.rfcErrorCode);
  add(m, 'finding.message', x.message);
  if (x.from !== null) add(m, 'finding.from', x.from);
  if (x.seq !== null) add(m, 'finding.seq', x.seq);
  add(m, '_ws.expert', `Expert Info (${EXPERT_WORD[x.severity]}/Protocol): ${x.message}`);
  add(m, '_ws.expert.message', x.message);
  add(m, '_ws.expert.severity', EXPERT_SEVERITY[x.severity]);
}

/** Joins several sources: a name's values are those of every source that has it. */
function joined(sources: ReadonlyArray<FieldGetter>): FieldGetter {
  if (sources.length === 1) return sources[0]!;
  return (name) => {
    let out: FieldValue[] | undefined;
    let only: readonly FieldValue[] | undefined;
    for (const s of sources) {
      const v = s(name);
      if (!v || v.length === 0) continue;
      if (only === undefined && out === undefined) only = v;
      else {
        out ??= [...only!];
        for (const x of v) out.push(x);
      }
    }
    return out ?? only;
  };
}

/** Field families a record answers without its protocol tree (frame, TCP and IP, findings). */
const BASE_FAMILY = /^(frame|tcp|ip|ipv6|finding|_ws)(\.|$)/;

/**
 * Builds the field values of events. `peerOf` tells a finding's receiver from its flow and sender
 * (findings name only the sender).
 */
export class EventFields {
  constructor(
    private readonly peerOf: (flow: number | null, from: string | null) => string | null,
    /** Per-frame facts (frame.time*, tcp.seq, ...), kept only when a field or filter names one. */
    private readonly facts: FrameFacts | null = null,
  ) {}

  /** The record's own fields; its protocol tree is built only if a protocol field is asked for. */
  private recordSource(r: MpaRecord): FieldGetter {
    const base: FieldMap = new Map();
    if (r.frames.length) add(base, 'frame', 'Frame');
    for (const fr of r.frames) add(base, 'frame.number', fr);
    add(base, 'tcp', 'TCP');
    add(base, 'tcp.stream', tcpStream(r.flow));
    endpoints(base, r.from, r.to);
    let tree: FieldMap | null = null;
    const facts = this.facts;
    return (name) => {
      const v = base.get(name);
      if (v) return v;
      if (facts !== null && isFrameFact(name)) return facts.values(name, r.frames);
      // The record's own families are answered above; every other name is a protocol's (MPA, DDP,
      // RDMAP, TUF, and the upper layers above RDMAP: smb_direct, smb2, rpcordma, rpc, nfs, ...).
      if (BASE_FAMILY.test(name)) return undefined;
      if (tree === null) {
        tree = new Map();
        flatten(tree, recordTree(r));
      }
      return tree.get(name);
    };
  }

  private findingSource(x: Finding, withContext: boolean): FieldGetter {
    const m: FieldMap = new Map();
    findingOnly(m, x);
    if (withContext) {
      if (x.frames.length) add(m, 'frame', 'Frame');
      for (const fr of x.frames) add(m, 'frame.number', fr);
      if (x.flow !== null) {
        add(m, 'tcp', 'TCP');
        add(m, 'tcp.stream', tcpStream(x.flow));
      }
      endpoints(m, x.from, this.peerOf(x.flow, x.from));
    }
    const facts = withContext ? this.facts : null;
    if (facts === null) return (name) => m.get(name);
    return (name) => m.get(name) ?? (isFrameFact(name) ? facts.values(name, x.frames) : undefined);
  }

  /**
   * Getters for the lines of one group: the record line (its fields plus the finding.* fields of
   * every finding raised on it) and each finding line (its fields plus the record's). The record's
   * tree is built at most once per group, and only if a protocol field is asked for.
   */
  group(g: EventGroup): { record: FieldGetter | null; findings: FieldGetter[] } {
    const rec = g.record ? this.recordSource(g.record) : null;
    return {
      record: rec ? joined([rec, ...g.findings.map((x) => this.findingSource(x, false))]) : null,
      // A finding line's own frames, stream and endpoints come first, so its frame.number lists the
      // frames the finding names once (not the record's again); the record adds its protocol fields.
      findings: g.findings.map((x) => {
        const own = this.findingSource(x, true);
        return rec ? (name) => own(name) ?? rec(name) : own;
      }),
    };
  }
}

/**
 * The TCP line -V prints above a record's tree, as tshark's "Transmission Control Protocol, Src
 * Port: ..., Seq: ..." (of the octet the record starts at): the sequence number relative to its
 * direction as Wireshark shows it, or absolute when `base` is undefined (-o
 * tcp.relative_sequence_numbers:FALSE); the raw number under it either way.
 */
export function tcpNode(r: MpaRecord, base: number | undefined): TreeNode {
  const s = splitEndpoint(r.from);
  const d = splitEndpoint(r.to);
  const seq = base === undefined ? r.seq : (r.seq - base) >>> 0;
  const F = (name: string): FieldDef => FILTER_FIELDS.get(name)!;
  const children: TreeNode[] = [
    treeNode(F('tcp.seq'), seq, {
      offset: 0,
      length: 0,
      display: base === undefined ? String(seq) : `${seq}    (relative sequence number)`,
    }),
    treeNode(F('tcp.seq_raw'), r.seq, { offset: 0, length: 0 }),
  ];
  return treeNode(F('tcp'), 'Transmission Control Protocol', {
    offset: 0,
    length: 0,
    display: `Src Port: ${s?.port ?? '?'}, Dst Port: ${d?.port ?? '?'}, Seq: ${seq}`,
    children,
  });
}
