/**
 * Detail tree and tshark-style Info text for SMB Direct messages and the SMB2 commands in them.
 * Every node names a field declared once in fields.ts; offsets are within the Send payload, and
 * are left out (the node shows as generated) for what was not on this Send: the SMB2 commands of
 * a message reassembled from several fragments, and the analysis results.
 */
import { indexFields, type FieldDef, type FieldValue, type TreeNode } from '../../src/vocabulary/fields.js';
import { FLAG_RESPONSE_REQUESTED } from './decode.js';
import { SMB_DIRECT_ALL_FIELDS } from './fields.js';
import type { CommandView } from './smb2-state.js';
import {
  CHANNEL,
  CHANNEL_NAMES,
  CMD,
  SMB2_FLAG,
  SMB2_HEADER_LEN,
  commandName,
  guidText,
  statusName,
  type ChannelInfo,
  type Smb2Body,
  type Smb2Header,
} from './smb2.js';
import type { SendOutcome } from './transport.js';

const FIELDS: ReadonlyMap<string, FieldDef> = indexFields(SMB_DIRECT_ALL_FIELDS);

interface NodeOpts {
  offset?: number;
  length?: number;
  display?: string;
  children?: readonly TreeNode[];
}

function node(abbrev: string, value: FieldValue, o: NodeOpts = {}): TreeNode {
  const field = FIELDS.get(abbrev);
  if (!field) throw new Error(`undeclared field ${abbrev}`); // a programming error, never wire data
  const n: { -readonly [K in keyof TreeNode]: TreeNode[K] } = { field, value };
  if (o.display !== undefined) n.display = o.display;
  if (o.offset !== undefined) n.offset = o.offset;
  if (o.length !== undefined) n.length = o.length;
  if (o.children !== undefined) n.children = o.children;
  return n;
}

const hex = (n: number, w = 8): string => `0x${(n >>> 0).toString(16).padStart(w, '0')}`;

/** Position helper: offsets relative to `base`, or none when the bytes are not on this Send. */
const at =
  (base: number | null) =>
  (o: number, l: number): NodeOpts =>
    base === null ? {} : { offset: base + o, length: l };

function smbdHeaderNodes(out: SendOutcome): TreeNode[] {
  const p = at(0);
  if (out.request) {
    const r = out.request;
    return [
      node('smb_direct.negotiate_request', '', {
        ...p(0, 20),
        children: [
          node('smb_direct.version.min', r.minVersion, p(0, 2)),
          node('smb_direct.version.max', r.maxVersion, p(2, 2)),
          node('smb_direct.reserved', r.reserved, p(4, 2)),
          node('smb_direct.credits.requested', r.creditsRequested, p(6, 2)),
          node('smb_direct.preferred_send_size', r.preferredSendSize, p(8, 4)),
          node('smb_direct.max_receive_size', r.maxReceiveSize, p(12, 4)),
          node('smb_direct.max_fragmented_size', r.maxFragmentedSize, p(16, 4)),
        ],
      }),
    ];
  }
  if (out.response) {
    const r = out.response;
    return [
      node('smb_direct.negotiate_response', '', {
        ...p(0, 32),
        children: [
          node('smb_direct.version.min', r.minVersion, p(0, 2)),
          node('smb_direct.version.max', r.maxVersion, p(2, 2)),
          node('smb_direct.version.negotiated', r.negotiatedVersion, p(4, 2)),
          node('smb_direct.reserved', r.reserved, p(6, 2)),
          node('smb_direct.credits.requested', r.creditsRequested, p(8, 2)),
          node('smb_direct.credits.granted', r.creditsGranted, p(10, 2)),
          node('smb_direct.status', r.status, { ...p(12, 4), display: `${statusName(r.status)} (${hex(r.status)})` }),
          node('smb_direct.max_read_write_size', r.maxReadWriteSize, p(16, 4)),
          node('smb_direct.preferred_send_size', r.preferredSendSize, p(20, 4)),
          node('smb_direct.max_receive_size', r.maxReceiveSize, p(24, 4)),
          node('smb_direct.max_fragmented_size', r.maxFragmentedSize, p(28, 4)),
        ],
      }),
    ];
  }
  if (out.data) {
    const d = out.data;
    const children = [
      node('smb_direct.credits.requested', d.creditsRequested, p(0, 2)),
      node('smb_direct.credits.granted', d.creditsGranted, p(2, 2)),
      node('smb_direct.flags', d.flags, {
        ...p(4, 2),
        children: [node('smb_direct.flags.response_requested', (d.flags & FLAG_RESPONSE_REQUESTED) !== 0, p(4, 2))],
      }),
      node('smb_direct.reserved', d.reserved, p(6, 2)),
      node('smb_direct.remaining_length', d.remainingDataLength, p(8, 4)),
      node('smb_direct.data_offset', d.dataOffset, p(12, 4)),
      node('smb_direct.data_length', d.dataLength, p(16, 4)),
    ];
    if (d.padding !== null && d.dataOffset >= 24) children.push(node('smb_direct.padding', d.padding, p(20, 4)));
    return [node('smb_direct.data_message', '', { ...p(0, d.padding !== null ? 24 : 20), children })];
  }
  return [];
}

