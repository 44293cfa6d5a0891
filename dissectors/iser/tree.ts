/**
 * Detail trees and Info text of iSER messages: an `iser` node (flags, STags and base offsets, or
 * Hello's versions and IRD/ORD) and an `iscsi` node with the BHS fields of its opcode, the SCSI CDB
 * and the task's analysis. Info reads as tshark's iSCSI Info column over TCP: "SCSI: Read(10)
 * LUN: 0x00 (LBA: 0x00000100, Len: 8)", "SCSI: Response LUN: 0x00 (Read(10)) (Good)",
 * "Login Response (Success)". Offsets are within the Send payload.
 */
import { treeNode, type TreeNode } from '../../src/vocabulary/fields.js';
import {
  BHS_LEN,
  decodeCdb,
  decodeKeys,
  loginStages,
  lunNumber,
  RSP_BIDI_OVER,
  RSP_BIDI_UNDER,
  RSP_OVER,
  RSP_UNDER,
  type Bhs,
  type Cdb,
  type IserHeader,
  type IserHello,
} from './decode.js';
import { F, I, S } from './fields.js';
import type { LeadingLogin } from './login.js';
import {
  hex32,
  isTargetOpcode,
  LOGIN_STATUS_NAMES,
  nameOf,
  OP,
  OPCODE_NAMES,
  SCSI_OPCODE_NAMES,
  STATUS_NAMES,
} from './names.js';

const hex2 = (v: number): string => `0x${v.toString(16).padStart(2, '0')}`;

export function iserHeaderNode(h: IserHeader): TreeNode {
  return treeNode(F.iser, 'iSER', {
    offset: 0,
    length: 28,
    display: `iSCSI Control-Type PDU${h.wsv ? ', WSV' : ''}${h.rsv ? ', RSV' : ''}`,
    children: [
      treeNode(F.flags, h.flags, {
        offset: 0,
        length: 1,
        display: hex2(h.flags),
        children: [
          treeNode(F.opcode, h.opcode, { offset: 0, length: 1 }),
          treeNode(F.wsv, h.wsv, { offset: 0, length: 1 }),
          treeNode(F.rsv, h.rsv, { offset: 0, length: 1 }),
        ],
      }),
      treeNode(F.writeStag, h.writeStag, { offset: 4, length: 4, display: hex32(h.writeStag) }),
      treeNode(F.writeBase, h.writeBase, { offset: 8, length: 8, display: `0x${h.writeBase.toString(16)}` }),
      treeNode(F.readStag, h.readStag, { offset: 16, length: 4, display: hex32(h.readStag) }),
      treeNode(F.readBase, h.readBase, { offset: 20, length: 8, display: `0x${h.readBase.toString(16)}` }),
    ],
  });
}

export function helloNode(h: IserHello): TreeNode {
  const kids: TreeNode[] = [
    treeNode(F.flags, h.flags, {
      offset: 0,
      length: 1,
      display: hex2(h.flags),
      children: [
        treeNode(F.opcode, h.flags >> 4, { offset: 0, length: 1 }),
        ...(h.reply ? [treeNode(F.rej, h.rej, { offset: 0, length: 1 })] : []),
      ],
    }),
    treeNode(F.maxVer, h.maxVer, { offset: 1, length: 1 }),
    treeNode(F.minVer, h.minVer, { offset: 1, length: 1 }),
    h.reply
      ? treeNode(F.ord, h.irdOrd, { offset: 2, length: 2, display: String(h.irdOrd) })
      : treeNode(F.ird, h.irdOrd, { offset: 2, length: 2, display: String(h.irdOrd) }),
  ];
  return treeNode(F.iser, 'iSER', {
    offset: 0,
    length: 4,
    display: h.reply ? 'HelloReply Message' : 'Hello Message',
    children: kids,
  });
}

export function helloInfo(h: IserHello): string {
  // Wireshark's Info: "iSER Hello", "iSER HelloRply".
  return h.reply
    ? `iSER HelloRply iSER-ORD ${h.irdOrd}${h.rej ? ' (rejected)' : ''}`
    : `iSER Hello iSER-IRD ${h.irdOrd}`;
}

