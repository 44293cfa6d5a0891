/**
 * The -t time column and frame.time* texts (src/report/time-format.ts) on edge values: deltas
 * across a second and negative ones, the day of the year at a leap year's end, epoch and UTC forms.
 * Against tshark they are checked in test/cli/gate.test.ts and test/cli/tshark-fields.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { absoluteText, deltaText, epochText, EventClock } from '../../src/report/time-format.js';

describe('time texts', () => {
  it('deltaText borrows across the second, keeps 6 or 9 digits, and signs a negative delta', () => {
    expect(deltaText(10, 100, 9, 999_999_900, 9)).toBe('0.000000200');
    expect(deltaText(10, 1_500, 10, 0, 6)).toBe('0.000001');
    expect(deltaText(9, 500_000_000, 10, 0, 6)).toBe('-0.500000');
    expect(deltaText(8, 0, 10, 0, 9)).toBe('-2.000000000');
    expect(deltaText(5, 0, 5, 0, 6)).toBe('0.000000');
  });
  it('UTC forms: time, date, day of the year (366 on 31 December 2024)', () => {
    const sec = Date.UTC(2024, 11, 31, 23, 59, 58) / 1000;
    expect(absoluteText(sec, 123_456_789, true, 'none')).toBe('23:59:58.123456');
    expect(absoluteText(sec, 0, true, 'ymd')).toBe('2024-12-31 23:59:58.000000');
    expect(absoluteText(sec, 0, true, 'doy')).toBe('2024/366 23:59:58.000000');
    expect(absoluteText(Date.UTC(2023, 0, 1) / 1000, 0, true, 'doy')).toBe('2023/001 00:00:00.000000');
    expect(epochText(1_700_000_000, 10_000)).toBe('1700000000.000010000');
  });
  it('EventClock: r from the first packet, d from the packet before, dd from the line shown before', () => {
    const r = new EventClock('r');
    r.packet(1, 100, 0);
    r.packet(2, 101, 250_000_000);
    expect(r.text(101, 250_000_000, 2)).toBe('1.250000');
    const d = new EventClock('d');
    d.packet(1, 100, 0);
    d.packet(2, 100, 40_000);
    expect(d.text(100, 40_000, 2)).toBe('0.000040');
    // A frame the clock never saw the packet before of: no delta to give.
    expect(d.text(100, 40_000, 9)).toBe('0.000000');
    const dd = new EventClock('dd');
    expect(dd.text(5, 0, 1)).toBe('0.000000');
    expect(dd.text(7, 500_000_000, 3)).toBe('2.500000');
    expect(new EventClock('e').text(1_700_000_000, 999_999_999, 1)).toBe('1700000000.999999');
  });
});
