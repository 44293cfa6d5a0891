/**
 * Times as tshark writes them: the time column of the event lines under `-t` (tshark's
 * --time-stamp-format: r relative to the first packet, the default; a/ad/adoy absolute local
 * time, u/ud/udoy the same in UTC; e epoch; d delta from the previous captured packet, dd from the
 * previous displayed line), and the frame.time* fields of -T fields, which -t does not change (as
 * in tshark). The column has microseconds, as tshark's for a pcap; the fields nanoseconds.
 */

export const TIME_FORMATS = ['a', 'ad', 'adoy', 'd', 'dd', 'e', 'r', 'u', 'ud', 'udoy'] as const;
export type TimeFormat = (typeof TIME_FORMATS)[number];

/** tshark's words for each format, for the error on an unknown one. */
export const TIME_FORMAT_WORDS: Readonly<Record<TimeFormat, string>> = {
  a: 'absolute',
  ad: 'absolute with YYYY-MM-DD date',
  adoy: 'absolute with YYYY/DOY date',
  d: 'delta',
  dd: 'delta displayed',
  e: 'epoch',
  r: 'relative',
  u: 'absolute UTC',
  ud: 'absolute UTC with YYYY-MM-DD date',
  udoy: 'absolute UTC with YYYY/DOY date',
};

const p2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Seconds and nanoseconds apart, as "S.ffffff" (digits: 6 or 9); negative when b is later. */
export function deltaText(aSec: number, aNsec: number, bSec: number, bNsec: number, digits: 6 | 9): string {
  let s = aSec - bSec;
  let ns = aNsec - bNsec;
  if (ns < 0) {
    ns += 1e9;
    s -= 1;
  }
  const neg = s < 0;
  if (neg) {
    // -0.5 s is s = -1, ns = 5e8: shown as its magnitude with a sign.
    s = -s - 1;
    ns = 1e9 - ns;
    if (ns === 1e9) {
      ns = 0;
      s += 1;
    }
  }
  const frac = digits === 9 ? String(ns).padStart(9, '0') : String(Math.floor(ns / 1000)).padStart(6, '0');
  return `${neg ? '-' : ''}${s}.${frac}`;
}

function dayOfYear(d: Date, utc: boolean): number {
  // Calendar days counted on the date's own components, so a DST change cannot shift them.
  const y = utc ? d.getUTCFullYear() : d.getFullYear();
  const m = utc ? d.getUTCMonth() : d.getMonth();
  const day = utc ? d.getUTCDate() : d.getDate();
  return Math.round((Date.UTC(y, m, day) - Date.UTC(y, 0, 1)) / 86400000) + 1;
}