/** Analysis results: credits after the message, keepalive answer, fragment position. */
function smbdAnalysisNodes(out: SendOutcome): TreeNode[] {
  const n: TreeNode[] = [];
  if (out.sendCredits !== null) n.push(node('smb_direct.send_credits', out.sendCredits));
  if (out.peerCredits !== null) n.push(node('smb_direct.peer_send_credits', out.peerCredits));
  if (out.maxSendSize !== null) n.push(node('smb_direct.max_send_size', out.maxSendSize));
  if (out.keepaliveAnswered) {
    n.push(node('smb_direct.keepalive.response_to', out.keepaliveAnswered.frame));
    n.push(node('smb_direct.keepalive.latency_us', out.keepaliveAnswered.latencyUs));
  }
  if (out.fragment)
    n.push(node('smb_direct.fragment', `fragment ${out.fragment.index}, ${out.fragment.remaining} octets remaining`));
  if (out.delivered && out.delivered.fragments > 1) {
    n.push(node('smb_direct.fragment.count', out.delivered.fragments));
    n.push(node('smb_direct.reassembled.length', out.delivered.length));
  }
  return n;
}

function headerNodes(h: Smb2Header, p: (o: number, l: number) => NodeOpts): TreeNode[] {
  const resp = (h.flags & SMB2_FLAG.SERVER_TO_REDIR) !== 0;
  const flag = (abbrev: string, mask: number): TreeNode => node(abbrev, (h.flags & mask) !== 0, p(16, 4));
  const out = [
    node('smb2.protocol_id', h.protocolId, p(0, 4)),
    node('smb2.header_len', h.structureSize, p(4, 2)),
    node('smb2.credit.charge', h.creditCharge, p(6, 2)),
    resp ? node('smb2.nt_status', h.status, p(8, 4)) : node('smb2.channel_sequence', h.status & 0xffff, p(8, 2)),
    node('smb2.cmd', h.command, p(12, 2)),
    node(resp ? 'smb2.credits.granted' : 'smb2.credits.requested', h.credits, p(14, 2)),
    node('smb2.flags', h.flags, {
      ...p(16, 4),
      children: [
        flag('smb2.flags.response', SMB2_FLAG.SERVER_TO_REDIR),
        flag('smb2.flags.async', SMB2_FLAG.ASYNC_COMMAND),
        flag('smb2.flags.chained', SMB2_FLAG.RELATED_OPERATIONS),
        flag('smb2.flags.signature', SMB2_FLAG.SIGNED),
        flag('smb2.flags.dfs', SMB2_FLAG.DFS_OPERATIONS),
        flag('smb2.flags.replay', SMB2_FLAG.REPLAY_OPERATION),
      ],
    }),
    node('smb2.chain_offset', h.nextCommand, p(20, 4)),
    node('smb2.msg_id', h.messageId, p(24, 8)),
  ];
  if (h.asyncId !== null) out.push(node('smb2.aid', h.asyncId, p(32, 8)));
  else out.push(node('smb2.pid', h.processId ?? 0, p(32, 4)), node('smb2.tid', h.treeId ?? 0, p(36, 4)));
  out.push(node('smb2.sesid', h.sessionId, p(40, 8)), node('smb2.signature', h.signature.slice(), p(48, 16)));
  return out;
}

