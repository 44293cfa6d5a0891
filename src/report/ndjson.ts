/**
 * --ndjson: one JSON object per line, written as events happen, for streaming and for captures too
 * big for one document. Every object has "type": "startup", "fpdu", "finding" (in capture order,
 * a record's findings right after it), then one "flow" per TCP flow and a last "summary". The
 * flow, finding and summary objects are those of the --json report; octets are hex strings and
 * 64-bit values (tagged offsets) are "0x..." strings, since JSON numbers cannot hold them exactly.
 */
import { crcAsShown } from '../../dissectors/mpa/fields.js';
import { lengthFieldOf, rfcPad } from '../../dissectors/mpa/framer.js';
import type { Finding } from '../vocabulary/findings.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import { segmentInfo } from '../../dissectors/ddp-rdmap/tree.js';
import type { DdpSegmentRecord } from '../../dissectors/ddp-rdmap/types.js';
import { opcodeName } from '../../dissectors/ddp-rdmap/fields.js';
import type { FieldValue, TreeNode } from '../vocabulary/fields.js';
import type { UlpRecord } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import { isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import type { TufRecord } from '../../dissectors/tuf/types.js';
import { findingEventJson } from './finding-json.js';
import { hex, startupJson, type ReportDocument } from './json-report.js';

export function startupEvent(r: StartupRecord): Record<string, unknown> {
  return {
    type: 'startup',
    kind: r.kind,
    flow: r.flow,
    from: r.from,
    to: r.to,
    frames: r.frames,
    ...startupJson(r),
    pdComplete: r.pdComplete,
  };
}

// Built field by field, not by spreading: this runs once per FPDU on the largest captures.
function ddpJson(rec: DdpSegmentRecord): Record<string, unknown> {
  const p = rec.pdu;
  const message = rec.message
    ? { index: rec.message.index, length: rec.message.length, complete: rec.message.complete }
    : null;
  if (p.kind === 'truncated') {
    return {
      malformed: p.reason,
      opcode: p.rdmap?.opcode ?? null,
      opcodeName: p.rdmap ? opcodeName(p.rdmap.opcode) : null,
      info: segmentInfo(rec),
      message,
      rtr: rec.rtr,
      skipped: rec.skipped,
    };
  }
  const tagged = p.kind === 'tagged';
  return {
    tagged,
    last: p.ddp.l,
    dv: p.ddp.dv,
    rv: p.rdmap.rv,
    opcode: p.rdmap.opcode,
    opcodeName: opcodeName(p.rdmap.opcode),
    payloadLength: p.payloadLength,
    stag: tagged ? p.stag : null,
    to: tagged ? `0x${p.to.toString(16)}` : null,
    qn: tagged ? null : p.qn,
    msn: tagged ? null : p.msn,
    mo: tagged ? null : p.mo,
    invalidateStag: tagged ? null : p.invalidateStag,
    info: segmentInfo(rec),
    message,
    rtr: rec.rtr,
    skipped: rec.skipped,
    // Only on the segment that ended a message an upper layer decoded (docs/report.md, NDJSON).
    ...(rec.ulp ? { ulp: ulpJson(rec.ulp) } : {}),
  };
}

/**
 * An upper layer's record: its protocol, Info text and fields by filter name (a field that occurs
 * more than once, as SMB2 commands of a compound do, gives an array).
 */
function ulpJson(u: UlpRecord): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const walk = (nodes: readonly TreeNode[]): void => {
    for (const n of nodes) {
      if (n.field.type !== 'protocol') {
        const v = jsonValue(n.value);
        const had = fields[n.field.abbrev];
        fields[n.field.abbrev] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
      }
      if (n.children) walk(n.children);
    }
  };
  walk(u.tree);
  return { protocol: u.protocol, info: u.info, fields };
}

function jsonValue(v: FieldValue): unknown {
  if (typeof v === 'bigint') return `0x${v.toString(16)}`;
  if (v instanceof Uint8Array) return hex(v);
  return v;
}

export function fpduEvent(r: FpduRecord): Record<string, unknown> {
  return {
    type: 'fpdu',
    flow: r.flow,
    dir: r.dir,
    from: r.from,
    to: r.to,
    frames: r.frames,
    seq: r.seq,
    // Wireshark's relative sequence number of the same octet (its stream offset plus one).
    seqRelative: (r.lenOffset + 1) >>> 0,
    // The field as sent (RFC 5044 §4.1); under a diagnosed mistake the framed length and the PAD the RFC requires follow.
    ulpduLength: lengthFieldOf(r),
    ...(lengthFieldOf(r) !== r.ulpduLength ? { ulpduLengthFramed: r.ulpduLength } : {}),
    pad: r.pad,
    ...(r.pad !== rfcPad(r.ulpduLength) ? { padExpected: rfcPad(r.ulpduLength) } : {}),
    wireSize: r.wireSize,
    markers: r.markers.map((m) => ({ seq: m.seq, reserved: m.reserved, fpduptr: m.fpduptr, expected: m.expected })),
    // Wireshark's form (iwarp_mpa.crc): the wire octets read most significant first.
    crc: crcAsShown(r.crcWire),
    crcComputed: crcAsShown(r.crcComputed),
    crcStatus: r.crcStatus,
    padNonZero: r.padNonZero,
    afterError: r.afterError,
    senderMistake: r.senderMistake ?? null,
    ulpduHead: hex(r.head),
    ddp: isDdpSegmentRecord(r.upper) ? ddpJson(r.upper) : null,
  };
}

/** A TUF record: `"type": "tuf"`, its key as hex, its markers with both copies. */
export function tufEvent(r: TufRecord): Record<string, unknown> {
  return {
    type: 'tuf',
    mode: r.mode,
    flow: r.flow,
    dir: r.dir,
    from: r.from,
    to: r.to,
    frames: r.frames,
    seq: r.seq,
    seqRelative: (r.start + 1) >>> 0,
    wireSize: r.wireSize,
    length: r.length,
    key: r.key,
    keyOk: r.keyOk,
    aligned: r.aligned,
    segments: r.segments,
    pduSeq: (r.seq + (r.pduStart - r.start)) >>> 0,
    markers: r.markers.map((m) => ({ seq: m.seq, npo: m.npo, npo2: m.npo2, split: m.split, target: m.targetSeq })),
    head: hex(r.head),
  };
}

/** A finding; `seqBase` (its direction's relative base, when known) adds `seqRelative`. */
export function findingEvent(f: Finding, seqBase: number | null = null): Record<string, unknown> {
  return { type: 'finding', ...f, seqRelative: findingSeqRelative(f, seqBase) };
}

function findingSeqRelative(f: Finding, seqBase: number | null): number | null {
  return f.seq === null || seqBase === null ? null : (f.seq - seqBase) >>> 0;
}

/** findingEvent as its line of JSON, without building the object (finding-json.ts). */
export function findingEventLine(f: Finding, seqBase: number | null = null): string {
  return findingEventJson(f, findingSeqRelative(f, seqBase));
}

/** The trailing objects: one per flow, then the summary (with the capture block). */
export function closingEvents(doc: ReportDocument): Array<Record<string, unknown>> {
  return [
    ...doc.flows.map((f) => ({ type: 'flow', ...f })),
    { type: 'summary', schema: doc.schema, tool: doc.tool, capture: doc.capture, ...doc.summary },
  ];
}