/** Absolute time of day, with the date as asked: "22:13:20.000010", "2023-11-14 22:13:20.000010", "2023/318 ...". */
export function absoluteText(sec: number, nsec: number, utc: boolean, date: 'none' | 'ymd' | 'doy'): string {
  const d = new Date(sec * 1000);
  const h = utc ? d.getUTCHours() : d.getHours();
  const m = utc ? d.getUTCMinutes() : d.getMinutes();
  const s = utc ? d.getUTCSeconds() : d.getSeconds();
  const time = `${p2(h)}:${p2(m)}:${p2(s)}.${String(Math.floor(nsec / 1000)).padStart(6, '0')}`;
  if (date === 'none') return time;
  const y = utc ? d.getUTCFullYear() : d.getFullYear();
  if (date === 'doy') return `${y}/${String(dayOfYear(d, utc)).padStart(3, '0')} ${time}`;
  const mo = (utc ? d.getUTCMonth() : d.getMonth()) + 1;
  const day = utc ? d.getUTCDate() : d.getDate();
  return `${y}-${p2(mo)}-${p2(day)} ${time}`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The local time zone's short name as tshark prints it after frame.time ("UTC", "CET", ...). */
function zoneName(d: Date): string {
  if (d.getTimezoneOffset() === 0 && /^(UTC|Etc\/UTC|GMT|Etc\/GMT|)$/.test(process.env['TZ'] ?? '')) return 'UTC';
  const part = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(d)
    .find((x) => x.type === 'timeZoneName');
  return part?.value ?? 'UTC';
}

/** frame.time as tshark -T fields prints it: "Nov 14, 2023 22:13:20.000010000 UTC" (local time). */
export function frameTimeText(sec: number, nsec: number): string {
  const d = new Date(sec * 1000);
  const frac = String(nsec).padStart(9, '0');
  return `${MONTHS[d.getMonth()]} ${p2(d.getDate())}, ${d.getFullYear()} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())}.${frac} ${zoneName(d)}`;
}

/** frame.time_epoch: "1700000000.000010000". */
export function epochText(sec: number, nsec: number): string {
  return `${sec}.${String(nsec).padStart(9, '0')}`;
}

/** How many recent packets' times the clock keeps for `-t d` (events are settled within a packet or two). */
const RECENT = 4096;

/**
 * The time column of the event lines under one -t format. `packet` is told every packet (its
 * frame number and time); `text` formats an event's time, the event having been produced while
 * packet `frame` was read.
 */
export class EventClock {
  private t0Sec = Number.NaN;
  private t0Nsec = 0;
  private readonly recentSec: Float64Array;
  private readonly recentNsec: Uint32Array;
  private readonly recentFrame: Float64Array;
  private shownSec = Number.NaN;
  private shownNsec = 0;

  constructor(readonly format: TimeFormat = 'r') {
    // Kept for every format: a record handed on late (MPA held its octets while finding framing
    // again) shows its own frame's time, not the time of the packet that released it.
    this.recentSec = new Float64Array(RECENT);
    this.recentNsec = new Uint32Array(RECENT);
    this.recentFrame = new Float64Array(RECENT).fill(-1);
  }

  /** Whether the time of `frame` is still known (one of the last RECENT packets). */
  knows(frame: number): boolean {
    return frame > 0 && this.recentFrame[frame % RECENT] === frame;
  }

  /** Seconds and nanoseconds of a frame `knows` says is known. */
  secOf(frame: number): number {
    return this.recentSec[frame % RECENT]!;
  }
  nsecOf(frame: number): number {
    return this.recentNsec[frame % RECENT]!;
  }

  packet(frame: number, sec: number, nsec: number): void {
    if (Number.isNaN(this.t0Sec)) {
      this.t0Sec = sec;
      this.t0Nsec = nsec;
    }
    const i = frame % RECENT;
    this.recentFrame[i] = frame;
    this.recentSec[i] = sec;
    this.recentNsec[i] = nsec;
  }

  text(sec: number, nsec: number, frame: number): string {
    switch (this.format) {
      case 'r':
        return Number.isNaN(this.t0Sec) ? '0.000000' : deltaText(sec, nsec, this.t0Sec, this.t0Nsec, 6);
      case 'e':
        return `${sec}.${String(Math.floor(nsec / 1000)).padStart(6, '0')}`;
      case 'a':
        return absoluteText(sec, nsec, false, 'none');
      case 'ad':
        return absoluteText(sec, nsec, false, 'ymd');
      case 'adoy':
        return absoluteText(sec, nsec, false, 'doy');
      case 'u':
        return absoluteText(sec, nsec, true, 'none');
      case 'ud':
        return absoluteText(sec, nsec, true, 'ymd');
      case 'udoy':
        return absoluteText(sec, nsec, true, 'doy');
      case 'd': {
        // The packet before the one the event was produced at (tshark: the previous captured frame).
        const i = (frame - 1) % RECENT;
        if (frame <= 1 || this.recentFrame[i] !== frame - 1) return '0.000000';
        return deltaText(sec, nsec, this.recentSec[i]!, this.recentNsec[i]!, 6);
      }
      case 'dd': {
        const t = Number.isNaN(this.shownSec) ? '0.000000' : deltaText(sec, nsec, this.shownSec, this.shownNsec, 6);
        this.shownSec = sec;
        this.shownNsec = nsec;
        return t;
      }
    }
  }
}
