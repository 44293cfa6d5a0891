/**
 * The view's state and how it follows the model: which pane has the focus, what is selected and
 * scrolled where, the display filter and the PDU list it lets through (evaluated incrementally as
 * data arrives, or by a replay of the file), and the layout. view-panes.ts renders it; view-model.ts
 * changes it on keys, clicks and prompts.
 */
import type { TreeNode } from '../vocabulary/fields.js';
import type { Finding } from '../vocabulary/findings.js';
import type { EventGroup } from '../report/events.js';
import { EventFields } from '../report/fields.js';
import type { CompiledFilter } from '../report/filter/filter.js';
import type { CaptureModel, Decoded, FlowRow } from './capture-model.js';
import { U32List, V_ERROR } from './pdu-index.js';
import type { FlowSort, PaneId, Rect } from './view-types.js';
import { RequestRows, requestRowsShown } from './requests-pane.js';

/** Flow list entry 0: every flow (the PDU list then shows the capture in order). */
export const ALL = -1;

export interface TreeRow {
  depth: number;
  node: TreeNode;
  path: string;
  mpa: boolean;
}

/** Items evaluated against the display filter per pump slice before the time is checked. */
const SLICE = 256;

export abstract class ViewState {
  width = 80;
  height = 24;
  focus: PaneId = 'flows';
  sort: FlowSort = 'first frame';
  errorsOnly = false;
  follow = false;
  /** Findings pane shows the whole capture instead of the selected flow. */
  captureFindings = false;
  ladder = false;
  /** The requests view (slowest first) in place of the findings. */
  requests = false;
  showHelp = false;
  /** First help row shown (the help scrolls when the screen is too short for every key). */
  protected helpTop = 0;
  /** A one-line message in the status bar (written file, hidden PDU...). */
  message: { text: string; tone: 'normal' | 'error' } | null = null;
  /** Notice over everything (unreadable, empty, no MPA); any key but q dismisses a dismissable one. */
  protected noticeDismissed = false;

  // flows
  protected flowOrder: number[] = [];
  protected flowSel = 0;
  protected flowTop = 0;
  /** The flow id selected (ALL for every flow), kept across re-sorts. */
  protected selectedFlow = ALL;

  // PDUs
  protected visible = new U32List();
  /** Next position in the scope to look at (the scope is the flow's items, or every item). */
  private scanPos = 0;
  protected pduSel = 0;
  protected pduTop = 0;
  protected filter: CompiledFilter | null = null;
  filterText = '';
  /** 0 not evaluated, 1 matches, 2 does not (per item, for the active filter). */
  private match = new Uint8Array(0);
  private readonly fields: EventFields;

  // detail
  protected current: { item: number; decoded: Decoded } | null = null;
  protected collapsed = new Set<string>();
  protected treeSel = 0;
  protected treeTop = 0;
  protected bytesTop = 0;

  // findings
  protected findSel = 0;
  protected findTop = 0;

  // requests view
  protected readonly requestRows: RequestRows;
  protected reqSel = 0;
  protected reqTop = 0;

  constructor(readonly model: CaptureModel) {
    this.requestRows = new RequestRows(model.latency);
    this.fields = new EventFields((flow, from) => {
      const fl = flow === null ? undefined : model.flow(flow);
      if (!fl || from === null) return null;
      return from === fl.client ? fl.server : from === fl.server ? fl.client : null;
    });
    this.refreshFlows();
  }

  // ------------------------------------------------------------------------------------------
  // Data arriving
  // ------------------------------------------------------------------------------------------

  /**
   * Takes in what the model gained: new flows, new items for the list (evaluating the filter on
   * them), follow mode. Returns true when anything visible changed. `budgetMs` bounds the work
   * so the UI never stalls on a large capture (Infinity: finish, for tests).
   */
  pump(budgetMs = 20): boolean {
    const before = this.visible.length;
    const flowsBefore = this.flowOrder.length;
    this.refreshFlows();
    const t0 = Date.now();
    const ix = this.model.index;
    if (this.match.length < ix.count) {
      const m = new Uint8Array(Math.max(ix.count, this.match.length * 2, 1024));
      m.set(this.match);
      this.match = m;
    }
    const scopeLen = this.scopeLength();
    let n = 0;
    while (this.scanPos < scopeLen) {
      const i = this.scopeItem(this.scanPos);
      // A replay is evaluating the filter: wait for it rather than rebuild records one by one.
      if (
        this.replayActive &&
        this.filter &&
        this.match[i] === 0 &&
        !(this.errorsOnly && (ix.verdict[i]! & V_ERROR) === 0)
      )
        break;
      this.scanPos++;
      if (this.passes(i)) this.visible.push(i);
      if (++n % SLICE === 0 && Date.now() - t0 > budgetMs) break;
    }
    if (this.follow && this.visible.length > before) this.selectPdu(this.visible.length - 1);
    if (before === 0 && this.visible.length > 0 && this.current === null) this.selectPdu(0);
    return this.visible.length !== before || this.flowOrder.length !== flowsBefore;
  }

