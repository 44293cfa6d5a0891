/**
 * NVMe over Fabrics (RDMA transport) field declarations.
 *
 * Filter names and types are Wireshark's (packet-nvme.c, packet-nvme-rdma.c; checked with
 * `tshark -G fields` of Wireshark 4.0) wherever Wireshark has the field: commands as nvme.cmd.*,
 * Fabrics commands as nvme.fabrics.cmd.*, completions as nvme.cqe.*, the RDMA CM private data as
 * nvme-rdma.cm.*. Wireshark's FT_BYTES nvme.fabrics.cmd.opc is a number here; its FT_DOUBLE
 * nvme.cmd_latency (µs) is an integer count of µs. Fields Wireshark lacks are marked "ours".
 */
import type { FieldDef } from '../../src/vocabulary/fields.js';
import { CM_REJ_NAMES, FCTYPE_NAMES, SCT_NAMES, SGL_TYPE_NAMES } from './names.js';

const f = (
  abbrev: string,
  name: string,
  type: FieldDef['type'],
  blurb: string,
  extra: Partial<Pick<FieldDef, 'base' | 'mask' | 'bits' | 'width' | 'strings'>> = {},
): FieldDef => ({ abbrev, name, type, blurb, ...extra });

const x8 = { base: 'hex', width: 8 } as const;
const d16 = { base: 'dec', width: 16 } as const;
const x16 = { base: 'hex', width: 16 } as const;
const d32 = { base: 'dec' } as const;
const x32 = { base: 'hex' } as const;

export const NVME_RDMA_FIELDS: readonly FieldDef[] = [
  f('nvme-rdma', 'NVM Express Fabrics RDMA', 'protocol', 'NVMe/RDMA transport'),
  f('nvme-rdma.cm.req.recfmt', 'Record Format', 'uint', 'RDMA_CM_REQUEST RECFMT', d16),
  f('nvme-rdma.cm.req.qid', 'Queue Id', 'uint', 'Queue the connection opens (0: admin)', d16),
  f('nvme-rdma.cm.req.hrqsize', 'RDMA QP Host Receive Queue Size', 'uint', 'HRQSIZE', d16),
  f('nvme-rdma.cm.req.hsqsize', 'RDMA QP Host Send Queue Size', 'uint', 'HSQSIZE (zero-based)', d16),
  f('nvme-rdma.cm.req.cntlid', 'Controller ID', 'uint', 'CNTLID of the RDMA_CM_REQUEST', x16),
  f('nvme-rdma.cm.rsp.recfmt', 'Record Format', 'uint', 'RDMA_CM_ACCEPT RECFMT', d16),
  f('nvme-rdma.cm.rsp.crqsize', 'RDMA QP Controller Receive Queue Size', 'uint', 'CRQSIZE', d16),
  f('nvme-rdma.cm.rej.recfmt', 'Record Format', 'uint', 'RDMA_CM_REJECT RECFMT', d16),
  f('nvme-rdma.cm.rej.status', 'Status', 'uint', 'RDMA_CM_REJECT status', { ...x16, strings: CM_REJ_NAMES }),
  f('nvme-rdma.cmd.qid', 'Cmd Qid', 'uint', 'Queue of the command (from the CM private data or its Connect)', x16),
  // --- ours ---
  f('nvme-rdma.cm', 'RDMA CM private data', 'protocol', 'NVMe/RDMA RDMA_CM_REQUEST / ACCEPT / REJECT'),
  f('nvme-rdma.queue', 'Queue', 'string', 'Admin or I/O queue'),
  f('nvme-rdma.invalidate_stag', 'Invalidated Key', 'uint', 'STag a Send with Invalidate completion invalidated', x32),
  f('nvme-rdma.rdma.moved', 'Octets moved by RDMA', 'uint', "Octets the controller's RDMA Writes/Reads moved", d32),
  f('nvme-rdma.outstanding', 'Outstanding commands', 'uint', 'Commands outstanding on the queue after this one', d32),
];

