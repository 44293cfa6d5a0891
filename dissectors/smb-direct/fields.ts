/**
 * SMB Direct (MS-SMBD) and SMB2 (MS-SMB2) field declarations.
 *
 * Filter names and types are Wireshark's (packet-smb-direct.c, packet-smb2.c; checked with
 * `tshark -G fields` of Wireshark 4.0) wherever Wireshark has the field, so users' filters carry
 * over: e.g. `smb_direct.remaining_length` is Wireshark's name for RemainingDataLength and
 * `smb2.read_remaining` its name for the READ Response DataRemaining. Fields Wireshark lacks use
 * the same prefixes and are marked "ours" below. Wireshark's FT_GUID FileId is a string here;
 * its FT_NONE subtree labels are protocol-type nodes.
 */
import type { FieldDef } from '../../src/vocabulary/fields.js';
import { CHANNEL } from './smb2.js';

const f = (
  abbrev: string,
  name: string,
  type: FieldDef['type'],
  blurb: string,
  extra: Partial<Pick<FieldDef, 'base' | 'mask' | 'bits' | 'width' | 'strings'>> = {},
): FieldDef => ({ abbrev, name, type, blurb, ...extra });

const u16 = { base: 'dec', width: 16 } as const;
const x16 = { base: 'hex', width: 16 } as const;
const u32 = { base: 'dec' } as const;
const x32 = { base: 'hex' } as const;

/** Wireshark's value names for smb2.cmd (tshark -G values). */
const SMB2_CMD_VALUES: Readonly<Record<number, string>> = {
  0: 'Negotiate Protocol',
  1: 'Session Setup',
  2: 'Session Logoff',
  3: 'Tree Connect',
  4: 'Tree Disconnect',
  5: 'Create',
  6: 'Close',
  7: 'Flush',
  8: 'Read',
  9: 'Write',
  10: 'Lock',
  11: 'Ioctl',
  12: 'Cancel',
  13: 'KeepAlive',
  14: 'Find',
  15: 'Notify',
  16: 'GetInfo',
  17: 'SetInfo',
  18: 'Break',
};

/** Wireshark's value names for smb2.channel. */
const SMB2_CHANNEL_VALUES: Readonly<Record<number, string>> = {
  [CHANNEL.NONE]: 'None',
  [CHANNEL.RDMA_V1]: 'RDMA V1',
  [CHANNEL.RDMA_V1_INVALIDATE]: 'RDMA V1_INVALIDATE',
  [CHANNEL.RDMA_TRANSFORM]: 'RDMA TRANSFORM',
};

