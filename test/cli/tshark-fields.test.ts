/**
 * The frame and TCP fields scripts name most (frame.time*, frame.len, tcp.seq, tcp.ack, tcp.len,
 * tcp.flags.*, ports and addresses), checked against real tshark on the same captures: our row
 * for a record lists each field's value per frame that carried it (as frame.number), and each of
 * those equals what tshark prints in that frame's row. Relative sequence numbers by default and
 * absolute ones with -o tcp.relative_sequence_numbers:FALSE, as tshark. Captures with and without
 * SYNs, IPv4 and IPv6. Skips visibly without tshark.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURES, cli } from './helpers.js';
import { HAVE_TSHARK } from '../helpers/tools.js';

const CORPUS = join(CAPTURES, 'corpus');
const FIELDS = [
  'frame.time',
  'frame.time_relative',
  'frame.time_epoch',
  'frame.time_delta',
  'frame.len',
  'frame.cap_len',
  'tcp.seq',
  'tcp.seq_raw',
  'tcp.ack',
  'tcp.ack_raw',
  'tcp.len',
  'tcp.flags',
  'tcp.flags.syn',
  'tcp.flags.ack',
  'tcp.flags.push',
  'tcp.flags.fin',
  'tcp.srcport',
  'tcp.dstport',
];
const CASES: Array<[string, string[]]> = [
  ['errors.pcap', ['ip.src', 'ip.dst']], // SYNs, markers, several frames per FPDU
  [join(CORPUS, 'mid-stream.pcap'), ['ip.src', 'ip.dst']], // no SYN: relative from the first octet seen
  [join(CORPUS, 'ipv6-vlan.pcap'), ['ipv6.src', 'ipv6.dst']],
  [join(CORPUS, 'clean-rev2-markers-both-crc-on.pcapng'), ['ip.src', 'ip.dst']],
];
const ENV = { TZ: 'UTC' };

/** tshark's rows by capture, fields and preferences: tshark takes most of a CPU second to start. */
const rowsRead = new Map<string, Map<number, string[]>>();

function tsharkRows(capture: string, fields: string[], prefs: string[]): Map<number, string[]> {
  const key = [capture, ...fields, '', ...prefs].join('\0');
  const known = rowsRead.get(key);
  if (known !== undefined) return known;
  const r = spawnSync(
    'tshark',
    [
      '-r',
      capture,
      ...prefs,
      '-T',
      'fields',
      '-E',
      'occurrence=f',
      '-e',
      'frame.number',
      ...fields.flatMap((f) => ['-e', f]),
    ],
    { cwd: CAPTURES, encoding: 'utf8', env: { ...process.env, ...ENV }, maxBuffer: 64 * 1024 * 1024 },
  );
  expect(r.status, r.stderr).toBe(0);
  const m = new Map<number, string[]>();
  for (const line of r.stdout.trimEnd().split('\n')) {
    const [n, ...rest] = line.split('\t');
    m.set(Number(n), rest);
  }
  rowsRead.set(key, m);
  return m;
}

/** Our CLI's run by arguments: the same command run once. */
const cliRan = new Map<string, ReturnType<typeof cli>>();
function cliOnce(args: string[]): ReturnType<typeof cli> {
  const key = args.join('\0');
  let r = cliRan.get(key);
  if (r === undefined) cliRan.set(key, (r = cli(args)));
  return r;
}

/** Our rows, values of several frames split apart ("|" aggregates: frame.time holds commas). */
function ourRows(capture: string, fields: string[], prefs: string[]): Array<{ frames: number[]; cols: string[][] }> {
  const r = cli(
    [
      ...prefs,
      '-T',
      'fields',
      '-E',
      'aggregator=|',
      '-e',
      'frame.number',
      ...fields.flatMap((f) => ['-e', f]),
      capture,
    ],
    { env: ENV },
  );
  expect(r.code, r.stderr).toBeLessThan(2);
  return r.stdout
    .trimEnd()
    .split('\n')
    .map((line) => {
      const [frames, ...cols] = line.split('\t');
      return { frames: frames!.split('|').map(Number), cols: cols.map((c) => c.split('|')) };
    });
}

/** tshark prints booleans as 1/0 (True/False in some versions) and hex flags as 0x0018. */
const norm = (v: string): string => (v === 'True' ? '1' : v === 'False' ? '0' : v);

describe.skipIf(!HAVE_TSHARK)('frame and TCP fields: the values tshark prints for the same frames', () => {
  for (const [capture, addrs] of CASES)
    for (const prefs of [[], ['-o', 'tcp.relative_sequence_numbers:FALSE']])
      it(`${capture.split('/').pop()} ${prefs.join(' ') || '(relative sequence numbers)'}`, () => {
        const fields = [...FIELDS, ...addrs];
        const theirs = tsharkRows(capture, fields, prefs);
        const ours = ourRows(capture, fields, prefs);
        // Records, each compared frame by frame on every column.
        const records = ours.filter((r) => r.frames.length > 0 && r.frames[0]! > 0);
        expect(records.length).toBeGreaterThan(3);
        let compared = 0;
        for (const row of records) {
          row.frames.forEach((fr, k) => {
            const t = theirs.get(fr);
            expect(t, `frame ${fr} in tshark's output`).toBeDefined();
            fields.forEach((name, j) => {
              const perFrame = row.cols[j]!;
              // Addresses and ports are the record's (one value), the rest one per frame.
              const mine = perFrame.length === row.frames.length ? perFrame[k]! : perFrame[0]!;
              expect(norm(mine), `${name} of frame ${fr}`).toBe(norm(t![j]!));
              compared++;
            });
          });
        }
        expect(compared).toBeGreaterThan(100);
      });
});

