/**
 * Each rule fires on input built for it. The clean exchange (exchange.test.ts) shows they stay
 * silent otherwise; every scenario here also checks that nothing but the intended rule fired.
 */
import { describe, expect, it } from 'vitest';
import { SMB_DIRECT_RULES } from '../../dissectors/smb-direct/rules.js';
import {
  bare,
  cat,
  compound,
  dataTransfer,
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
import { CLIENT, Harness, SERVER } from './harness.js';

type Scenario = {
  rule: string;
  also?: string[];
  conn?: ConstructorParameters<typeof Harness>[0];
  run: (h: Harness) => void;
};

const read = (id: number, token: number, channel = 1, length = 4096) =>
  readRequest({ messageId: id }, { length, channel, descriptors: [{ offset: 0x1000, token, length }] });

const SCENARIOS: Scenario[] = [
  // --- negotiation ---
  { rule: 'smb_direct.negotiate-request.short', run: (h) => h.send(CLIENT, negotiateRequest().subarray(0, 16)) },
  {
    rule: 'smb_direct.negotiate-request.version',
    run: (h) => h.send(CLIENT, negotiateRequest({ minVersion: 0x0200, maxVersion: 0x0200 })),
  },
  { rule: 'smb_direct.negotiate-request.credits-requested', run: (h) => h.negotiate({ creditsRequested: 0 }) },
  {
    rule: 'smb_direct.negotiate-request.max-receive-size',
    run: (h) => h.negotiate({ maxReceiveSize: 100 }, { preferredSendSize: 100 }),
  },
  { rule: 'smb_direct.negotiate-request.max-fragmented-size', run: (h) => h.negotiate({ maxFragmentedSize: 65536 }) },
  {
    rule: 'smb_direct.negotiate-response.short',
    run: (h) => {
      h.send(CLIENT, negotiateRequest());
      h.send(SERVER, negotiateResponse().subarray(0, 24));
    },
  },
  { rule: 'smb_direct.negotiate-response.version', run: (h) => h.negotiate({}, { negotiatedVersion: 0x0200 }) },
  { rule: 'smb_direct.negotiate-response.max-receive-size', run: (h) => h.negotiate({}, { maxReceiveSize: 64 }) },
  {
    rule: 'smb_direct.negotiate-response.max-fragmented-size',
    run: (h) => h.negotiate({}, { maxFragmentedSize: 4096 }),
  },
  { rule: 'smb_direct.negotiate-response.credits-granted', run: (h) => h.negotiate({}, { creditsGranted: 0 }) },
  { rule: 'smb_direct.negotiate-response.credits-requested', run: (h) => h.negotiate({}, { creditsRequested: 0 }) },
  {
    rule: 'smb_direct.negotiate-response.preferred-send-size',
    run: (h) => h.negotiate({ maxReceiveSize: 1024 }, { preferredSendSize: 2048 }),
  },
  {
    rule: 'smb_direct.negotiate-response.status',
    run: (h) => h.negotiate({}, { status: 0xc00000bb, creditsGranted: 0 }),
  },
  {
    rule: 'smb_direct.first-not-negotiate',
    also: ['smb2.request-unanswered'],
    run: (h) =>
      h.send(
        CLIENT,
        dataTransfer({ creditsRequested: 10, creditsGranted: 10, data: bare({ command: SMB2.ECHO, messageId: 1 }) }),
      ),
  },
  {
    rule: 'smb_direct.negotiate-wrong-side',
    run: (h) => {
      h.send(SERVER, negotiateRequest());
      h.write(SERVER, 0x999, 0, 10); // not followed from a real start: unknown STags are no error
    },
  },
  {
    rule: 'smb_direct.negotiate-wrong-side',
    run: (h) => {
      h.send(CLIENT, negotiateRequest());
      h.send(CLIENT, negotiateResponse());
    },
  },
  // --- Data Transfer (3.1.5.8) ---
  {
    rule: 'smb_direct.data-transfer.short',
    run: (h) => {
      h.establish();
      h.send(CLIENT, dataTransfer().subarray(0, 16));
    },
  },
  {
    rule: 'smb_direct.data-transfer.credits-requested',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, null, { creditsRequested: 0 });
    },
  },
  {
    rule: 'smb_direct.data-transfer.data-offset',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1 }), { dataOffset: 28 });
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb_direct.data-transfer.data-outside',
    also: ['smb_direct.payload-not-smb2'],
    run: (h) => {
      h.establish();
      h.send(CLIENT, dataTransfer({ data: new Uint8Array(40), dataLength: 1000 }));
    },
  },
  {
    rule: 'smb_direct.data-transfer.fragment-too-large',
    run: (h) => {
      h.establish({}, { maxFragmentedSize: 131072 });
      h.dt(CLIENT, new Uint8Array(100), { remaining: 200000 });
    },
  },
  {
    rule: 'smb_direct.flags-unknown',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, null, { flags: 0x0002 });
    },
  },
  {
    rule: 'smb_direct.send-too-large',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1 }, 2000));
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  // --- credits (3.1.5.1) ---
  {
    rule: 'smb_direct.no-credits',
    run: (h) => {
      h.negotiate();
      h.dt(SERVER, null);
    },
  },
  {
    rule: 'smb_direct.no-credits',
    run: (h) => {
      h.send(CLIENT, negotiateRequest());
      h.dt(CLIENT, null);
    },
  },
  {
    rule: 'smb_direct.last-credit',
    run: (h) => {
      h.negotiate({}, { creditsGranted: 1 });
      h.dt(CLIENT, null, { creditsGranted: 0 });
    },
  },
  // --- keepalive ---
  {
    rule: 'smb_direct.keepalive-unanswered',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, null, { flags: 1 });
    },
  },
  // --- fragments ---
  {
    rule: 'smb_direct.fragment-train',
    run: (h) => {
      h.establish();
      const m = bare({ command: SMB2.ECHO, messageId: 1 }, 2000 - 64);
      h.dt(CLIENT, m.subarray(0, 1000), { remaining: 1000 });
      h.dt(CLIENT, m.subarray(1000, 1500), { remaining: 400 }); // 1000 - 500 = 500 expected
      h.dt(CLIENT, m.subarray(1500), { remaining: 0 });
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb_direct.fragment-train',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, null, { remaining: 10 });
    },
  },
  {
    rule: 'smb_direct.fragment-interrupted',
    run: (h) => {
      h.establish();
      const m = bare({ command: SMB2.ECHO, messageId: 1 }, 2000 - 64);
      h.dt(CLIENT, m.subarray(0, 1000), { remaining: 1000 });
      h.dt(CLIENT, null); // an "immediate" empty send in the middle of the train
      h.dt(CLIENT, m.subarray(1000), { remaining: 0 });
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb_direct.reassembled-too-large',
    also: ['smb_direct.fragment-train'],
    run: (h) => {
      h.establish({ maxFragmentedSize: 131072 }, { maxFragmentedSize: 131072 });
      for (let i = 0; i < 140; i++) h.dt(CLIENT, new Uint8Array(1000), { remaining: 100000 });
    },
  },
  // --- private data (MS-SMBD Appendix A) ---
  {
    rule: 'smb_direct.irdord-little-endian',
    conn: { requestPrivateData: irdOrd(32, 1, true) },
    run: (h) => h.negotiate(),
  },
  {
    rule: 'smb_direct.irdord-mpa-mismatch',
    conn: { requestPrivateData: irdOrd(16, 16), requestIrd: 8, requestOrd: 8 },
    run: (h) => h.negotiate(),
  },
  // --- capture limits ---
  {
    rule: 'smb_direct.not-captured',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, read(1, 0xabc), {}, { captured: 128 });
      h.write(SERVER, 0xabc, 0x1000, 4096, false);
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataRemaining: 4096 }));
    },
  },
  {
    rule: 'smb_direct.payload-not-smb2',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, new TextEncoder().encode('not an SMB2 message'));
    },
  },
  // --- SMB2 ---
  {
    rule: 'smb2.header-invalid',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, smb2Header({ command: SMB2.ECHO, messageId: 1 }).subarray(0, 40));
    },
  },
  {
    rule: 'smb2.header-invalid',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1, structureSize: 60 }));
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb2.compound-invalid',
    run: (h) => {
      h.establish();
      const c = compound(bare({ command: SMB2.ECHO, messageId: 1 }), bare({ command: SMB2.ECHO, messageId: 2 }));
      new DataView(c.buffer, c.byteOffset).setUint32(20, 70, true); // not 8-aligned
      h.dt(CLIENT, c);
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb2.body-invalid',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, readRequest({ messageId: 1 }, { truncateBodyTo: 20 }));
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.response-without-request',
    run: (h) => {
      h.establish();
      h.dt(SERVER, readResponse({ messageId: 99 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.duplicate-response',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1 }));
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    },
  },
  {
    rule: 'smb2.request-unanswered',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1 }));
    },
  },
  {
    rule: 'smb2.messageid-reused',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 5 }));
      h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 5 }));
      h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 5, response: true }));
    },
  },
  {
    rule: 'smb2.read-remaining-mismatch',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, read(1, 0xabc, 1, 65536));
      h.write(SERVER, 0xabc, 0x1000, 32768);
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataRemaining: 65536 }));
    },
  },
  {
    rule: 'smb2.write-length-mismatch',
    run: (h) => {
      h.establish();
      h.dt(
        CLIENT,
        writeRequest(
          { messageId: 1 },
          { remainingBytes: 65536, descriptors: [{ offset: 0, token: 0xdef, length: 65536 }] },
        ),
      );
      const rr = h.readRequest(SERVER, 0xdef, 0, 4096);
      h.readResponse(CLIENT, rr);
      h.dt(SERVER, writeResponse({ messageId: 1 }, 65536));
    },
  },
  {
    rule: 'smb2.invalidate-missing',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, read(1, 0xabc, 2));
      h.write(SERVER, 0xabc, 0x1000, 4096);
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataRemaining: 4096 }));
    },
  },
  {
    rule: 'smb2.invalidate-wrong-token',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, read(1, 0xa, 2));
      h.dt(CLIENT, read(2, 0xb, 2));
      h.write(SERVER, 0xa, 0x1000, 4096);
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataRemaining: 4096 }), {}, { invalidate: 0xb });
    },
    also: ['smb2.invalidate-missing', 'smb2.request-unanswered'],
  },
  {
    rule: 'smb2.invalidate-not-asked',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, read(1, 0xabc, 1));
      h.write(SERVER, 0xabc, 0x1000, 4096);
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataRemaining: 4096 }), {}, { invalidate: 0xabc });
    },
  },
  {
    rule: 'smb2.channel-none-info',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, readRequest({ messageId: 1 }, { channel: 0, infoOffset: 112, infoLength: 16 }));
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.channel-info-invalid',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, readRequest({ messageId: 1 }, { channel: 1, infoOffset: 112, infoLength: 0 }));
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.channel-info-invalid',
    run: (h) => {
      h.establish();
      h.dt(
        CLIENT,
        readRequest({ messageId: 1 }, { descriptors: [{ offset: 0, token: 1, length: 10 }], infoLength: 15 }),
      );
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.channel-info-invalid',
    run: (h) => {
      h.establish();
      h.dt(
        CLIENT,
        readRequest({ messageId: 1 }, { descriptors: [{ offset: 0, token: 1, length: 10 }], infoOffset: 64 }),
      );
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.channel-unknown',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, readRequest({ messageId: 1 }, { channel: 7 }));
      h.dt(SERVER, readResponse({ messageId: 1 }, { dataLength: 1 }));
    },
  },
  {
    rule: 'smb2.encrypted',
    run: (h) => {
      h.establish();
      h.dt(CLIENT, cat(Uint8Array.of(0xfd, 0x53, 0x4d, 0x42), new Uint8Array(60)));
      h.write(SERVER, 0x777, 0, 100); // its buffer was advertised inside the encrypted message
    },
  },
];

