/**
 * Detail tree and tshark-style Info text of NVMe/RDMA capsules. Every node names a field declared
 * once in fields.ts; offsets are within the Send payload (the capsule). Analysis results (the
 * command's frame, latency, octets moved) carry no offset and show as generated.
 */
import { indexFields, type FieldDef, type FieldValue, type TreeNode } from '../../src/vocabulary/fields.js';
import type { CmReject, CmReply, CmRequest, ConnectData, Cqe, Sgl, Sqe } from './decode.js';
import { SQE_LEN, slbaOf } from './decode.js';
import { NVME_RDMA_ALL_FIELDS } from './fields.js';
import { CM_REJ_NAMES, OPC_FABRICS, hex4, statusName } from './names.js';

const FIELDS: ReadonlyMap<string, FieldDef> = indexFields(NVME_RDMA_ALL_FIELDS);

interface NodeOpts {
  offset?: number;
  length?: number;
  display?: string;
  children?: readonly TreeNode[];
}

function node(abbrev: string, value: FieldValue, o?: NodeOpts): TreeNode {
  const field = FIELDS.get(abbrev);
  if (!field) throw new Error(`undeclared field ${abbrev}`); // a programming error, never wire data
  if (o === undefined) return { field, value };
  // Properties added in one order only: one hidden class per combination, no spread (a hot path).
  const n: { -readonly [K in keyof TreeNode]: TreeNode[K] } = { field, value };
  if (o.display !== undefined) n.display = o.display;
  if (o.offset !== undefined) n.offset = o.offset;
  if (o.length !== undefined) n.length = o.length;
  if (o.children !== undefined) n.children = o.children;
  return n;
}

const at = (offset: number, length: number): NodeOpts => ({ offset, length });

/** The RDMA CM private data of the connection (shown on its first capsule). */
export function cmNode(req: CmRequest | null, rep: CmReply | null, rej: CmReject | null): TreeNode | null {
  const kids: TreeNode[] = [];
  const parts: string[] = [];
  if (req) {
    parts.push(
      `REQ qid ${req.qid} (${req.qid === 0 ? 'admin' : 'I/O'}), hsqsize ${req.hsqsize}, hrqsize ${req.hrqsize}`,
    );
    kids.push(
      node('nvme-rdma.cm.req.recfmt', req.recfmt),
      node('nvme-rdma.cm.req.qid', req.qid, { display: `${req.qid} (${req.qid === 0 ? 'AQ' : 'IOQ'})` }),
      node('nvme-rdma.cm.req.hrqsize', req.hrqsize),
      node('nvme-rdma.cm.req.hsqsize', req.hsqsize, { display: `${req.hsqsize + 1} (zero-based ${req.hsqsize})` }),
      node('nvme-rdma.cm.req.cntlid', req.cntlid, { display: `0x${hex4(req.cntlid)}` }),
    );
  }
  if (rep) {
    parts.push(`REP crqsize ${rep.crqsize}`);
    kids.push(node('nvme-rdma.cm.rsp.recfmt', rep.recfmt), node('nvme-rdma.cm.rsp.crqsize', rep.crqsize));
  }
  if (rej) {
    parts.push(`REJ ${CM_REJ_NAMES[rej.status] ?? `status ${rej.status}`}`);
    kids.push(node('nvme-rdma.cm.rej.recfmt', rej.recfmt), node('nvme-rdma.cm.rej.status', rej.status));
  }
  if (kids.length === 0) return null;
  return node('nvme-rdma.cm', '', { display: parts.join('; '), children: kids });
}

export function sglNode(s: Sgl, base: number): TreeNode {
  const kind =
    s.kind === 'keyed'
      ? 'Keyed SGL Data Block'
      : s.kind === 'keyed-invalidate'
        ? 'Keyed SGL Data Block, Invalidate Key'
        : s.kind === 'in-capsule'
          ? 'SGL Data Block, in-capsule offset'
          : s.kind === 'null'
            ? 'Keyed SGL Data Block, null (no data)'
            : `SGL descriptor 0x${s.id.toString(16).padStart(2, '0')}`;
  const kids = [
    node('nvme.cmd.sgl1.addr', s.addr, { offset: base, length: 8, display: `0x${s.addr.toString(16)}` }),
    node('nvme.cmd.sgl1.len', s.length, at(base + 8, s.key === null ? 4 : 3)),
  ];
  if (s.key !== null) kids.push(node('nvme.cmd.sgl1.key', s.key, at(base + 11, 4)));
  kids.push(
    node('nvme.cmd.sgl.type', s.type, at(base + 15, 1)),
    node('nvme.cmd.sgl.subtype', s.subtype, at(base + 15, 1)),
  );
  const len =
    s.key === null ? `${s.length} octets` : `${s.length} octets, key 0x${s.key.toString(16).padStart(8, '0')}`;
  return node('nvme.cmd.sgl1', '', { offset: base, length: 16, display: `${kind}: ${len}`, children: kids });
}

