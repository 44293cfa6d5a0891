/** The decoders against messages built from the specification layouts (encode.ts). */
import { describe, expect, it } from 'vitest';
import {
  decodeDataTransfer,
  decodeNegotiateRequest,
  decodeNegotiateResponse,
  isValidNegotiateRequest,
} from '../../dissectors/smb-direct/decode.js';
import { SMB_DIRECT } from '../../dissectors/smb-direct/index.js';
import { SMB_DIRECT_ALL_FIELDS } from '../../dissectors/smb-direct/fields.js';
import { SMB2_COMMAND_NAMES, commandName, decodeSmb2, guidText } from '../../dissectors/smb-direct/smb2.js';
import type { SendMessage } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import {
  bare,
  cat,
  compound,
  dataTransfer,
  descriptors,
  errorResponse,
  irdOrd,
  negotiateRequest,
  negotiateResponse,
  readRequest,
  readResponse,
  SMB2,
  smb2Header,
  writeRequest,
  writeResponse,
} from '../../src/generate/smbd-encoder.js';
import { connection } from './harness.js';

describe('MS-SMBD message decoders', () => {
  it('decodes the 20-octet Negotiate Request (2.2.1)', () => {
    const b = negotiateRequest({
      minVersion: 0x0100,
      maxVersion: 0x0102,
      creditsRequested: 10,
      preferredSendSize: 1024,
      maxReceiveSize: 2048,
      maxFragmentedSize: 131072,
    });
    expect(b.length).toBe(20);
    expect(decodeNegotiateRequest(b)).toEqual({
      minVersion: 0x0100,
      maxVersion: 0x0102,
      reserved: 0,
      creditsRequested: 10,
      preferredSendSize: 1024,
      maxReceiveSize: 2048,
      maxFragmentedSize: 131072,
    });
    expect(decodeNegotiateRequest(b.subarray(0, 19))).toBeNull();
  });

  it('decodes the 32-octet Negotiate Response (2.2.2)', () => {
    const b = negotiateResponse({
      creditsRequested: 10,
      creditsGranted: 20,
      status: 0xc00000bb,
      maxReadWriteSize: 1 << 20,
    });
    expect(b.length).toBe(32);
    expect(decodeNegotiateResponse(b)).toMatchObject({
      negotiatedVersion: 0x0100,
      creditsRequested: 10,
      creditsGranted: 20,
      status: 0xc00000bb,
      maxReadWriteSize: 1 << 20,
      preferredSendSize: 1364,
      maxReceiveSize: 8192,
      maxFragmentedSize: 1048576,
    });
    expect(decodeNegotiateResponse(b.subarray(0, 31))).toBeNull();
  });

  it('decodes Data Transfer headers of 20 and 24 octets (2.2.3)', () => {
    expect(decodeDataTransfer(dataTransfer({ creditsRequested: 7, creditsGranted: 3, flags: 1 }))).toEqual({
      creditsRequested: 7,
      creditsGranted: 3,
      flags: 1,
      reserved: 0,
      remainingDataLength: 0,
      dataOffset: 0,
      dataLength: 0,
      padding: null,
    });
    const d = decodeDataTransfer(dataTransfer({ data: new Uint8Array(100), remaining: 900 }))!;
    expect(d).toMatchObject({ dataOffset: 24, dataLength: 100, remainingDataLength: 900, padding: 0 });
    expect(decodeDataTransfer(new Uint8Array(19))).toBeNull();
  });

  it('recognises a valid Negotiate Request by the receiver checks of 3.1.5.6', () => {
    expect(isValidNegotiateRequest(negotiateRequest(), 20)).toBe(true);
    expect(isValidNegotiateRequest(negotiateRequest({ minVersion: 0x00ff, maxVersion: 0x0200 }), 20)).toBe(true);
    expect(isValidNegotiateRequest(negotiateRequest({ minVersion: 0x0200, maxVersion: 0x0200 }), 20)).toBe(false);
    expect(isValidNegotiateRequest(negotiateRequest({ creditsRequested: 0 }), 20)).toBe(false);
    expect(isValidNegotiateRequest(negotiateRequest({ maxReceiveSize: 127 }), 20)).toBe(false);
    expect(isValidNegotiateRequest(negotiateRequest({ maxFragmentedSize: 131071 }), 20)).toBe(false);
    expect(isValidNegotiateRequest(negotiateRequest(), 19)).toBe(false);
    // A Data Transfer's Reserved field sits where CreditsRequested is: never a valid request.
    expect(isValidNegotiateRequest(dataTransfer({ data: new Uint8Array(8) }), 32)).toBe(false);
  });
});