/** What the task analysis adds to an iSCSI node. */
export interface TaskExtras {
  readonly requestFrame?: number;
  readonly responseFrame?: number;
  readonly timeUs?: number;
  readonly moved?: number;
  readonly unsolicited?: number;
  readonly invalidated?: number;
  /** Operation of the command a response answers (for Info and the tree). */
  readonly command?: string;
}

/** The iSCSI node for a BHS at `base` (octets `b`), with data segment key=value pairs for Login/Text. */
export function iscsiNode(b: Uint8Array, h: Bhs, base: number, x: TaskExtras = {}): TreeNode {
  const o = base;
  const kids: TreeNode[] = [
    treeNode(I.opcode, h.opcode, { offset: o, length: 1 }),
    ...(h.opcode < 0x20 ? [treeNode(I.immediate, h.immediate, { offset: o, length: 1 })] : []),
    treeNode(I.flags, h.flags, { offset: o + 1, length: 1, display: hex2(h.flags), children: flagNodes(h, o) }),
    treeNode(I.ahsLength, h.ahsLength / 4, { offset: o + 4, length: 1 }),
    treeNode(I.dataLength, h.dataLength, { offset: o + 5, length: 3 }),
  ];
  const lunOk = h.opcode !== OP.loginRequest && h.opcode !== OP.loginResponse;
  if (lunOk)
    kids.push(treeNode(S.lun, lunNumber(h.lun), { offset: o + 8, length: 8, display: hex2(lunNumber(h.lun)) }));
  kids.push(treeNode(I.itt, h.itt, { offset: o + 16, length: 4, display: hex32(h.itt) }));
  switch (h.opcode) {
    case OP.scsiCommand: {
      kids.push(
        treeNode(I.edtl, h.word20, { offset: o + 20, length: 4 }),
        treeNode(I.cmdSn, h.sn24, { offset: o + 24, length: 4 }),
        treeNode(I.expStatSn, h.sn28, { offset: o + 28, length: 4 }),
      );
      const cdb = decodeCdb(b, o);
      if (cdb) kids.push(...cdbNodes(cdb));
      break;
    }
    case OP.scsiResponse:
      kids.push(
        treeNode(I.response, b[o + 2] ?? 0, { offset: o + 2, length: 1 }),
        treeNode(I.status, b[o + 3] ?? 0, { offset: o + 3, length: 1 }),
        treeNode(S.status, b[o + 3] ?? 0, { offset: o + 3, length: 1 }),
        treeNode(I.statSn, h.sn24, { offset: o + 24, length: 4 }),
        treeNode(I.expCmdSn, h.sn28, { offset: o + 28, length: 4 }),
        treeNode(I.maxCmdSn, h.word32, { offset: o + 32, length: 4 }),
        treeNode(I.bidiResidual, h.word40, { offset: o + 40, length: 4 }),
        treeNode(I.residual, h.word44, { offset: o + 44, length: 4 }),
      );
      break;
    case OP.dataOut:
    case OP.dataIn:
      kids.push(
        treeNode(I.ttt, h.word20, { offset: o + 20, length: 4, display: hex32(h.word20) }),
        ...(h.opcode === OP.dataOut
          ? [treeNode(I.expStatSn, h.sn28, { offset: o + 28, length: 4 })]
          : [
              treeNode(I.statSn, h.sn24, { offset: o + 24, length: 4 }),
              treeNode(I.expCmdSn, h.sn28, { offset: o + 28, length: 4 }),
              treeNode(I.maxCmdSn, h.word32, { offset: o + 32, length: 4 }),
            ]),
        treeNode(I.dataSn, h.word36, { offset: o + 36, length: 4 }),
        treeNode(I.bufferOffset, h.word40, { offset: o + 40, length: 4 }),
      );
      break;
    case OP.loginRequest:
    case OP.loginResponse: {
      const isid = b.slice(o + 8, o + 14);
      kids.push(
        treeNode(I.versionMax, b[o + 2] ?? 0, { offset: o + 2, length: 1 }),
        h.opcode === OP.loginRequest
          ? treeNode(I.versionMin, b[o + 3] ?? 0, { offset: o + 3, length: 1 })
          : treeNode(I.versionActive, b[o + 3] ?? 0, { offset: o + 3, length: 1 }),
        treeNode(I.isid, isid, { offset: o + 8, length: 6 }),
        treeNode(I.tsih, Number(h.lun & 0xffffn), { offset: o + 14, length: 2 }),
      );
      if (h.opcode === OP.loginRequest) {
        kids.push(
          treeNode(I.cid, h.word20 >>> 16, { offset: o + 20, length: 2 }),
          treeNode(I.cmdSn, h.sn24, { offset: o + 24, length: 4 }),
          treeNode(I.expStatSn, h.sn28, { offset: o + 28, length: 4 }),
        );
      } else {
        kids.push(
          treeNode(I.statSn, h.sn24, { offset: o + 24, length: 4 }),
          treeNode(I.expCmdSn, h.sn28, { offset: o + 28, length: 4 }),
          treeNode(I.maxCmdSn, h.word32, { offset: o + 32, length: 4 }),
          treeNode(I.loginStatus, h.word36 >>> 16, { offset: o + 36, length: 2 }),
        );
      }
      kids.push(...keyNodes(b, h, o));
      break;
    }
    case OP.textRequest:
    case OP.textResponse:
      kids.push(...keyNodes(b, h, o));
      break;
    default:
      if (isTargetOpcode(h.opcode))
        kids.push(
          treeNode(I.statSn, h.sn24, { offset: o + 24, length: 4 }),
          treeNode(I.expCmdSn, h.sn28, { offset: o + 28, length: 4 }),
          treeNode(I.maxCmdSn, h.word32, { offset: o + 32, length: 4 }),
        );
      else
        kids.push(
          treeNode(I.cmdSn, h.sn24, { offset: o + 24, length: 4 }),
          treeNode(I.expStatSn, h.sn28, { offset: o + 28, length: 4 }),
        );
      break;
  }
  if (x.requestFrame !== undefined) kids.push(treeNode(I.requestFrame, x.requestFrame));
  if (x.responseFrame !== undefined) kids.push(treeNode(I.responseFrame, x.responseFrame));
  if (x.timeUs !== undefined) kids.push(treeNode(I.timeUs, x.timeUs));
  if (x.unsolicited !== undefined) kids.push(treeNode(I.unsolicited, x.unsolicited));
  if (x.moved !== undefined) kids.push(treeNode(F.moved, x.moved));
  if (x.invalidated !== undefined) kids.push(treeNode(F.invalidated, x.invalidated, { display: hex32(x.invalidated) }));
  return treeNode(I.iscsi, 'iSCSI', {
    offset: o,
    length: BHS_LEN,
    display: nameOf(OPCODE_NAMES, h.opcode),
    children: kids,
  });
}

