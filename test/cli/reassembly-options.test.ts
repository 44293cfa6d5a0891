import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { cli } from './helpers.js';

describe('TCP reassembly limits from the command line', () => {
  const c = buildMpaConnection({
    request: { c: true },
    reply: { c: true },
    i2r: Array.from({ length: 20 }, (_, i) => ({ ulpdu: sendUlpdu(i + 1, patternBytes(900, i)) })),
    // Every other pair of data segments swapped: data is held while a hole waits.
    scenario: { swapWithNext: (i, a, b) => a === b && i % 4 === 0 },
  });
  const dir = mkdtempSync(join(tmpdir(), 'mpa-reasm-'));
  const file = join(dir, 'reordered.pcap');
  writeFileSync(file, c.pcap);

  it('defaults: reordering is repaired, no finding', () => {
    const r = cli(['--json', file]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      findings: Array<{ rule: string }>;
      flows: Array<{ mpa: { directions: Array<{ fpdus: number }> } }>;
    };
    expect(doc.findings.map((f) => f.rule)).not.toContain('tcp.buffer-cap');
    expect(doc.flows[0]!.mpa.directions[0]!.fpdus).toBe(20);
  });

  it('--tcp-buffer-flow below one segment turns held data into gaps with a finding', () => {
    const r = cli(['--json', '--fail-on', 'never', '--tcp-buffer-flow', '0.0005', file]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { findings: Array<{ rule: string }> };
    expect(doc.findings.map((f) => f.rule)).toContain('tcp.buffer-cap');
  });
});
