import type { Finding, FindingInput, FindingSink } from '../../src/vocabulary/findings.js';
import type { MpaContext } from '../../dissectors/mpa/ulpdu.js';
import { DDP_RULES } from '../../dissectors/ddp-rdmap/rules.js';
import { DdpFlowAnalyzer } from '../../dissectors/ddp-rdmap/analyzer.js';
import type { DdpAnalyzerOptions, DdpMessage } from '../../dissectors/ddp-rdmap/types.js';
import { mpaContext } from '../helpers/ddp-encoder.js';

const RULES = new Map(DDP_RULES.map((r) => [r.id, r]));

/** Collects findings like the real sink (severity and code from the catalog); unknown ids throw. */
export class CollectSink implements FindingSink {
  readonly findings: Finding[] = [];
  report(ruleId: string, f: FindingInput): void {
    const r = RULES.get(ruleId);
    if (!r) throw new Error(`unknown rule ${ruleId}`);
    this.findings.push({
      rule: ruleId,
      severity: r.severity,
      rfcErrorCode: r.rfcErrorCode,
      flow: f.flow,
      from: f.from,
      frames: [...f.frames],
      seq: f.seq,
      message: f.message,
    });
  }
  rules(): string[] {
    return this.findings.map((f) => f.rule);
  }
  of(rule: string): Finding[] {
    return this.findings.filter((f) => f.rule === rule);
  }
  /** Findings other than the informational Terminate reports. */
  problems(): Finding[] {
    return this.findings.filter((f) => f.rule !== 'rdmap.terminate');
  }
}

export function setup(ctx: Partial<MpaContext> = {}, opts: DdpAnalyzerOptions = {}) {
  const sink = new CollectSink();
  const done: DdpMessage[] = [];
  const a = new DdpFlowAnalyzer(1, mpaContext(ctx), sink, {
    ...opts,
    onMessage: (m) => {
      done.push(m);
      opts.onMessage?.(m);
    },
  });
  return { a, sink, done };
}
