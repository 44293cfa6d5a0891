/**
 * Puts the pipeline's streaming callbacks back together as the user reads them: each startup frame
 * or FPDU with the findings raised on it (as Wireshark shows a packet with its expert infos), and
 * findings that belong to no record (a TCP close, a gap, a read error) on their own, in capture order.
 *
 * Findings about an FPDU are reported while it is framed, before the pipeline hands the FPDU out;
 * findings about a startup frame come right after it. So a record is held until the next record
 * (or the end) arrives, and findings wait until the record they belong to shows up.
 */
import type { Finding } from '../analysis/findings.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';

export type MpaRecord = StartupRecord | FpduRecord;

export interface EventGroup {
  /** The startup frame or FPDU, or null for a finding that belongs to no record. */
  readonly record: MpaRecord | null;
  /** Findings raised on the record (or the one standalone finding), in the order reported. */
  readonly findings: Finding[];
  /** Timestamp of the packet being read when the record (or finding) was produced. */
  readonly tsSec: number;
  readonly tsNsec: number;
}

export function isFpdu(r: MpaRecord): r is FpduRecord {
  return r.kind === 'fpdu';
}

/** A finding is about a record when it names the same flow, sender and sequence number. */
function belongs(f: Finding, r: MpaRecord): boolean {
  return f.seq === r.seq && f.flow === r.flow && f.from === r.from;
}

interface Pending {
  f: Finding;
  tsSec: number;
  tsNsec: number;
}

export class EventAssembler {
  private open: { record: MpaRecord; findings: Finding[]; tsSec: number; tsNsec: number } | null = null;
  private pending: Pending[] = [];
  private tsSec = 0;
  private tsNsec = 0;

  constructor(private readonly emit: (g: EventGroup) => void) {}

  /** The timestamp of the packet now being decoded (records and findings take it). */
  time(sec: number, nsec: number): void {
    this.tsSec = sec;
    this.tsNsec = nsec;
  }

  finding(f: Finding): void {
    const o = this.open;
    if (o && belongs(f, o.record)) o.findings.push(f);
    else this.pending.push({ f, tsSec: this.tsSec, tsNsec: this.tsNsec });
  }

  record(r: MpaRecord): void {
    const held = this.pending;
    this.pending = [];
    this.flushOpen();
    const mine: Finding[] = [];
    for (const p of held) {
      if (belongs(p.f, r)) mine.push(p.f);
      else this.emit({ record: null, findings: [p.f], tsSec: p.tsSec, tsNsec: p.tsNsec });
    }
    this.open = { record: r, findings: mine, tsSec: this.tsSec, tsNsec: this.tsNsec };
  }

  /** Emits what is still held (call once, at the end of the capture). */
  end(): void {
    this.flushOpen();
    for (const p of this.pending) this.emit({ record: null, findings: [p.f], tsSec: p.tsSec, tsNsec: p.tsNsec });
    this.pending = [];
  }

  private flushOpen(): void {
    const o = this.open;
    if (!o) return;
    this.open = null;
    this.emit(o);
  }
}
