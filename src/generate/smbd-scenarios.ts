/**
 * SMB Direct scenarios (MS-SMBD, MS-SMB2 over MPA Rev 2 on port 5445): one clean connection with
 * everything a client does to read and write a file over RDMA, and one scenario per rule with one
 * mistake each. Each is built by smbd-session.ts on ulp-connection.ts; the expected findings are
 * the author's, at the message the specification says is wrong.
 */
import type { Scenario } from './scenario-table.js';
import { buildUlpConnection, ULP_KNOBS } from './ulp-connection.js';
import {
  dataTransfer,
  echo,
  errorResponse,
  irdOrd,
  negotiateRequest,
  negotiateResponse,
  negotiateSmb2Request,
  negotiateSmb2Response,
  readRequest,
  readResponse,
  readResponseInline,
  sessionSetupRequest,
  sessionSetupResponse,
  SMB2,
  transform,
  writeRequestInline,
  writeResponse,
  type Hdr,
} from './smbd-encoder.js';
import { patternBytes } from './mpa-encoder.js';
import {
  CHANNEL_RDMA_V1,
  CHANNEL_RDMA_V1_INVALIDATE,
  CLIENT,
  SERVER,
  SmbdSession,
  T,
  gssToken,
  type SmbdOptions,
} from './smbd-session.js';

function smbd(name: string, summary: string, run: (s: SmbdSession) => void, o: SmbdOptions = {}): Scenario {
  return {
    name,
    summary,
    uses: ULP_KNOBS,
    build: (k, seed) => {
      const s = new SmbdSession(o);
      run(s);
      return buildUlpConnection(s.spec(), k, seed);
    },
  };
}

/** The clean exchange: what a Windows or Linux client does to read and write a file over SMB Direct. */
export function smbdCleanExchange(s: SmbdSession): void {
  s.establish();
  // READ of 64 KiB over RDMA_V1 into two registered buffers, each filled by one RDMA Write.
  s.read({ length: 65536, descriptors: [32768, 32768], channel: CHANNEL_RDMA_V1 });
  // WRITE of 32 KiB over RDMA_V1_INVALIDATE: two RDMA Read Requests, the WRITE Response invalidates the token.
  s.writeOp({ length: 32768, channel: CHANNEL_RDMA_V1_INVALIDATE });
  // The server's idle timer: a keepalive, answered by the client's credit-granting Data Transfer.
  s.keepalive(SERVER);
  s.close();
}

const C = CLIENT;
const S = SERVER;
const STATUS_INVALID_PARAMETER = 0xc000000d;
const STATUS_NOT_SUPPORTED = 0xc00000bb;

/** MS-SMBD negotiation and SMB2 NEGOTIATE only (what precedes SESSION_SETUP). */
function negotiated(s: SmbdSession, req = {}, rsp = {}): void {
  s.negotiate(req, rsp);
  const n = s.hdr({ sessionId: 0n, treeId: 0, credits: 1 });
  s.smb(C, negotiateSmb2Request(n, [0x0300, 0x0302], patternBytes(16, 11)), { delayUs: 60 });
  s.smb(
    S,
    negotiateSmb2Response(s.reply(n.messageId, { sessionId: 0n, treeId: 0 }), {
      dialect: 0x0302,
      serverGuid: patternBytes(16, 12),
      securityBuffer: gssToken(120, 13),
    }),
  );
}

/** A request of `dir` as one Data Transfer and its response (for requests the session does not build). */
function exchange(
  s: SmbdSession,
  request: (h: Partial<Hdr>) => Uint8Array,
  response: (h: Partial<Hdr>) => Uint8Array,
): [number, number] {
  const h = s.hdr();
  const a = s.smb(C, request(h));
  const b = s.smb(S, response(s.reply(h.messageId)));
  return [a[a.length - 1]!, b[0]!];
}

/** A READ request built by hand (channel fields a scenario gets wrong), answered with an error. */
function badRead(s: SmbdSession, r: Parameters<typeof readRequest>[1]): number {
  const h = s.hdr();
  const [req] = s.smb(C, readRequest(h, { fileId: s.fileId, ...r }));
  s.smb(S, errorResponse({ ...s.reply(h.messageId), command: SMB2.READ, status: STATUS_INVALID_PARAMETER }));
  return req!;
}

