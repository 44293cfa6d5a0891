/**
 * Wireshark-style detail trees for MPA startup frames and FPDUs. Every node names a field declared
 * once in fields.ts; this module only fills values in. Offsets are relative to the first octet of
 * the startup frame or FPDU (its leading marker when one sits there), for -x highlighting.
 */

import type { FieldDef, FieldValue, TreeNode } from '../../src/vocabulary/fields.js';
import { crcAsShown, crcHex, MPA_FIELDS } from './fields.js';
import { lengthFieldOf, MARKER_LEN, rfcPad } from './framer.js';
import type { FpduRecord } from './mpa-flow.js';
import { KEY_REP, KEY_REQ, STARTUP_HEADER_LEN, type StartupRecord } from './startup.js';

interface NodeOpts {
  offset?: number;
  length?: number;
  display?: string;
  children?: readonly TreeNode[];
}

function node(field: FieldDef, value: FieldValue, o: NodeOpts = {}): TreeNode {
  const n: { -readonly [K in keyof TreeNode]: TreeNode[K] } = { field, value };
  if (o.display !== undefined) n.display = o.display;
  if (o.offset !== undefined) n.offset = o.offset;
  if (o.length !== undefined) n.length = o.length;
  if (o.children !== undefined) n.children = o.children;
  return n;
}

const latin1 = new TextDecoder('latin1');

/** What each octet of an FPDU is, for -x: the octets Wireshark users look for first. */
export const OCTET_ULPDU = 0;
export const OCTET_LENGTH = 1;
export const OCTET_MARKER = 2;
export const OCTET_PAD = 3;
export const OCTET_CRC = 4;

/** Class of every wire octet of an FPDU (markers included), indexed from its first octet. */
export function fpduLayout(rec: FpduRecord): Uint8Array {
  const n = rec.wireSize;
  const cls = new Uint8Array(n);
  for (const m of rec.markers) {
    const at = m.offset - rec.start;
    for (let i = 0; i < MARKER_LEN && at + i < n; i++) if (at + i >= 0) cls[at + i] = OCTET_MARKER;
  }
  const len = rec.lenOffset - rec.start;
  if (len >= 0 && len + 2 <= n) cls[len] = cls[len + 1] = OCTET_LENGTH;
  for (let i = Math.max(0, n - 4); i < n; i++) cls[i] = OCTET_CRC;
  // PAD is the last `pad` octets before the CRC that are not marker octets (a marker may sit
  // between PAD and CRC, or even inside PAD).
  let left = rec.pad;
  for (let i = n - 5; i >= 0 && left > 0; i--) {
    if (cls[i] === OCTET_MARKER) continue;
    cls[i] = OCTET_PAD;
    left--;
  }
  return cls;
}

/** The startup frame's tree: key, flags, Rev, PD_Length, Private Data (with the RFC 6581 block). */
export function mpaStartupTree(r: StartupRecord): TreeNode[] {
  const F = MPA_FIELDS;
  const key = r.kind === 'request' ? KEY_REQ : KEY_REP;
  const kids: TreeNode[] = [
    node(r.kind === 'request' ? F.keyReq : F.keyRep, r.keyOk ? key : new Uint8Array(0), {
      offset: 0,
      length: 16,
      display: r.keyOk ? latin1.decode(key) : `[damaged: not "${latin1.decode(key)}"]`,
    }),
    node(F.markerFlag, r.m, { offset: 16, length: 1 }),
    node(F.crcFlag, r.c, { offset: 16, length: 1 }),
    // A Rev 0 frame (draft-00 §8.1.1) has M, C and six reserved bits: no R, no enhanced bit.
    ...(r.rev === 0
      ? [
          node(F.res, r.res, {
            offset: 16,
            length: 1,
            display: `0x${r.res.toString(16).padStart(2, '0')} (Rev 0: bits 0x3F reserved, no R or enhanced bit)`,
          }),
        ]
      : [
          node(F.rejFlag, r.r, { offset: 16, length: 1 }),
          node(F.enhancedFlag, r.enhanced, { offset: 16, length: 1 }),
          node(F.res, r.res, { offset: 16, length: 1 }),
        ]),
    node(F.rev, r.rev, { offset: 17, length: 1 }),
    node(F.pdLength, r.pdLength, { offset: 18, length: 2 }),
  ];
  if (r.privateData.length > 0 || r.pdLength > 0) {
    const e = r.enhancedBlock;
    const pdKids: TreeNode[] = [];
    if (e) {
      const at = STARTUP_HEADER_LEN;
      pdKids.push(
        node(F.p2p, e.p2p, { offset: at, length: 2 }),
        node(F.rtrSend, e.rtr.send, { offset: at, length: 2 }),
        node(F.ird, e.ird, { offset: at, length: 2 }),
        node(F.rtrWrite, e.rtr.write, { offset: at + 2, length: 2 }),
        node(F.rtrRead, e.rtr.read, { offset: at + 2, length: 2 }),
        node(F.ord, e.ord, { offset: at + 2, length: 2 }),
      );
    }
    const shown = r.pdComplete ? '' : ` [${r.privateData.length} of ${r.pdLength} octets captured]`;
    kids.push(
      node(F.privateData, r.privateData, {
        offset: STARTUP_HEADER_LEN,
        length: r.privateData.length,
        display: `${hexText(r.privateData, 32)}${shown}`,
        ...(pdKids.length ? { children: pdKids } : {}),
      }),
    );
  }
  for (const v of r.vendor) kids.push(node(F.vendor, v));
  return [
    node(F.proto, F.proto.name, {
      offset: 0,
      length: STARTUP_HEADER_LEN + r.privateData.length,
      display: `${r.kind === 'request' ? 'MPA Request' : 'MPA Reply'} Frame`,
      children: kids,
    }),
  ];
}

