/**
 * An evidence file reproduces (issue 21): `mpa-dissect -q -w evidence.pcap capture`, then
 * `mpa-dissect evidence.pcap`, must show the same findings on the same FPDUs, since a vendor opens
 * the file a user attaches to a bug report. Checked for every corpus, reference and real capture with
 * findings, with the default selection (the frames behind the findings) and with --write-filter.
 *
 * Findings are compared per connection (by its two endpoints, since frame and flow numbers change)
 * by rule, severity, direction and sequence number. Capture-level findings (no flow: a file cut
 * mid-record, a malformed IP header) are about the file, not the connection, and are left out.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/pipeline.js';
import { defaultUpper } from '../../src/analysis/upper.js';
import { run, type RunOptions } from '../../cli/run.js';
import { CAPTURES } from '../cli/helpers.js';
import { sharedCaptures } from '../helpers/analyze.js';

const dir = mkdtempSync(join(tmpdir(), 'mpa-evidence-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Findings of flows, keyed by connection: "client server rule severity from seq". */
async function findingsOf(path: string): Promise<{ keys: string[]; conns: Set<string> }> {
  // As the CLI analyses (upper layers on), so that their findings are compared too.
  const r = await analyze(path, { upper: defaultUpper, ulp: { overrides: [] } });
  const conn = new Map(r.flows.map((f) => [f.tcp.id, `${f.tcp.client} ${f.tcp.server}`]));
  const keys: string[] = [];
  const conns = new Set<string>();
  for (const f of r.findings.findings) {
    if (f.flow === null) continue;
    const c = conn.get(f.flow)!;
    conns.add(c);
    keys.push(`${c} ${f.rule} ${f.severity} ${f.from} ${f.seq}`);
  }
  return { keys: keys.sort(), conns };
}

/** `mpa-dissect -q -w out [--write-filter W] [-Y Y] capture`, in process; returns what it said on stderr. */
async function writeEvidence(
  capture: string,
  out: string,
  writeFilter: string | null,
  displayFilter: string | null = null,
): Promise<string> {
  const o: RunOptions = {
    capture,
    json: false,
    ndjson: false,
    junit: null,
    displayFilter,
    verbose: false,
    hex: false,
    quiet: true,
    lineBuffered: false,
    write: out,
    writeFilter,
    stats: [],
    failOn: 'never',
    rules: null,
    mpa: [],
    checksums: false,
    color: false,
    progress: false,
    threads: 1,
  };
  let err = '';
  await run(o, { out: () => undefined, err: (s) => (err += s) });
  return err;
}

const captures: string[] = [];
const add = (d: string | null, names?: string[]): void => {
  if (d === null) return;
  for (const e of readdirSync(d, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || !/\.pcap(ng)?$/.test(e.name)) continue;
    if (names && !names.includes(e.name)) continue;
    captures.push(join(e.parentPath, e.name));
  }
};
add(join(CAPTURES, 'corpus'));
add(CAPTURES, ['errors.pcap', 'golden.pcap', 'sample.pcap']);
add(sharedCaptures('reference'));
add(sharedCaptures('real'));

describe('-w evidence files reproduce their findings', () => {
  if (sharedCaptures('real') === null)
    it.skip('../shared/captures is absent: corpus captures only (skipped: the real and reference captures)', () => {});

  it('the corpus, reference and real captures: the frames behind the findings and their connections', {
    timeout: 600_000,
  }, async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const [i, c] of captures.entries()) {
      const orig = await findingsOf(c);
      if (orig.keys.length === 0) continue;
      const out = join(dir, `e${i}.pcap`);
      const err = await writeEvidence(c, out, null);
      const again = await findingsOf(out);
      checked++;
      if (err) problems.push(`${c}: ${err.trim()}`);
      const want = orig.keys.join('\n');
      const got = again.keys.join('\n');
      if (want !== got) {
        const missing = orig.keys.filter((k) => !again.keys.includes(k));
        const extra = again.keys.filter((k) => !orig.keys.includes(k));
        problems.push(
          `${c}: missing ${JSON.stringify(missing.slice(0, 3))}, extra ${JSON.stringify(extra.slice(0, 3))}`,
        );
      }
    }
    expect(problems).toEqual([]);
    expect(captures.length).toBeGreaterThan(250);
    expect(checked).toBeGreaterThan(200);
  });

  it('--write-filter \'iwarp_mpa.crc_status == "bad"\': the CRC errors come back as CRC errors', async () => {
    const c = join(CAPTURES, 'errors.pcap');
    const out = join(dir, 'crc.pcap');
    await writeEvidence(c, out, 'iwarp_mpa.crc_status == "bad"');
    const orig = await findingsOf(c);
    const again = await findingsOf(out);
    const crc = (k: string[]) => k.filter((x) => / mpa\.crc-mismatch /.test(x) || /crc/.test(x.split(' ')[2]!));
    expect(crc(orig.keys).length).toBeGreaterThan(0);
    expect(crc(again.keys)).toEqual(crc(orig.keys));
    expect(again.keys.some((k) => k.includes('mpa.framing-lost'))).toBe(false);
  });

  it('-Y FILTER -w writes only what -Y displays, as tshark does (no connection context)', async () => {
    const c = join(CAPTURES, 'errors.pcap');
    const out = join(dir, 'y.pcap');
    const err = await writeEvidence(c, out, null, 'iwarp_mpa.crc_status == "bad"');
    expect(err).toBe('');
    const r = await analyze(out);
    // Only the frames of the bad-CRC FPDUs: far fewer than the connection's 21 packets.
    expect(r.capture.packets).toBeLessThan(21);
  });
});
