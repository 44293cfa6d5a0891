/**
 * Latency figures against the generator's own schedule, exactly. The generator places every frame
 * at a whole microsecond (src/generate/scenario.ts) and records, per RDMAP message, the frame that
 * carried its last octet and that frame's time; each session records which messages are a
 * request's request, data and response (ScheduledRequest). The intervals below are computed from
 * that schedule alone and must equal the `--json` report's `latency` figures to the last bit.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { captureFile } from '../../src/generate/capture-file.js';
import type { Generated } from '../../src/generate/knob-connection.js';
import { resolveKnobs } from '../../src/generate/knobs.js';
import { NfsSession } from '../../src/generate/nfs-session.js';
import { nfsCleanExchange } from '../../src/generate/nfsrdma-scenarios.js';
import { CHANNEL_RDMA_V1, SERVER, SmbdSession } from '../../src/generate/smbd-session.js';
import { smbdCleanExchange } from '../../src/generate/smbd-scenarios.js';
import { NvmeSession } from '../../src/generate/nvme-rdma-session.js';
import { IserSession } from '../../src/generate/iser-session.js';
import { iserTasks } from '../../src/generate/iser-scenarios.js';
import { adminClean, ioClean } from '../../src/generate/nvme-rdma-scenarios.js';
import {
  buildUlpConnection,
  type ScheduledRequest,
  type UlpConnectionSpec,
} from '../../src/generate/ulp-connection.js';
import type { LatencyReport, LatencyRequest } from '../../src/analysis/latency-types.js';
import { cli } from '../cli/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'latency-truth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KNOBS: ReadonlyArray<Record<string, string>> = [
  {},
  { segmentation: 'random', markers: 'both', mss: '536' },
  { segmentation: 'packed', crc: 'off', ip: '6' },
];

interface Session {
  spec(): UlpConnectionSpec;
  readonly requests: readonly ScheduledRequest[];
  /** What the report names the request queue: the NVMe queue ID, else the flow. */
  readonly queueLabel?: string;
}

function build(s: Session, knobs: Record<string, string>, seed: number): { g: Generated; path: string } {
  const g = buildUlpConnection(s.spec(), resolveKnobs(knobs).knobs, seed);
  const path = join(dir, `c${seed}-${Object.values(knobs).join('-') || 'default'}.pcap`);
  writeFileSync(path, captureFile(g.frames, 'pcap'));
  return { g, path };
}

function latencyOf(path: string): LatencyReport {
  const r = cli(['--json', path]);
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as { latency: LatencyReport }).latency;
}

/** Seconds of a whole number of microseconds: how the report states every figure. */
const s = (us: number): number => us / 1e6;

/** What the report must say of `q`, from the generator's schedule only. */
function truthOf(q: ScheduledRequest, g: Generated, captureEndUs: number, queue = 'flow 1'): LatencyRequest {
  const end = (i: number) => {
    const e = g.messageEnds![i];
    if (!e) throw new Error(`event ${i} not captured`);
    return e;
  };
  const req = end(q.request);
  const data = q.data.map(end).sort((a, b) => a.us - b.us);
  const first = data[0];
  const last = data.at(-1);
  const rsp = q.response === null ? null : end(q.response);
  return {
    program: q.program,
    command: q.command,
    code: expect.any(Number) as unknown as number,
    queue,
    time: expect.any(Number) as unknown as number,
    latency: s((rsp ? rsp.us : captureEndUs) - req.us),
    answered: rsp !== null,
    toFirstData: first ? s(first.us - req.us) : null,
    firstToLastData: first && last ? s(last.us - first.us) : null,
    lastDataToResponse: last && rsp ? s(rsp.us - last.us) : null,
    requestFrame: req.frame,
    firstDataFrame: first?.frame ?? null,
    lastDataFrame: last?.frame ?? null,
    responseFrame: rsp?.frame ?? null,
  };
}

