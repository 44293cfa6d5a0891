/**
 * tshark as the oracle for the NVMe decode. Wireshark's NVMe/RDMA dissector runs on InfiniBand only
 * (ULP-NOTES 1.4), but its NVMe dissector (packet-nvme.c) also decodes NVMe/TCP. So every NVMe/RDMA
 * scenario's capsules are carried twice: in the iWARP capture the generator writes (which we
 * analyse) and, octet for octet, as NVMe/TCP Capsule Command / Capsule Response PDUs (common header
 * type 4 / 5, after an ICReq / ICResp, port 4420) in a twin capture that tshark reads. Command by
 * command and completion by completion, every nvme.* field both show must be equal, and the core
 * fields (CID, opcode, FCTYPE, CQE SQHD, SQID, status) must be shown by both. RDMA Writes and Reads
 * have no place in the twin (NVMe/TCP moves data in its own PDUs); a capsule the twin cannot carry
 * (shorter than an SQE) is left out of both sides. Skips visibly without tshark.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { isDdpSegmentRecord } from '../../dissectors/ddp-rdmap/upper-factory.js';
import { captureFile } from '../../src/generate/capture-file.js';
import { generate } from '../../src/generate/generate.js';
import { nvmeSessions } from '../../src/generate/nvme-rdma-scenarios.js';
import { joinConnections } from '../../src/generate/ulp-connection.js';
import { allScenarios } from '../../src/generate/registry.js';
import { buildScenario, type Send } from '../../src/generate/scenario.js';
import type { TreeNode } from '../../src/vocabulary/fields.js';
import { HAVE_TSHARK } from '../helpers/tools.js';
import { type FrameBlock, tsharkFieldsMany } from '../helpers/tshark-batch.js';

const dir = mkdtempSync(join(tmpdir(), 'nvme-twin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fields compared where both show them. */
const FIELDS = [
  'nvme.cmd.opc',
  'nvme.cmd.cid',
  'nvme.cmd.nsid',
  'nvme.cmd.sgl1.addr',
  'nvme.cmd.sgl1.len',
  'nvme.cmd.sgl1.key',
  'nvme.cmd.sgl.type',
  'nvme.cmd.sgl.subtype',
  'nvme.cmd.slba',
  'nvme.cmd.nlb',
  'nvme.fabrics.cmd.cid',
  'nvme.fabrics.cmd.fctype',
  'nvme.fabrics.cmd.connect.recfmt',
  'nvme.fabrics.cmd.connect.qid',
  'nvme.fabrics.cmd.connect.sqsize',
  'nvme.fabrics.cmd.connect.cattr',
  'nvme.fabrics.cmd.connect.kato',
  'nvme.fabrics.cmd.connect.data.cntrlid',
  'nvme.fabrics.cmd.connect.data.subnqn',
  'nvme.fabrics.cmd.connect.data.hostnqn',
  'nvme.fabrics.cmd.prop_get_set.offset',
  'nvme.fabrics.cqe.connect.cntrlid',
  'nvme.cqe.sqhd',
  'nvme.cqe.sqid',
  'nvme.cqe.cid',
  'nvme.cqe.status',
  'nvme.cqe.status.sc',
  'nvme.cqe.status.sct',
  'nvme.cqe.status.dnr',
] as const;

/** Each message must show at least one of these on both sides: its identity. */
const CORE = ['nvme.cmd.cid', 'nvme.fabrics.cmd.cid', 'nvme.cqe.cid'];

type Row = Map<string, string>;

function norm(v: string): string {
  const t = v.trim();
  if (/^0x[0-9a-f]+$/i.test(t)) return String(BigInt(t));
  if (/^\d+$/.test(t)) return String(BigInt(t));
  // tshark -T fields prints booleans as 1 / 0.
  if (t === 'True' || t === 'true') return '1';
  if (t === 'False' || t === 'false') return '0';
  return t;
}

const le32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

/** NVMe/TCP PDU: common header (type, flags, HLEN, PDO, PLEN) then the PDU-specific header and data. */
function pdu(type: number, hlen: number, header: Uint8Array, data: Uint8Array | null): Uint8Array {
  const pdo = data && data.length > 0 ? hlen : 0;
  const plen = hlen + (data?.length ?? 0);
  const out = new Uint8Array(plen);
  out.set([type, 0, hlen, pdo, ...le32(plen)], 0);
  out.set(header, 8);
  if (data) out.set(data, hlen);
  return out;
}

/** ICReq / ICResp: PFV 0, no digests, MAXR2T / MAXH2CDATA. */
const icReq = (): Uint8Array => pdu(0, 128, new Uint8Array(120), null);
const icResp = (): Uint8Array => {
  const h = new Uint8Array(120);
  h.set(le32(131072), 4);
  return pdu(1, 128, h, null);
};

/**
 * The twin: the scenario's capsules (Sends of 64+ octets from the host, 16 from the controller) as
 * NVMe/TCP, one TCP connection per queue (a host's admin and I/O queues: one after the other).
 */