function channelInfoNode(ci: ChannelInfo, hdr: (o: number, l: number) => NodeOpts): TreeNode {
  const descs = ci.descriptors.map((d) =>
    node('smb2.buffer_descriptor', '', {
      ...hdr(d.at, 16),
      children: [
        node('smb2.buffer_descriptor.offset', d.offset, {
          ...hdr(d.at, 8),
          display: `${d.offset} (0x${d.offset.toString(16)})`,
        }),
        node('smb2.buffer_descriptor.token', d.token, hdr(d.at + 8, 4)),
        node('smb2.buffer_descriptor.length', d.length, hdr(d.at + 12, 4)),
      ],
    }),
  );
  const children = ci.transform
    ? [
        node('smb2.rdma_transform', '', {
          display: `Channel ${CHANNEL_NAMES[ci.transform.channel] ?? hex(ci.transform.channel)}, TransformCount ${ci.transform.transformCount}`,
          children: descs,
        }),
      ]
    : descs;
  return node('smb2.channel_info_blob', '', {
    display: `SMBDirect Buffer Descriptor V1: (${ci.declared} elements)`,
    children,
  });
}

function bodyNodes(b: Smb2Body, hdr: (o: number, l: number) => NodeOpts): TreeNode[] {
  const p = (o: number, l: number): NodeOpts => hdr(SMB2_HEADER_LEN + o, l);
  const out = [node('smb2.buffer_code', b.structureSize, p(0, 2))];
  switch (b.kind) {
    case 'read-request':
      out.push(
        node('smb2.read_padding', b.padding, p(2, 1)),
        node('smb2.read_flags', b.flags, p(3, 1)),
        node('smb2.read_length', b.length, p(4, 4)),
        node('smb2.file_offset', b.fileOffset, p(8, 8)),
        node('smb2.fid', guidText(b.fileId), p(16, 16)),
        node('smb2.min_count', b.minimumCount, p(32, 4)),
        node('smb2.channel', b.channel, p(36, 4)),
        node('smb2.read_remaining', b.remainingBytes, p(40, 4)),
        node('smb2.channel_info_offset', b.channelInfoOffset, p(44, 2)),
        node('smb2.channel_info_length', b.channelInfoLength, p(46, 2)),
      );
      if (b.channelInfo) out.push(channelInfoNode(b.channelInfo, hdr));
      break;
    case 'read-response':
      out.push(
        node('smb2.data_offset', b.dataOffset, p(2, 1)),
        node('smb2.read_length', b.dataLength, p(4, 4)),
        node('smb2.read_remaining', b.dataRemaining, p(8, 4)),
      );
      break;
    case 'write-request':
      out.push(
        node('smb2.data_offset', b.dataOffset, p(2, 2)),
        node('smb2.write_length', b.length, p(4, 4)),
        node('smb2.file_offset', b.fileOffset, p(8, 8)),
        node('smb2.fid', guidText(b.fileId), p(16, 16)),
        node('smb2.channel', b.channel, p(32, 4)),
        node('smb2.remaining_bytes', b.remainingBytes, p(36, 4)),
        node('smb2.channel_info_offset', b.channelInfoOffset, p(40, 2)),
        node('smb2.channel_info_length', b.channelInfoLength, p(42, 2)),
        node('smb2.write.flags', b.flags, p(44, 4)),
      );
      if (b.channelInfo) out.push(channelInfoNode(b.channelInfo, hdr));
      break;
    case 'write-response':
      out.push(
        node('smb2.write.count', b.count, p(4, 4)),
        node('smb2.write.remaining', b.remaining, p(8, 4)),
        node('smb2.channel_info_offset', b.channelInfoOffset, p(12, 2)),
        node('smb2.channel_info_length', b.channelInfoLength, p(14, 2)),
      );
      break;
    case 'error-response':
      break;
  }
  return out;
}

