/**
 * ulp.ledger-capacity, which no corpus capture shows (it needs thousands of buffers live at once):
 * past maxLive live entries the oldest is forgotten, said once per connection, and accesses to it
 * are no longer checked.
 */
import { describe, expect, it } from 'vitest';
import { BufferLedger } from '../../dissectors/ddp-rdmap/buffer-ledger.js';
import type { FindingInput, FindingSink } from '../../src/vocabulary/findings.js';

class Sink implements FindingSink {
  readonly got: Array<{ rule: string } & FindingInput> = [];
  report(rule: string, f: FindingInput): void {
    this.got.push({ rule, ...f });
  }
}

const ad = (stag: number) => ({
  owner: 0 as const,
  stag,
  base: 0n,
  length: 4096,
  access: 'remote-write' as const,
  request: stag,
  label: `request ${stag}`,
  invalidate: false,
  seq: 1000 + stag,
  frames: [stag],
});

describe('buffer ledger capacity', () => {
  it('forgets the oldest entry past maxLive, says so once, and no longer checks accesses to it', () => {
    const sink = new Sink();
    const l = new BufferLedger(1, sink, { maxLive: 3 });
    l.strict = true;
    for (let i = 1; i <= 5; i++) l.advertise(ad(i));
    expect(sink.got.map((f) => f.rule)).toEqual(['ulp.ledger-capacity']);
    expect(sink.got[0]!.seq).toBe(1004);
    expect(l.size).toBe(3);
    const write = (stag: number) =>
      l.write({
        flow: 1,
        dir: 1,
        from: '10.0.0.2:5445',
        opcode: 0,
        seq: 9,
        lastSeq: 9,
        frames: [9],
        time: 1,
        length: 100,
        intact: true,
        kind: 'write',
        stag,
        to: 0n,
      });
    // STag 1 was forgotten: an access to it is not checked (no ulp.access-not-advertised), as the rule says.
    expect(write(5)).not.toBeNull();
    expect(write(1)).toBeNull();
    expect(l.strict).toBe(false);
    expect(sink.got.map((f) => f.rule)).toEqual(['ulp.ledger-capacity']);
  });
});