function flagNodes(h: Bhs, o: number): TreeNode[] {
  const at = { offset: o + 1, length: 1 };
  switch (h.opcode) {
    case OP.scsiCommand:
      return [
        treeNode(I.cmdF, (h.flags & 0x80) !== 0, at),
        treeNode(I.cmdR, (h.flags & 0x40) !== 0, at),
        treeNode(I.cmdW, (h.flags & 0x20) !== 0, at),
        treeNode(I.attr, h.flags & 0x07, at),
      ];
    case OP.scsiResponse:
      return [
        treeNode(I.rspBo, (h.flags & RSP_BIDI_OVER) !== 0, at),
        treeNode(I.rspBu, (h.flags & RSP_BIDI_UNDER) !== 0, at),
        treeNode(I.rspO, (h.flags & RSP_OVER) !== 0, at),
        treeNode(I.rspU, (h.flags & RSP_UNDER) !== 0, at),
      ];
    case OP.dataOut:
    case OP.dataIn:
      return [treeNode(I.dataF, (h.flags & 0x80) !== 0, at)];
    case OP.loginRequest:
    case OP.loginResponse: {
      const s = loginStages(h.flags);
      return [
        treeNode(I.loginT, s.transit, at),
        treeNode(I.loginC, s.cont, at),
        treeNode(I.csg, s.csg, at),
        treeNode(I.nsg, s.nsg, at),
      ];
    }
    default:
      return [];
  }
}

function keyNodes(b: Uint8Array, h: Bhs, o: number): TreeNode[] {
  const from = o + BHS_LEN + h.ahsLength;
  const { keys } = decodeKeys(b, from, from + h.dataLength);
  return keys.map((k) => treeNode(I.keyValue, `${k.key}=${k.value}`, { offset: k.offset, length: k.length }));
}

