/** The CLI on generated TUF captures: event lines, -V, -x, -Y on tuf.* fields, NDJSON, --json, --tuf. */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildScenario } from '../../src/generate/scenario.js';
import { alignedStream, markerStream, ulpPdus } from '../../src/generate/tuf.js';
import { cli } from '../cli/helpers.js';
import { parseForcedTuf, UsageError } from '../../cli/options.js';
import { KEY_C, KEY_S } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'tuf-cli-'));
const alignPcap = join(tmp, 'align.pcap');
const markPcap = join(tmp, 'markers.pcap');
const keyPcap = join(tmp, 'second-key.pcap');

beforeAll(() => {
  const a = alignedStream(KEY_C, ulpPdus([100, 200, 300, 50], 3));
  const b = alignedStream(KEY_S, ulpPdus([40, 80, 120], 4));
  writeFileSync(
    alignPcap,
    buildScenario([
      { dir: 0, bytes: a.bytes, cut: a.cut },
      { dir: 1, bytes: b.bytes, cut: b.cut },
    ]).pcap,
  );
  const m = markerStream(ulpPdus([3000, 2500, 4100], 5), 2048, { npo2: (k, v) => (k === 2 ? v + 8 : v) });
  writeFileSync(markPcap, buildScenario([{ dir: 0, bytes: m.bytes, cut: 'mss' }]).pcap);
  const k = alignedStream(KEY_C, ulpPdus([100, 200, 300, 50, 60], 3), {
    keys: (i) => (i === 4 ? 0x010203040506 : KEY_C),
  });
  writeFileSync(keyPcap, buildScenario([{ dir: 0, bytes: k.bytes, cut: k.cut }]).pcap);
});

