/**
 * What a worker hands back: the record-source callbacks of the pipeline (AnalysisOptions: onFlow,
 * onStartup, onFpdu, onTuf, findings) recorded in the order they happened, each tagged with the segment
 * (slot) or, at the end of the capture, the flow that produced it. The main thread replays them
 * into the same callbacks at that slot's place in capture order.
 *
 * Flattened into one array per batch, [tag, kind, payload, tag, kind, payload, ...], so a batch is
 * one structured clone however many events it carries.
 */
import type { FindingInput, FindingSink } from '../../vocabulary/findings.js';
import type { FlowHandle } from '../../tcp/stream.js';
import type { AnalysisOptions } from '../pipeline-types.js';
import type { StartupRecord } from '../../../dissectors/mpa/startup.js';
import type { FpduRecord } from '../../../dissectors/mpa/mpa-types.js';
import type { TufRecord } from '../../../dissectors/tuf/types.js';

const FLOW = 0;
const FINDING = 1;
const STARTUP = 2;
const FPDU = 3;
const TUF = 4;

/** A flow as announced: its id and endpoints, and each direction's facts as at its first segment. */
interface FlowAnnounce {
  id: number;
  client: string;
  server: string;
  info: [ReturnType<FlowHandle['info']>, ReturnType<FlowHandle['info']>];
}

/** Records events in a worker. Also the FindingSink of the worker's dissectors. */
export class EventRecorder implements FindingSink {
  events: unknown[] = [];
  /** The slot (or flow, at the end) events are being produced for. */
  tag = 0;
  /** Records handed out while the current tag was in force: copied when it ends (see endTag). */
  private readonly fresh: Array<{ at: number; rec: object }> = [];

  flow(h: FlowHandle): void {
    const a: FlowAnnounce = { id: h.id, client: h.client, server: h.server, info: [h.info(0), h.info(1)] };
    this.events.push(this.tag, FLOW, a);
  }

  report(rule: string, f: FindingInput): void {
    // The frames are copied now, as FindingCollector.report does: the caller may reuse its array.
    this.events.push(this.tag, FINDING, [rule, f.flow, f.from, [...f.frames], f.seq, f.message]);
  }

  startup(r: StartupRecord): void {
    this.fresh.push({ at: this.events.length + 2, rec: r });
    this.events.push(this.tag, STARTUP, r);
  }

  fpdu(r: FpduRecord): void {
    this.fresh.push({ at: this.events.length + 2, rec: r });
    this.events.push(this.tag, FPDU, r);
  }

  tuf(r: TufRecord): void {
    this.fresh.push({ at: this.events.length + 2, rec: r });
    this.events.push(this.tag, TUF, r);
  }

  /**
   * The segment is done. One thread's outputs read a record when the next packet starts; a
   * dissector may still mark a record it handed out (MpaFlow marks the last FPDU when a sender
   * mistake is diagnosed) while later segments of the batch are dissected, so each record is
   * copied as it stands now.
   */
  endTag(): void {
    for (const { at, rec } of this.fresh) this.events[at] = { ...rec };
    this.fresh.length = 0;
  }

  take(): unknown[] {
    const e = this.events;
    this.events = [];
    return e;
  }
}

/** The callbacks events are replayed into, on the main thread. */
export interface EventTarget {
  report(rule: string, f: FindingInput): void;
  opts: AnalysisOptions;
}

/** A worker's received events, consumed in order. */
export class EventQueue {
  private batches: unknown[][] = [];
  private i = 0;

  push(events: unknown[]): void {
    if (events.length) this.batches.push(events);
  }

  /** The tag of the next event, or null when none is queued. */
  nextTag(): number | null {
    const b = this.batches[0];
    return b ? (b[this.i] as number) : null;
  }

  /** Replays every queued event tagged `tag` at the head of the queue. */
  replay(tag: number, to: EventTarget): void {
    for (;;) {
      const b = this.batches[0];
      if (!b || b[this.i] !== tag) return;
      replayOne(b[this.i + 1] as number, b[this.i + 2], to);
      this.i += 3;
      if (this.i >= b.length) {
        this.batches.shift();
        this.i = 0;
      }
    }
  }
}

function replayOne(kind: number, p: unknown, to: EventTarget): void {
  switch (kind) {
    case FLOW: {
      const a = p as FlowAnnounce;
      to.opts.onFlow?.({ id: a.id, client: a.client, server: a.server, info: (dir) => a.info[dir] });
      return;
    }
    case FINDING: {
      const [rule, flow, from, frames, seq, message] = p as [
        string,
        number | null,
        string | null,
        number[],
        number | null,
        string,
      ];
      to.report(rule, { flow, from, frames, seq, message });
      return;
    }
    case STARTUP:
      to.opts.onStartup?.(p as StartupRecord);
      return;
    case FPDU:
      to.opts.onFpdu?.(p as FpduRecord);
      return;
    case TUF:
      to.opts.onTuf?.(p as TufRecord);
      return;
  }
}
