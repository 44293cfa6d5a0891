import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import type { Finding, RuleDef, Severity } from '../../src/vocabulary/findings.js';
import { buildJUnit, escapeAttr, escapeText, type JUnitOptions } from '../../src/report/junit.js';
import { randomInts } from '../helpers/random.js';

const rule = (id: string, severity: Severity, ref: string | null = null): RuleDef => ({
  id,
  severity,
  ref,
  rfcErrorCode: null,
  summary: `summary of ${id}`,
  explanation: '',
});

const RULES: readonly RuleDef[] = [
  rule('capture.truncated', 'error'),
  rule('mpa.crc-mismatch', 'error', 'RFC 5044 §8'),
  rule('mpa.reserved-flags', 'warning'),
  rule('mpa.rejected', 'info'),
];

const FLOWS = [
  { id: 1, name: 'flow 1 10.0.0.1:40001 -> 10.0.0.2:4420' },
  { id: 2, name: 'flow 2 [fd00::1]:40009 -> [fd00::2]:4420' },
];

let nextFrame = 1;
function finding(rule: string, severity: Severity, flow: number | null, message = `${rule} happened`): Finding {
  const f = nextFrame++;
  return {
    rule,
    severity,
    rfcErrorCode: null,
    flow,
    from: flow === null ? null : '10.0.0.1:40001',
    frames: [f, f + 1],
    seq: flow === null ? null : 1000 + f,
    message,
  };
}

interface XmlCase {
  '@_classname': string;
  '@_name': string;
  failure?: { '#text'?: string; '@_message': string; '@_type': string };
  'system-out'?: string;
  skipped?: unknown;
}
interface XmlSuite {
  '@_name': string;
  '@_tests': string;
  '@_failures': string;
  '@_errors': string;
  '@_skipped': string;
  '@_time': string;
  testcase: XmlCase[];
}
interface XmlDoc {
  testsuites: {
    '@_name': string;
    '@_tests': string;
    '@_failures': string;
    '@_errors': string;
    '@_skipped': string;
    '@_time': string;
    testsuite: XmlSuite[];
  };
}

function build(over: Partial<JUnitOptions>): { xml: string; doc: XmlDoc } {
  const xml = buildJUnit({ captureName: 'x.pcap', flows: FLOWS, rules: RULES, findings: [], failOn: 'error', ...over });
  expect(XMLValidator.validate(xml)).toBe(true);
  const parser = new XMLParser({
    ignoreAttributes: false,
    parseAttributeValue: false,
    parseTagValue: false,
    trimValues: false,
    htmlEntities: true, // also decode numeric references (&#9; &#10;)
    isArray: (name) => name === 'testsuite' || name === 'testcase',
  });
  return { xml, doc: parser.parse(xml) as XmlDoc };
}

function suite(doc: XmlDoc, name: string): XmlSuite {
  const s = doc.testsuites.testsuite.find((t) => t['@_name'] === name);
  if (!s) throw new Error(`no suite ${name}`);
  return s;
}

function tc(s: XmlSuite, rule: string): XmlCase {
  const c = s.testcase.find((t) => t['@_name'] === rule);
  if (!c) throw new Error(`no testcase ${rule}`);
  return c;
}

function counts(s: { '@_tests': string; '@_failures': string; '@_errors': string; '@_skipped': string }): number[] {
  return [s['@_tests'], s['@_failures'], s['@_errors'], s['@_skipped']].map(Number);
}