export interface CommandView {
  readonly sqe: Sqe;
  readonly name: string;
  readonly qid: number | null;
  readonly dataLength: number;
  readonly connectData: ConnectData | null;
  readonly outstanding: number;
}

export function commandNode(v: CommandView): TreeNode {
  const q = v.sqe;
  const kids: TreeNode[] = [];
  if (v.qid !== null) kids.push(node('nvme-rdma.cmd.qid', v.qid));
  kids.push(node('nvme.cmd.name', v.name));
  if (q.opc === OPC_FABRICS) {
    kids.push(
      node('nvme.fabrics.cmd.opc', q.opc, at(0, 1)),
      node('nvme.fabrics.cmd.cid', q.cid, at(2, 2)),
      node('nvme.fabrics.cmd.fctype', q.fctype ?? 0, at(4, 1)),
    );
  } else {
    kids.push(
      node('nvme.cmd.opc', q.opc, at(0, 1)),
      node('nvme.cmd.fuse_op', q.fuse, at(1, 1)),
      node('nvme.cmd.psdt', q.psdt, at(1, 1)),
      node('nvme.cmd.cid', q.cid, at(2, 2)),
      node('nvme.cmd.nsid', q.nsid, at(4, 4)),
    );
  }
  kids.push(sglNode(q.sgl, 24));
  const c = q.connect;
  if (c) {
    kids.push(
      node('nvme.fabrics.cmd.connect.recfmt', c.recfmt, at(40, 2)),
      node('nvme.fabrics.cmd.connect.qid', c.qid, at(42, 2)),
      node('nvme.fabrics.cmd.connect.sqsize', c.sqsize, at(44, 2)),
      node('nvme.fabrics.cmd.connect.cattr', c.cattr, at(46, 1)),
      node('nvme.fabrics.cmd.connect.kato', c.kato, at(48, 4)),
    );
  } else if (q.property) {
    kids.push(
      node('nvme.fabrics.cmd.prop_get_set.attrib', q.property.attrib, at(40, 1)),
      node('nvme.fabrics.cmd.prop_get_set.offset', q.property.offset, at(44, 4)),
    );
    if (q.property.value !== null) kids.push(node('nvme.fabrics.prop_get_set.data.8B', q.property.value, at(48, 8)));
  } else if (q.opc !== OPC_FABRICS) {
    if (v.qid === 0 && q.opc === 0x06) kids.push(node('nvme.cmd.identify.dword10.cns', q.cdw10 & 0xff, at(40, 1)));
    else if (v.qid !== 0 && (q.opc === 0x01 || q.opc === 0x02)) {
      kids.push(node('nvme.cmd.slba', slbaOf(q), at(40, 8)), node('nvme.cmd.nlb', q.nlb + 1, at(48, 2)));
    } else {
      kids.push(
        node('nvme.cmd.dword10', q.cdw10, at(40, 4)),
        node('nvme.cmd.dword11', q.cdw11, at(44, 4)),
        node('nvme.cmd.dword12', q.cdw12, at(48, 4)),
      );
    }
  }
  if (v.dataLength > 0) kids.push(node('nvme.cmd.data_len', v.dataLength, at(SQE_LEN, v.dataLength)));
  const d = v.connectData;
  if (d) kids.push(...connectDataKids(d, SQE_LEN + Number(q.sgl.kind === 'in-capsule' ? q.sgl.addr : 0n)));
  kids.push(node('nvme-rdma.outstanding', v.outstanding));
  return node('nvme', '', { display: `${v.name} Request, CID ${q.cid}`, children: kids });
}