/** The Data Transfers a message of `n` octets is cut into by a sender with this MaxSendSize (MS-SMBD 3.1.5.4). */
function fragments(n: number, maxSend: number): Array<{ dl: number; rdl: number }> {
  const room = maxSend - 24;
  const out: Array<{ dl: number; rdl: number }> = [];
  for (let off = 0; off < n; off += room) out.push({ dl: Math.min(room, n - off), rdl: Math.max(0, n - off - room) });
  return out;
}

export const SMBD_SCENARIOS: readonly Scenario[] = [
  smbd(
    'smbd-clean',
    'SMB Direct on port 5445 (MPA Rev 2, MS-SMBD IRD/ORD private data): negotiation, SMB2 NEGOTIATE, a fragmented SESSION_SETUP, TREE_CONNECT, CREATE, a READ served by RDMA Writes, a WRITE served by RDMA Read Requests and answered by Send with Invalidate, a keepalive, CLOSE; no finding',
    smbdCleanExchange,
  ),
  smbd(
    'smbd-snaplen-cut',
    'SMB Direct, the clean exchange with the frame of the READ request cut to 128 octets by the capture: MPA frames across the cut (CRC not captured), DDP decodes the Send, SMB Direct its header; the SMB2 READ past the cut and the RDMA Writes into its unseen buffers are no finding, what was not checked is said once, at the end',
    (s) => {
      s.establish();
      s.cut = s.read({ length: 65536, descriptors: [32768, 32768], channel: CHANNEL_RDMA_V1 }).request;
      // MS-SMBD 2.2.3: the Data Transfer header is captured, the SMB2 message behind it is not whole.
      s.x('smb_direct.not-captured', C, s.cut);
      s.writeOp({ length: 32768, channel: CHANNEL_RDMA_V1_INVALIDATE });
      s.keepalive(SERVER);
      s.close();
    },
  ),
  // --- MS-SMBD negotiation (2.2.1, 2.2.2, 3.1.5.6, 3.1.5.7) ---
  smbd('smbd-negotiate-request-short', 'SMB Direct: a Negotiate Request of 16 octets instead of 20', (s) => {
    s.x('smb_direct.negotiate-request.short', C, s.send(C, negotiateRequest().subarray(0, 16), 90));
  }),
  smbd(
    'smbd-negotiate-request-version',
    'SMB Direct: a Negotiate Request offering version 0x0200 only, refused with STATUS_NOT_SUPPORTED',
    (s) => {
      const [a, b] = s.negotiate(
        { minVersion: 0x0200, maxVersion: 0x0200 },
        { status: STATUS_NOT_SUPPORTED, negotiatedVersion: 0, creditsGranted: 0, creditsRequested: 0 },
      );
      s.x('smb_direct.negotiate-request.version', C, a);
      s.x('smb_direct.negotiate-response.status', S, b);
    },
  ),
  smbd('smbd-negotiate-request-credits', 'SMB Direct: a Negotiate Request asking for 0 credits', (s) => {
    s.x('smb_direct.negotiate-request.credits-requested', C, s.send(C, negotiateRequest({ creditsRequested: 0 }), 90));
  }),
  smbd('smbd-negotiate-request-max-receive', 'SMB Direct: a Negotiate Request with MaxReceiveSize 100 (< 128)', (s) => {
    s.x('smb_direct.negotiate-request.max-receive-size', C, s.send(C, negotiateRequest({ maxReceiveSize: 100 }), 90));
  }),
  smbd(
    'smbd-negotiate-request-max-fragmented',
    'SMB Direct: a Negotiate Request with MaxFragmentedSize 65536 (< 131072)',
    (s) => {
      s.x(
        'smb_direct.negotiate-request.max-fragmented-size',
        C,
        s.send(C, negotiateRequest({ maxFragmentedSize: 65536 }), 90),
      );
    },
  ),
  smbd('smbd-negotiate-response-short', 'SMB Direct: a Negotiate Response of 24 octets instead of 32', (s) => {
    s.send(C, negotiateRequest(), 90);
    s.x('smb_direct.negotiate-response.short', S, s.send(S, negotiateResponse().subarray(0, 24), T.serve));
  }),
  ...(
    [
      ['version', 'NegotiatedVersion 0x0200', { negotiatedVersion: 0x0200 }],
      ['max-receive-size', 'MaxReceiveSize 64 (< 128)', { maxReceiveSize: 64 }],
      ['max-fragmented-size', 'MaxFragmentedSize 4096 (< 131072)', { maxFragmentedSize: 4096 }],
      ['credits-granted', 'CreditsGranted 0', { creditsGranted: 0 }],
      ['credits-requested', 'CreditsRequested 0', { creditsRequested: 0 }],
    ] as const
  ).map(([rule, what, rsp]) =>
    smbd(`smbd-negotiate-response-${rule}`, `SMB Direct: a Negotiate Response with ${what}`, (s) => {
      s.x(`smb_direct.negotiate-response.${rule}`, S, s.negotiate({}, rsp)[1]);
    }),
  ),
  smbd(
    'smbd-negotiate-response-preferred-send-size',
    "SMB Direct: a Negotiate Response whose PreferredSendSize 2048 exceeds the Initiator's MaxReceiveSize 1024",
    (s) => {
      s.x(
        'smb_direct.negotiate-response.preferred-send-size',
        S,
        s.negotiate({ maxReceiveSize: 1024 }, { preferredSendSize: 2048 })[1],
      );
    },
  ),
  smbd(
    'smbd-first-not-negotiate',
    "SMB Direct: the client's first Send is a Data Transfer carrying SMB2 NEGOTIATE (no MS-SMBD negotiation)",
    (s) => {
      const n = { messageId: 0, sessionId: 0n, treeId: 0 };
      const a = s.send(C, dataTransfer({ data: negotiateSmb2Request(n, [0x0300, 0x0302], patternBytes(16, 11)) }), 90);
      s.send(
        S,
        dataTransfer({
          data: negotiateSmb2Response(n, {
            dialect: 0x0302,
            serverGuid: patternBytes(16, 12),
            securityBuffer: gssToken(120, 13),
          }),
        }),
        T.serve,
      );
      s.x('smb_direct.first-not-negotiate', C, a);
    },
  ),
  smbd(
    'smbd-negotiate-wrong-side',
    'SMB Direct: after its Negotiate Request the client also sends a Negotiate Response; the server answers',
    (s) => {
      s.send(C, negotiateRequest(), 90);
      s.x('smb_direct.negotiate-wrong-side', C, s.send(C, negotiateResponse(), 20));
      s.send(S, negotiateResponse(), T.serve);
    },
  ),
  // --- Data Transfer (2.2.3, 3.1.5.8) ---
  smbd('smbd-data-transfer-short', 'SMB Direct: after the session setup, a Data Transfer of 16 octets', (s) => {
    s.establish();
    s.x('smb_direct.data-transfer.short', C, s.send(C, dataTransfer().subarray(0, 16), T.request));
  }),
  smbd('smbd-data-transfer-credits-requested', 'SMB Direct: a Data Transfer asking for 0 credits', (s) => {
    s.establish();
    s.x('smb_direct.data-transfer.credits-requested', C, s.dt(C, { creditsRequested: 0 }, { delayUs: T.request }));
  }),
  smbd('smbd-data-transfer-data-offset', 'SMB Direct: an SMB2 ECHO at DataOffset 28 (not 8-aligned), answered', (s) => {
    s.establish();
    const h = s.hdr();
    s.x('smb_direct.data-transfer.data-offset', C, s.dt(C, { data: echo(h), dataOffset: 28 }, { delayUs: T.request }));
    s.smb(S, echo(s.reply(h.messageId), true));
  }),
  smbd(
    'smbd-data-transfer-data-outside',
    'SMB Direct: a Data Transfer whose DataLength counts 8 octets more than the message holds (an SMB2 ECHO), answered',
    (s) => {
      s.establish();
      const h = s.hdr();
      const m = echo(h);
      s.x(
        'smb_direct.data-transfer.data-outside',
        C,
        s.dt(C, { data: m, dataLength: m.length + 8 }, { delayUs: T.request }),
      );
      s.smb(S, echo(s.reply(h.messageId), true));
    },
  ),
  smbd(
    'smbd-fragment-too-large',
    'SMB Direct: an inline SMB2 WRITE of 140000 octets sent to a server whose MaxFragmentedSize is 131072, never answered',
    (s) => {
      const LIMIT = 131072;
      negotiated(s, {}, { maxFragmentedSize: LIMIT });
      const h = s.hdr();
      const msg = writeRequestInline(h, s.fileId, 0n, patternBytes(140000 - 112, 3));
      const sent = s.smb(C, msg);
      let total = 0;
      fragments(msg.length, s.maxSend[C]).forEach((f, i) => {
        if (f.dl + f.rdl > LIMIT) s.x('smb_direct.data-transfer.fragment-too-large', C, sent[i]!);
        if (total <= LIMIT && total + f.dl > LIMIT) s.x('smb_direct.reassembled-too-large', C, sent[i]!);
        total += f.dl;
      });
      // The server terminates instead of answering (MS-SMBD 3.1.5.8): the WRITE stays unanswered.
      s.x('smb2.request-unanswered', C, sent[sent.length - 1]!);
    },
  ),
  smbd('smbd-flags-unknown', 'SMB Direct: a credit-granting Data Transfer with Flags 0x0002 (undefined)', (s) => {
    s.establish();
    s.x('smb_direct.flags-unknown', C, s.dt(C, { flags: 0x0002 }, { delayUs: T.request }));
  }),
  smbd(
    'smbd-send-too-large',
    'SMB Direct: a 2012-octet SESSION_SETUP sent in one Send although the MaxSendSize is 1364',
    (s) => {
      negotiated(s);
      const h = s.hdr({ sessionId: 0n, treeId: 0 });
      s.x(
        'smb_direct.send-too-large',
        C,
        s.dt(C, { data: sessionSetupRequest(h, gssToken(1900, 14)) }, { delayUs: T.request }),
      );
      s.smb(S, sessionSetupResponse(s.reply(h.messageId, { treeId: 0 }), gssToken(156, 15)));
    },
  ),
  // --- credits (3.1.5.1): the session's credit model expects the findings where the counts say ---
  smbd(
    'smbd-no-credits',
    'SMB Direct: the server keeps one receive posted (grants one credit at a time); the client sends the second fragment of its SESSION_SETUP with none',
    (s) => {
      s.establish();
    },
    { targets: [255, 1] },
  ),
  smbd(
    'smbd-last-credit',
    'SMB Direct: the server keeps two receives posted; the client spends its last credit on the second SESSION_SETUP fragment, granting none',
    (s) => {
      s.establish();
    },
    { targets: [255, 2] },
  ),
  smbd('smbd-keepalive-unanswered', 'SMB Direct: a keepalive of the client the server never answers', (s) => {
    s.establish();
    s.x('smb_direct.keepalive-unanswered', C, s.keepalive(C, false)[0]);
  }),
  smbd(
    'smbd-fragment-train',
    'SMB Direct: a SESSION_SETUP in two fragments, the first with RemainingDataLength 700 instead of 648',
    (s) => {
      negotiated(s);
      const h = s.hdr({ sessionId: 0n, treeId: 0 });
      const m = sessionSetupRequest(h, gssToken(1900, 14));
      s.dt(C, { data: m.subarray(0, 1340), remaining: 700 }, { delayUs: T.request });
      s.x('smb_direct.fragment-train', C, s.dt(C, { data: m.subarray(1340), remaining: 0 }, { delayUs: T.next }));
      s.smb(S, sessionSetupResponse(s.reply(h.messageId, { treeId: 0 }), gssToken(156, 15)));
    },
  ),
  smbd(
    'smbd-fragment-interrupted',
    'SMB Direct: an empty credit-granting Data Transfer between the two fragments of a SESSION_SETUP (the Linux "immediate send" bug)',
    (s) => {
      negotiated(s);
      const h = s.hdr({ sessionId: 0n, treeId: 0 });
      const m = sessionSetupRequest(h, gssToken(1900, 14));
      s.dt(C, { data: m.subarray(0, 1340), remaining: m.length - 1340 }, { delayUs: T.request });
      s.x('smb_direct.fragment-interrupted', C, s.dt(C, {}, { delayUs: T.next }));
      s.dt(C, { data: m.subarray(1340), remaining: 0 }, { delayUs: T.next });
      s.smb(S, sessionSetupResponse(s.reply(h.messageId, { treeId: 0 }), gssToken(156, 15)));
    },
  ),
  // --- MS-SMBD Appendix A private data ---
  smbd(
    'smbd-irdord-little-endian',
    "SMB Direct: the MPA Request's MS-SMBD IRD/ORD block in little-endian (old cifs.ko)",
    (s) => {
      s.establish();
      s.x('smb_direct.irdord-little-endian', null, null);
    },
    { requestPd: irdOrd(16, 16, true) },
  ),
  smbd(
    'smbd-irdord-mpa-mismatch',
    "SMB Direct: the MPA Request's MS-SMBD IRD/ORD block says 16/16, its RFC 6581 block 8/8",
    (s) => {
      s.establish();
      s.x('smb_direct.irdord-mpa-mismatch', null, null);
    },
    {
      irdOrd: [
        { ird: 8, ord: 8 },
        { ird: 16, ord: 16 },
      ],
    },
  ),
  smbd('smbd-payload-not-smb2', 'SMB Direct: a Data Transfer whose data is not an SMB2 message', (s) => {
    s.establish();
    s.x('smb_direct.payload-not-smb2', C, s.dt(C, { data: new TextEncoder().encode('HELO not an SMB2 message') }));
  }),
  // --- SMB2 (MS-SMB2) ---
  smbd('smbd-smb2-header-invalid', 'SMB2: an ECHO whose header StructureSize is 60, answered', (s) => {
    s.establish();
    const [a] = exchange(
      s,
      (h) => {
        const m = echo(h);
        new DataView(m.buffer, m.byteOffset).setUint16(4, 60, true);
        return m;
      },
      (h) => echo(h, true),
    );
    s.x('smb2.header-invalid', C, a);
  }),
  smbd(
    'smbd-smb2-compound-invalid',
    'SMB2: a compound of two ECHOs whose NextCommand is 70 (not 8-aligned); the server answers nothing (MS-SMB2 3.3.5.2.7: it SHOULD disconnect)',
    (s) => {
      s.establish();
      const h1 = s.hdr();
      const h2 = s.hdr();
      const m = new Uint8Array(72 + 68);
      m.set(echo({ ...h1, nextCommand: 70 }));
      m.set(echo(h2), 72);
      const [a] = s.smb(C, m);
      s.x('smb2.compound-invalid', C, a!);
      // The first ECHO's header is whole: a request never answered.
      s.x('smb2.request-unanswered', C, a!);
    },
  ),
  smbd('smbd-smb2-body-invalid', 'SMB2: a READ request whose body is cut to 20 octets, failed by the server', (s) => {
    s.establish();
    const h = s.hdr();
    const m = readRequest(h, { fileId: s.fileId, length: 4096, truncateBodyTo: 20 });
    const [a] = s.smb(C, m);
    s.smb(S, errorResponse({ ...s.reply(h.messageId), command: SMB2.READ, status: STATUS_INVALID_PARAMETER }));
    s.x('smb2.body-invalid', C, a!);
  }),
  smbd('smbd-smb2-response-without-request', 'SMB2: a READ Response to MessageId 99, never asked for', (s) => {
    s.establish();
    const [a] = s.smb(S, readResponseInline(s.reply(99n), patternBytes(100, 4)), { delayUs: T.request });
    s.x('smb2.response-without-request', S, a!);
  }),
  smbd('smbd-smb2-duplicate-response', 'SMB2: an ECHO answered twice', (s) => {
    s.establish();
    const h = s.hdr();
    s.smb(C, echo(h));
    s.smb(S, echo(s.reply(h.messageId), true));
    const [b] = s.smb(S, echo(s.reply(h.messageId), true));
    s.x('smb2.duplicate-response', S, b!);
  }),
  smbd('smbd-smb2-request-unanswered', 'SMB2: a READ over RDMA_V1 the server never serves nor answers', (s) => {
    s.establish();
    s.x('smb2.request-unanswered', C, s.read({ length: 65536, requestOnly: true }).request);
  }),
  smbd(
    'smbd-smb2-messageid-reused',
    'SMB2: two ECHOs with the same MessageId, the second sent before the first is answered',
    (s) => {
      s.establish();
      const h = s.hdr();
      s.smb(C, echo(h));
      const [b] = s.smb(C, echo(h));
      s.x('smb2.messageid-reused', C, b!);
      s.smb(S, echo(s.reply(h.messageId), true));
    },
  ),
  smbd(
    'smbd-read-remaining-mismatch',
    'SMB2: a READ of 64 KiB over RDMA_V1 into two buffers; the server writes the first only, its DataRemaining says 65536',
    (s) => {
      s.establish();
      const r = s.read({ length: 65536, descriptors: [32768, 32768], writes: [[0, 0, 32768]], dataRemaining: 65536 });
      s.x('smb2.read-remaining-mismatch', S, r.response);
    },
  ),
  smbd(
    'smbd-write-length-mismatch',
    'SMB2: a WRITE of 32 KiB over RDMA_V1_INVALIDATE; the server reads the first 16 KiB only',
    (s) => {
      s.establish();
      const w = s.writeOp({ length: 32768, reads: [[0, 0, 16384]] });
      s.x('smb2.write-length-mismatch', S, w.response);
    },
  ),
  smbd(
    'smbd-invalidate-missing',
    'SMB2: a WRITE over RDMA_V1_INVALIDATE answered by a plain Send (no remote invalidation)',
    (s) => {
      s.establish();
      s.x('smb2.invalidate-missing', S, s.writeOp({ length: 32768, invalidate: null }).response);
    },
  ),
  smbd(
    'smbd-invalidate-wrong-token',
    'SMB2: two READs over RDMA_V1_INVALIDATE; each response invalidates the token of the other request',
    (s) => {
      s.establish();
      const a = s.read({ length: 16384, channel: CHANNEL_RDMA_V1_INVALIDATE, requestOnly: true });
      const b = s.read({ length: 16384, channel: CHANNEL_RDMA_V1_INVALIDATE, requestOnly: true });
      const ta = a.descriptors[0]!;
      const tb = b.descriptors[0]!;
      s.write(ta.token, BigInt(ta.offset), 16384, T.serve);
      s.write(tb.token, BigInt(tb.offset), 16384);
      const [ra] = s.smb(S, readResponse(s.reply(a.mid), { dataRemaining: 16384 }), { invalidate: tb.token });
      const [rb] = s.smb(S, readResponse(s.reply(b.mid), { dataRemaining: 16384 }), { invalidate: ta.token });
      s.x('smb2.invalidate-wrong-token', S, ra!);
      s.x('smb2.invalidate-missing', S, ra!);
      s.x('smb2.invalidate-missing', S, rb!);
    },
  ),
  smbd('smbd-invalidate-not-asked', 'SMB2: a READ over RDMA_V1 answered by Send with Invalidate of its token', (s) => {
    s.establish();
    const r = s.read({ length: 32768, channel: CHANNEL_RDMA_V1, invalidate: 'own' });
    s.x('smb2.invalidate-not-asked', S, r.response);
  }),
  smbd(
    'smbd-channel-none-info',
    'SMB2: a READ with Channel NONE and ReadChannelInfoOffset/Length set, answered inline',
    (s) => {
      s.establish();
      const h = s.hdr();
      const [a] = s.smb(
        C,
        readRequest(h, { fileId: s.fileId, length: 512, channel: 0, infoOffset: 112, infoLength: 16 }),
      );
      s.smb(S, readResponseInline(s.reply(h.messageId), patternBytes(512, 5)));
      s.x('smb2.channel-none-info', C, a!);
    },
  ),
  smbd(
    'smbd-channel-info-invalid',
    'SMB2: a READ over RDMA_V1 whose ReadChannelInfoLength is 15 (not a whole Buffer Descriptor), failed by the server',
    (s) => {
      s.establish();
      s.x(
        'smb2.channel-info-invalid',
        C,
        badRead(s, { length: 4096, descriptors: [s.descriptor(4096)], infoLength: 15 }),
      );
    },
  ),
  smbd('smbd-channel-unknown', 'SMB2: a READ with Channel 7, failed by the server', (s) => {
    s.establish();
    s.x('smb2.channel-unknown', C, badRead(s, { length: 4096, channel: 7 }));
  }),
  smbd('smbd-encrypted', 'SMB2: an encrypted request (TRANSFORM_HEADER) and its encrypted response', (s) => {
    s.establish();
    const [a] = s.smb(C, transform(s.sessionId, patternBytes(180, 6), patternBytes(16, 7)));
    s.smb(S, transform(s.sessionId, patternBytes(96, 8), patternBytes(16, 9)));
    s.x('smb2.encrypted', C, a!);
  }),
  // --- the buffer ledger (RDMA accesses against the Buffer Descriptors) ---
  smbd(
    'smbd-access-outside-buffer',
    "SMB2: a READ of 64 KiB into two buffers; the server's second RDMA Write lands 4 KiB past the second buffer's start, crossing its end",
    (s) => {
      s.establish();
      const r = s.read({
        length: 65536,
        descriptors: [32768, 32768],
        writes: [
          [0, 0, 32768],
          [1, 4096, 32768],
        ],
      });
      s.x('ulp.access-outside-buffer', S, r.writes[1]!);
      // The octets outside moved nothing into the descriptors: DataRemaining (65536) is not what landed.
      s.x('smb2.read-remaining-mismatch', S, r.response);
    },
  ),
  smbd(
    'smbd-access-not-advertised',
    'SMB2: a READ over RDMA_V1 the server serves into a stale token the client never advertised on this connection',
    (s) => {
      s.establish();
      let w = -1;
      const r = s.read({
        length: 32768,
        serve: () => {
          w = s.write(0x00ffee00, 0xffffc80a1ff00000n, 32768, T.serve);
          return 32768;
        },
      });
      s.x('ulp.access-not-advertised', S, w);
      s.x('smb2.read-remaining-mismatch', S, r.response);
    },
  ),
  smbd(
    'smbd-access-wrong-direction',
    "SMB2: a WRITE over RDMA_V1_INVALIDATE the server serves with an RDMA Write into the client's buffer instead of reading it",
    (s) => {
      s.establish();
      let w = -1;
      s.writeOp({
        length: 32768,
        serve: (d) => {
          w = s.write(d[0]!.token, BigInt(d[0]!.offset), 32768, T.serve);
          return 32768;
        },
      });
      s.x('ulp.access-wrong-direction', S, w);
    },
  ),
  smbd(
    'smbd-access-after-response',
    'SMB2: a READ over RDMA_V1, answered; then one more RDMA Write into its buffer',
    (s) => {
      s.establish();
      const r = s.read({ length: 32768 });
      const d = r.descriptors[0]!;
      s.x('ulp.access-after-response', S, s.write(d.token, BigInt(d.offset), 4096, 30));
    },
  ),
  smbd(
    'smbd-access-after-invalidate',
    'SMB2: a READ over RDMA_V1_INVALIDATE answered by Send with Invalidate; then one more RDMA Write into its buffer',
    (s) => {
      s.establish();
      const r = s.read({ length: 32768, channel: CHANNEL_RDMA_V1_INVALIDATE });
      const d = r.descriptors[0]!;
      s.x('ulp.access-after-invalidate', S, s.write(d.token, BigInt(d.offset), 4096, 30));
    },
  ),
  smbd(
    'smbd-invalidate-unknown-stag',
    'SMB2: a READ over RDMA_V1 answered by Send with Invalidate of an STag the client never advertised',
    (s) => {
      s.establish();
      const r = s.read({ length: 32768, channel: CHANNEL_RDMA_V1, invalidate: 0x00dead00 });
      s.x('ulp.invalidate-unknown-stag', S, r.response);
    },
  ),
  smbd(
    'smbd-ird-exceeded',
    'SMB Direct over MPA Rev 1: the client announces IRD 1 in its MS-SMBD IRD/ORD block; the server keeps two RDMA Read Requests in flight for a WRITE',
    (s) => {
      s.establish();
      const w = s.writeOp({ length: 32768 });
      s.x('ulp.ird-exceeded', S, w.reads[1]!);
    },
    { rev: 1, requestPd: irdOrd(1, 16) },
  ),
];

