/**
 * Names of iSER and iSCSI codes, and of the SCSI operations the Info line and `-z scsi,srt` show,
 * as Wireshark names them (`tshark -G values` of Wireshark 4.0: iser.flags.opcode, iscsi.opcode,
 * iscsi.scsiresponse.status, iscsi.login.status, scsi_sbc.opcode, scsi.spc.opcode).
 */

/** iSER opcodes (high nibble of the flags octet; RFC 7145 §9.1, Wireshark packet-iser.c). */
export const ISER_OP = { control: 0x1, hello: 0x2, helloReply: 0x3 } as const;

export const ISER_OP_NAMES: Readonly<Record<number, string>> = {
  [ISER_OP.control]: 'iSCSI Control-Type PDU',
  [ISER_OP.hello]: 'Hello Message',
  [ISER_OP.helloReply]: 'HelloReply Message',
};

/** iSCSI opcodes (RFC 7143 §11.2.1.2). */
export const OP = {
  nopOut: 0x00,
  scsiCommand: 0x01,
  taskMgmt: 0x02,
  loginRequest: 0x03,
  textRequest: 0x04,
  dataOut: 0x05,
  logoutRequest: 0x06,
  snack: 0x10,
  nopIn: 0x20,
  scsiResponse: 0x21,
  taskMgmtResponse: 0x22,
  loginResponse: 0x23,
  textResponse: 0x24,
  dataIn: 0x25,
  logoutResponse: 0x26,
  r2t: 0x31,
  asyncMessage: 0x32,
  reject: 0x3f,
} as const;

/** Wireshark's iscsi.opcode value names. */
export const OPCODE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'NOP Out',
  0x01: 'SCSI Command',
  0x02: 'Task Management Function',
  0x03: 'Login Command',
  0x04: 'Text Command',
  0x05: 'SCSI Data Out',
  0x06: 'Logout Command',
  0x10: 'SNACK Request',
  0x1c: 'Vendor Specific I0',
  0x1d: 'Vendor Specific I1',
  0x1e: 'Vendor Specific I2',
  0x20: 'NOP In',
  0x21: 'SCSI Response',
  0x22: 'Task Management Function Response',
  0x23: 'Login Response',
  0x24: 'Text Response',
  0x25: 'SCSI Data In',
  0x26: 'Logout Response',
  0x31: 'Ready To Transfer',
  0x32: 'Asynchronous Message',
  0x3c: 'Vendor Specific T0',
  0x3d: 'Vendor Specific T1',
  0x3e: 'Vendor Specific T2',
  0x3f: 'Reject',
};

/** Opcodes a target sends (RFC 7143 §11.2.1.2: 0x20 - 0x3f). */
export const isTargetOpcode = (op: number): boolean => op >= 0x20;

/** Wireshark's scsi.status / iscsi.scsiresponse.status value names (SAM). */
export const STATUS_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Good',
  0x02: 'Check Condition',
  0x04: 'Condition Met',
  0x08: 'Busy',
  0x10: 'Intermediate',
  0x14: 'Intermediate Condition Met',
  0x18: 'Reservation Conflict',
  0x28: 'Task Set Full',
  0x30: 'ACA Active',
  0x40: 'Task Aborted',
};

export const RESPONSE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Command completed at target',
  0x01: 'Response does not contain SCSI status',
};

export const LOGIN_STAGE_NAMES: Readonly<Record<number, string>> = {
  0: 'Security negotiation',
  1: 'Operational negotiation',
  3: 'Full feature phase',
};

export const LOGIN_STATUS_NAMES: Readonly<Record<number, string>> = {
  0x0000: 'Success',
  0x0101: 'Target moved temporarily',
  0x0102: 'Target moved permanently',
  0x0200: 'Initiator error (miscellaneous error)',
  0x0201: 'Authentication failed',
  0x0202: 'Authorisation failure',
  0x0203: 'Target not found',
  0x0204: 'Target removed',
  0x0205: 'Unsupported version',
  0x0206: 'Too many connections',
  0x0207: 'Missing parameter',
  0x0208: "Can't include in session",
  0x0209: 'Session type not supported',
  0x020a: 'Session does not exist',
  0x020b: 'Invalid request during login',
  0x0300: 'Target error (miscellaneous error)',
  0x0301: 'Service unavailable',
  0x0302: 'Out of resources',
};

/**
 * SCSI operation codes of direct-access block devices (SBC) and the primary commands (SPC), by
 * Wireshark's names (scsi_sbc.opcode, scsi.spc.opcode). Wireshark picks the command set from the
 * INQUIRY it saw; a capture that starts mid-session has none, and block storage is what iSER serves.
 */
export const SCSI_OPCODE_NAMES: Readonly<Record<number, string>> = {
  0x00: 'Test Unit Ready',
  0x03: 'Request Sense',
  0x08: 'Read(6)',
  0x0a: 'Write(6)',
  0x12: 'Inquiry',
  0x15: 'Mode Select(6)',
  0x1a: 'Mode Sense(6)',
  0x1b: 'Start Stop Unit',
  0x1e: 'Prevent/Allow Medium Removal',
  0x25: 'Read Capacity(10)',
  0x28: 'Read(10)',
  0x2a: 'Write(10)',
  0x2e: 'Write & Verify(10)',
  0x2f: 'Verify(10)',
  0x35: 'Synchronize Cache(10)',
  0x41: 'Write Same(10)',
  0x42: 'Unmap',
  0x4d: 'Log Sense',
  0x55: 'Mode Select(10)',
  0x5a: 'Mode Sense(10)',
  0x5e: 'Persistent Reserve In',
  0x5f: 'Persistent Reserve Out',
  0x88: 'Read(16)',
  0x89: 'Compare & Write(16)',
  0x8a: 'Write(16)',
  0x8e: 'Write & Verify(16)',
  0x8f: 'Verify(16)',
  0x91: 'Synchronize Cache(16)',
  0x93: 'Write Same(16)',
  0x9e: 'Service Action In(16)',
  0xa0: 'Report LUNs',
  0xa8: 'Read(12)',
  0xaa: 'Write(12)',
};

export function nameOf(table: Readonly<Record<number, string>>, v: number): string {
  return table[v] ?? `Unknown (0x${v.toString(16).padStart(2, '0')})`;
}

export const hex32 = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;
