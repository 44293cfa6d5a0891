/**
 * What every step of a flow's DDP/RDMAP analysis shares: the flow's identity, MPA context and
 * options, its two directions' state, and how a finding is reported (on the segment's record and to
 * the sink, under the per-rule cap). DdpFlowAnalyzer (analyzer.ts) extends it; the steps in the
 * other files take it as their first argument, so a segment passes through them without a closure
 * or an object of its own, and a flow is still one object.
 */

import type { FindingSink } from '../../src/vocabulary/findings.js';
import type { HeldQuery } from '../mpa/mpa-types.js';
import type { MpaContext, Ulpdu } from '../mpa/ulpdu.js';
import { DirState } from './direction-state.js';
import type { DdpAnalyzerOptions, DdpSegmentRecord, Dir } from './types.js';

export const other = (d: Dir): Dir => (d === 0 ? 1 : 0);

export function framesText(f: readonly number[]): string {
  return f.length === 0 ? 'no frames' : f.length === 1 ? `frame ${f[0]}` : `frames ${f.join(',')}`;
}

/**
 * The flow-wide state and finding plumbing. Its members are for the analyzer's own files
 * (dissectors/ddp-rdmap); code outside uses DdpFlowAnalyzer's methods.
 */
export class FlowCore {
  /** Each direction's state, created with its first event (a direction that carries no DDP keeps none). */
  private dir0: DirState | null = null;
  private dir1: DirState | null = null;
  /** Connection-wide DDP/RDMAP version once established (RFC 5044 App. C: same in both directions). */
  connVersion: { v: number; seq: number; frames: readonly number[] } | null = null;
  // Limits are read from the options shared by every flow (four fields less per flow).
  get maxOpen(): number {
    return Math.max(1, this.opts.maxOpenMessages ?? 64);
  }
  private get historySize(): number {
    return Math.max(1, this.opts.historySize ?? 64);
  }
  get maxReads(): number {
    return Math.max(1, this.opts.maxOutstandingReads ?? 4096);
  }
  get maxPerRule(): number {
    return Math.max(1, this.opts.maxFindingsPerRule ?? 100);
  }

  constructor(
    readonly flowId: number,
    readonly ctx: MpaContext,
    readonly sink: FindingSink,
    readonly opts: DdpAnalyzerOptions = {},
  ) {}

  /** MPA's answer to "what does a direction hold back" (mpa-types.ts HeldQuery), once attached. */
  held: HeldQuery | null = null;

  attachHeld(q: HeldQuery): void {
    this.held = q;
  }

  dir(d: Dir): DirState {
    if (d === 0) return (this.dir0 ??= new DirState(this.historySize));
    return (this.dir1 ??= new DirState(this.historySize));
  }

  lossExplained(
    u: Ulpdu,
    st: DirState,
    rec: DdpSegmentRecord,
    text: string,
    kind: DirState['lastLossKind'] = st.lastLossKind,
  ): void {
    st.lossExplained++;
    // A segment the analyzer itself left out (its CRC failed) is no capture loss: say which it is.
    if (kind === 'crc')
      this.emit(
        'ddp.after-crc-discard',
        u,
        rec,
        `${text}; explained by ${st.lastLoss ?? 'a segment left out for its CRC'}`,
      );
    else
      this.emit(
        'ddp.capture-loss',
        u,
        rec,
        `${text}; plausibly explained by ${st.lastLoss ?? 'data missing from the capture'}`,
      );
  }

  /** A finding on the segment being analysed: on its record (the -V tree shows it) and to the sink. */
  emit(rule: string, u: Ulpdu, rec: DdpSegmentRecord, message: string): void {
    rec.findings.push({ rule, message });
    this.report(rule, u.dir, u.from, u.frames, u.seq, message);
  }

  /** A finding to the sink only, counted against the per-rule cap of direction `dir`. */
  report(rule: string, dir: Dir, from: string, frames: readonly number[], seq: number | null, message: string): void {
    const st = this.dir(dir);
    const n = (st.reported.get(rule) ?? 0) + 1;
    st.reported.set(rule, n);
    if (n > this.maxPerRule) return;
    this.sink.report(rule, {
      flow: this.flowId,
      from: from || null,
      frames: [...frames].sort((a, b) => a - b),
      seq,
      message,
    });
  }

  /** Direction `st` ended: say how many findings of each rule were held back by the per-rule cap. */
  reportHeldBack(st: DirState): void {
    const reported = st.reportedSoFar;
    if (reported)
      for (const [rule, n] of reported) {
        if (n > this.maxPerRule) {
          this.sink.report(rule, {
            flow: this.flowId,
            from: st.from || null,
            frames: [],
            seq: null,
            message: `${n - this.maxPerRule} further ${rule} findings in this direction were not reported individually`,
          });
        }
      }
    reported?.clear();
  }
}
