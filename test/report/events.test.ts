/** Event grouping, event fields for filters, the -x dump, rules files and the progress bar. */
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/vocabulary/findings.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import { CaptureOrder, EventAssembler, groupFrame, type EventGroup } from '../../src/report/events.js';
import { addressWord, EventFields, knownField, splitEndpoint } from '../../src/report/fields.js';
import { compileFilter } from '../../src/report/filter/filter.js';
import { dumpLines } from '../../src/report/hexdump.js';
import { parseRulesFile, RulesFileError } from '../../src/report/rules-file.js';
import { Progress } from '../../src/report/progress.js';
import { makeStyle } from '../../src/report/text.js';
import { allRules } from '../../src/analysis/rules-catalog.js';

const FROM = '10.0.0.1:40001';
const TO = '10.0.0.2:4420';

function fpdu(seq: number, frames: number[], over: Partial<FpduRecord> = {}): FpduRecord {
  return {
    kind: 'fpdu',
    flow: 1,
    dir: 0,
    from: FROM,
    to: TO,
    start: 0,
    lenOffset: 0,
    seq,
    ulpduLength: 22,
    pad: 0,
    wireSize: 28,
    crcWire: 1,
    crcComputed: 1,
    crcStatus: 'good',
    markers: [],
    padNonZero: false,
    frames,
    head: new Uint8Array(0),
    afterError: false,
    upper: null,
    ...over,
  };
}

function startup(seq: number, frame: number): StartupRecord {
  return {
    kind: 'request',
    keyOk: true,
    m: false,
    c: true,
    r: false,
    enhanced: false,
    res: 0,
    rev: 1,
    pdLength: 0,
    flow: 1,
    dir: 0,
    from: FROM,
    to: TO,
    frame,
    frames: [frame],
    seq,
    privateData: new Uint8Array(0),
    pdComplete: true,
    enhancedBlock: null,
    vendor: [],
  };
}

function finding(rule: string, seq: number | null, frames: number[], over: Partial<Finding> = {}): Finding {
  return {
    rule,
    severity: 'error',
    rfcErrorCode: 2,
    flow: 1,
    from: FROM,
    frames,
    seq,
    message: `${rule} here`,
    ...over,
  };
}

function shape(gs: EventGroup[]): string[] {
  return gs.map(
    (g) => `${g.record ? `${g.record.kind}@${g.record.seq}` : '-'}[${g.findings.map((f) => f.rule).join(',')}]`,
  );
}

describe('EventAssembler', () => {
  it('puts findings reported before an FPDU under it, and after a startup frame under that', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    a.record(startup(1001, 4));
    a.finding(finding('mpa.bad-key', 1001, [4]));
    a.finding(finding('mpa.crc-mismatch', 1025, [6]));
    a.finding(finding('ddp.msn', 1025, [6]));
    a.record(fpdu(1025, [6]));
    a.finding(finding('mpa.tcp-closed-between', 1053, [7]));
    a.end();
    expect(shape(out)).toEqual([
      'request@1001[mpa.bad-key]',
      'fpdu@1025[mpa.crc-mismatch,ddp.msn]',
      '-[mpa.tcp-closed-between]',
    ]);
  });
  it('keeps capture order for findings about nothing that was printed', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    a.record(fpdu(1025, [6]));
    a.finding(finding('tcp.capture-loss', 2000, [9], { flow: 2 }));
    a.finding(finding('mpa.pad-not-zero', 1053, [7]));
    a.record(fpdu(1053, [7]));
    a.end();
    expect(shape(out)).toEqual(['fpdu@1025[]', '-[tcp.capture-loss]', 'fpdu@1053[mpa.pad-not-zero]']);
  });
  it('stamps each group with the time of the packet being read', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    a.time(10, 5);
    a.record(fpdu(1025, [6]));
    a.time(11, 7);
    a.finding(finding('x', null, [], { flow: null, from: null }));
    a.end();
    expect(out.map((g) => [g.tsSec, g.tsNsec])).toEqual([
      [10, 5],
      [11, 7],
    ]);
  });
});