/** One `smb2` node per command; `base` is the message's offset within this Send's payload, or null. */
export function smb2Node(v: CommandView, base: number | null): TreeNode {
  const h = v.cmd.header;
  const hdr = at(base === null ? null : base + h.at);
  const children = headerNodes(h, hdr);
  if (v.cmd.body) children.push(...bodyNodes(v.cmd.body, hdr));
  const resp = (h.flags & SMB2_FLAG.SERVER_TO_REDIR) !== 0;
  if (resp && v.request && !v.interim) children.push(node('smb2.response_to', v.request.frames[0] ?? 0));
  if (v.timeUs !== undefined) children.push(node('smb2.time_us', v.timeUs));
  if (v.moved !== undefined) children.push(node('smb2.rdma.moved', v.moved));
  return node('smb2', '', { ...hdr(0, v.cmd.end - h.at), display: commandInfo(v), children });
}

/** The smb_direct protocol node of one Send, with the SMB2 nodes inside it. */
export function smbDirectTree(out: SendOutcome, payloadLength: number, smb2: readonly TreeNode[]): TreeNode[] {
  const children = [...smbdHeaderNodes(out), ...smbdAnalysisNodes(out), ...smb2];
  return [node('smb_direct', '', { offset: 0, length: payloadLength, children })];
}

const isRdma = (ch: number | null): boolean =>
  ch === CHANNEL.RDMA_V1 || ch === CHANNEL.RDMA_V1_INVALIDATE || ch === CHANNEL.RDMA_TRANSFORM;

/** "SMB2 READ Request MessageId 12 File offset 0 Len 65536 via RDMA_V1". */
export function commandInfo(v: CommandView): string {
  const h = v.cmd.header;
  const resp = (h.flags & SMB2_FLAG.SERVER_TO_REDIR) !== 0;
  const name = commandName(h.command);
  if (v.notification) return `SMB2 ${name} Notification`;
  // NEGOTIATE carries MessageId 0 (MS-SMB2 4.3 example): Info leaves it out.
  let s = `SMB2 ${name} ${resp ? 'Response' : 'Request'}${h.command === CMD.NEGOTIATE ? '' : ` MessageId ${h.messageId}`}`;
  if (v.interim) return `${s} (interim, ${statusName(h.status)})`;
  const b = v.cmd.body;
  if (b?.kind === 'read-request' || b?.kind === 'write-request') {
    const len = b.kind === 'write-request' && b.length === 0 ? b.remainingBytes : b.length;
    s += ` File offset ${b.fileOffset} Len ${len}`;
    if (isRdma(b.channel)) s += ` via ${CHANNEL_NAMES[b.channel]}`;
  } else if (b?.kind === 'read-response') {
    s +=
      isRdma(v.request?.channel ?? null) || b.dataRemaining > 0
        ? ` DataRemaining ${b.dataRemaining}`
        : ` Len ${b.dataLength}`;
  } else if (b?.kind === 'write-response') s += ` Count ${b.count}`;
  if (resp && h.status !== 0) s += `, Error: ${statusName(h.status)}`;
  return s;
}

/** Info of a Send that carries no complete SMB2 message. */
export function transportInfo(out: SendOutcome, length: number): string {
  switch (out.kind) {
    case 'negotiate-request':
      return 'SMB Direct Negotiate Request';
    case 'negotiate-response':
      return out.response && out.response.status !== 0
        ? `SMB Direct Negotiate Response, Error: ${statusName(out.response.status)}`
        : 'SMB Direct Negotiate Response';
    case 'short':
      return `SMB Direct [malformed: ${length} octets]`;
    case 'uncaptured':
      return 'SMB Direct Data Transfer [header not captured]';
    case 'data': {
      const d = out.data!;
      const rr = (d.flags & FLAG_RESPONSE_REQUESTED) !== 0 ? ', response requested' : '';
      const base = `SMB Direct Data Transfer (credits granted ${d.creditsGranted}${rr})`;
      if (out.fragment) return `${base} [fragment ${out.fragment.index}, ${out.fragment.remaining} octets remaining]`;
      if (out.delivered) return `${base} [${out.delivered.length} octets of upper-layer data]`;
      return base;
    }
  }
}

/** Suffix of a reassembled message's Info. */
export function reassembledSuffix(out: SendOutcome): string {
  const d = out.delivered;
  return d && d.fragments > 1 ? ` [reassembled from ${d.fragments} fragments, ${d.length} octets]` : '';
}