describe('buildJUnit', () => {
  it('writes one suite for the capture and one per flow, one test case per rule', () => {
    const { xml, doc } = build({});
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    expect(doc.testsuites.testsuite.map((s) => s['@_name'])).toEqual(['x.pcap', FLOWS[0]!.name, FLOWS[1]!.name]);
    for (const s of doc.testsuites.testsuite) {
      expect(s.testcase.map((c) => c['@_name'])).toEqual(RULES.map((r) => r.id));
      expect(s.testcase.map((c) => c['@_classname'])).toEqual(['capture', 'mpa', 'mpa', 'mpa']);
      expect(counts(s)).toEqual([4, 0, 0, 0]);
    }
    expect(doc.testsuites['@_name']).toBe('mpa-dissect');
    expect(counts(doc.testsuites)).toEqual([12, 0, 0, 0]);
  });

  it('still writes the capture suite when there are no flows', () => {
    const { doc } = build({ flows: [] });
    expect(doc.testsuites.testsuite.map((s) => s['@_name'])).toEqual(['x.pcap']);
    expect(counts(doc.testsuites)).toEqual([4, 0, 0, 0]);
  });

  const mixed = (): Finding[] => [
    finding('mpa.crc-mismatch', 'error', 1, 'CRC 0x1a2b3c4d on the wire, computed 0x5e6f7a8b'),
    finding('mpa.crc-mismatch', 'error', 1, 'second CRC error'),
    finding('mpa.reserved-flags', 'warning', 1),
    finding('mpa.rejected', 'info', 1),
    finding('mpa.reserved-flags', 'warning', 2),
    finding('capture.truncated', 'error', null, 'file ends inside frame 9'),
  ];

  it('fails on errors only with failOn=error', () => {
    const { doc } = build({ findings: mixed(), failOn: 'error' });
    const f1 = suite(doc, FLOWS[0]!.name);
    expect(counts(f1)).toEqual([4, 1, 0, 0]);
    expect(counts(suite(doc, FLOWS[1]!.name))).toEqual([4, 0, 0, 0]);
    expect(counts(suite(doc, 'x.pcap'))).toEqual([4, 1, 0, 0]);
    expect(counts(doc.testsuites)).toEqual([12, 2, 0, 0]);

    const crc = tc(f1, 'mpa.crc-mismatch');
    expect(crc.failure!['@_message']).toBe('2 findings: CRC 0x1a2b3c4d on the wire, computed 0x5e6f7a8b');
    expect(crc.failure!['@_type']).toBe('error');
    const lines = crc.failure!['#text']!.split('\n');
    expect(lines[0]).toBe('mpa.crc-mismatch: summary of mpa.crc-mismatch (RFC 5044 §8)');
    expect(lines[1]).toMatch(
      /^\[error\] frames \d+, \d+ seq \d+ from 10\.0\.0\.1:40001: CRC 0x1a2b3c4d on the wire, computed 0x5e6f7a8b$/,
    );
    expect(lines[2]).toMatch(/: second CRC error$/);
    expect(lines).toHaveLength(3);

    // Below the threshold: listed, not failed.
    const flags = tc(f1, 'mpa.reserved-flags');
    expect(flags.failure).toBeUndefined();
    expect(flags['system-out']).toMatch(
      /^\[warning\] frames \d+, \d+ seq \d+ from 10\.0\.0\.1:40001: mpa\.reserved-flags happened$/,
    );
    expect(tc(f1, 'mpa.rejected')['system-out']).toMatch(/^\[info\] /);
    expect(tc(f1, 'capture.truncated').failure).toBeUndefined();

    const trunc = tc(suite(doc, 'x.pcap'), 'capture.truncated');
    expect(trunc.failure!['@_message']).toBe('1 finding: file ends inside frame 9');
    expect(trunc.failure!['#text']!.split('\n')[1]).toMatch(/^\[error\] frames \d+, \d+: file ends inside frame 9$/);
  });

  it('fails on warnings and errors with failOn=warning', () => {
    const { doc } = build({ findings: mixed(), failOn: 'warning' });
    const f1 = suite(doc, FLOWS[0]!.name);
    expect(counts(f1)).toEqual([4, 2, 0, 0]);
    expect(tc(f1, 'mpa.reserved-flags').failure!['@_type']).toBe('warning');
    expect(tc(f1, 'mpa.rejected').failure).toBeUndefined();
    expect(counts(suite(doc, FLOWS[1]!.name))).toEqual([4, 1, 0, 0]);
    expect(counts(doc.testsuites)).toEqual([12, 4, 0, 0]);
  });

  it('fails nothing with failOn=never, but lists every finding', () => {
    const { doc } = build({ findings: mixed(), failOn: 'never' });
    expect(counts(doc.testsuites)).toEqual([12, 0, 0, 0]);
    const crc = tc(suite(doc, FLOWS[0]!.name), 'mpa.crc-mismatch');
    expect(crc.failure).toBeUndefined();
    expect(crc['system-out']!.split('\n')).toHaveLength(2);
  });

  it('uses the finding severity, not the catalog default', () => {
    // --rules raised reserved-flags to error for this run.
    const { doc } = build({ findings: [finding('mpa.reserved-flags', 'error', 2)], failOn: 'error' });
    expect(tc(suite(doc, FLOWS[1]!.name), 'mpa.reserved-flags').failure!['@_type']).toBe('error');
    expect(counts(doc.testsuites)).toEqual([12, 1, 0, 0]);
  });

  it('splits one test case into failure and system-out by severity', () => {
    const fs = [
      finding('mpa.crc-mismatch', 'warning', 1, 'downgraded'),
      finding('mpa.crc-mismatch', 'error', 1, 'real'),
    ];
    const { doc } = build({ findings: fs, failOn: 'error' });
    const c = tc(suite(doc, FLOWS[0]!.name), 'mpa.crc-mismatch');
    expect(c.failure!['@_message']).toBe('1 finding: real');
    expect(c['system-out']).toMatch(/downgraded$/);
  });

  it('reports disabled rules as skipped', () => {
    const { doc } = build({ findings: mixed(), disabled: ['mpa.crc-mismatch'], failOn: 'error' });
    const f1 = suite(doc, FLOWS[0]!.name);
    expect(counts(f1)).toEqual([4, 0, 0, 1]);
    const c = tc(f1, 'mpa.crc-mismatch');
    expect(c.skipped).toBeDefined();
    expect(c.failure).toBeUndefined();
    expect(counts(suite(doc, FLOWS[1]!.name))).toEqual([4, 0, 0, 1]);
    expect(counts(doc.testsuites)).toEqual([12, 1, 0, 3]);
  });

  it('keeps findings of unknown rules and unknown flows', () => {
    const { doc } = build({ findings: [finding('ddp.odd', 'error', 1), finding('mpa.crc-mismatch', 'error', 7)] });
    expect(suite(doc, FLOWS[0]!.name).testcase.map((c) => c['@_name'])).toEqual([...RULES.map((r) => r.id), 'ddp.odd']);
    expect(tc(suite(doc, FLOWS[0]!.name), 'ddp.odd')['@_classname']).toBe('ddp');
    expect(tc(suite(doc, FLOWS[0]!.name), 'ddp.odd').failure!['#text']!.split('\n')[0]).toBe('ddp.odd');
    const stray = suite(doc, 'stream 6');
    expect(counts(stray)).toEqual([5, 1, 0, 0]);
    expect(counts(doc.testsuites)).toEqual([20, 2, 0, 0]);
  });

  it('writes the run time on the root and the capture suite', () => {
    const { doc } = build({ timeSeconds: 1.23456 });
    expect(doc.testsuites['@_time']).toBe('1.235');
    expect(suite(doc, 'x.pcap')['@_time']).toBe('1.235');
    expect(suite(doc, FLOWS[0]!.name)['@_time']).toBe('0');
    expect(build({ timeSeconds: Number.NaN }).doc.testsuites['@_time']).toBe('0');
  });

  it('escapes hostile text and drops control characters', () => {
    const hostile = `<script>&amp; "quoted" 'single' ]]> \u0000\u0001\u0008\u000b\u001b\u007f\u0085\ufffe\ud800 end\ttab \u{1F600}`;
    const evilFlow = 'flow 1 <evil> & "x"';
    const { xml, doc } = build({
      captureName: `a<b>&"c'.pcap`,
      flows: [{ id: 1, name: evilFlow }],
      findings: [
        finding('mpa.crc-mismatch', 'error', 1, hostile),
        finding('mpa.rejected', 'info', 1, '</system-out><x>'),
      ],
    });
    expect(xml).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe]/);
    expect(xml).not.toContain('<script>');
    expect(xml).not.toContain('<x>');
    expect(xml).toContain('&lt;script&gt;&amp;amp; &quot;quoted&quot; &apos;single&apos; ]]&gt;');
    // What a JUnit reader sees once it decodes the entities: the text, minus what XML cannot carry.
    const expected = `<script>&amp; "quoted" 'single' ]]>  end\ttab \u{1F600}`;
    expect(doc.testsuites.testsuite.map((s) => s['@_name'])).toEqual([`a<b>&"c'.pcap`, evilFlow]);
    const c = tc(suite(doc, evilFlow), 'mpa.crc-mismatch');
    expect(c.failure!['@_message']).toBe(`1 finding: ${expected}`);
    expect(c.failure!['#text']!.split('\n')[1]!.endsWith(`: ${expected}`)).toBe(true);
    expect(tc(suite(doc, evilFlow), 'mpa.rejected')['system-out']).toMatch(/: <\/system-out><x>$/);
  });

  it('keeps newlines in attributes as references', () => {
    const { xml } = build({ findings: [finding('mpa.crc-mismatch', 'error', 1, 'line1\nline2\r\nline3')] });
    expect(xml).toContain('message="1 finding: line1&#10;line2&#13;&#10;line3"');
  });
});

