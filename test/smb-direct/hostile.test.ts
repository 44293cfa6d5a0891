/** Hostile and random input: bounded work, findings instead of allocations, never a throw. */
import { describe, expect, it } from 'vitest';
import { MAX_COMPOUND, MAX_DESCRIPTORS, decodeChannelInfo, decodeSmb2 } from '../../dissectors/smb-direct/smb2.js';
import { REASSEMBLY_KEEP } from '../../dissectors/smb-direct/transport.js';
import {
  bare,
  cat,
  dataTransfer,
  negotiateRequest,
  negotiateResponse,
  readRequest,
  SMB2,
  smb2Header,
} from '../../src/generate/smbd-encoder.js';
import { CLIENT, Harness, SERVER } from './harness.js';

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function chain(n: number, step = 64): Uint8Array {
  const out = new Uint8Array(n * step);
  for (let i = 0; i < n; i++) {
    const h = smb2Header({ command: SMB2.ECHO, messageId: i, nextCommand: i === n - 1 ? 0 : step });
    out.set(h, i * step);
  }
  return out;
}

describe('SMB2 decoding bounds', () => {
  it('stops a compound chain at MAX_COMPOUND commands', () => {
    const d = decodeSmb2(chain(1000), 64000);
    expect(d.commands).toHaveLength(MAX_COMPOUND);
    expect(d.compoundProblems[0]).toContain(`longer than ${MAX_COMPOUND}`);
  });

  it('stops at a NextCommand past the end, below the header size or unaligned', () => {
    for (const n of [0xfffffff8, 32, 100]) {
      const m = cat(smb2Header({ command: SMB2.ECHO, messageId: 1, nextCommand: n }), new Uint8Array(200));
      const d = decodeSmb2(m, m.length);
      expect(d.commands).toHaveLength(1);
      expect(d.compoundProblems).toHaveLength(1);
    }
  });

  it('decodes at most MAX_DESCRIPTORS of a maximal channel information length', () => {
    const msg = new Uint8Array(112 + 0xfff0);
    const ci = decodeChannelInfo(msg, 0, msg.length, 1, 112, 0xfff0)!;
    expect(ci.declared).toBe(0xfff0 / 16);
    expect(ci.descriptors).toHaveLength(MAX_DESCRIPTORS);
    expect(ci.problem).toContain(`only the first ${MAX_DESCRIPTORS}`);
  });

  it('refuses channel information that claims more octets than the command has', () => {
    const m = readRequest({ messageId: 1 }, { channel: 1, infoOffset: 112, infoLength: 0xffff });
    const c = decodeSmb2(m, m.length).commands[0]!;
    expect(c.body?.kind === 'read-request' && c.body.channelInfo?.problem).toContain('reaches past the end');
  });
});