function twin(name: string): { pcap: Uint8Array; capsules: number } | null {
  const queues = nvmeSessions(name);
  if (!queues) return null;
  let capsules = 0;
  const parts = queues.map((s) => {
    const sends: Send[] = [
      { dir: 0, bytes: icReq() },
      { dir: 1, bytes: icResp() },
    ];
    for (const e of s.events) {
      if (e.op !== 'send') continue;
      const p = e.payload;
      if (e.dir === 0 && p.length >= 64) sends.push({ dir: 0, bytes: pdu(4, 72, p.subarray(0, 64), p.subarray(64)) });
      else if (e.dir === 1 && p.length === 16) sends.push({ dir: 1, bytes: pdu(5, 24, p, null) });
      else continue;
      capsules++;
    }
    const r = buildScenario(sends, {
      client: { addr: '10.0.0.1', port: s.o.clientPort ?? 50123 },
      server: { addr: '10.0.0.2', port: 4420 },
    });
    return { frames: r.frames, findings: [], flows: [], args: [] };
  });
  return { pcap: captureFile(joinConnections(parts).frames, 'pcap'), capsules };
}

/** tshark's rows of every twin, from one tshark run over them all (test/helpers/tshark-batch.ts). */
let twinsRead: Promise<Map<string, FrameBlock[]>> | null = null;
async function tsharkRows(name: string): Promise<Row[]> {
  if (!twinsRead) {
    const files = names.map((n) => {
      const file = join(dir, `${n}.pcap`);
      writeFileSync(file, twin(n)!.pcap);
      return file;
    });
    twinsRead = tsharkFieldsMany(files, ['-d', 'tcp.port==4420,nvme-tcp', '-E', 'occurrence=f'], FIELDS);
  }
  const rows: Row[] = [];
  for (const { text: line } of (await twinsRead).get(join(dir, `${name}.pcap`)) ?? []) {
    // After frame.number, the fields in order.
    const cols = line.split('\t').slice(1);
    const r: Row = new Map();
    FIELDS.forEach((f, i) => {
      const v = cols[i] ?? '';
      if (v !== '') r.set(f, norm(v));
    });
    if (CORE.some((k) => r.has(k))) rows.push(r);
  }
  return rows;
}

async function ourRows(capture: Uint8Array): Promise<Row[]> {
  const want = new Set<string>(FIELDS);
  const rows: Row[] = [];
  await analyze('generated.pcap', {
    upper: defaultUpper,
    stream: (async function* () {
      yield capture;
    })(),
    onFpdu: (f) => {
      const up = f.upper;
      if (!isDdpSegmentRecord(up) || !up.ulp) return;
      const r: Row = new Map();
      const walk = (nodes: readonly TreeNode[]): void => {
        for (const n of nodes) {
          if (want.has(n.field.abbrev) && !r.has(n.field.abbrev)) r.set(n.field.abbrev, norm(String(n.value)));
          if (n.children) walk(n.children);
        }
      };
      walk(up.ulp.tree);
      if (CORE.some((k) => r.has(k))) rows.push(r);
    },
  });
  return rows;
}

/** Twins where Wireshark shows something else, and why; the test asserts the difference is still there. */
const KNOWN: Readonly<Record<string, string>> = {
  'nvme-completion-without-command':
    "a CQE whose CID matches no command: Wireshark's NVMe/TCP dissector (packet-nvme-tcp.c) decodes a Capsule Response through the command it pairs with and shows no nvme.cqe fields without one; we decode the CQE and report nvme-rdma.completion-without-command",
};

/** Every field compared at least once over the twins (checked at the end). */
const seen = new Set<string>();

const names = allScenarios()
  .map((s) => s.name)
  .filter((n) => n.startsWith('nvme-'));

describe.skipIf(!HAVE_TSHARK)('tshark decodes the same capsules as NVMe/TCP: its nvme.* fields equal ours', () => {
  it.each(names)('%s', { timeout: 60_000 }, async (name) => {
    const t = twin(name)!;
    const theirs = await tsharkRows(name);
    const ours = await ourRows(generate(name, {}, 1, 'pcap').capture);
    if (KNOWN[name]) {
      expect(theirs.length, KNOWN[name]).toBeLessThan(t.capsules);
      expect(ours.length).toBe(t.capsules);
      return;
    }
    expect(theirs.length).toBe(t.capsules);
    expect(ours.length).toBe(t.capsules);
    const diffs: string[] = [];
    let compared = 0;
    for (let i = 0; i < t.capsules; i++) {
      const a = theirs[i]!;
      const b = ours[i]!;
      if (!CORE.some((k) => a.has(k) && b.has(k))) diffs.push(`capsule ${i + 1}: no CID both show`);
      for (const [k, v] of a) {
        if (!b.has(k)) continue;
        compared++;
        seen.add(k);
        if (b.get(k) !== v) diffs.push(`capsule ${i + 1} ${k}: tshark ${v}, ours ${b.get(k)}`);
      }
    }
    expect(diffs).toEqual([]);
    expect(compared).toBeGreaterThan(t.capsules * 2);
  });

  it('compared every field of the list somewhere', () => {
    const never = FIELDS.filter((f) => !seen.has(f));
    expect(never).toEqual([]);
  });
});

// Registered only without tshark: with it, the comparison above runs and nothing is skipped.
if (!HAVE_TSHARK)
  describe('tshark NVMe/TCP oracle', () => {
    it.skip('tshark is not installed: the NVMe/TCP twin comparison did not run', () => {});
  });
