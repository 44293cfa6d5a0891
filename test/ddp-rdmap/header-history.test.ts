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
