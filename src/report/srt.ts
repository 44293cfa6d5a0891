/**
 * Service response time statistics of the upper layers, as tshark's `-z smb2,srt` and
 * `-z rpc,srt,PROGRAM,VERSION` print them (ui/cli/tap-srt.c: Index, Commands or Procedure, Calls,
 * Min/Max/Avg/Sum SRT in seconds), with the percentiles tshark lacks, and the same figures for
 * the JSON report. Exact: every response time is kept (8 octets each) up to `SAMPLE_CAP` per
 * command; past it a deterministic reservoir keeps the percentiles representative and says so.
 */
import type { RequestTiming } from '../../dissectors/ddp-rdmap/ulp-contract.js';
import type { ServiceResponseTime } from '../analysis/pipeline-types.js';
import { programLabel } from '../../dissectors/rpc-rdma/rpc.js';

/** Response times kept per command for exact percentiles. */
const SAMPLE_CAP = 1 << 20;

export type SrtRow = ServiceResponseTime;

class CommandStats {
  calls = 0;
  min = Number.POSITIVE_INFINITY;
  max = 0;
  sum = 0;
  samples = new Float64Array(64);
  kept = 0;
  withData = 0;
  toFirst = 0;
  toLast = 0;
  private rng = 0x9e3779b9;

  add(t: RequestTiming): void {
    const d = t.response - t.request;
    if (!Number.isFinite(d)) return;
    this.calls++;
    if (d < this.min) this.min = d;
    if (d > this.max) this.max = d;
    this.sum += d;
    if (Number.isFinite(t.firstData)) {
      this.withData++;
      this.toFirst += t.firstData - t.request;
      this.toLast += t.lastData - t.request;
    }
    if (this.kept < SAMPLE_CAP) {
      if (this.kept === this.samples.length) {
        const s = new Float64Array(Math.min(SAMPLE_CAP, this.samples.length * 2));
        s.set(this.samples);
        this.samples = s;
      }
      this.samples[this.kept++] = d;
    } else {
      // Reservoir sampling (Algorithm R) with a fixed-seed xorshift: the same capture, the same figures.
      this.rng ^= this.rng << 13;
      this.rng ^= this.rng >>> 17;
      this.rng ^= this.rng << 5;
      const j = (this.rng >>> 0) % this.calls;
      if (j < SAMPLE_CAP) this.samples[j] = d;
    }
  }

  constructor(readonly code: number) {}

  row(program: string, command: string): SrtRow {
    const s = this.samples.subarray(0, this.kept).slice().sort();
    // Nearest-rank percentile: the smallest time with at least p of the calls at or below it.
    const pct = (p: number): number => (s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!);
    return {
      program,
      command,
      code: this.code,
      calls: this.calls,
      min: this.calls === 0 ? 0 : this.min,
      max: this.max,
      avg: this.calls === 0 ? 0 : this.sum / this.calls,
      sum: this.sum,
      p50: pct(0.5),
      p99: pct(0.99),
      p999: pct(0.999),
      sampled: this.calls > this.kept,
      withData: this.withData,
      avgToFirstData: this.withData === 0 ? 0 : this.toFirst / this.withData,
      avgToLastData: this.withData === 0 ? 0 : this.toLast / this.withData,
    };
  }
}

/** Collects the timings of every answered request, grouped by program and command. */
export class SrtCollector {
  private readonly byProgram = new Map<string, Map<string, CommandStats>>();

  readonly add = (t: RequestTiming): void => {
    let p = this.byProgram.get(t.program);
    if (!p) this.byProgram.set(t.program, (p = new Map()));
    let c = p.get(t.command);
    if (!c) p.set(t.command, (c = new CommandStats(t.code ?? 0)));
    c.add(t);
  };

  /** Rows of one program (or of programs whose name starts with it: "NFS" covers NFSv3 and NFSv4), in first-seen order. */
  rows(program?: string): SrtRow[] {
    const out: SrtRow[] = [];
    for (const [p, cmds] of this.byProgram) {
      if (program !== undefined && p !== program) continue;
      for (const [c, s] of cmds) out.push(s.row(p, c));
    }
    return out;
  }

  programs(): string[] {
    return [...this.byProgram.keys()];
  }
}

const secs = (v: number): string => v.toFixed(6).padStart(10);

/**
 * The table as tshark prints it for `-z smb2,srt` ("SMB2 SRT Statistics", column "Commands") or
 * `-z rpc,srt,100003,3` ("RPC SRT Statistics", column "Procedure"), tap-srt.c's layout, with
 * P50/P99/P99.9 added at the right so tshark's columns stay where scripts expect them.
 */
export function srtTable(title: string, filter: string, column: string, rows: readonly SrtRow[]): string {
  const sorted = [...rows].sort((a, b) => a.code - b.code);
  const lines = [
    '',
    '===================================================================',
    `${title} SRT Statistics:`,
    `Filter: ${filter}`,
    `Index  ${column.padEnd(22)} Calls    Min SRT    Max SRT    Avg SRT    Sum SRT    P50 SRT    P99 SRT  P99.9 SRT`,
  ];
  for (const r of sorted) {
    lines.push(
      `${String(r.code).padStart(5)}  ${r.command.padEnd(22)} ${String(r.calls).padStart(6)} ${secs(r.min)} ${secs(r.max)} ${secs(r.avg)} ${secs(r.sum)} ${secs(r.p50)} ${secs(r.p99)} ${secs(r.p999)}`,
    );
  }
  lines.push('==================================================================');
  return `${lines.join('\n')}\n`;
}

/** The program name a `-z ...,srt` table reports (the RequestTiming `program` it selects). */
/** A `-z ...,srt` request: SMB2, NVMe or SCSI by command, or one RPC program and version by procedure. */
export type SrtQuery =
  | { kind: 'smb2' }
  | { kind: 'nvme' }
  | { kind: 'scsi' }
  | { kind: 'rpc'; program: number; version: number };

export function srtProgram(q: SrtQuery): string {
  if (q.kind === 'rpc') return programLabel(q.program, q.version);
  return q.kind === 'smb2' ? 'SMB2' : q.kind === 'nvme' ? 'NVMe' : 'SCSI';
}

/** One `-z` service response time table: SMB2 by command, or one RPC program and version by procedure. */
export function srtText(q: SrtQuery, c: SrtCollector): string {
  if (q.kind === 'smb2') return srtTable('SMB2', 'smb2.cmd', 'Commands', c.rows('SMB2'));
  // NVMe by command: Index is the opcode, 0x7F00 + FCTYPE for a Fabrics command (all queues together).
  if (q.kind === 'nvme') return srtTable('NVMe', 'nvme.cmd.opc', 'Commands', c.rows('NVMe'));
  // tshark -z scsi,srt,0 (SBC): "SCSI SRT Statistics", filter scsi_sbc.opcode, column Procedure.
  if (q.kind === 'scsi') return srtTable('SCSI', 'scsi_sbc.opcode', 'Procedure', c.rows('SCSI'));
  const label = programLabel(q.program, q.version);
  const filter = q.program === 100003 ? `nfs.procedure_v${q.version}` : `rpc.program == ${q.program}`;
  return srtTable('RPC', filter, 'Procedure', c.rows(label));
}
