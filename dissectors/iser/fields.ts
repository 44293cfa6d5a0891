/**
 * iSER, iSCSI and SCSI field declarations.
 *
 * Filter names and types are Wireshark's (packet-iser.c, packet-iscsi.c, packet-scsi.c,
 * packet-scsi-sbc.c; checked with `tshark -G fields` of Wireshark 4.0) wherever Wireshark has the
 * field: `iser.write_stag`, `iscsi.initiatortasktag`, `iscsi.scsicommand.expecteddatatransferlength`,
 * `scsi_sbc.opcode`, `scsi_sbc.rdwr10.lba`. Fields Wireshark lacks (the CM private data, the
 * octets moved by RDMA, the task's latency, the streaming-mode login) use the same prefixes, marked
 * "ours". Wireshark's FT_FRAMENUM and FT_RELATIVE_TIME fields are plain unsigned integers here.
 */
import { field, type FieldDef } from '../../src/vocabulary/fields.js';
import {
  ISER_OP_NAMES,
  LOGIN_STAGE_NAMES,
  LOGIN_STATUS_NAMES,
  OPCODE_NAMES,
  RESPONSE_NAMES,
  SCSI_OPCODE_NAMES,
  STATUS_NAMES,
} from './names.js';

const u = (abbrev: string, name: string, blurb: string, extra: Partial<FieldDef> = {}): FieldDef =>
  field(abbrev, name, 'uint', blurb, { base: 'dec', ...extra });
const hex = (abbrev: string, name: string, blurb: string, extra: Partial<FieldDef> = {}): FieldDef =>
  field(abbrev, name, 'uint', blurb, { base: 'hex', ...extra });
const flag = (abbrev: string, name: string, blurb: string, mask: number, bits = 8): FieldDef =>
  field(abbrev, name, 'bool', blurb, { mask, bits });

/** The fields, by role: the tree builder and the filters read them by these keys. */
export const F = {
  // --- iSER header (RFC 7145 §9) [Wireshark names] ---
  iser: field('iser', 'iSCSI Extensions for RDMA', 'protocol', 'iSER message (RFC 7145)'),
  flags: hex('iser.flags', 'Flags', 'iSER flags octet', { width: 8 }),
  opcode: hex('iser.flags.opcode', 'Opcode', 'iSER opcode (high nibble)', { width: 8, strings: ISER_OP_NAMES }),
  wsv: flag('iser.flags.wsv', 'WSV', 'Write STag Valid', 0x08),
  rsv: flag('iser.flags.rsv', 'RSV', 'Read STag Valid', 0x04),
  rej: flag('iser.flags.rej', 'REJ', 'Target reject connection', 0x01),
  writeStag: hex('iser.write_stag', 'Write STag', 'STag of the buffer the target reads Data-Out from'),
  writeBase: field('iser.write_base_offset', 'Write Base Offset', 'uint64', 'Tagged offset of the solicited data', {
    base: 'hex',
  }),
  readStag: hex('iser.read_stag', 'Read STag', 'STag of the buffer the target writes Data-In into'),
  readBase: field('iser.read_base_offset', 'Read Base Offset', 'uint64', 'Tagged offset of the Data-In buffer', {
    base: 'hex',
  }),
  ird: hex('iser.ird', 'iSER-IRD', 'Hello: RDMA Read Requests the initiator can take', { width: 16 }),
  ord: hex('iser.ord', 'iSER-ORD', 'HelloReply: RDMA Read Requests the target will have outstanding', {
    width: 16,
  }),
  // --- ours ---
  maxVer: u('iser.max_ver', 'MaxVer', 'Hello/HelloReply: highest iSER version', { width: 8 }),
  minVer: u('iser.min_ver', 'MinVer / CurVer', 'Hello: lowest iSER version; HelloReply: version chosen', {
    width: 8,
  }),
  cm: field('iser.cm', 'iSER CM REQ private data', 'protocol', 'RFC 7145 §9.1 (Linux struct iser_cm_hdr)'),
  cmZbva: flag('iser.cm.zbva_not_supported', 'ZBVA not supported', 'Tagged offsets are virtual addresses', 0x80),
  cmSie: flag(
    'iser.cm.send_invalidate_not_supported',
    'Send with Invalidate not supported',
    'No remote invalidation',
    0x40,
  ),
  moved: u(
    'iser.rdma.moved',
    'Octets moved by RDMA',
    "Octets the target's RDMA Writes/Read Requests moved for the task",
  ),
  invalidated: hex('iser.invalidated_stag', 'Invalidated STag', "Send with Invalidate's STag (the task's)"),
  streaming: field(
    'iser.streaming_login',
    'iSCSI login in streaming mode (before MPA)',
    'protocol',
    'RFC 5046 §5.1: iSCSI Login PDUs over plain TCP before the MPA Request',
  ),
};