/**
 * A snaplen cut inside a Send of several FPDUs (the upper layer receives the Send without its
 * last octets). Its own table, registered after the others: the round trip's settings of the
 * scenarios before it stay as they were.
 */
export const SMBD_CUT_SCENARIOS: readonly Scenario[] = [
  smbd(
    'smbd-snaplen-in-send',
    'SMB Direct with 8 KiB Sends: an inline SMB2 WRITE of 8000 octets in one Send of six FPDUs, the frame of its second FPDU cut to 128 octets by the capture; MPA frames across the cut, the WRITE is decoded from the octets before the cut, and what needs the rest is said once, at the end',
    (s) => {
      // MS-SMBD 3.1.5.6/3.1.5.7: MaxSendSize is the smaller of the sender's PreferredSendSize and the peer's MaxReceiveSize.
      const big = { preferredSendSize: 8192, maxReceiveSize: 8192 };
      s.establish(big, big);
      const h = s.hdr();
      const [w] = s.smb(C, writeRequestInline(h, s.fileId, 0n, patternBytes(8000, 21)));
      s.cut = w!;
      s.cutFpdu = 1;
      s.smb(S, writeResponse(s.reply(h.messageId), 8000));
      s.read({ length: 65536, descriptors: [32768, 32768], channel: CHANNEL_RDMA_V1 });
      s.close();
      // MS-SMBD 3.1.5.8 reassembly needs the whole DataLength: checked no further, said once.
      s.x('smb_direct.not-captured', C, w!);
    },
  ),
];