describe('SMB2 decoder', () => {
  it('names the 19 commands', () => {
    expect(SMB2_COMMAND_NAMES).toHaveLength(19);
    expect(commandName(8)).toBe('READ');
    expect(commandName(18)).toBe('OPLOCK_BREAK');
    expect(commandName(0x13)).toBe('0x0013');
  });

  it('decodes the SYNC header (2.2.1.2)', () => {
    const d = decodeSmb2(
      bare({ command: SMB2.SESSION_SETUP, messageId: 5, credits: 31, creditCharge: 2, treeId: 9, sessionId: 0xabcn }),
      72,
    );
    expect(d.kind).toBe('smb2');
    const h = d.commands[0]!.header;
    expect(h).toMatchObject({
      protocolId: 0x424d53fe,
      structureSize: 64,
      creditCharge: 2,
      command: 1,
      credits: 31,
      flags: 0,
      messageId: 5n,
      asyncId: null,
      processId: 0xfeff,
      treeId: 9,
      sessionId: 0xabcn,
    });
  });

  it('decodes the ASYNC header (2.2.1.1)', () => {
    const h = decodeSmb2(
      bare({ command: SMB2.READ, messageId: 6, response: true, async: true, asyncId: 0x42, status: 0x103 }),
      72,
    ).commands[0]!.header;
    expect(h).toMatchObject({ flags: 3, asyncId: 0x42n, treeId: null, processId: null, status: 0x103 });
  });

  it('decodes a READ Request with its Buffer Descriptors (2.2.19, MS-SMBD 2.2.3.1)', () => {
    const m = readRequest(
      { messageId: 12 },
      {
        length: 8192,
        offset: 1n << 40n,
        channel: 2,
        descriptors: [
          { offset: 0xabcde012, token: 0x1a00bc56, length: 4096 },
          { offset: 7, token: 8, length: 4096 },
        ],
      },
    );
    const c = decodeSmb2(m, m.length).commands[0]!;
    expect(c.bodyProblem).toBeNull();
    expect(c.body).toMatchObject({
      kind: 'read-request',
      structureSize: 49,
      length: 8192,
      fileOffset: 1n << 40n,
      channel: 2,
      channelInfoOffset: 112,
      channelInfoLength: 32,
    });
    const ci = c.body!.kind === 'read-request' ? c.body!.channelInfo! : null;
    expect(ci!.descriptors).toEqual([
      { offset: 0xabcde012n, token: 0x1a00bc56, length: 4096, at: 112 },
      { offset: 7n, token: 8, length: 4096, at: 128 },
    ]);
    expect(ci!.problem).toBeNull();
    expect(ci!.effectiveChannel).toBe(2);
  });

  it('decodes READ and WRITE responses and requests (2.2.20 - 2.2.22)', () => {
    expect(decodeSmb2(readResponse({ messageId: 1 }, { dataRemaining: 65536 }), 80).commands[0]!.body).toEqual({
      kind: 'read-response',
      structureSize: 17,
      dataOffset: 0x50,
      dataLength: 0,
      dataRemaining: 65536,
      flags: 0,
    });
    const w = writeRequest(
      { messageId: 2 },
      { remainingBytes: 1 << 20, offset: 4096, descriptors: [{ offset: 0, token: 3, length: 1 << 20 }] },
    );
    expect(decodeSmb2(w, w.length).commands[0]!.body).toMatchObject({
      kind: 'write-request',
      dataOffset: 0,
      length: 0,
      remainingBytes: 1 << 20,
      fileOffset: 4096n,
      channel: 1,
      channelInfoOffset: 112,
      channelInfoLength: 16,
    });
    expect(decodeSmb2(writeResponse({ messageId: 2 }, 99), 80).commands[0]!.body).toMatchObject({
      kind: 'write-response',
      count: 99,
    });
    expect(
      decodeSmb2(errorResponse({ command: SMB2.READ, messageId: 3, status: 0xc0000011 }), 73).commands[0]!.body,
    ).toMatchObject({ kind: 'error-response', structureSize: 9 });
  });

  it('decodes descriptors inside an SMB2_RDMA_TRANSFORM (2.2.43)', () => {
    const t = new Uint8Array(16);
    const v = new DataView(t.buffer);
    v.setUint16(0, 16, true); // RdmaDescriptorOffset from the start of the structure
    v.setUint16(2, 16, true);
    v.setUint32(4, 2, true); // inner Channel RDMA_V1_INVALIDATE
    v.setUint16(8, 1, true);
    const info = cat(t, descriptors([{ offset: 5, token: 6, length: 7 }]));
    const m = readRequest({ messageId: 1 }, { channel: 3, infoOffset: 112, infoLength: info.length });
    const full = cat(m.subarray(0, 112), info);
    const ci = decodeSmb2(full, full.length).commands[0]!.body;
    expect(ci?.kind === 'read-request' && ci.channelInfo).toMatchObject({
      effectiveChannel: 2,
      transform: { descriptorOffset: 16, descriptorLength: 16, channel: 2, transformCount: 1 },
      descriptors: [{ offset: 5n, token: 6, length: 7 }],
      problem: null,
    });
  });

  it('walks a compound chain by NextCommand (3.2.4.1.4)', () => {
    const m = compound(
      bare({ command: SMB2.ECHO, messageId: 1 }, 4),
      readRequest({ messageId: 2 }),
      bare({ command: SMB2.ECHO, messageId: 3 }, 4),
    );
    const d = decodeSmb2(m, m.length);
    expect(d.commands.map((c) => c.header.messageId)).toEqual([1n, 2n, 3n]);
    expect(d.commands.map((c) => c.header.at)).toEqual([0, 72, 192]);
    expect(d.compoundProblems).toEqual([]);
  });

  it('recognises transform and compression headers and other payloads', () => {
    expect(decodeSmb2(Uint8Array.of(0xfd, 0x53, 0x4d, 0x42, 0), 5).kind).toBe('transform');
    expect(decodeSmb2(Uint8Array.of(0xfc, 0x53, 0x4d, 0x42, 0), 5).kind).toBe('compressed');
    expect(decodeSmb2(Uint8Array.of(1, 2, 3, 4, 5), 5).kind).toBe('other');
    expect(decodeSmb2(new Uint8Array(0), 100).kind).toBe('uncaptured');
  });

  it('formats a FileId as Wireshark prints an FT_GUID', () => {
    expect(guidText(Uint8Array.from({ length: 16 }, (_, i) => i))).toBe('03020100-0504-0706-0809-0a0b0c0d0e0f');
  });

  it('reads what was captured of a header cut by the snaplen', () => {
    const m = smb2Header({ command: SMB2.ECHO, messageId: 1 });
    const d = decodeSmb2(m.subarray(0, 40), 200);
    expect(d).toMatchObject({ kind: 'smb2', commands: [], truncated: true, headerProblems: [] });
  });
});