export const I = {
  // --- iSCSI BHS (RFC 7143 §11.2) [Wireshark names] ---
  iscsi: field('iscsi', 'iSCSI', 'protocol', 'iSCSI PDU (RFC 7143)'),
  opcode: hex('iscsi.opcode', 'Opcode', 'iSCSI opcode', { width: 8, strings: OPCODE_NAMES }),
  immediate: flag('iscsi.I', 'I', 'Immediate delivery', 0x40),
  flags: hex('iscsi.flags', 'Flags', 'Opcode-specific flags (octet 1)', { width: 8 }),
  ahsLength: u('iscsi.totalahslength', 'TotalAHSLength', 'Additional Header Segments, in 4-octet words', { width: 8 }),
  dataLength: u('iscsi.datasegmentlength', 'DataSegmentLength', 'Octets of the data segment (without padding)'),
  itt: hex('iscsi.initiatortasktag', 'InitiatorTaskTag', 'Initiator Task Tag'),
  cmdF: flag('iscsi.scsicommand.F', 'F', 'Final: no unsolicited Data-Out follows', 0x80),
  cmdR: flag('iscsi.scsicommand.R', 'R', 'Read: data to the initiator', 0x40),
  cmdW: flag('iscsi.scsicommand.W', 'W', 'Write: data from the initiator', 0x20),
  attr: u('iscsi.scsicommand.attr', 'Attr', 'Task attributes', { width: 8 }),
  edtl: u('iscsi.scsicommand.expecteddatatransferlength', 'ExpectedDataTransferLength', 'Octets the command moves'),
  cmdSn: u('iscsi.cmdsn', 'CmdSN', 'Command sequence number'),
  expStatSn: u('iscsi.expstatsn', 'ExpStatSN', 'Next StatSN the initiator expects'),
  statSn: u('iscsi.statsn', 'StatSN', 'Status sequence number'),
  expCmdSn: u('iscsi.expcmdsn', 'ExpCmdSN', 'Next CmdSN the target expects'),
  maxCmdSn: u('iscsi.maxcmdsn', 'MaxCmdSN', 'Highest CmdSN the target accepts'),
  rspO: flag('iscsi.scsiresponse.O', 'O', 'Residual overflow', 0x04),
  rspU: flag('iscsi.scsiresponse.U', 'U', 'Residual underflow', 0x02),
  rspBo: flag('iscsi.scsiresponse.o', 'o', 'Bidirectional read residual overflow', 0x10),
  rspBu: flag('iscsi.scsiresponse.u', 'u', 'Bidirectional read residual underflow', 0x08),
  response: hex('iscsi.scsiresponse.response', 'Response', 'iSCSI service response', {
    width: 8,
    strings: RESPONSE_NAMES,
  }),
  status: hex('iscsi.scsiresponse.status', 'Status', 'SCSI status', { width: 8, strings: STATUS_NAMES }),
  residual: u(
    'iscsi.scsiresponse.residualcount',
    'ResidualCount',
    'Octets not transferred (U) or not transferable (O)',
  ),
  bidiResidual: u('iscsi.scsiresponse.bidireadresidualcount', 'BidiReadResidualCount', 'Bidirectional read residual'),
  ttt: hex('iscsi.targettransfertag', 'TargetTransferTag', 'Target Transfer Tag (0xffffffff: unsolicited)'),
  dataSn: u('iscsi.datasn', 'DataSN', 'Data sequence number'),
  bufferOffset: u('iscsi.bufferOffset', 'BufferOffset', 'Offset of the data in the task buffer'),
  dataF: flag('iscsi.scsidata.F', 'F', 'Final Data-Out of the sequence', 0x80),
  loginT: flag('iscsi.login.T', 'T', 'Transit to the next stage', 0x80),
  loginC: flag('iscsi.login.C', 'C', 'Continue: text incomplete', 0x40),
  csg: u('iscsi.login.csg', 'CSG', 'Current stage', { width: 8, strings: LOGIN_STAGE_NAMES }),
  nsg: u('iscsi.login.nsg', 'NSG', 'Next stage', { width: 8, strings: LOGIN_STAGE_NAMES }),
  versionMax: u('iscsi.versionmax', 'VersionMax', 'Highest iSCSI version', { width: 8 }),
  versionMin: u('iscsi.versionmin', 'VersionMin', 'Lowest iSCSI version', { width: 8 }),
  versionActive: u('iscsi.versionactive', 'VersionActive', 'iSCSI version chosen', { width: 8 }),
  isid: field('iscsi.isid', 'ISID', 'bytes', 'Initiator part of the session identifier'),
  tsih: u('iscsi.tsih', 'TSIH', 'Target-assigned session identifying handle', { width: 16 }),
  cid: u('iscsi.cid', 'CID', 'Connection ID', { width: 16 }),
  loginStatus: hex('iscsi.login.status', 'Status', 'Login Status-Class and Status-Detail', {
    width: 16,
    strings: LOGIN_STATUS_NAMES,
  }),
  keyValue: field('iscsi.keyvalue', 'KeyValue', 'string', 'Login/Text key=value pair'),
  requestFrame: u('iscsi.request_frame', 'Request in', 'First frame of the SCSI Command this answers'),
  responseFrame: u('iscsi.response_frame', 'Response in', 'First frame of the SCSI Response'),
  // --- ours ---
  timeUs: u('iscsi.time_us', 'Time from request (µs)', 'SCSI Command to SCSI Response'),
  unsolicited: u('iscsi.unsolicited', 'Unsolicited data', 'Immediate data and unsolicited Data-Out of the task'),
};