export const SMB_DIRECT_FIELDS: readonly FieldDef[] = [
  f('smb_direct', 'SMB-Direct (SMB RDMA Transport)', 'protocol', 'MS-SMBD message'),
  f('smb_direct.negotiate_request', 'NegotiateRequest', 'protocol', 'MS-SMBD 2.2.1 Negotiate Request'),
  f('smb_direct.negotiate_response', 'NegotiateResponse', 'protocol', 'MS-SMBD 2.2.2 Negotiate Response'),
  f('smb_direct.data_message', 'DataMessage', 'protocol', 'MS-SMBD 2.2.3 Data Transfer message'),
  f('smb_direct.version.min', 'MinVersion', 'uint', 'Lowest protocol version the sender supports', x16),
  f('smb_direct.version.max', 'MaxVersion', 'uint', 'Highest protocol version the sender supports', x16),
  f('smb_direct.version.negotiated', 'NegotiatedVersion', 'uint', 'Version selected for the connection', x16),
  f('smb_direct.credits.requested', 'CreditsRequested', 'uint', 'Send Credits requested of the receiver (total)', u16),
  f('smb_direct.credits.granted', 'CreditsGranted', 'uint', 'Send Credits granted to the receiver (increment)', u16),
  f('smb_direct.status', 'Status', 'uint', 'NT Status code of the Negotiate Response', x32),
  f('smb_direct.max_read_write_size', 'MaxReadWriteSize', 'uint', 'Largest RDMA transfer per upper-layer request', u32),
  f('smb_direct.preferred_send_size', 'PreferredSendSize', 'uint', 'Largest message the sender will send', u32),
  f('smb_direct.max_receive_size', 'MaxReceiveSize', 'uint', 'Largest message the sender can receive', u32),
  f('smb_direct.max_fragmented_size', 'MaxFragmentedSize', 'uint', 'Largest reassembled message the sender takes', u32),
  f('smb_direct.flags', 'Flags', 'uint', 'Data Transfer flags', x16),
  f('smb_direct.flags.response_requested', 'ResponseRequested', 'bool', 'Keepalive: the peer is asked to answer', {
    mask: 0x0001,
    bits: 16,
  }),
  f('smb_direct.remaining_length', 'RemainingLength', 'uint', 'RemainingDataLength: octets still to come', u32),
  f('smb_direct.data_offset', 'DataOffset', 'uint', 'Offset of the data payload', u32),
  f('smb_direct.data_length', 'DataLength', 'uint', 'Length of the data payload', u32),
  f('smb_direct.fragment.count', 'Fragment count', 'uint', 'Data Transfer messages of the reassembled message', u32),
  f('smb_direct.reassembled.length', 'Reassembled SMB Direct length', 'uint', 'Octets of the reassembled message', u32),
  // --- ours ---
  f('smb_direct.reserved', 'Reserved', 'uint', 'Reserved (sent as 0, ignored)', x16),
  f('smb_direct.padding', 'Padding', 'uint', 'Padding before the data payload', x32),
  f('smb_direct.send_credits', 'Sender send credits after this message', 'uint', 'Credits the sender still holds', u32),
  f(
    'smb_direct.peer_send_credits',
    'Receiver send credits after this message',
    'uint',
    'Credits the receiver holds',
    u32,
  ),
  f('smb_direct.max_send_size', 'Sender MaxSendSize', 'uint', "Sender's Connection.MaxSendSize (3.1.5.6/3.1.5.7)", u32),
  f('smb_direct.keepalive.response_to', 'Answers keepalive in frame', 'uint', 'Frame of the RESPONSE_REQUESTED', u32),
  f('smb_direct.keepalive.latency_us', 'Keepalive latency (µs)', 'uint', 'Time from the keepalive to the answer', u32),
  f('smb_direct.fragment', 'Fragment', 'string', 'Position of this message in a fragment train'),
];

