/**
 * Pre-standard MPA and RDMA Consortium (Rev 0) flows through every output: text event lines and
 * flow table, -V tree, --json, --ndjson and the TUI flow list, on generated captures written to disk.
 */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPrestandardConnection, buildRdmacConnection } from '../../src/generate/prestandard.js';
import { patternBytes, sendUlpdu, type FpduSpec } from '../../src/generate/mpa-encoder.js';
import { cli, requireBuilt } from './helpers.js';
import { openModel, paneText } from '../tui/helpers.js';

requireBuilt();
const tmp = mkdtempSync(join(tmpdir(), 'mpa-prestd-'));
const sends = (n: number, size: number, dv = 1): FpduSpec[] =>
  Array.from({ length: n }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(size + i * 50, i), { dv }) }));

const pre = buildPrestandardConnection({ hello: true, i2r: sends(6, 600), r2i: sends(4, 300) });
const prePath = join(tmp, 'prestandard.pcap');
writeFileSync(prePath, pre.pcap);
const rdmac = buildRdmacConnection({
  request: { rev: 1, m: false, c: true },
  reply: { rev: 0, m: true, c: true },
  markers: [true, true],
  i2r: sends(4, 700, 0),
  r2i: sends(5, 900, 0),
});
const rdmacPath = join(tmp, 'rdmac.pcap');
writeFileSync(rdmacPath, rdmac.pcap);

describe('pre-standard MPA in the outputs', () => {
  it('text: the enablement line and the flow table say pre-std, every FPDU listed', () => {
    const r = cli([prePath]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/mpa\.enabled-without-startup/);
    expect(r.stdout).toMatch(/after 31 octets of streaming-mode data/);
    expect(r.stdout).toMatch(/pre-std/);
    expect(r.stdout.split('\n').filter((l) => / FPDU seq=\d+ .* CRC ok /.test(l))).toHaveLength(10);
  });

  it('-V: markers with FPDUPTR seen and expected under draft-00, no error', () => {
    const r = cli(['-V', prePath]);
    expect(r.stdout).not.toMatch(/fpduptr-mismatch|crc-mismatch/);
    expect(r.stdout).toMatch(/FPDUPTR/);
  });

  it('--json: detection prestandard and the enablement points', () => {
    const doc = JSON.parse(cli(['--json', prePath]).stdout);
    const m = doc.flows[0].mpa;
    expect(m.detection).toBe('prestandard');
    expect(m.enablement.map((e: { seq: number }) => e.seq)).toEqual(pre.enableSeq);
    expect(m.enablement[0]).toMatchObject({ zeroMarker: true, fpduptrRule: 'draft-00' });
    expect(m.directions.map((d: { fpdus: number }) => d.fpdus)).toEqual([6, 4]);
    expect(doc.summary.errors).toBe(0);
  });

  it('--ndjson: the flow object carries the same additions, FPDU events with their markers', () => {
    const lines = cli(['--ndjson', prePath])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const flow = lines.find((l) => l.type === 'flow');
    expect(flow.mpa.detection).toBe('prestandard');
    expect(flow.mpa.enablement[1].seq).toBe(pre.enableSeq[1]);
    const fpdus = lines.filter((l) => l.type === 'fpdu');
    expect(fpdus).toHaveLength(10);
    expect(fpdus[0].markers[0]).toMatchObject({ fpduptr: 0, expected: 0 });
  });

  it('TUI flow list: pre-std', async () => {
    const { vm } = await openModel(prePath);
    expect(paneText(vm, 'flows').find((l) => l.includes('10.0.0.1:40001'))).toMatch(/pre-std/);
  });
});

describe('RDMA Consortium (Rev 0) flows in the outputs', () => {
  it('text and -V: the Appendix C outcome under the Reply, a Rev 0 frame without an R bit', () => {
    const r = cli(['-V', rdmacPath]);
    expect(r.stdout).toMatch(/mpa\.rdmac-interop/);
    expect(r.stdout).toMatch(/permissive IETF Initiator with an RDMAC Responder/);
    expect(r.stdout).toMatch(/Rev 0: bits 0x3F reserved, no R or enhanced bit/);
    expect(r.stdout).not.toMatch(/crc-mismatch|fpduptr-mismatch|unknown/);
  });

  it('--json: the rdmac outcome; --ndjson flow agrees', () => {
    const m = JSON.parse(cli(['--json', rdmacPath]).stdout).flows[0].mpa;
    expect(m.rdmac).toMatchObject({
      figure: 16,
      initiator: 'ietf-permissive',
      responder: 'rdmac',
      version: 0,
      markers: '1/1',
      mustClose: false,
    });
    expect(m.directions.map((d: { markers: boolean }) => d.markers)).toEqual([true, true]);
    const flow = cli(['--ndjson', rdmacPath])
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((l) => l.type === 'flow');
    expect(flow.mpa.rdmac.figure).toBe(16);
  });

  it('TUI flow list: RDMAC v0', async () => {
    const { vm } = await openModel(rdmacPath);
    expect(paneText(vm, 'flows').find((l) => l.includes('10.0.0.1:40001'))).toMatch(/RDMAC v0/);
  });
});