describe('EventAssembler holds nothing past the packet that produced it', () => {
  it('a finding that can belong to no record goes out at once (1,000,000 empty records do not pile up)', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    for (let i = 1; i <= 1000; i++) {
      a.time(i, 0, i);
      a.finding(finding('net.link-malformed', null, [i], { flow: null, from: null }));
      expect(out).toHaveLength(i);
    }
  });
  it('a record and unclaimed findings go out at the next packet, not at the next record', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    a.time(1, 0, 6);
    a.record(fpdu(1025, [6]));
    a.finding(finding('mpa.tcp-closed-between', 1053, [6]));
    expect(out).toHaveLength(0); // a startup frame's findings may still come in this packet
    a.time(2, 0, 7);
    expect(shape(out)).toEqual(['fpdu@1025[]', '-[mpa.tcp-closed-between]']);
  });
  it('a startup frame and its findings go out at the next packet, with no record after them', () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g));
    a.time(1, 0, 4);
    a.record(startup(1001, 4));
    a.finding(finding('mpa.bad-key', 1001, [4]));
    a.time(2, 0, 5); // nothing new in this packet: the startup frame and its finding are settled
    expect(shape(out)).toEqual(['request@1001[mpa.bad-key]']);
  });
  it('live (-l): the last event of a burst is out as soon as the burst is decoded, with no next packet', async () => {
    const out: EventGroup[] = [];
    const a = new EventAssembler((g) => out.push(g), true);
    a.time(1, 0, 6);
    a.record(fpdu(1025, [6]));
    expect(out).toHaveLength(0);
    await Promise.resolve(); // the reader awaits its next read: the microtask runs
    expect(shape(out)).toEqual(['fpdu@1025[]']);
  });
  it('an output error thrown while flushing in the microtask is rethrown to the pipeline', async () => {
    const a = new EventAssembler(() => {
      throw new Error('disk full');
    }, true);
    a.time(1, 0, 6);
    a.record(fpdu(1025, [6]));
    await Promise.resolve();
    expect(() => a.time(2, 0, 7)).toThrow('disk full');
  });
});

describe('CaptureOrder', () => {
  it('puts groups back in frame order, equal frames in arrival order', () => {
    const out: string[] = [];
    const o = new CaptureOrder<string>((v) => out.push(v));
    for (const [k, v] of [
      [4, 'a'],
      [5, 'b'],
      [1, 'late'],
      [5, 'c'],
      [2, 'later'],
    ] as const)
      o.push(k, v);
    o.drain();
    expect(out).toEqual(['late', 'later', 'a', 'b', 'c']);
  });
  it('holds at most its window; beyond it the oldest goes out', () => {
    const out: number[] = [];
    const o = new CaptureOrder<number>((v) => out.push(v), 3);
    for (const k of [10, 11, 12, 13]) o.push(k, k);
    expect(out).toEqual([10]);
    o.drain();
    expect(out).toEqual([10, 11, 12, 13]);
  });
  it('gives the order of one heap over all: random keys, mostly in order, any window', () => {
    // The reference: hold everything, send out the smallest (key, then arrival) beyond the window.
    let seed = 12345;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % m;
    };
    for (const window of [1, 2, 3, 7, 64]) {
      for (let round = 0; round < 20; round++) {
        const got: number[] = [];
        const want: number[] = [];
        const held: Array<{ key: number; n: number }> = [];
        const o = new CaptureOrder<number>((v) => got.push(v), window);
        const takeMin = () => {
          let m = 0;
          for (let i = 1; i < held.length; i++)
            if (held[i]!.key < held[m]!.key || (held[i]!.key === held[m]!.key && held[i]!.n < held[m]!.n)) m = i;
          want.push(held.splice(m, 1)[0]!.n);
        };
        let k = 0;
        for (let n = 0; n < 300; n++) {
          const r = rnd(10);
          k = r < 6 ? k + rnd(3) : r < 9 ? Math.max(0, k - rnd(20)) : rnd(400);
          o.push(k, n);
          held.push({ key: k, n });
          if (held.length > window) takeMin();
        }
        o.drain();
        while (held.length) takeMin();
        expect(got).toEqual(want);
      }
    }
  });
  it("a group is shown at its record's first frame, else its finding's, else the packet being read", () => {
    expect(groupFrame({ record: fpdu(1, [7, 8]), findings: [], tsSec: 0, tsNsec: 0, atFrame: 9 })).toBe(7);
    expect(groupFrame({ record: null, findings: [finding('x', 1, [5, 3])], tsSec: 0, tsNsec: 0, atFrame: 9 })).toBe(3);
    expect(groupFrame({ record: null, findings: [finding('x', null, [])], tsSec: 0, tsNsec: 0, atFrame: 9 })).toBe(9);
  });
});

