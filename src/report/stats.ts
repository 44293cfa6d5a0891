/**
 * --stats (-z): tables in the spirit of tshark's -z, from the run's totals. Only fpdu-sizes needs
 * anything per FPDU (one counter bump), and only when asked for.
 */
import type { AnalysisResult } from '../analysis/pipeline.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import { SEVERITY_RANK } from '../vocabulary/findings.js';
import { RULES } from '../analysis/rules-catalog.js';
import { plural, streamNumber, table } from './text.js';
import { compareRuleIds } from './rule-order.js';

export const STAT_NAMES = ['conv', 'fpdu-sizes', 'alignment', 'opcodes', 'rules'] as const;
export type StatName = (typeof STAT_NAMES)[number];

/** Buckets of ULPDU_Length as tshark's plen tree draws them, continued up to MPA's 65535. */
const BUCKETS: ReadonlyArray<readonly [number, number]> = [
  [0, 19],
  [20, 39],
  [40, 79],
  [80, 159],
  [160, 319],
  [320, 639],
  [640, 1279],
  [1280, 2559],
  [2560, 5119],
  [5120, 10239],
  [10240, 20479],
  [20480, 40959],
  [40960, 65535],
];
const BAR = 40;

/** ULPDU_Length histogram, per direction of every MPA flow together. */
export class FpduSizes {
  readonly counts = [new Array<number>(BUCKETS.length).fill(0), new Array<number>(BUCKETS.length).fill(0)] as const;
  n = 0;
  min = Infinity;
  max = -Infinity;
  sum = 0;

  add(f: FpduRecord): void {
    const len = f.ulpduLength;
    let i = 0;
    while (i < BUCKETS.length - 1 && len > BUCKETS[i]![1]) i++;
    this.counts[f.dir][i]!++;
    this.n++;
    this.sum += len;
    if (len < this.min) this.min = len;
    if (len > this.max) this.max = len;
  }

  text(): string {
    const out = [
      `FPDU sizes (ULPDU_Length), ${plural(this.n, 'FPDU')}${this.n ? `: min ${this.min}, max ${this.max}, mean ${(this.sum / this.n).toFixed(1)}` : ''}`,
    ];
    if (this.n === 0) return out.join('\n');
    const total = BUCKETS.map((_, i) => this.counts[0][i]! + this.counts[1][i]!);
    let last = total.length - 1;
    while (last > 0 && total[last] === 0) last--;
    const peak = Math.max(...total);
    const rows: string[][] = [['ULPDU_Length', 'c→s', 's→c', 'Total', 'Percent', '']];
    for (let i = 0; i <= last; i++) {
      const [lo, hi] = BUCKETS[i]!;
      const t = total[i]!;
      rows.push([
        i === BUCKETS.length - 1 ? `${lo} and greater` : `${lo}-${hi}`,
        String(this.counts[0][i]),
        String(this.counts[1][i]),
        String(t),
        `${((100 * t) / this.n).toFixed(1)}%`,
        '#'.repeat(t === 0 ? 0 : Math.max(1, Math.round((BAR * t) / peak))),
      ]);
    }
    out.push(table(rows, [false, true, true, true, true, false]));
    return out.join('\n');
  }
}

function pct(a: number, b: number): string {
  return b === 0 ? '-' : `${((100 * a) / b).toFixed(1)}%`;
}

function conv(r: AnalysisResult): string {
  const rows: string[][] = [
    [
      'Stream',
      'Address A',
      'Address B',
      'Segs A→B',
      'Bytes A→B',
      'Segs B→A',
      'Bytes B→A',
      'Retrans',
      'Gaps',
      'Frames',
      'FPDUs A→B',
      'FPDUs B→A',
    ],
  ];
  for (const f of r.flows) {
    const [a, b] = f.tcp.directions;
    rows.push([
      String(streamNumber(f.tcp.id)),
      f.tcp.client,
      f.tcp.server,
      String(a.segments),
      String(a.bytes),
      String(b.segments),
      String(b.bytes),
      String(a.retransmissions + b.retransmissions),
      String(a.gaps.length + b.gaps.length),
      `${f.tcp.firstFrame}-${f.tcp.lastFrame}`,
      f.mpa ? String(f.mpa.directions[0].fpdus) : '-',
      f.mpa ? String(f.mpa.directions[1].fpdus) : '-',
    ]);
  }
  return `TCP conversations (A = client)\n${table(rows, [true, false, false, true, true, true, true, true, true, false, true, true])}`;
}

function alignment(r: AnalysisResult): string {
  const rows: string[][] = [
    [
      'Stream',
      'From → To',
      'Markers',
      'FPDUs',
      'Whole segs',
      'FPDU-aligned',
      'Header-aligned',
      'Spanning FPDUs',
      'Markers seen',
    ],
  ];
  for (const f of r.flows) {
    if (!f.mpa) continue;
    for (const d of f.mpa.directions) {
      const a = d.alignment;
      rows.push([
        String(streamNumber(f.tcp.id)),
        `${d.from} → ${d.to}`,
        d.markers === null ? '?' : d.markers ? 'on' : 'off',
        String(d.fpdus),
        String(a.segments),
        `${a.fpduAligned} (${pct(a.fpduAligned, a.segments)})`,
        `${a.headerAligned} (${pct(a.headerAligned, a.segments)})`,
        String(a.spanning),
        String(d.markerCount),
      ]);
    }
  }
  const note =
    'FPDU-aligned: whole segments that begin with an FPDU; header-aligned: that also hold a whole number of FPDUs.';
  return rows.length === 1
    ? 'FPDU alignment: no MPA flows'
    : `FPDU alignment per direction\n${table(rows, [true, false, false, true, true, true, true, true, true])}\n${note}`;
}