describe('expert infos as tshark names them (_ws.expert, _ws.expert.message, _ws.expert.severity)', () => {
  it("a record's findings, in tshark's form and severity numbers", () => {
    const r = cli([
      '-T',
      'fields',
      '-E',
      'aggregator=|',
      '-e',
      'finding.severity',
      '-e',
      'finding.message',
      '-e',
      '_ws.expert.severity',
      '-e',
      '_ws.expert.message',
      '-e',
      '_ws.expert',
      '-Y',
      '_ws.expert',
      'errors.pcap',
    ]);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows.length).toBeGreaterThan(3);
    const SEV: Record<string, [string, string]> = {
      error: ['8388608', 'Error'],
      warning: ['6291456', 'Warning'],
      info: ['4194304', 'Note'],
    };
    const seen = new Set<string>();
    for (const row of rows) {
      const [sev, msg, wsSev, wsMsg, ws] = row.split('\t').map((c) => c.split('|'));
      expect(wsMsg).toEqual(msg);
      sev!.forEach((s, i) => {
        seen.add(s);
        expect(wsSev![i]).toBe(SEV[s]![0]);
        expect(ws![i]).toBe(`Expert Info (${SEV[s]![1]}/Protocol): ${msg![i]}`);
      });
    }
    expect([...seen].sort()).toEqual(['error', 'info', 'warning']);
    // A filter on tshark's names selects what finding.* selects.
    const a = cli(['-T', 'fields', '-e', 'frame.number', '-Y', '_ws.expert.severity == 8388608', 'errors.pcap']);
    const b = cli(['-T', 'fields', '-e', 'frame.number', '-Y', 'finding.severity == "error"', 'errors.pcap']);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout).not.toBe('');
  });
});

describe.skipIf(!HAVE_TSHARK)('event lines: FPDU seq= relative as Wireshark, absolute under -o', () => {
  for (const capture of ['errors.pcap', join(CORPUS, 'mid-stream.pcap')])
    for (const prefs of [[], ['-o', 'tcp.relative_sequence_numbers:FALSE']])
      it(`${capture.split('/').pop()} ${prefs.join(' ') || '(relative)'}`, () => {
        // The rows the test above read of the same capture: tcp.seq and tcp.len are among them.
        const fields = [...FIELDS, ...CASES.find(([c]) => c === capture)![1]];
        const [iSeq, iLen] = [fields.indexOf('tcp.seq'), fields.indexOf('tcp.len')];
        const rows = tsharkRows(capture, fields, prefs);
        const theirs = new Map([...rows].map(([n, cols]) => [n, [cols[iSeq]!, cols[iLen]!]] as const));
        const lines = cliOnce([...prefs, capture]).stdout.split('\n');
        let checked = 0;
        for (const l of lines) {
          const m = /^\s*(\d+)(?:-(\d+))?\s.*FPDU seq=(\d+) /.exec(l);
          if (!m) continue;
          const first = Number(m[1]);
          const last = m[2] ? Number(m[2]) : first;
          const seq = Number(m[3]);
          // The ULPDU_Length field's sequence number lies in one of the frames that carried the FPDU.
          let inside = false;
          for (let fr = first; fr <= last; fr++) {
            const [s, len] = theirs.get(fr)!.map(Number);
            if (seq >= s! && seq < s! + len!) inside = true;
          }
          expect(inside, l).toBe(true);
          checked++;
        }
        expect(checked).toBeGreaterThan(3);
      });
});

describe('--json and --ndjson keep absolute seq and add the relative one', () => {
  it('seqRelative = seq - seqRelativeBase of its direction, and the event lines show the same numbers', () => {
    const doc = JSON.parse(cli(['--json', 'errors.pcap']).stdout) as {
      flows: Array<{
        id: number;
        tcp: { directions: Array<{ from: string; seqRelativeBase: number | null }> };
        mpa: { request: { seq: number; seqRelative: number } | null } | null;
      }>;
      findings: Array<{ flow: number | null; from: string | null; seq: number | null; seqRelative: number | null }>;
    };
    const base = (flow: number | null, from: string | null) =>
      doc.flows.find((f) => f.id === flow)?.tcp.directions.find((d) => d.from === from)?.seqRelativeBase ?? null;
    const withSeq = doc.findings.filter((f) => f.seq !== null);
    expect(withSeq.length).toBeGreaterThan(3);
    for (const f of withSeq) expect(f.seqRelative).toBe((f.seq! - base(f.flow, f.from)!) >>> 0);
    // The request's relative seq is 1: the first octet after the SYN (tshark's tcp.seq of frame 4).
    expect(doc.flows[0]!.mpa!.request!.seqRelative).toBe(1);
    const text = cliOnce(['errors.pcap']).stdout;
    const ndjson = cli(['--ndjson', 'errors.pcap'])
      .stdout.trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; rule?: string; seq?: number; seqRelative?: number | null });
    const fpdus = ndjson.filter((e) => e.type === 'fpdu');
    expect(fpdus.length).toBeGreaterThan(5);
    for (const e of fpdus) expect(text).toContain(`FPDU seq=${e.seqRelative} `);
    // (A clean FIN between FPDUs is no event line of its own: the flow table's Closed column says it.)
    for (const e of ndjson.filter((x) => x.type === 'finding' && x.seq !== null && x.rule !== 'mpa.tcp-closed-between'))
      expect(text).toContain(` seq ${e.seqRelative}: `);
  });
});