export const SMB2_FIELDS: readonly FieldDef[] = [
  f('smb2', 'SMB2 (Server Message Block Protocol version 2)', 'protocol', 'MS-SMB2 message'),
  f('smb2.protocol_id', 'ProtocolId', 'uint', '0xFE "SMB"', x32),
  f('smb2.header_len', 'Header Length', 'uint', 'SMB2 header StructureSize (64)', u16),
  f('smb2.credit.charge', 'Credit Charge', 'uint', 'Credits the request consumes', u16),
  f('smb2.nt_status', 'NT Status', 'uint', 'NT Status code', { base: 'hex' }),
  f('smb2.channel_sequence', 'Channel Sequence', 'uint', 'ChannelSequence of an SMB 3.x request', u16),
  f('smb2.cmd', 'Command', 'uint', 'SMB2 Command Opcode', { ...u16, strings: SMB2_CMD_VALUES }),
  f('smb2.credits.requested', 'Credits requested', 'uint', 'CreditRequest', u16),
  f('smb2.credits.granted', 'Credits granted', 'uint', 'CreditResponse', u16),
  f('smb2.flags', 'Flags', 'uint', 'SMB2 flags', x32),
  f('smb2.flags.response', 'Response', 'bool', 'SERVER_TO_REDIR', { mask: 0x1, bits: 32 }),
  f('smb2.flags.async', 'Async command', 'bool', 'ASYNC_COMMAND', { mask: 0x2, bits: 32 }),
  f('smb2.flags.chained', 'Chained', 'bool', 'RELATED_OPERATIONS', { mask: 0x4, bits: 32 }),
  f('smb2.flags.signature', 'Signing', 'bool', 'SIGNED', { mask: 0x8, bits: 32 }),
  f('smb2.flags.dfs', 'DFS operation', 'bool', 'DFS_OPERATIONS', { mask: 0x10000000, bits: 32 }),
  f('smb2.flags.replay', 'Replay operation', 'bool', 'REPLAY_OPERATION', { mask: 0x20000000, bits: 32 }),
  f('smb2.chain_offset', 'Chain Offset', 'uint', 'NextCommand', x32),
  f('smb2.msg_id', 'Message ID', 'uint64', 'MessageId', { base: 'dec' }),
  f('smb2.aid', 'Async Id', 'uint64', 'AsyncId', { base: 'hex' }),
  f('smb2.pid', 'Process Id', 'uint', 'Reserved (ProcessId)', x32),
  f('smb2.tid', 'Tree Id', 'uint', 'TreeId', x32),
  f('smb2.sesid', 'Session Id', 'uint64', 'SessionId', { base: 'hex' }),
  f('smb2.signature', 'Signature', 'bytes', 'Message signature'),
  f('smb2.buffer_code', 'StructureSize', 'uint', 'StructureSize of the body', x16),
  f('smb2.read_padding', 'Padding', 'uint', 'Requested data offset in the READ Response', { base: 'hex', width: 8 }),
  f('smb2.read_flags', 'Flags', 'uint', 'READ flags', { base: 'hex', width: 8 }),
  f('smb2.read_length', 'Read Length', 'uint', 'Length (request) or DataLength (response)', u32),
  f('smb2.write_length', 'Write Length', 'uint', 'Length of a WRITE Request', u32),
  f('smb2.file_offset', 'File Offset', 'uint64', 'Offset in the file', { base: 'dec' }),
  f('smb2.fid', 'File Id', 'string', 'SMB2_FILEID (Wireshark: FT_GUID)'),
  f('smb2.min_count', 'Min Count', 'uint', 'MinimumCount', u32),
  f('smb2.channel', 'Channel', 'uint', 'Channel of a READ or WRITE', { base: 'hex', strings: SMB2_CHANNEL_VALUES }),
  f('smb2.read_remaining', 'Read Remaining', 'uint', 'RemainingBytes (request) or DataRemaining (response)', u32),
  f('smb2.remaining_bytes', 'Remaining Bytes', 'uint', 'RemainingBytes of a WRITE Request', u32),
  f('smb2.channel_info_offset', 'Channel Info Offset', 'uint', 'Read/WriteChannelInfoOffset', u16),
  f('smb2.channel_info_length', 'Channel Info Length', 'uint', 'Read/WriteChannelInfoLength', u16),
  f('smb2.channel_info_blob', 'Channel Info Blob', 'protocol', 'Channel information'),
  f('smb2.buffer_descriptor.offset', 'Offset', 'uint64', 'Buffer Descriptor V1 Offset (iWARP: Tagged Offset)', {
    base: 'dec',
  }),
  f('smb2.buffer_descriptor.token', 'Token', 'uint', 'Buffer Descriptor V1 Token (STag)', x32),
  f('smb2.buffer_descriptor.length', 'Length', 'uint', 'Buffer Descriptor V1 Length', u32),
  f('smb2.data_offset', 'Data Offset', 'uint', 'Offset to data', x16),
  f('smb2.write.flags', 'Write Flags', 'uint', 'WRITE flags', x32),
  f('smb2.write.count', 'Write Count', 'uint', 'Count: octets written', u32),
  f('smb2.write.remaining', 'Write Remaining', 'uint', 'Remaining (reserved)', u32),
  f('smb2.response_to', 'Response to', 'uint', 'First frame of the request this answers', u32),
  // --- ours ---
  f('smb2.buffer_descriptor', 'Buffer Descriptor V1', 'protocol', 'SMB_DIRECT_BUFFER_DESCRIPTOR_V1 (MS-SMBD 2.2.3.1)'),
  f('smb2.rdma_transform', 'SMB2_RDMA_TRANSFORM', 'protocol', 'RDMA transform wrapping the descriptors (2.2.43)'),
  f('smb2.time_us', 'Time from request (µs)', 'uint', 'Request to response', u32),
  f(
    'smb2.rdma.moved',
    'Octets moved by RDMA',
    'uint',
    "Octets the server's RDMA Writes/Reads moved for the request",
    u32,
  ),
];

/** Every field this upper layer declares (the spec's field table). */
export const SMB_DIRECT_ALL_FIELDS: readonly FieldDef[] = [...SMB_DIRECT_FIELDS, ...SMB2_FIELDS];