  /** Items above which a new filter is evaluated by re-dissecting the file (see CaptureModel.replay). */
  replayMin = 20_000;
  private replayGen = 0;
  private replayActive = false;

  /** True while the list waits for a replay (no point in pumping in a tight loop). */
  waiting(): boolean {
    return this.replayActive;
  }

  private startReplay(): void {
    const gen = ++this.replayGen;
    this.replayActive = true;
    const f = this.filter;
    void this.model
      .replay(
        (i, r, fs) => {
          if (gen !== this.replayGen || i >= this.match.length || this.match[i] !== 0 || !f) return;
          this.match[i] = this.matchesGroup(f, r, fs) ? 1 : 2;
        },
        () => gen !== this.replayGen,
      )
      .finally(() => {
        if (gen === this.replayGen) this.replayActive = false;
      });
  }

  /** Runs pump until every item is looked at (tests; small captures); a replay under way is abandoned. */
  settle(): void {
    this.replayGen++;
    this.replayActive = false;
    while (this.pending()) this.pump(Infinity);
    this.pump(Infinity);
  }

  /** True while items wait to be evaluated against the filter. */
  pending(): boolean {
    return this.scanPos < this.scopeLength();
  }

  private scopeLength(): number {
    if (this.selectedFlow === ALL) return this.model.index.count;
    return this.model.flow(this.selectedFlow)?.items.length ?? 0;
  }

  private scopeItem(pos: number): number {
    if (this.selectedFlow === ALL) return pos;
    return this.model.flow(this.selectedFlow)!.items.get(pos);
  }

  private passes(i: number): boolean {
    const ix = this.model.index;
    if (this.errorsOnly && (ix.verdict[i]! & V_ERROR) === 0) return false;
    if (!this.filter) return true;
    let m = this.match[i]!;
    if (m === 0) {
      m = this.evaluate(i) ? 1 : 2;
      this.match[i] = m;
    }
    return m === 1;
  }

  /** A record matches when it or any finding raised on it does (as a Wireshark packet on its expert infos). */
  private evaluate(i: number): boolean {
    return this.matchesGroup(this.filter!, this.model.record(i), this.model.findingsOf(i));
  }

  private matchesGroup(f: CompiledFilter, rec: EventGroup['record'], findings: Finding[]): boolean {
    const g: EventGroup = { record: rec, findings, tsSec: 0, tsNsec: 0 };
    const got = this.fields.group(g);
    if (got.record && f.matches(got.record)) return true;
    return got.findings.some((x) => f.matches(x));
  }

  /** Scope, filter or errors-only changed: the list is rebuilt (incrementally, by pump). */
  protected rescan(keepItem: number | null): void {
    this.visible = new U32List();
    this.scanPos = 0;
    this.pump(50);
    const at = keepItem !== null ? this.positionOf(keepItem) : -1;
    this.pduSel = 0;
    this.pduTop = 0;
    if (at >= 0) this.selectPdu(at);
    else if (this.visible.length) this.selectPdu(0);
    else this.current = null;
  }

  /** A new display filter (null: none): every item is evaluated afresh, by a replay of the file when it is big. */
  protected setFilter(compiled: CompiledFilter | null, text: string): void {
    this.filter = compiled;
    this.filterText = compiled ? text : '';
    this.match = new Uint8Array(this.model.index.count);
    this.replayGen++;
    this.replayActive = false;
    if (
      this.filter &&
      this.model.state === 'done' &&
      this.model.source.randomAccess &&
      this.model.index.count > this.replayMin
    )
      this.startReplay();
    this.rescan(this.current?.item ?? null);
  }

