/**
 * NVMe and NVMe over Fabrics names: opcodes of the admin, NVM and Fabrics command sets, Fabrics
 * command types, CQE status codes by Status Code Type, SGL descriptor identifiers and the RDMA CM
 * reject statuses. Values from the NVMe Base Specification (Admin/NVM opcode tables, Status Code
 * tables), the NVMe over Fabrics specification (Fabrics command types, Connect status values) and
 * the NVMe/RDMA transport binding (CM private data); checked against Linux include/linux/nvme.h,
 * include/linux/nvme-rdma.h and Wireshark 4.0's nvme.fabrics.cmd.fctype and nvme.cqe.status.sct
 * value strings (tshark -G values).
 */

/** Fabrics commands share one opcode (NVMe-oF "Fabrics Command"). */
export const OPC_FABRICS = 0x7f;

export const FCTYPE = {
  PROPERTY_SET: 0x00,
  CONNECT: 0x01,
  PROPERTY_GET: 0x04,
  AUTH_SEND: 0x05,
  AUTH_RECV: 0x06,
  DISCONNECT: 0x08,
} as const;

/** Wireshark's nvme.fabrics.cmd.fctype value strings. */
export const FCTYPE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Property Set',
  0x01: 'Connect',
  0x04: 'Property Get',
  0x05: 'Authentication Send',
  0x06: 'Authentication Recv',
  0x08: 'Disconnect',
};

/** Admin command set opcodes (NVMe Base Specification, Admin Command Set). */
export const ADMIN_OPC_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Delete SQ',
  0x01: 'Create SQ',
  0x02: 'Get Log Page',
  0x04: 'Delete CQ',
  0x05: 'Create CQ',
  0x06: 'Identify',
  0x08: 'Abort',
  0x09: 'Set Features',
  0x0a: 'Get Features',
  0x0c: 'Async Event Request',
  0x0d: 'Namespace Management',
  0x10: 'Firmware Commit',
  0x11: 'Firmware Image Download',
  0x14: 'Device Self-test',
  0x15: 'Namespace Attachment',
  0x18: 'Keep Alive',
  0x19: 'Directive Send',
  0x1a: 'Directive Receive',
  0x1c: 'Virtualization Management',
  0x1d: 'NVMe-MI Send',
  0x1e: 'NVMe-MI Receive',
  0x7c: 'Doorbell Buffer Config',
  0x80: 'Format NVM',
  0x81: 'Security Send',
  0x82: 'Security Receive',
  0x84: 'Sanitize',
  0x86: 'Get LBA Status',
};

/** NVM command set opcodes. */
export const NVM_OPC_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Flush',
  0x01: 'Write',
  0x02: 'Read',
  0x04: 'Write Uncorrectable',
  0x05: 'Compare',
  0x08: 'Write Zeroes',
  0x09: 'Dataset Management',
  0x0c: 'Verify',
  0x0d: 'Reservation Register',
  0x0e: 'Reservation Report',
  0x11: 'Reservation Acquire',
  0x15: 'Reservation Release',
};

export const NVM_OPC = { FLUSH: 0x00, WRITE: 0x01, READ: 0x02 } as const;
export const ADMIN_OPC = { IDENTIFY: 0x06 } as const;

/** Name of a command: Fabrics by FCTYPE, else by the queue's command set (qid 0: admin). */
export function commandName(opc: number, fctype: number | null, admin: boolean): string {
  if (opc === OPC_FABRICS) return fctype === null ? 'Fabrics' : (FCTYPE_NAMES[fctype] ?? `Fabrics 0x${hex2(fctype)}`);
  const n = admin ? ADMIN_OPC_NAMES[opc] : NVM_OPC_NAMES[opc];
  return n ?? `${admin ? 'Admin' : 'NVM'} 0x${hex2(opc)}`;
}

/**
 * The data direction a command implies: opcode bits 1:0 (NVMe Base "Data Transfer": 01b host to
 * controller, 10b controller to host, 11b bidirectional); for a Fabrics command the same bits of
 * FCTYPE (NVMe-oF: Connect 01h carries its data to the controller, Authentication Receive 06h from it).
 */
export type DataDirection = 'none' | 'h2c' | 'c2h' | 'both';
export function dataDirection(opc: number, fctype: number | null): DataDirection {
  const bits = (opc === OPC_FABRICS ? (fctype ?? 0) : opc) & 3;
  return bits === 1 ? 'h2c' : bits === 2 ? 'c2h' : bits === 3 ? 'both' : 'none';
}

/** Wireshark's nvme.cqe.status.sct value strings. */
export const SCT_NAMES: Readonly<Record<number, string>> = {
  0: 'Generic Command Status',
  1: 'Command Specific Status',
  2: 'Media and Data Integrity Errors',
  3: 'Path Related Status',
  7: 'Vendor Specific',
};