function cdbNodes(c: Cdb): TreeNode[] {
  const at = c.at;
  const out: TreeNode[] = [treeNode(S.sbcOpcode, c.opcode, { offset: at, length: 1 })];
  if (c.lba === null || c.blocks === null) return out;
  if (c.form === 6) {
    out.push(
      treeNode(S.lba6, Number(c.lba), { offset: at + 1, length: 3 }),
      treeNode(S.xfer6, c.blocks, { offset: at + 4, length: 1 }),
    );
  } else if (c.form === 10) {
    out.push(
      treeNode(S.lba10, Number(c.lba), { offset: at + 2, length: 4 }),
      treeNode(S.xfer10, c.blocks, { offset: at + 7, length: 2 }),
    );
  } else if (c.form === 12) {
    out.push(
      treeNode(S.lba64, c.lba, { offset: at + 2, length: 4 }),
      treeNode(S.xfer12, c.blocks, { offset: at + 6, length: 4 }),
    );
  } else {
    out.push(
      treeNode(S.lba64, c.lba, { offset: at + 2, length: 8 }),
      treeNode(S.xfer16, c.blocks, { offset: at + 10, length: 4 }),
    );
  }
  return out;
}

/** The SCSI operation's name as Wireshark shows it ("Read(10)", "Inquiry"). */
export function scsiOpName(op: number): string {
  return SCSI_OPCODE_NAMES[op] ?? `Unknown (${hex2(op)})`;
}

/** tshark's iSCSI Info for one PDU (packet-iscsi.c / packet-scsi.c column texts). */
export function iscsiInfo(b: Uint8Array, h: Bhs, command: string | undefined): string {
  const lun = `LUN: ${hex2(lunNumber(h.lun))}`;
  switch (h.opcode) {
    case OP.scsiCommand: {
      const cdb = decodeCdb(b, h.at);
      if (!cdb) return `SCSI: ${lun}`;
      const name = scsiOpName(cdb.opcode);
      if (cdb.lba === null || cdb.blocks === null) return `SCSI: ${name} ${lun} `;
      // Wireshark prints the 6/10-octet LBA in hex and the 12/16-octet one in decimal.
      const lba = cdb.form <= 10 ? `0x${cdb.lba.toString(16).padStart(8, '0')}` : cdb.lba.toString();
      return `SCSI: ${name} ${lun} (LBA: ${lba}, Len: ${cdb.blocks})`;
    }
    case OP.scsiResponse: {
      const status = b[h.at + 3] ?? 0;
      if (status !== 0) return `SCSI Response (${nameOf(STATUS_NAMES, status)})`;
      return `SCSI: Response ${lun} (${command ?? 'Unknown'}) (Good)`;
    }
    case OP.dataOut:
      return `SCSI: Data Out ${lun} (${command ?? 'Unknown'} Request Data) `;
    case OP.dataIn:
      return `SCSI: Data In ${lun} (${command ?? 'Unknown'} Response Data) `;
    case OP.loginResponse:
      return `Login Response (${nameOf(LOGIN_STATUS_NAMES, h.word36 >>> 16)})`;
    default:
      return nameOf(OPCODE_NAMES, h.opcode);
  }
}

/**
 * The login done in streaming mode before MPA (RFC 5046 §5.1), initiator's PDUs first: shown once,
 * with the first iSER message. Its nodes carry no offsets: its octets are not the Send's (-x).
 */
export function streamingLoginNode(sides: ReadonlyArray<LeadingLogin | null>, done: boolean): TreeNode | null {
  const kids: TreeNode[] = [];
  for (const s of sides) if (s) for (const p of s.pdus) kids.push(withoutOffsets(iscsiNode(s.bytes, p.bhs, p.bhs.at)));
  if (kids.length === 0) return null;
  return treeNode(F.streaming, kids.length, {
    display: `${kids.length} Login PDUs before MPA, ${done ? 'Full Feature Phase reached' : 'login unfinished'}`,
    children: kids,
  });
}

function withoutOffsets(n: TreeNode): TreeNode {
  return treeNode(n.field, n.value, {
    ...(n.display !== undefined ? { display: n.display } : {}),
    ...(n.children ? { children: n.children.map(withoutOffsets) } : {}),
  });
}