/** Opcode keys of report-schema DdpDirection.byOpcode, in RDMAP opcode order. */
const OPCODES = [
  'write',
  'read-request',
  'read-response',
  'send',
  'send-invalidate',
  'send-se',
  'send-se-invalidate',
  'terminate',
  'immediate-data',
  'immediate-data-se',
  'atomic-request',
  'atomic-response',
  'unknown',
] as const;

function byOpcodeOf(x: unknown): Partial<Record<string, number>> | null {
  if (typeof x !== 'object' || x === null || !('byOpcode' in x)) return null;
  const b = (x as { byOpcode: unknown }).byOpcode;
  return typeof b === 'object' && b !== null ? (b as Partial<Record<string, number>>) : null;
}

function opcodes(r: AnalysisResult): string {
  const cols: Array<{ label: string; counts: Partial<Record<string, number>> }> = [];
  for (const f of r.flows) {
    if (!f.mpa || !f.upper) continue;
    for (const i of [0, 1] as const) {
      const b = byOpcodeOf(f.upper[i]);
      if (b) cols.push({ label: `${streamNumber(f.tcp.id)} ${i === 0 ? 'c→s' : 's→c'}`, counts: b });
    }
  }
  if (cols.length === 0) return 'RDMAP opcodes: no DDP segments';
  const rows: string[][] = [['Opcode', ...cols.map((c) => `Stream ${c.label}`), 'Total']];
  for (const op of OPCODES) {
    const vals = cols.map((c) => c.counts[op] ?? 0);
    const total = vals.reduce((a, b) => a + b, 0);
    if (total === 0) continue;
    rows.push([op, ...vals.map(String), String(total)]);
  }
  if (rows.length === 1) rows.push(['(none)', ...cols.map(() => '0'), '0']);
  return `RDMAP opcodes (DDP segments)\n${table(rows, [false, ...cols.map(() => true), true])}\n\n${messageSizes(r)}`;
}

type SizeStats = { messages: number; min: number; max: number; total: number };

function sizesOf(x: unknown): Partial<Record<string, SizeStats>> | null {
  if (typeof x !== 'object' || x === null || !('sizes' in x)) return null;
  const s = (x as { sizes: unknown }).sizes;
  return typeof s === 'object' && s !== null ? (s as Partial<Record<string, SizeStats>>) : null;
}

/** Complete RDMA messages per flow direction and opcode, with their DDP payload sizes. */
function messageSizes(r: AnalysisResult): string {
  const rows: string[][] = [['Stream', 'Dir', 'Opcode', 'Messages', 'Min', 'Max', 'Mean', 'Total octets']];
  for (const f of r.flows) {
    if (!f.mpa || !f.upper) continue;
    for (const i of [0, 1] as const) {
      const sz = sizesOf(f.upper[i]);
      if (!sz) continue;
      for (const op of OPCODES) {
        const st = sz[op];
        if (!st || st.messages === 0) continue;
        rows.push([
          String(streamNumber(f.tcp.id)),
          i === 0 ? 'c→s' : 's→c',
          op,
          String(st.messages),
          String(st.min),
          String(st.max),
          (st.total / st.messages).toFixed(1),
          String(st.total),
        ]);
      }
    }
  }
  if (rows.length === 1) return 'RDMA messages: none complete';
  return `RDMA messages (complete, DDP payload octets)\n${table(rows, [true, false, false, true, true, true, true, true])}`;
}

function rules(r: AnalysisResult): string {
  const first = new Map<string, number>();
  const flows = new Map<string, Set<number>>();
  for (const f of r.findings.findings) {
    const fr = f.frames[0];
    if (fr !== undefined && (first.get(f.rule) ?? Infinity) > fr) first.set(f.rule, fr);
    if (f.flow !== null) {
      let s = flows.get(f.rule);
      if (!s) flows.set(f.rule, (s = new Set()));
      s.add(f.flow);
    }
  }
  const rows: string[][] = [['Rule', 'Severity', 'Code', 'Count', 'Streams', 'First frame', 'Meaning']];
  const rank = (id: string): number => {
    const rule = RULES.get(id);
    return rule ? SEVERITY_RANK[r.findings.severityOf(rule)] : 0;
  };
  const entries = [...r.findings.byRule.entries()].sort(
    (a, b) => rank(b[0]) - rank(a[0]) || b[1] - a[1] || compareRuleIds(a[0], b[0]),
  );
  for (const [id, n] of entries) {
    const rule = RULES.get(id);
    const sev = rule ? r.findings.severityOf(rule) : '?';
    rows.push([
      id,
      sev,
      rule?.rfcErrorCode == null ? '-' : String(rule.rfcErrorCode),
      String(n),
      String(flows.get(id)?.size ?? 0),
      String(first.get(id) ?? '-'),
      rule?.summary ?? '',
    ]);
  }
  if (entries.length === 0) return 'Findings by rule\n  none';
  return `Findings by rule\n${table(rows, [false, false, true, true, true, true, false])}`;
}

export function statsText(name: StatName, r: AnalysisResult, sizes: FpduSizes | null): string {
  switch (name) {
    case 'conv':
      return conv(r);
    case 'fpdu-sizes':
      return (sizes ?? new FpduSizes()).text();
    case 'alignment':
      return alignment(r);
    case 'opcodes':
      return opcodes(r);
    case 'rules':
      return rules(r);
  }
}