describe('SMB_DIRECT registration', () => {
  const send = (payload: Uint8Array, dir: 0 | 1 = 0): SendMessage => ({
    flow: 1,
    dir,
    from: 'a',
    opcode: 3,
    seq: 0,
    lastSeq: 0,
    frames: [1],
    time: 0,
    length: payload.length,
    intact: true,
    kind: 'send',
    qn: 0,
    msn: 1,
    solicited: false,
    invalidateStag: null,
    payload,
    payloadComplete: true,
  });

  it('is SMB Direct on port 5445', () => {
    expect(SMB_DIRECT).toMatchObject({ id: 'smb-direct', name: 'SMB Direct', ports: [5445] });
  });

  it('takes a valid Negotiate Request from the Initiator as the first message', () => {
    expect(SMB_DIRECT.firstMessage(send(negotiateRequest()), connection())).toBe(true);
    expect(SMB_DIRECT.firstMessage(send(negotiateRequest(), 1), connection())).toBe(false);
    expect(SMB_DIRECT.firstMessage(send(negotiateRequest({ creditsRequested: 0 })), connection())).toBe(false);
    expect(
      SMB_DIRECT.firstMessage(send(dataTransfer({ data: bare({ command: 0, messageId: 0 }) })), connection()),
    ).toBe(false);
    // A range from 0x0100 up is still one (longer than 20 octets too, as 3.1.5.6 allows).
    const wide = new Uint8Array(64);
    wide.set(negotiateRequest({ minVersion: 0x0100, maxVersion: 0x0200 }));
    expect(SMB_DIRECT.firstMessage(send(wide), connection())).toBe(true);
  });

  it('does not take a range that starts below 0x0100 as the first message (random octets pass it once in 256)', () => {
    // The listener would accept it (3.1.5.6), but it names no version of the protocol: the
    // round trip found random Send payloads decoded as SMB Direct this way.
    expect(isValidNegotiateRequest(negotiateRequest({ minVersion: 0x0067, maxVersion: 0xb492 }), 20)).toBe(true);
    expect(
      SMB_DIRECT.firstMessage(send(negotiateRequest({ minVersion: 0x0067, maxVersion: 0xb492 })), connection()),
    ).toBe(false);
    expect(
      SMB_DIRECT.firstMessage(send(negotiateRequest({ minVersion: 0x00ff, maxVersion: 0x0100 })), connection()),
    ).toBe(false);
  });

  it('claims the MS-SMBD IRD/ORD private data on port 5445 only', () => {
    expect(SMB_DIRECT.privateData(connection({ requestPrivateData: irdOrd(16, 16) }))).toBe(true);
    expect(SMB_DIRECT.privateData(connection({ replyPrivateData: irdOrd(32, 1, true) }))).toBe(true);
    expect(SMB_DIRECT.privateData(connection({ requestPrivateData: irdOrd(16, 16), serverPort: 445 }))).toBe(false);
    expect(SMB_DIRECT.privateData(connection())).toBe(false);
  });

  it('declares each field once, with Wireshark types for Wireshark names', () => {
    const abbrevs = SMB_DIRECT_ALL_FIELDS.map((f) => f.abbrev);
    expect(new Set(abbrevs).size).toBe(abbrevs.length);
    const byName = new Map(SMB_DIRECT_ALL_FIELDS.map((f) => [f.abbrev, f]));
    expect(byName.get('smb2.msg_id')!.type).toBe('uint64');
    expect(byName.get('smb2.sesid')!.type).toBe('uint64');
    expect(byName.get('smb_direct.credits.requested')!.width).toBe(16);
    expect(byName.get('smb_direct.flags.response_requested')!.mask).toBe(1);
    for (const a of [
      'smb_direct',
      'smb2',
      'smb_direct.remaining_length',
      'smb2.buffer_descriptor.token',
      'smb2.read_remaining',
      'smb2.channel',
    ])
      expect(byName.has(a)).toBe(true);
  });
});