function checkSession(name: string, make: () => Session): void {
  describe(name, () => {
    it.each(KNOBS.map((k, i) => [JSON.stringify(k), k, i + 1] as const))(
      'knobs %s: every request, command and phase as scheduled',
      (_, knobs, seed) => {
        const session = make();
        const { g, path } = build(session, knobs, seed);
        const lat = latencyOf(path);
        const answered = session.requests.filter((q) => q.response !== null);
        expect(answered.length).toBeGreaterThanOrEqual(5);
        const want = answered.map((q) => truthOf(q, g, 0, session.queueLabel));
        // Every answered request listed (fewer than 100), each with its scheduled figures and frames.
        expect(lat.answered).toBe(want.length);
        expect(lat.slowest).toHaveLength(want.length);
        const byFrame = new Map(lat.slowest.map((r) => [r.requestFrame, r]));
        for (const w of want) expect(byFrame.get(w.requestFrame), `${w.command} in frame ${w.requestFrame}`).toEqual(w);
        // Slowest first.
        const lats = lat.slowest.map((r) => r.latency);
        expect(lats).toEqual([...lats].sort((a, b) => b - a));
        // Per command: calls, extremes and sum of the request → response times, and the phases.
        for (const c of lat.commands) {
          const mine = want.filter((w) => w.program === c.program && w.command === c.command);
          const us = (v: number) => Math.round(v * 1e6);
          const tot = mine.map((w) => us(w.latency));
          expect(c.calls, c.command).toBe(mine.length);
          expect(c.min).toBe(s(Math.min(...tot)));
          expect(c.max).toBe(s(Math.max(...tot)));
          expect(c.sum).toBe(s(tot.reduce((a, b) => a + b, 0)));
          expect(c.histogram.reduce((a, b) => a + b, 0)).toBe(mine.length);
          const withData = mine.filter((w) => w.toFirstData !== null);
          expect(c.phases.toFirstData.calls).toBe(withData.length);
          if (withData.length) {
            expect(c.phases.toFirstData.max).toBe(s(Math.max(...withData.map((w) => us(w.toFirstData!)))));
            expect(c.phases.firstToLastData.min).toBe(s(Math.min(...withData.map((w) => us(w.firstToLastData!)))));
            expect(c.phases.lastDataToResponse.sum).toBe(
              s(withData.reduce((a, w) => a + us(w.lastDataToResponse!), 0)),
            );
          }
        }
        expect(lat.commands.reduce((n, c) => n + c.calls, 0)).toBe(want.length);
        expect(lat.unanswered.count).toBe(0);
      },
    );
  });
}

checkSession('SMB Direct: the clean exchange (smbd-clean)', () => {
  const x = new SmbdSession();
  smbdCleanExchange(x);
  return x;
});

checkSession('NFS over RDMA: the clean exchange (nfsrdma-clean)', () => {
  const x = new NfsSession();
  nfsCleanExchange(x);
  return x;
});

checkSession('NVMe/RDMA: the admin queue (nvme-admin-clean)', () => {
  const x = Object.assign(new NvmeSession(), { queueLabel: '0' });
  adminClean(x);
  return x;
});

checkSession('NVMe/RDMA: an I/O queue (nvme-io-clean)', () => {
  const x = Object.assign(new NvmeSession({ qid: 1 }), { queueLabel: '1' });
  ioClean(x);
  return x;
});

checkSession('iSER: the clean exchange (iser-clean)', () => {
  const x = new IserSession();
  x.hello();
  x.assistedLogin();
  iserTasks(x);
  return x;
});

describe('a request never answered', () => {
  it('is listed with how long it had waited when the capture ended, in the JSON and under -z smb2,srt', () => {
    const x = new SmbdSession();
    x.establish();
    x.read({ length: 8192, channel: CHANNEL_RDMA_V1 });
    const lost = x.read({ length: 4096, channel: CHANNEL_RDMA_V1, requestOnly: true });
    x.keepalive(SERVER);
    const { g, path } = build(x, {}, 7);
    const lastFrame = g.frames.at(-1)!;
    const endUs = lastFrame.tsSec * 1e6 + lastFrame.tsNsec / 1000;
    const q = x.requests.find((r) => r.request === lost.request)!;
    expect(q.response).toBeNull();
    const want = truthOf(q, g, endUs);
    const lat = latencyOf(path);
    expect(lat.captureEnd).toBe(lastFrame.tsSec + lastFrame.tsNsec / 1e9);
    expect(lat.unanswered).toEqual({ count: 1, listed: [want], more: 0 });
    expect(want.latency).toBeGreaterThan(2); // the keepalive's idle time passed after it
    const text = cli(['-q', '-z', 'smb2,srt', path]).stdout;
    expect(text).toContain('SMB2 requests never answered: 1');
    expect(text).toMatch(
      new RegExp(`\\n\\s+${want.requestFrame}\\s+${want.latency.toFixed(6).replace('.', '\\.')}\\s+READ\\s+flow 1\\n`),
    );
  });
});