describe('SMB Direct dissector under hostile input', () => {
  it('bounds a request announcing thousands of Buffer Descriptors', () => {
    const h = new Harness({ initiatorDir: null });
    const descs = Array.from({ length: 0xff00 / 16 }, (_, i) => ({ offset: i * 4096, token: i, length: 4096 }));
    h.dt(CLIENT, readRequest({ messageId: 1 }, { descriptors: descs }));
    expect(h.sink.rules()).toEqual(['smb2.channel-info-invalid']);
    expect(h.ledger.size).toBe(MAX_DESCRIPTORS);
  });

  it('checks a message announcing 4 GB against MaxFragmentedSize', () => {
    const h = new Harness();
    h.establish();
    h.dt(CLIENT, bare({ command: SMB2.WRITE, messageId: 1 }, 100), { remaining: 0xffffffff - 164 });
    expect(h.sink.rules()).toEqual(['smb_direct.data-transfer.fragment-too-large']);
  });

  it('keeps at most REASSEMBLY_KEEP octets of a message larger than that', () => {
    const h = new Harness();
    const big = { maxFragmentedSize: 0xffffffff, maxReceiveSize: 0x10000, preferredSendSize: 0x10000 };
    h.establish(big, big);
    const piece = new Uint8Array(60000);
    piece.set(smb2Header({ command: SMB2.ECHO, messageId: 1 }));
    const pieces = Math.ceil((REASSEMBLY_KEEP * 2) / piece.length);
    let remaining = pieces * piece.length;
    for (let i = 0; i < pieces; i++) {
      remaining -= piece.length;
      h.dt(CLIENT, piece, { remaining, creditsGranted: 1 });
      h.dt(SERVER, null, { creditsGranted: 1 });
    }
    const done = h.records[h.records.length - 2]!;
    expect(done.info).toBe(
      `SMB2 ECHO Request MessageId 1 [reassembled from ${pieces} fragments, ${pieces * piece.length} octets]`,
    );
    h.dt(SERVER, bare({ command: SMB2.ECHO, messageId: 1, response: true }));
    h.end();
    expect(h.sink.findings).toEqual([]);
  });

  it('survives credits of 65535 granted over and over', () => {
    const h = new Harness();
    h.negotiate({ creditsRequested: 65535 }, { creditsGranted: 65535, creditsRequested: 65535 });
    for (let i = 0; i < 2000; i++)
      h.dt(i % 2 ? SERVER : CLIENT, null, { creditsGranted: 65535, creditsRequested: 65535 });
    h.end();
    expect(h.sink.findings).toEqual([]);
  });

  it('reports a compound chain longer than the bound and shows the decoded commands', () => {
    const h = new Harness();
    h.establish({ preferredSendSize: 8136 }, { maxReceiveSize: 8192 });
    const c = chain(100, 64);
    h.dt(CLIENT, c);
    expect(h.sink.rules()).toEqual(['smb2.compound-invalid']);
    expect(h.last().info.split('; ')).toHaveLength(MAX_COMPOUND);
  });

  for (const startCaptured of [true, false]) {
    it(`never throws on random messages (start ${startCaptured ? '' : 'not '}captured)`, () => {
      const r = rng(startCaptured ? 1 : 2);
      const h = new Harness(startCaptured ? {} : { initiatorDir: null });
      if (startCaptured) {
        h.send(CLIENT, negotiateRequest());
        h.send(SERVER, negotiateResponse());
      }
      const pick = (n: number) => Math.floor(r() * n);
      for (let i = 0; i < 3000; i++) {
        const dir = pick(2) as 0 | 1;
        const kind = pick(10);
        if (kind === 0) h.write(dir, pick(8), pick(1 << 20), pick(70000), r() < 0.9);
        else if (kind === 1) h.readRequest(dir, pick(8), pick(1 << 20), pick(70000));
        else {
          let payload: Uint8Array;
          if (kind < 5) payload = Uint8Array.from({ length: pick(300) }, () => pick(256));
          else {
            // Structured but corrupted: an SMB2 message in a Data Transfer with random fields.
            const smb =
              kind === 5
                ? readRequest(
                    { messageId: pick(20), response: r() < 0.5 },
                    { channel: pick(5), descriptors: [{ offset: 0, token: pick(8), length: pick(9000) }] },
                  )
                : bare({
                    command: pick(20),
                    messageId: pick(20),
                    response: r() < 0.5,
                    nextCommand: r() < 0.2 ? pick(200) : 0,
                  });
            payload = dataTransfer({
              data: smb,
              remaining: r() < 0.2 ? pick(5000) : 0,
              flags: pick(3),
              creditsGranted: pick(3),
            });
            for (let k = pick(4); k > 0; k--) payload[pick(payload.length)] = pick(256);
          }
          const rec = h.send(dir, payload, {
            invalidate: r() < 0.1 ? pick(8) : undefined,
            captured: r() < 0.1 ? pick(200) : undefined,
          });
          expect(rec?.protocol).toBe('smb_direct');
        }
      }
      expect(() => h.end()).not.toThrow();
    });
  }
});