describe('mpa-dissect on TUF captures', () => {
  it('text: one event line per framing PDU, the flow table says TUF, the totals count it', () => {
    const r = cli([alignPcap]);
    expect(r.code).toBe(0);
    // Relative to the SYN as Wireshark shows it (absolute 1001 with -o tcp.relative_sequence_numbers:FALSE).
    expect(r.stdout).toMatch(
      /10\.0\.0\.1:40001 → 10\.0\.0\.2:4420 {2}TUF framing PDU seq=1 len=100 key=0x1a2b3c4d5e6f aligned/,
    );
    expect(cli(['-o', 'tcp.relative_sequence_numbers:FALSE', alignPcap]).stdout).toMatch(
      /TUF framing PDU seq=1001 len=100 key=0x1a2b3c4d5e6f aligned/,
    );
    expect(r.stdout.match(/TUF framing PDU/g)!.length).toBe(7);
    expect(r.stdout).toMatch(/\n\s+0 {2}10\.0\.0\.1:40001 → 10\.0\.0\.2:4420 {2}TUF align +- +- +4\/3 /);
    expect(r.stdout).toMatch(/1 TCP flow, 0 MPA, 1 TUF; 0 errors/);
  });

  it('-V: the TUF tree; -x: the octets with L and K marked', () => {
    const r = cli(['-V', '-x', '-Y', 'tuf.length == 100', alignPcap]);
    expect(r.stdout).toMatch(/^ULP Framing for TCP, Length: 100, Key: 0x1a2b3c4d5e6f$/m);
    expect(r.stdout).toMatch(/^ {4}Length: 100$/m);
    expect(r.stdout).toMatch(/^ {4}Key: 0x1a2b3c4d5e6f$/m);
    expect(r.stdout).toMatch(/^ {4}\[Aligned: True/m);
    expect(r.stdout).toMatch(/TUF framing PDU at seq 1001, 108 octets from frame 4 \[L Length, K Key\]:/);
    expect(r.stdout).toMatch(/^0000 {2}00 64 1a 2b 3c 4d 5e 6f /m);
    expect(r.stdout).toMatch(/^ {6}L {2}L {2}K {2}K {2}K {2}K {2}K {2}K/m);
  });

  it('-Y on tuf.* fields', () => {
    const r = cli(['-Y', 'tuf.length == 300', alignPcap]);
    expect(r.stdout.match(/TUF framing PDU/g)).toEqual(['TUF framing PDU']);
    const k = cli(['-Y', 'tuf.key == 0b:ad:c0:ff:ee:11', alignPcap]);
    expect(k.stdout.match(/TUF framing PDU/g)!.length).toBe(3);
    const m = cli(['-Y', 'tuf.marker.npo2 != tuf.marker.npo', markPcap]);
    expect(m.code).toBe(1);
    expect(m.stdout).toMatch(/TUF PDU seq=\d+ len=2500 markers=\d+ \[marker copies differ\]/);
    // The finding names the marker's own seq: a line of its own, kept by a filter on the rule.
    expect(cli(['-Y', 'finding.rule == "tuf.marker-copies-differ"', markPcap]).stdout).toMatch(
      /error +tuf\.marker-copies-differ stream 0 frames \d+ seq \d+: marker at seq \d+: Next PDU Offset \d+ and its copy \d+ differ/,
    );
  });

  it('--ndjson: "tuf" events; --json: flows[].tuf', () => {
    const n = cli(['--ndjson', alignPcap])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const t = n.filter((e) => e['type'] === 'tuf');
    expect(t.length).toBe(7);
    expect(t[0]).toMatchObject({
      mode: 'alignment',
      seq: 1001,
      length: 100,
      key: '1a2b3c4d5e6f',
      keyOk: true,
      aligned: true,
      frames: [4],
    });
    const doc = JSON.parse(cli(['--json', markPcap]).stdout) as {
      flows: Array<{ tuf: { mode: string; directions: Array<Record<string, unknown>> } }>;
    };
    expect(doc.flows[0]!.tuf.mode).toBe('markers');
    expect(doc.flows[0]!.tuf.directions[0]).toMatchObject({ interval: 2048, pdus: 3 });
  });

  it('a second key exits 1 (error) with the finding on its framing PDU', () => {
    const r = cli([keyPcap]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /TUF framing PDU seq=\d+ len=60 key=0x010203040506 \[second key\] aligned\n\s+error +tuf\.second-key/,
    );
  });

  it('--tuf forces framing and is checked like --mpa', () => {
    const r = cli(['--tuf', `key=${KEY_C.toString(16)}:`, '--json', alignPcap]);
    const doc = JSON.parse(r.stdout) as {
      flows: Array<{ tuf: { detection: string; directions: Array<Record<string, unknown>> } }>;
    };
    expect(doc.flows[0]!.tuf.detection).toBe('forced');
    expect(doc.flows[0]!.tuf.directions[0]!['framingPdus']).toBe(4);
    expect(cli(['--tuf', 'key=zz', alignPcap])).toMatchObject({ code: 2 });
    expect(cli(['--tuf', 'key=0x1a2b3c4d5e6f,interval=512', alignPcap]).stderr).toMatch(/give one of them/);
    expect(parseForcedTuf('flow=port:4420,interval=2048,start=5000:')).toEqual({
      selector: { kind: 'port', port: 4420 },
      tuf: { mode: 'markers', key: [null, null], interval: 2048, start: [5000, null] },
    });
    expect(() => parseForcedTuf('interval=3')).toThrow(UsageError);
    expect(() => parseForcedTuf('start=1')).toThrow(/key=HEX .* or interval=N/);
  });

  it('rules lists the TUF rules with the draft section', () => {
    const r = cli(['rules']);
    for (const id of [
      'tuf.second-key',
      'tuf.length-contradicted',
      'tuf.middlebox',
      'tuf.sender-split',
      'tuf.two-pdus-in-segment',
      'tuf.marker-copies-differ',
      'tuf.marker-offset-contradicted',
      'tuf.marker-past-end',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`${id.replace('.', '\\.')} .*draft-ietf-tsvwg-tcp-ulp-frame-00 §`));
    }
  });
});