const GENERIC_SC: Readonly<Record<number, string>> = {
  0x00: 'Successful Completion',
  0x01: 'Invalid Command Opcode',
  0x02: 'Invalid Field in Command',
  0x03: 'Command ID Conflict',
  0x04: 'Data Transfer Error',
  0x05: 'Commands Aborted due to Power Loss Notification',
  0x06: 'Internal Error',
  0x07: 'Command Abort Requested',
  0x08: 'Command Aborted due to SQ Deletion',
  0x09: 'Command Aborted due to Failed Fused Command',
  0x0a: 'Command Aborted due to Missing Fused Command',
  0x0b: 'Invalid Namespace or Format',
  0x0c: 'Command Sequence Error',
  0x0d: 'Invalid SGL Segment Descriptor',
  0x0e: 'Invalid Number of SGL Descriptors',
  0x0f: 'Data SGL Length Invalid',
  0x10: 'Metadata SGL Length Invalid',
  0x11: 'SGL Descriptor Type Invalid',
  0x12: 'Invalid Use of Controller Memory Buffer',
  0x13: 'PRP Offset Invalid',
  0x14: 'Atomic Write Unit Exceeded',
  0x15: 'Operation Denied',
  0x16: 'SGL Offset Invalid',
  0x18: 'Host Identifier Inconsistent Format',
  0x19: 'Keep Alive Timer Expired',
  0x1a: 'Keep Alive Timeout Invalid',
  0x1b: 'Command Aborted due to Preempt and Abort',
  0x1c: 'Sanitize Failed',
  0x1d: 'Sanitize In Progress',
  0x1e: 'SGL Data Block Granularity Invalid',
  0x1f: 'Command Not Supported for Queue in CMB',
  0x20: 'Namespace is Write Protected',
  0x21: 'Command Interrupted',
  0x22: 'Transient Transport Error',
  0x80: 'LBA Out of Range',
  0x81: 'Capacity Exceeded',
  0x82: 'Namespace Not Ready',
  0x83: 'Reservation Conflict',
  0x84: 'Format In Progress',
};

const COMMAND_SPECIFIC_SC: Readonly<Record<number, string>> = {
  0x00: 'Completion Queue Invalid',
  0x01: 'Invalid Queue Identifier',
  0x02: 'Invalid Queue Size',
  0x03: 'Abort Command Limit Exceeded',
  0x05: 'Asynchronous Event Request Limit Exceeded',
  0x06: 'Invalid Firmware Slot',
  0x07: 'Invalid Firmware Image',
  0x08: 'Invalid Interrupt Vector',
  0x09: 'Invalid Log Page',
  0x0a: 'Invalid Format',
  0x80: 'Connect Incompatible Format',
  0x81: 'Connect Controller Busy',
  0x82: 'Connect Invalid Parameters',
  0x83: 'Connect Restart Discovery',
  0x84: 'Connect Invalid Host',
  0x85: 'Invalid Queue Type',
  0x90: 'Discover Restart',
  0x91: 'Authentication Required',
};

const MEDIA_SC: Readonly<Record<number, string>> = {
  0x80: 'Write Fault',
  0x81: 'Unrecovered Read Error',
  0x82: 'End-to-end Guard Check Error',
  0x83: 'End-to-end Application Tag Check Error',
  0x84: 'End-to-end Reference Tag Check Error',
  0x85: 'Compare Failure',
  0x86: 'Access Denied',
  0x87: 'Deallocated or Unwritten Logical Block',
};

const PATH_SC: Readonly<Record<number, string>> = {
  0x00: 'Internal Path Error',
  0x01: 'Asymmetric Access Persistent Loss',
  0x02: 'Asymmetric Access Inaccessible',
  0x03: 'Asymmetric Access Transition',
  0x60: 'Controller Pathing Error',
  0x70: 'Host Pathing Error',
  0x71: 'Command Aborted By Host',
};

const SC_BY_SCT: Readonly<Record<number, Readonly<Record<number, string>>>> = {
  0: GENERIC_SC,
  1: COMMAND_SPECIFIC_SC,
  2: MEDIA_SC,
  3: PATH_SC,
};

export function statusName(sct: number, sc: number): string {
  return SC_BY_SCT[sct]?.[sc] ?? `SCT ${sct} SC 0x${hex2(sc)}`;
}

/** NVMe/RDMA CM reject status values (transport binding; Linux enum nvme_rdma_cm_status). */
export const CM_REJ_NAMES: Readonly<Record<number, string>> = {
  1: 'Invalid Length',
  2: 'Invalid Record Format',
  3: 'Invalid Queue ID',
  4: 'Invalid Host SQ Size',
  5: 'Invalid Host RQ Size',
  6: 'No Resources',
  7: 'Invalid IRD',
  8: 'Invalid ORD',
  9: 'Invalid Controller ID',
};

/** SGL descriptor types (NVMe Base "SGL Descriptor Type"). */
export const SGL_TYPE_NAMES: Readonly<Record<number, string>> = {
  0x0: 'Data Block',
  0x1: 'Bit Bucket',
  0x2: 'Segment',
  0x3: 'Last Segment',
  0x4: 'Keyed Data Block',
  0x5: 'Transport Data Block',
  0xf: 'Vendor Specific',
};

export const hex2 = (n: number): string => n.toString(16).padStart(2, '0');
export const hex4 = (n: number): string => n.toString(16).padStart(4, '0');