export const S = {
  // --- SCSI (SAM, SPC, SBC) [Wireshark names] ---
  lun: hex('scsi.lun', 'LUN', 'Logical unit number', { width: 16 }),
  sbcOpcode: hex('scsi_sbc.opcode', 'SBC Opcode', 'SCSI operation code (block commands)', {
    width: 8,
    strings: SCSI_OPCODE_NAMES,
  }),
  lba10: u('scsi_sbc.rdwr10.lba', 'Logical Block Address (LBA)', 'READ/WRITE(10) LBA'),
  xfer10: u('scsi_sbc.rdwr10.xferlen', 'Transfer Length', 'READ/WRITE(10) blocks', { width: 16 }),
  lba6: u('scsi_sbc.rdwr6.lba', 'Logical Block Address (LBA)', 'READ/WRITE(6) LBA', { width: 24 }),
  xfer6: u('scsi_sbc.rdwr6.xferlen', 'Transfer Length', 'READ/WRITE(6) blocks', { width: 24 }),
  xfer12: u('scsi_sbc.rdwr12.xferlen', 'Transfer Length', 'READ/WRITE(12) blocks'),
  xfer16: u(
    'scsi_sbc.rdwr16.xferlen',
    'Transfer Length',
    'READ/WRITE(16) blocks (ours: Wireshark shows it under rdwr12)',
  ),
  lba64: field('scsi_sbc.lba64_add', 'Logical Block Address', 'uint64', 'READ/WRITE(12/16) LBA', { base: 'dec' }),
  status: hex('scsi.status', 'Status', 'SCSI status', { width: 8, strings: STATUS_NAMES }),
  requestFrame: u('scsi.request_frame', 'Request in', 'First frame of the command'),
  responseFrame: u('scsi.response_frame', 'Response in', 'First frame of the response'),
};

/** Every field this upper layer declares (the spec's field table). */
export const ISER_FIELDS: readonly FieldDef[] = [...Object.values(F), ...Object.values(I), ...Object.values(S)];