export const NVME_FIELDS: readonly FieldDef[] = [
  f('nvme', 'NVM Express', 'protocol', 'NVMe command or completion'),
  f('nvme.cmd.opc', 'Opcode', 'uint', 'Command opcode', x8),
  f('nvme.cmd.fuse_op', 'Fuse Operation', 'uint', 'FLAGS bits 1:0', { base: 'hex', mask: 0x03, bits: 8 }),
  f('nvme.cmd.psdt', 'PRP Or SGL', 'uint', 'FLAGS bits 7:6 (01b: SGL)', { base: 'hex', mask: 0xc0, bits: 8 }),
  f('nvme.cmd.cid', 'Command ID', 'uint', 'CID', x16),
  f('nvme.cmd.nsid', 'Namespace Id', 'uint', 'NSID', x32),
  f('nvme.cmd.sgl1', 'SGL1', 'protocol', 'SGL Entry 1 (DPTR)'),
  f('nvme.cmd.sgl.type', 'Descriptor Type', 'uint', 'SGL identifier bits 7:4', {
    base: 'hex',
    mask: 0xf0,
    bits: 8,
    strings: SGL_TYPE_NAMES,
  }),
  f('nvme.cmd.sgl.subtype', 'Descriptor Sub Type', 'uint', 'SGL identifier bits 3:0', {
    base: 'hex',
    mask: 0x0f,
    bits: 8,
  }),
  f('nvme.cmd.sgl1.addr', 'Address', 'uint64', 'SGL address (host address, or in-capsule offset)', { base: 'hex' }),
  f('nvme.cmd.sgl1.len', 'Length', 'uint', 'SGL length', d32),
  f('nvme.cmd.sgl1.key', 'Key', 'uint', 'Keyed SGL key (iWARP STag)', x32),
  f('nvme.cmd.dword10', 'DWORD10', 'uint', 'CDW10', x32),
  f('nvme.cmd.dword11', 'DWORD11', 'uint', 'CDW11', x32),
  f('nvme.cmd.dword12', 'DWORD12', 'uint', 'CDW12', x32),
  f('nvme.cmd.slba', 'Start LBA', 'uint64', 'SLBA', { base: 'dec' }),
  f('nvme.cmd.nlb', 'Absolute Number of Logical Blocks', 'uint', 'NLB + 1', d16),
  f('nvme.cmd.identify.dword10.cns', 'Controller or Namespace Structure (CNS)', 'uint', 'CNS', x8),
  f('nvme.cmd.identify.ns.flbas', 'Formatted LBA Size (FLBAS)', 'uint', 'FLBAS of the Identify Namespace data', x8),
  f('nvme.fabrics.cmd.opc', 'Opcode', 'uint', 'Fabrics command opcode (7Fh)', x8),
  f('nvme.fabrics.cmd.cid', 'Command Identifier', 'uint', 'CID of a Fabrics command', x16),
  f('nvme.fabrics.cmd.fctype', 'Fabric Command Type', 'uint', 'FCTYPE', { ...x8, strings: FCTYPE_NAMES }),
  f('nvme.fabrics.cmd.connect.recfmt', 'Record Format', 'uint', 'Connect RECFMT', d16),
  f('nvme.fabrics.cmd.connect.qid', 'Queue ID', 'uint', 'Connect QID', d16),
  f('nvme.fabrics.cmd.connect.sqsize', 'Submission Queue Size', 'uint', 'Connect SQSIZE (zero-based)', d16),
  f('nvme.fabrics.cmd.connect.cattr', 'Connect Attributes', 'uint', 'CATTR', x8),
  f('nvme.fabrics.cmd.connect.kato', 'Keep Alive Timeout', 'uint', 'KATO (ms)', d32),
  f('nvme.fabrics.cmd.connect.data.hostid', 'Host Identifier', 'bytes', 'HOSTID'),
  f('nvme.fabrics.cmd.connect.data.cntrlid', 'Controller ID', 'uint', 'CNTLID asked for (FFFFh: dynamic)', x16),
  f('nvme.fabrics.cmd.connect.data.subnqn', 'Subsystem NQN', 'string', 'SUBNQN'),
  f('nvme.fabrics.cmd.connect.data.hostnqn', 'Host NQN', 'string', 'HOSTNQN'),
  f('nvme.fabrics.cmd.prop_get_set.attrib', 'Attributes', 'uint', 'ATTRIB (bits 2:0 size: 0 4 octets, 1 8 octets)', x8),
  f('nvme.fabrics.cmd.prop_get_set.offset', 'Offset', 'uint', 'Property offset', x32),
  f('nvme.fabrics.prop_get_set.data.8B', 'Value', 'uint64', 'Property Set value', { base: 'hex' }),
  f('nvme.fabrics.cqe.connect.cntrlid', 'Controller ID', 'uint', 'CNTLID a successful Connect returned', x16),
  f('nvme.cqe.dword0', 'DWORD0', 'uint', 'Command specific DW0', x32),
  f('nvme.cqe.dword1', 'DWORD1', 'uint', 'Command specific DW1', x32),
  f('nvme.cqe.sqhd', 'SQ Head Pointer', 'uint', 'SQHD', x16),
  f('nvme.cqe.sqid', 'SQ Identifier', 'uint', 'SQID', x16),
  f('nvme.cqe.cid', 'Command Identifier', 'uint', 'CID', x16),
  f('nvme.cqe.status', 'Status Field', 'uint', 'Status Field', x16),
  f('nvme.cqe.status.sc', 'Status Code', 'uint', 'SC (bits 8:1)', { base: 'hex', mask: 0x1fe, bits: 16 }),
  f('nvme.cqe.status.sct', 'Status Code Type', 'uint', 'SCT (bits 11:9)', {
    base: 'hex',
    mask: 0xe00,
    bits: 16,
    strings: SCT_NAMES,
  }),
  f('nvme.cqe.status.crd', 'Command Retry Delay', 'uint', 'CRD (bits 13:12)', { base: 'hex', mask: 0x3000, bits: 16 }),
  f('nvme.cqe.status.m', 'More Infornation in Log Page', 'bool', 'M (bit 14)', { mask: 0x4000, bits: 16 }),
  f('nvme.cqe.status.dnr', 'Do not Retry', 'bool', 'DNR (bit 15)', { mask: 0x8000, bits: 16 }),
  f('nvme.cmd_pkt', 'Cmd in', 'uint', 'Frame of the command this completes', d32),
  f('nvme.cmd_latency', 'Cmd Latency (µs)', 'uint', 'Command to completion, µs (Wireshark: FT_DOUBLE µs)', d32),
  // --- ours ---
  f('nvme.cmd.name', 'Command', 'string', 'Command name (admin, NVM or Fabrics)'),
  f('nvme.cmd.data_len', 'In-capsule data', 'uint', 'Octets after the SQE in the command capsule', d32),
  f('nvme.cqe.status.name', 'Status', 'string', 'Status Code name'),
];

export const NVME_RDMA_ALL_FIELDS: readonly FieldDef[] = [...NVME_RDMA_FIELDS, ...NVME_FIELDS];