describe('EventFields', () => {
  const flows = new Map([[1, { client: FROM, server: TO }]]);
  const ef = new EventFields((flow, from) => {
    const f = flow === null ? undefined : flows.get(flow);
    return !f ? null : from === f.client ? f.server : f.client;
  });
  const match = (filter: string, get: ReturnType<EventFields['group']>['record']) =>
    compileFilter(filter, knownField, addressWord).matches(get!);
  const g: EventGroup = {
    record: fpdu(1025, [6, 7], {
      crcStatus: 'bad',
      markers: [{ offset: 0, seq: 1021, reserved: 0, fpduptr: 8, expected: 0 }],
    }),
    findings: [finding('mpa.crc-mismatch', 1025, [6, 7])],
    tsSec: 0,
    tsNsec: 0,
  };
  const got = ef.group(g);
  it('a record line answers for its own fields and for the findings raised on it', () => {
    expect(match('iwarp_mpa.crc_status == "bad"', got.record)).toBe(true);
    expect(match('iwarp_mpa.marker_fpduptr == 8 && iwarp_mpa.marker_fpduptr_expected == 0', got.record)).toBe(true);
    expect(match('finding.rule == "mpa.crc-mismatch" && finding.code == 2', got.record)).toBe(true);
    expect(match('frame.number == 7 && tcp.stream == 0', got.record)).toBe(true); // flow 1: Wireshark's tcp.stream 0
    expect(match('ip.src == 10.0.0.1 && tcp.dstport == 4420 && ip.addr == "10.0.0.2"', got.record)).toBe(true);
    expect(match('iwarp_ddp', got.record)).toBe(false); // no DDP segment in this record
  });
  it("a finding line answers for its fields and its record's", () => {
    const fl = got.findings[0]!;
    expect(match('finding.severity == "error" && finding.message contains "here"', fl)).toBe(true);
    expect(match('finding.from == "10.0.0.1:40001" && finding.seq == 1025', fl)).toBe(true);
    expect(match('ip.dst == "10.0.0.2"', fl)).toBe(true); // the receiver comes from the flow
    expect(match('iwarp_mpa.crc_status == "bad"', fl)).toBe(true);
  });
  it('a finding of no flow has no flow fields', () => {
    const lone = ef.group({
      record: null,
      findings: [finding('capture.truncated', null, [9], { flow: null, from: null, rfcErrorCode: null })],
      tsSec: 0,
      tsNsec: 0,
    });
    expect(match('tcp.stream', lone.findings[0]!)).toBe(false);
    expect(match('finding.code', lone.findings[0]!)).toBe(false);
    expect(match('frame.number == 9', lone.findings[0]!)).toBe(true);
  });
  it('splits IPv4 and IPv6 endpoints', () => {
    expect(splitEndpoint('[fd00::1]:40009')).toEqual({ addr: 'fd00::1', port: 40009, v6: true });
    expect(splitEndpoint('10.0.0.1:1')).toEqual({ addr: '10.0.0.1', port: 1, v6: false });
  });
  it('knows every declared protocol field and the event fields', () => {
    for (const f of [
      'iwarp_mpa.crc_status',
      'iwarp_ddp.msn',
      'iwarp_rdma.opcode',
      'iwarp_ddp.analysis.finding',
      'finding.rule',
      'frame.number',
      'ipv6.src',
    ]) {
      expect(knownField(f), f).toBe(true);
    }
    expect(knownField('iwarp_mpa.nope')).toBe(false);
  });
  it('unquoted IPv4 addresses only for ip.* fields', () => {
    expect(() => compileFilter('finding.from == 10.0.0.1', knownField, addressWord)).toThrow(/not a valid number/);
  });
});