describe('SMB Direct rules: each fires on input built for it', () => {
  for (const s of SCENARIOS) {
    it(`${s.rule}${s.also ? ` (with ${s.also.join(', ')})` : ''}`, () => {
      const h = new Harness(s.conn);
      s.run(h);
      h.end();
      expect(h.sink.rules()).toContain(s.rule);
      const expected = new Set([s.rule, ...(s.also ?? [])]);
      expect(h.sink.findings.filter((f) => !expected.has(f.rule)).map((f) => `${f.rule}: ${f.message}`)).toEqual([]);
    });
  }

  it('every declared rule has a scenario', () => {
    const covered = new Set(SCENARIOS.map((s) => s.rule));
    expect(SMB_DIRECT_RULES.map((r) => r.id).filter((id) => !covered.has(id))).toEqual([]);
  });

  it('declares each rule once, with a reference, summary and explanation', () => {
    const ids = SMB_DIRECT_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of SMB_DIRECT_RULES) {
      expect(r.id).toMatch(/^(smb_direct|smb2)\./);
      expect(r.summary.length).toBeGreaterThan(10);
      expect(r.explanation.length).toBeGreaterThan(40);
    }
  });

  it('an RDMA access to an unadvertised STag is an error once the connection is followed from its start', () => {
    const h = new Harness();
    h.establish();
    h.write(SERVER, 0x999, 0, 100);
    expect(h.sink.rules()).toEqual(['ulp.access-not-advertised']);
  });

  it('a Write outside the advertised descriptor is reported by the ledger, with the request named', () => {
    const h = new Harness();
    h.establish();
    h.dt(CLIENT, read(7, 0xabc));
    h.write(SERVER, 0xabc, 0x1000 + 4000, 200);
    expect(h.sink.of('ulp.access-outside-buffer')[0]!.message).toContain('SMB2 READ MessageId 7');
  });

  it('names the keepalive and the unanswered request where they were sent', () => {
    const h = new Harness();
    h.establish();
    h.dt(CLIENT, bare({ command: SMB2.ECHO, messageId: 1 }), { flags: 1 });
    h.end();
    const ka = h.sink.of('smb_direct.keepalive-unanswered')[0]!;
    const un = h.sink.of('smb2.request-unanswered')[0]!;
    expect(ka.frames).toEqual(un.frames);
    expect(ka.from).toBe('10.0.0.1:40000');
  });

  it('gives the ledger the IRD of the MS-SMBD private data', () => {
    const h = new Harness({ requestPrivateData: irdOrd(1, 1) });
    h.establish();
    h.dt(
      CLIENT,
      writeRequest({ messageId: 1 }, { remainingBytes: 8192, descriptors: [{ offset: 0, token: 0xd, length: 8192 }] }),
    );
    h.readRequest(SERVER, 0xd, 0, 4096);
    h.readRequest(SERVER, 0xd, 4096, 4096);
    // The Initiator's IRD 1 limits the Responder's Read Requests in flight.
    expect(h.sink.rules()).toEqual(['ulp.ird-exceeded']);
  });
});