  protected positionOf(item: number): number {
    // Items are in capture order in every scope: binary search.
    let lo = 0;
    let hi = this.visible.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = this.visible.get(mid);
      if (v === item) return mid;
      if (v < item) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  protected refreshFlows(): void {
    const flows = this.model.flows;
    const order = flows.map((_, k) => k);
    const key = (f: FlowRow): number =>
      this.sort === 'errors'
        ? -(f.errors * 1e6 + f.warnings)
        : this.sort === 'bytes'
          ? -(f.bytes[0] + f.bytes[1])
          : f.firstFrame;
    order.sort((a, b) => key(flows[a]!) - key(flows[b]!) || flows[a]!.id - flows[b]!.id);
    this.flowOrder = order.map((k) => flows[k]!.id);
    // One flow: select it (its PDUs are the capture's); several: start on "all flows".
    const ids = [ALL, ...this.flowOrder];
    const at = ids.indexOf(this.selectedFlow);
    this.flowSel = at >= 0 ? at : 0;
  }

  // ------------------------------------------------------------------------------------------
  // Layout
  // ------------------------------------------------------------------------------------------

  resize(width: number, height: number): void {
    this.width = Math.max(20, width);
    this.height = Math.max(8, height);
    this.clampAll();
  }

  layout(): Record<PaneId, Rect> {
    const W = this.width;
    const H = this.height - 1; // the status bar
    const flowsH = Math.max(4, Math.min(Math.round(H * 0.2), this.flowOrder.length + 4));
    const rest = H - flowsH;
    const midH = Math.max(3, Math.floor(rest * 0.45));
    const botH = Math.max(3, rest - midH);
    // The ladder needs room for its arrows: it takes more of the row than the findings list.
    const pduW = Math.round(W * (this.ladder ? 0.45 : this.requests ? 0.4 : 0.64));
    const bytesW = W >= 150 ? 80 : Math.max(24, Math.min(52, Math.round(W * 0.45)));
    return {
      flows: { left: 0, top: 0, width: W, height: flowsH },
      pdus: { left: 0, top: flowsH, width: pduW, height: midH },
      findings: { left: pduW, top: flowsH, width: W - pduW, height: midH },
      tree: { left: 0, top: flowsH + midH, width: W - bytesW, height: botH },
      bytes: { left: W - bytesW, top: flowsH + midH, width: bytesW, height: botH },
    };
  }

  protected inner(p: PaneId): { w: number; h: number } {
    const r = this.layout()[p];
    return { w: Math.max(1, r.width - 2), h: Math.max(1, r.height - 2) };
  }

  // ------------------------------------------------------------------------------------------
  // Selections
  // ------------------------------------------------------------------------------------------

  protected selectFlowRow(k: number): void {
    const ids = [ALL, ...this.flowOrder];
    k = Math.max(0, Math.min(ids.length - 1, k));
    this.flowSel = k;
    const id = ids[k]!;
    if (id !== this.selectedFlow) {
      this.selectedFlow = id;
      this.findSel = 0;
      this.findTop = 0;
      this.rescan(this.current?.item ?? null);
    }
    this.flowTop = scrollTo(this.flowTop, k, this.inner('flows').h - 1);
  }

  protected selectPdu(k: number): void {
    if (this.visible.length === 0) {
      this.current = null;
      return;
    }
    k = Math.max(0, Math.min(this.visible.length - 1, k));
    this.pduSel = k;
    this.pduTop = scrollTo(this.pduTop, k, this.inner('pdus').h - 1);
    const item = this.visible.get(k);
    if (this.current?.item !== item) {
      this.current = { item, decoded: this.model.decode(item) };
      this.treeSel = 0;
      this.treeTop = 0;
      this.bytesTop = 0;
    }
  }

  /** The item selected in the PDU list, or null. */
  selectedItem(): number | null {
    return this.current?.item ?? null;
  }

  visibleCount(): number {
    return this.visible.length;
  }

  visibleItems(): number[] {
    return Array.from(this.visible.data.subarray(0, this.visible.length));
  }

  selectedFlowId(): number | null {
    return this.selectedFlow === ALL ? null : this.selectedFlow;
  }

  protected treeRows(): TreeRow[] {
    const out: TreeRow[] = [];
    const d = this.current?.decoded;
    if (!d) return out;
    const walk = (nodes: readonly TreeNode[], depth: number, prefix: string, mpa: boolean): void => {
      nodes.forEach((n, k) => {
        const path = `${prefix}/${k}`;
        const isMpa = depth === 0 ? n.field.abbrev.startsWith('iwarp_mpa') : mpa;
        out.push({ depth, node: n, path, mpa: isMpa });
        if (n.children && !this.collapsed.has(path)) walk(n.children, depth + 1, path, isMpa);
      });
    };
    walk(d.tree, 0, '', true);
    return out;
  }

  protected findingList(): number[] {
    const m = this.model;
    const out: number[] = [];
    const flow = this.selectedFlow;
    for (let k = 0; k < m.findings.length; k++) {
      if (this.captureFindings || flow === ALL || m.findings[k]!.flow === flow) out.push(k);
    }
    return out;
  }

  protected clampAll(): void {
    this.flowTop = scrollTo(this.flowTop, this.flowSel, this.inner('flows').h - 1);
    this.pduTop = scrollTo(this.pduTop, this.pduSel, this.inner('pdus').h - 1);
    this.treeTop = scrollTo(this.treeTop, this.treeSel, this.inner('tree').h);
    this.findTop = scrollTo(this.findTop, this.findSel, this.inner('findings').h);
    this.reqTop = scrollTo(this.reqTop, this.reqSel, requestRowsShown(this.inner('findings').h));
  }
}

/** Keeps `sel` inside a window of `rows` rows starting at `top`. */
export function scrollTo(top: number, sel: number, rows: number): number {
  rows = Math.max(1, rows);
  if (sel < top) return Math.max(0, sel);
  if (sel >= top + rows) return sel - rows + 1;
  return Math.max(0, top);
}