describe('dumpLines', () => {
  it('marks octets under their hex, and shows missing octets as ??', () => {
    const bytes = Uint8Array.from({ length: 20 }, (_, i) => 0x41 + i);
    const have = new Uint8Array(20).fill(1);
    have[19] = 0;
    const marks = ['M', 'M', 'M', 'M', 'L', 'L', ...new Array<string>(14).fill('')];
    marks[18] = 'C';
    expect(dumpLines({ bytes, have }, marks, makeStyle(false))).toEqual([
      '0000  41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50   ABCDEFGHIJKLMNOP',
      '      M  M  M  M  L  L',
      '0010  51 52 53 ??                                       QRS',
      '            C',
    ]);
  });
});

describe('rules file', () => {
  const rules = allRules();
  const parse = (doc: unknown) => parseRulesFile('r.json', JSON.stringify(doc), rules);
  it('turns rules off, changes severities; exact ids beat patterns, longer patterns beat shorter', () => {
    const c = parse({
      rules: { 'mpa.*': 'info', 'mpa.crc-mismatch': 'on', 'mpa.pad-not-zero': 'off', 'ddp.*': 'off', '*': 'warning' },
    });
    expect(c.overrides.disabled.has('mpa.pad-not-zero')).toBe(true);
    expect(c.overrides.severity.has('mpa.crc-mismatch')).toBe(false); // "on": its own severity
    expect(c.overrides.severity.get('mpa.fpduptr-mismatch')).toBe('info');
    expect([...c.overrides.disabled].some((id) => id.startsWith('ddp.'))).toBe(true);
    expect(c.overrides.severity.get('tcp.capture-loss')).toBe('warning');
  });
  it('reads thresholds', () => {
    const c = parse({
      thresholds: { 'alignment.minFpduAlignedPercent': 90, 'alignment.minSegments': 10, 'capture.minMpaFlows': 1 },
    });
    expect(c.thresholds).toEqual({
      minFpduAlignedPercent: 90,
      minHeaderAlignedPercent: null,
      minSegments: 10,
      minMpaFlows: 1,
    });
  });
  it('refuses what it does not understand, naming the file', () => {
    const bad: Array<[unknown, RegExp]> = [
      [[], /r\.json: must be a JSON object/],
      [{ rules: { 'mpa.crc-mismatch': 'fatal' } }, /"fatal" is not one of/],
      [{ rules: { 'nope.*': 'off' } }, /pattern "nope\.\*" matches no rule/],
      [{ rules: ['mpa.crc-mismatch'] }, /"rules" must be an object/],
      [{ thresholds: { 'alignment.minSegments': 1.5 } }, /must be an integer/],
      [
        { thresholds: { 'alignment.minFpduAligned': 90 } },
        /unknown threshold "alignment\.minFpduAligned".*did you mean "alignment\.minFpduAlignedPercent"/,
      ],
    ];
    for (const [doc, msg] of bad) expect(() => parse(doc)).toThrow(msg);
    expect(() => parseRulesFile('r.json', '{', rules)).toThrow(RulesFileError);
  });
});

describe('Progress', () => {
  it('draws at most every 1024 packets and erases itself', () => {
    const out: string[] = [];
    const p = new Progress((s) => out.push(s), 1_000_000);
    for (let i = 1; i < 1024; i++) p.tick(i * 100, i);
    expect(out).toEqual([]);
    p.tick(500_000, 1024);
    expect(out[0]).toMatch(/^\r\[#{15}\.{15}\] {2}50% {2}1024 packets {2}500 kB of 1\.0 MB/);
    p.done();
    expect(out.at(-1)).toBe('\r\x1b[K');
  });
});