/** The FPDU's tree: fields in wire order (markers where they fall), then the generated analysis. */
export function mpaFpduTree(r: FpduRecord): TreeNode[] {
  const F = MPA_FIELDS;
  const onWire: TreeNode[] = [];
  for (const m of r.markers) {
    const at = m.offset - r.start;
    const ptr = m.fpduptr & ~3;
    const ok = ptr === m.expected;
    onWire.push(
      node(F.markerSeq, m.seq, {
        offset: at,
        length: MARKER_LEN,
        display: `${m.seq} (FPDU offset ${at})${ok ? '' : ' [FPDUPTR mismatch]'}`,
        children: [
          node(F.markerRes, m.reserved, {
            offset: at,
            length: 2,
            display: `0x${m.reserved.toString(16).padStart(4, '0')}`,
          }),
          node(F.markerFpduptr, m.fpduptr, {
            offset: at + 2,
            length: 2,
            display: ok ? `${m.fpduptr}` : `${m.fpduptr} [expected ${m.expected}]`,
          }),
          node(F.markerExpected, m.expected),
        ],
      }),
    );
  }
  // The field as sent (RFC 5044 §4.1), as Wireshark shows it; the length a diagnosed mistake framed with, beside it.
  const field = lengthFieldOf(r);
  onWire.push(
    node(F.ulpduLength, field, {
      offset: r.lenOffset - r.start,
      length: 2,
      ...(field !== r.ulpduLength ? { display: `${field} [framed as ${r.ulpduLength}]` } : {}),
    }),
  );
  if (r.pad > 0) {
    const layout = fpduLayout(r);
    const first = layout.indexOf(OCTET_PAD);
    onWire.push(
      node(F.pad, r.padNonZero ? new Uint8Array(0) : new Uint8Array(r.pad), {
        offset: first,
        length: r.wireSize - 4 - first,
        display: r.padNonZero ? `${r.pad} octets [not zero]` : `${r.pad} octets`,
      }),
    );
  }
  // Wireshark's form (crcHex): the wire octets read most significant first.
  const wire = crcHex(r.crcWire);
  const crcText =
    r.crcStatus === 'good'
      ? `${wire} [correct]`
      : r.crcStatus === 'unchecked'
        ? `${wire} [not checked: CRC not in use]`
        : r.crcStatus === 'not-captured'
          ? `[not checked: ${r.notCaptured ?? 0} octets of the FPDU not captured]`
          : r.crcStatus === 'byte-swapped'
            ? `${wire} [incorrect, should be ${crcHex(r.crcComputed)}: sent byte-swapped]`
            : `${wire} [incorrect, should be ${crcHex(r.crcComputed)}]`;
  onWire.push(node(F.crc, crcAsShown(r.crcWire), { offset: r.wireSize - 4, length: 4, display: crcText }));
  onWire.sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0));
  const generated: TreeNode[] = [node(F.fpduSeq, r.seq)];
  if (field !== r.ulpduLength) generated.push(node(F.ulpduLengthFramed, r.ulpduLength));
  if (r.pad !== rfcPad(r.ulpduLength)) generated.push(node(F.padExpected, rfcPad(r.ulpduLength)));
  if (r.markers.length) generated.push(node(F.markerCount, r.markers.length));
  if (r.crcStatus !== 'unchecked' && r.crcStatus !== 'not-captured')
    generated.push(node(F.crcCheck, crcAsShown(r.crcComputed), { display: crcHex(r.crcComputed) }));
  generated.push(node(F.crcStatus, r.crcStatus));
  if (r.senderMistake)
    generated.push(
      node(F.senderMistake, r.senderMistake, {
        display: `${r.senderMistake} [framed under the diagnosed sender mistake]`,
      }),
    );
  if (r.afterError) generated.push(node(F.afterError, true));
  return [
    node(F.proto, F.proto.name, {
      offset: 0,
      length: r.wireSize,
      display: `FPDU, ULPDU length ${field}${field !== r.ulpduLength ? ` (framed as ${r.ulpduLength})` : ''}`,
      children: [...onWire, ...generated],
    }),
  ];
}

function hexText(b: Uint8Array, max: number): string {
  let s = '';
  for (let i = 0; i < Math.min(b.length, max); i++) s += b[i]!.toString(16).padStart(2, '0');
  return b.length > max ? `${s}…` : s;
}