/** The Connect data's fields, at offset `o` of the message's payload (null: not shown by offset). */
function connectDataKids(d: ConnectData, o: number | null): TreeNode[] {
  const place = (off: number, len: number): NodeOpts | undefined => (o === null ? undefined : at(o + off, len));
  return [
    node('nvme.fabrics.cmd.connect.data.hostid', d.hostid, place(0, 16)),
    node('nvme.fabrics.cmd.connect.data.cntrlid', d.cntlid, place(16, 2)),
    node('nvme.fabrics.cmd.connect.data.subnqn', d.subnqn, place(256, 256)),
    node('nvme.fabrics.cmd.connect.data.hostnqn', d.hostnqn, place(512, 256)),
  ];
}

/**
 * Connect data the controller read from the host's keyed SGL (the host's RDMA Read Response):
 * the fields are placed data, not a capsule, so they carry no capsule offset.
 */
export function connectDataNode(cid: number, d: ConnectData): TreeNode {
  return node('nvme', '', {
    display: `Connect Data, CID ${cid}`,
    children: [node('nvme.cmd.name', 'Connect'), ...connectDataKids(d, null)],
  });
}

export interface CompletionView {
  readonly cqe: Cqe;
  readonly name: string | null;
  readonly commandFrame: number | null;
  readonly latencyUs: number | null;
  readonly connectCntlid: number | null;
  readonly moved: number | null;
  readonly invalidated: number | null;
}

export function completionNode(v: CompletionView): TreeNode {
  const e = v.cqe;
  const sname = statusName(e.sct, e.sc);
  const kids: TreeNode[] = [];
  if (v.name) kids.push(node('nvme.cmd.name', v.name));
  if (v.connectCntlid !== null) kids.push(node('nvme.fabrics.cqe.connect.cntrlid', v.connectCntlid, at(0, 2)));
  kids.push(
    node('nvme.cqe.dword0', e.dw0, at(0, 4)),
    node('nvme.cqe.dword1', e.dw1, at(4, 4)),
    node('nvme.cqe.sqhd', e.sqhd, at(8, 2)),
    node('nvme.cqe.sqid', e.sqid, at(10, 2)),
    node('nvme.cqe.cid', e.cid, at(12, 2)),
    node('nvme.cqe.status', e.status, {
      offset: 14,
      length: 2,
      display: `0x${hex4(e.status)}: ${sname}`,
      children: [
        node('nvme.cqe.status.sc', e.sc, at(14, 2)),
        node('nvme.cqe.status.sct', e.sct, at(14, 2)),
        node('nvme.cqe.status.crd', e.crd, at(14, 2)),
        node('nvme.cqe.status.m', e.more, at(14, 2)),
        node('nvme.cqe.status.dnr', e.dnr, at(14, 2)),
        node('nvme.cqe.status.name', sname),
      ],
    }),
  );
  if (v.invalidated !== null) kids.push(node('nvme-rdma.invalidate_stag', v.invalidated));
  if (v.moved !== null) kids.push(node('nvme-rdma.rdma.moved', v.moved));
  if (v.commandFrame !== null) kids.push(node('nvme.cmd_pkt', v.commandFrame));
  if (v.latencyUs !== null) kids.push(node('nvme.cmd_latency', v.latencyUs));
  return node('nvme', '', { display: `${v.name ?? 'Command'} Response, CID ${e.cid}: ${sname}`, children: kids });
}

/** The nvme-rdma top node holding the capsule's nodes. */
export function rdmaNode(queue: string, children: readonly TreeNode[]): TreeNode {
  return node('nvme-rdma', '', { display: queue, children: [node('nvme-rdma.queue', queue), ...children] });
}

/**
 * Info as Wireshark's NVMe dissector writes it for NVMe/TCP ("NVMeOF Connect", "NVMeOF CQE for
 * Connect", "NVMe Read", "NVMe CQE for Read"), with the CID after it.
 */
export function commandInfo(sqe: Sqe, name: string): string {
  return `${sqe.opc === OPC_FABRICS ? 'NVMeOF' : 'NVMe'} ${name} cid=${sqe.cid}`;
}

export function completionInfo(cqe: Cqe, name: string | null, fabrics: boolean): string {
  const what = name === null ? 'NVMe CQE' : `${fabrics ? 'NVMeOF' : 'NVMe'} CQE for ${name}`;
  const bad = cqe.sc !== 0 || cqe.sct !== 0 ? ` [${statusName(cqe.sct, cqe.sc)}]` : '';
  return `${what} cid=${cqe.cid}${bad}`;
}
