/**
 * Wireshark-style detail tree of a TUF record. Every node names a field of fields.ts. Offsets
 * count from the record's first octet (the framing header, or a leading marker), for -x.
 */
import { treeNode as node, type TreeNode } from '../../src/vocabulary/fields.js';
import { TUF_FIELDS as F } from './fields.js';
import { HEADER_LEN, MARKER_LEN, type TufRecord } from './types.js';

function keyBytes(hex: string): Uint8Array {
  const b = new Uint8Array(6);
  for (let i = 0; i < 6; i++) b[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return b;
}

/** What each octet of a record is, for -x and the bytes pane. */
export const TUF_OCTET_DATA = 0;
export const TUF_OCTET_LENGTH = 1;
export const TUF_OCTET_KEY = 2;
export const TUF_OCTET_MARKER = 3;

export function tufLayout(r: TufRecord): Uint8Array {
  const cls = new Uint8Array(r.wireSize);
  if (r.mode === 'alignment') {
    cls.fill(TUF_OCTET_LENGTH, 0, Math.min(2, r.wireSize));
    cls.fill(TUF_OCTET_KEY, 2, Math.min(HEADER_LEN, r.wireSize));
  }
  for (const m of r.markers) {
    const at = m.offset - r.start;
    for (let i = 0; i < MARKER_LEN; i++) if (at + i >= 0 && at + i < r.wireSize) cls[at + i] = TUF_OCTET_MARKER;
  }
  return cls;
}

export function tufTree(r: TufRecord): TreeNode[] {
  const kids: TreeNode[] = [
    node(F.mode, r.mode, { display: r.mode === 'alignment' ? 'PDU alignment (§5)' : 'markers (§6)' }),
  ];
  if (r.mode === 'alignment') {
    kids.push(node(F.length, r.length, { offset: 0, length: 2 }));
    kids.push(
      node(F.key, keyBytes(r.key ?? '000000000000'), {
        offset: 2,
        length: 6,
        display: `0x${r.key}${r.keyOk ? '' : " [not this direction's key]"}`,
      }),
    );
    kids.push(node(F.keyOk, r.keyOk));
    kids.push(
      node(F.aligned, r.aligned === true, {
        display: r.aligned ? "True (one segment, passes the receiver's test §5.4)" : 'False',
      }),
    );
    kids.push(node(F.segments, r.segments));
    kids.push(
      node(F.ulpData, r.head, {
        offset: HEADER_LEN,
        length: r.length,
        display: `${r.length} octets${r.head.length ? `: ${hex(r.head)}${r.head.length < r.length ? '…' : ''}` : ''}`,
      }),
    );
  } else {
    kids.push(node(F.pduSeq, (r.seq + (r.pduStart - r.start)) >>> 0));
    kids.push(node(F.pduLength, r.length));
    kids.push(node(F.markerCount, r.markers.length));
    for (const m of r.markers) {
      const at = m.offset - r.start;
      kids.push(
        node(F.marker, 'Marker', {
          offset: at,
          length: MARKER_LEN,
          display: `at seq ${m.seq}${m.split ? ' (split across segments)' : ''}`,
          children: [
            node(F.markerSeq, m.seq),
            ...(m.npo !== null ? [node(F.markerNpo, m.npo, { offset: at, length: 2 })] : []),
            ...(m.npo2 !== null
              ? [
                  node(F.markerNpo2, m.npo2, {
                    offset: at + 2,
                    length: 2,
                    ...(m.npo2 !== m.npo ? { display: `${m.npo2} [differs from the first copy]` } : {}),
                  }),
                ]
              : []),
            ...(m.targetSeq !== null ? [node(F.markerTarget, m.targetSeq)] : []),
            node(F.markerSplit, m.split),
          ],
        }),
      );
    }
    kids.push(
      node(F.ulpData, r.head, {
        offset: r.pduStart - r.start,
        length: r.wireSize - (r.pduStart - r.start),
        display: `${r.length} octets${r.head.length ? `: ${hex(r.head)}…` : ''}`,
      }),
    );
  }
  kids.splice(1, 0, node(F.seq, r.seq));
  return [
    node(F.proto, 'ULP Framing for TCP', {
      offset: 0,
      length: r.wireSize,
      display:
        r.mode === 'alignment'
          ? `Length: ${r.length}, Key: 0x${r.key}`
          : `PDU ${r.length} octets, ${r.markers.length} marker${r.markers.length === 1 ? '' : 's'}`,
      children: kids,
    }),
  ];
}

function hex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}
