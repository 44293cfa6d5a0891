import { describe, expect, it } from 'vitest';
import { HeaderHistory } from '../../dissectors/ddp-rdmap/header-history.js';

const head = (b0: number, n = 28): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i === 0 ? b0 : i));

describe('DDP header history', () => {
  it('finds the newest matching segment, after the ring has wrapped', () => {
    const h = new HeaderHistory<string>(4);
    for (let i = 0; i < 10; i++) h.add(1000 + i, [i], head(i % 3), `s${i}`);
    expect(h.length).toBe(4);
    // Entries 6..9 are kept: b0 = 0, 1, 2, 0 (i % 3); the newest with b0 = 0 is i = 9.
    expect(h.match(head(0, 18))).toEqual({ seq: 1009, frames: [9], findings: 's9' });
    expect(h.match(head(2, 18))?.seq).toBe(1008);
    // i = 5 (b0 = 2) and older were overwritten.
    expect(h.match(head(1, 18))?.seq).toBe(1007);
  });

  it('compares at most the untagged header and never beyond what a short ULPDU held', () => {
    const h = new HeaderHistory<null>(64);
    h.add(7, [1], head(5, 10), null);
    expect(h.match(head(5, 10))?.seq).toBe(7);
    expect(h.match(head(5, 12))).toBeNull(); // the segment had only 10 octets
    h.add(8, [2], head(5, 28), null);
    expect(h.match(head(5, 18))?.seq).toBe(8); // 18 octets compared, the rest of the head not kept
    expect(h.match(Uint8Array.of(9))).toBeNull();
  });
});

describe('DDP header history, compact entries', () => {
  it('keeps several frames, or none, and findings only when they differ from `none`', () => {
    const none: string[] = [];
    const h = new HeaderHistory<string[]>(2, none);
    h.add(1, [5, 6], head(1), none);
    h.add(2, [], head(2), ['ddp.invalid-mo']);
    expect(h.match(head(1, 18))).toEqual({ seq: 1, frames: [5, 6], findings: [] });
    expect(h.match(head(1, 18))!.findings).toBe(none);
    expect(h.match(head(2, 18))).toEqual({ seq: 2, frames: [], findings: ['ddp.invalid-mo'] });
    // Slot 0 is reused: its earlier frames and findings must not leak into the new entry.
    h.add(0xfffffffe, [7], head(3), none);
    expect(h.match(head(3, 18))).toEqual({ seq: 0xfffffffe, frames: [7], findings: [] });
    expect(h.match(head(1, 18))).toBeNull();
    // Slot 1 is reused by an entry with one frame and no findings.
    h.add(4, [8], head(4), none);
    expect(h.match(head(4, 18))).toEqual({ seq: 4, frames: [8], findings: [] });
    expect(h.match(head(4, 18))!.findings).toBe(none);
  });

  it('grows past its first ring and keeps the oldest entries until it is full', () => {
    const h = new HeaderHistory<null>(40);
    for (let i = 0; i < 40; i++) h.add(i, [100 + i], head(i), null);
    expect(h.length).toBe(40);
    for (let i = 0; i < 40; i++) expect(h.match(head(i, 18))).toEqual({ seq: i, frames: [100 + i], findings: null });
  });
});