describe('JUnit escaping', () => {
  // The escapes as they were before text needing none was returned as it is: eight replaces always.
  const INVALID =
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const text = (s: string) =>
    s
      .replace(INVALID, '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
      .replace(/\r/g, '&#13;');
  const attr = (s: string) => text(s).replace(/\n/g, '&#10;').replace(/\t/g, '&#9;');
  it('gives what the full chain of replaces gives, for random hostile strings', () => {
    const rnd = randomInts(7);
    const pick = [
      '&',
      '<',
      '>',
      '"',
      "'",
      '\r',
      '\n',
      '\t',
      '\u0000',
      '\u001f',
      '\u007f',
      '\u0085',
      '\u009f',
      '\ufffe',
      '\uffff',
      '\ud800',
      '\udc00',
      '😀',
      'é',
      'a',
      ' ',
    ];
    for (let i = 0; i < 20_000; i++) {
      let s = '';
      for (let n = rnd(10); n > 0; n--) s += rnd(4) === 0 ? String.fromCharCode(rnd(0x10000)) : pick[rnd(pick.length)]!;
      expect(escapeText(s)).toBe(text(s));
      expect(escapeAttr(s)).toBe(attr(s));
    }
    expect(escapeAttr('plain.rule-id')).toBe('plain.rule-id');
  });
});
