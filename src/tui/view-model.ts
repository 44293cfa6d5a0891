/**
 * The terminal UI as plain state: which pane has the focus, what is selected and scrolled where,
 * the display filter, and what every pane shows (styled lines). Keys and mouse clicks come in as
 * names, lines go out; no terminal here, so the whole behaviour is tested without one and the
 * blessed layer (src/tui/blessed-screen.ts) only draws.
 */
import { basename } from 'node:path';
import type { TreeNode } from '../vocabulary/fields.js';
import type { Finding } from '../vocabulary/findings.js';
import { isFpdu, type EventGroup } from '../report/events.js';
import { compileEventFilter, EventFields } from '../report/fields.js';
import { FilterError, formatFilterError, type CompiledFilter } from '../report/filter/filter.js';
import { FrameExport } from '../report/pcap-export.js';
import { nodeText } from '../report/tree-text.js';
import { bytesLines, fieldSpan } from './bytes-pane.js';
import type { CaptureModel, Decoded, FlowRow } from './capture-model.js';
import { KEYS } from './keys.js';
import { ladderLines } from './ladder.js';
import { fit, padLeft, type Line, type Span, type StyleName } from './lines.js';
import {
  KIND_FINDING,
  KIND_FPDU,
  KIND_REPLY,
  KIND_REQUEST,
  U32List,
  V_CRC_BAD,
  V_ERROR,
  V_INFO,
  V_MARKER_BAD,
  V_PAD_NONZERO,
  V_WARNING,
} from './pdu-index.js';

export type PaneId = 'flows' | 'pdus' | 'tree' | 'bytes' | 'findings';
export const PANES: readonly PaneId[] = ['flows', 'pdus', 'findings', 'tree', 'bytes'];

export interface Rect {
  readonly left: number;
  readonly top: number;
  readonly width: number;
  readonly height: number;
}

export interface PaneView {
  readonly id: PaneId;
  readonly title: string;
  readonly rect: Rect;
  /** The lines inside the border, already scrolled and cut to the inner size. */
  readonly lines: Line[];
  /** Row (within `lines`) of the selection, or -1. */
  readonly selected: number;
  readonly focused: boolean;
}

export interface Overlay {
  readonly title: string;
  readonly lines: Line[];
  /** 'error' draws a red border. */
  readonly tone: 'normal' | 'error';
}

export interface Prompt {
  readonly label: string;
  readonly text: string;
  /** Lines under the prompt: the filter error with its caret, or a hint. */
  readonly note: Line[];
}

export type Action = 'none' | 'redraw' | 'quit';

export type FlowSort = 'first frame' | 'errors' | 'bytes';
const SORTS: readonly FlowSort[] = ['first frame', 'errors', 'bytes'];

/** Flow list entry 0: every flow (the PDU list then shows the capture in order). */
const ALL = -1;

interface TreeRow {
  depth: number;
  node: TreeNode;
  path: string;
  mpa: boolean;
}

/** Items evaluated against the display filter per pump slice before the time is checked. */
const SLICE = 256;

export class ViewModel {
  width = 80;
  height = 24;
  focus: PaneId = 'flows';
  sort: FlowSort = 'first frame';
  errorsOnly = false;
  follow = false;
  /** Findings pane shows the whole capture instead of the selected flow. */
  captureFindings = false;
  ladder = false;
  showHelp = false;
  /** A one-line message in the status bar (written file, hidden PDU...). */
  message: { text: string; tone: 'normal' | 'error' } | null = null;
  /** Notice over everything (unreadable, empty, no MPA); any key but q dismisses a dismissable one. */
  private noticeDismissed = false;

  // flows
  private flowOrder: number[] = [];
  private flowSel = 0;
  private flowTop = 0;
  /** The flow id selected (ALL for every flow), kept across re-sorts. */
  private selectedFlow = ALL;

  // PDUs
  private visible = new U32List();
  /** Next position in the scope to look at (the scope is the flow's items, or every item). */
  private scanPos = 0;
  private pduSel = 0;
  private pduTop = 0;
  private filter: CompiledFilter | null = null;
  filterText = '';
  /** 0 not evaluated, 1 matches, 2 does not (per item, for the active filter). */
  private match = new Uint8Array(0);
  private readonly fields: EventFields;

  // detail
  private current: { item: number; decoded: Decoded } | null = null;
  private collapsed = new Set<string>();
  private treeSel = 0;
  private treeTop = 0;
  private bytesTop = 0;

  // findings
  private findSel = 0;
  private findTop = 0;

  // prompt
  private editing: { kind: 'filter' | 'write'; text: string } | null = null;
  private editError: Line[] = [];

  constructor(readonly model: CaptureModel) {
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
  private rescan(keepItem: number | null): void {
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

  private positionOf(item: number): number {
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

  private refreshFlows(): void {
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
    const pduW = Math.round(W * (this.ladder ? 0.45 : 0.64));
    const bytesW = W >= 150 ? 80 : Math.max(24, Math.min(52, Math.round(W * 0.45)));
    return {
      flows: { left: 0, top: 0, width: W, height: flowsH },
      pdus: { left: 0, top: flowsH, width: pduW, height: midH },
      findings: { left: pduW, top: flowsH, width: W - pduW, height: midH },
      tree: { left: 0, top: flowsH + midH, width: W - bytesW, height: botH },
      bytes: { left: W - bytesW, top: flowsH + midH, width: bytesW, height: botH },
    };
  }

  private inner(p: PaneId): { w: number; h: number } {
    const r = this.layout()[p];
    return { w: Math.max(1, r.width - 2), h: Math.max(1, r.height - 2) };
  }

  // ------------------------------------------------------------------------------------------
  // Selections
  // ------------------------------------------------------------------------------------------

  private selectFlowRow(k: number): void {
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

  private selectPdu(k: number): void {
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

  private treeRows(): TreeRow[] {
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

  private findingList(): number[] {
    const m = this.model;
    const out: number[] = [];
    const flow = this.selectedFlow;
    for (let k = 0; k < m.findings.length; k++) {
      if (this.captureFindings || flow === ALL || m.findings[k]!.flow === flow) out.push(k);
    }
    return out;
  }

  private clampAll(): void {
    this.flowTop = scrollTo(this.flowTop, this.flowSel, this.inner('flows').h - 1);
    this.pduTop = scrollTo(this.pduTop, this.pduSel, this.inner('pdus').h - 1);
    this.treeTop = scrollTo(this.treeTop, this.treeSel, this.inner('tree').h);
    this.findTop = scrollTo(this.findTop, this.findSel, this.inner('findings').h);
  }

  // ------------------------------------------------------------------------------------------
  // Keys
  // ------------------------------------------------------------------------------------------

  /** Handles one key: `full` is the key's name (blessed's key.full: "up", "S-tab", "C-c", "enter"), `ch` the character typed. */
  key(full: string, ch?: string): Action {
    if (full === 'C-c') return 'quit';
    if (this.editing) return this.editKey(full, ch);
    if (this.showHelp) {
      this.showHelp = false;
      return full === 'q' ? 'quit' : 'redraw';
    }
    const notice = this.notice();
    if (notice && full !== 'q') {
      if (this.model.state !== 'failed') this.noticeDismissed = true;
      return 'redraw';
    }
    this.message = null;
    const c = ch ?? '';
    switch (true) {
      case full === 'q':
        return 'quit';
      case c === '?':
        this.showHelp = true;
        return 'redraw';
      case full === 'tab':
        this.focus = PANES[(PANES.indexOf(this.focus) + 1) % PANES.length]!;
        return 'redraw';
      case full === 'S-tab':
        this.focus = PANES[(PANES.indexOf(this.focus) + PANES.length - 1) % PANES.length]!;
        return 'redraw';
      case c === '/':
        this.editing = { kind: 'filter', text: this.filterText };
        this.editError = [];
        return 'redraw';
      case c === 'w':
        this.editing = { kind: 'write', text: this.defaultWriteName() };
        this.editError = [];
        return 'redraw';
      case c === 'n':
        this.jumpFinding(1);
        return 'redraw';
      case c === 'N':
        this.jumpFinding(-1);
        return 'redraw';
      case c === 'e':
        this.errorsOnly = !this.errorsOnly;
        this.rescan(this.current?.item ?? null);
        return 'redraw';
      case c === 'f':
        this.follow = !this.follow;
        if (this.follow) this.selectPdu(this.visible.length - 1);
        return 'redraw';
      case c === 's':
        this.sort = SORTS[(SORTS.indexOf(this.sort) + 1) % SORTS.length]!;
        this.refreshFlows();
        this.selectFlowRow(this.flowSel);
        return 'redraw';
      case c === 'c':
        this.captureFindings = !this.captureFindings;
        this.ladder = false;
        this.findSel = 0;
        this.findTop = 0;
        return 'redraw';
      case c === 'l':
        this.ladder = !this.ladder;
        return 'redraw';
    }
    return this.paneKey(full, c);
  }

  private paneKey(full: string, c: string): Action {
    const page = Math.max(1, this.inner(this.focus).h - 2);
    const delta =
      full === 'up' || c === 'k'
        ? -1
        : full === 'down' || c === 'j'
          ? 1
          : full === 'pageup'
            ? -page
            : full === 'pagedown'
              ? page
              : full === 'home' || c === 'g'
                ? -Infinity
                : full === 'end' || c === 'G' || full === 'S-g'
                  ? Infinity
                  : 0;
    const enter = full === 'enter' || full === 'return';
    if (delta !== 0) {
      this.move(this.focus, delta);
      return 'redraw';
    }
    switch (this.focus) {
      case 'flows':
        if (enter) {
          this.focus = 'pdus';
          return 'redraw';
        }
        break;
      case 'pdus':
        if (enter) {
          this.focus = 'tree';
          return 'redraw';
        }
        break;
      case 'tree': {
        const rows = this.treeRows();
        const r = rows[this.treeSel];
        if (!r) break;
        const has = (r.node.children?.length ?? 0) > 0;
        if ((enter || full === 'space' || c === ' ') && has) {
          if (this.collapsed.has(r.path)) this.collapsed.delete(r.path);
          else this.collapsed.add(r.path);
          return 'redraw';
        }
        if (full === 'right' && has) {
          this.collapsed.delete(r.path);
          return 'redraw';
        }
        if (full === 'left') {
          if (has && !this.collapsed.has(r.path)) this.collapsed.add(r.path);
          else {
            const parent = r.path.slice(0, r.path.lastIndexOf('/'));
            const at = rows.findIndex((x) => x.path === parent);
            if (at >= 0) this.treeSel = at;
          }
          this.clampAll();
          return 'redraw';
        }
        break;
      }
      case 'findings':
        if (enter && !this.ladder) {
          this.openFinding();
          return 'redraw';
        }
        break;
      case 'bytes':
        break;
    }
    return 'none';
  }

  /** Moves the focused pane's selection (or scroll, for the bytes pane) by `delta` rows. */
  move(pane: PaneId, delta: number): void {
    const to = (cur: number, n: number): number =>
      delta === -Infinity ? 0 : delta === Infinity ? n - 1 : Math.max(0, Math.min(n - 1, cur + delta));
    switch (pane) {
      case 'flows':
        this.selectFlowRow(to(this.flowSel, this.flowOrder.length + 1));
        break;
      case 'pdus':
        // Moving anywhere but to the end leaves follow mode.
        if (delta !== Infinity) this.follow = false;
        this.selectPdu(to(this.pduSel, this.visible.length));
        break;
      case 'tree':
        this.treeSel = to(this.treeSel, this.treeRows().length);
        this.treeTop = scrollTo(this.treeTop, this.treeSel, this.inner('tree').h);
        break;
      case 'bytes': {
        const n = this.bytesPaneLines().length;
        this.bytesTop = to(this.bytesTop, Math.max(1, n - this.inner('bytes').h + 1));
        break;
      }
      case 'findings':
        if (this.ladder) break;
        this.findSel = to(this.findSel, this.findingList().length);
        this.findTop = scrollTo(this.findTop, this.findSel, this.inner('findings').h);
        break;
    }
  }

  /** A click on row `row` (0-based, inside the border) of a pane: focus it and select the row. */
  click(pane: PaneId, row: number): Action {
    this.focus = pane;
    switch (pane) {
      case 'flows':
        if (row >= 1) this.selectFlowRow(this.flowTop + row - 1);
        break;
      case 'pdus':
        if (row >= 1) this.selectPdu(this.pduTop + row - 1);
        break;
      case 'tree': {
        const n = this.treeRows().length;
        if (this.treeTop + row < n) this.treeSel = this.treeTop + row;
        break;
      }
      case 'findings':
        if (!this.ladder && this.findTop + row < this.findingList().length) this.findSel = this.findTop + row;
        break;
      case 'bytes':
        break;
    }
    return 'redraw';
  }

  /** Mouse wheel: scroll the pane under the pointer. */
  wheel(pane: PaneId, delta: number): Action {
    this.move(pane, delta);
    return 'redraw';
  }

  private jumpFinding(step: 1 | -1): void {
    const ix = this.model.index;
    const has = V_ERROR | V_WARNING | V_INFO;
    for (let k = this.pduSel + step; k >= 0 && k < this.visible.length; k += step) {
      if (ix.verdict[this.visible.get(k)]! & has) {
        this.focus = 'pdus';
        this.selectPdu(k);
        return;
      }
    }
    this.message = {
      text: step > 0 ? 'no further PDU with a finding' : 'no earlier PDU with a finding',
      tone: 'normal',
    };
  }

  private openFinding(): void {
    const list = this.findingList();
    const k = list[this.findSel];
    if (k === undefined) return;
    const item = this.model.findingItem.get(k);
    let at = this.positionOf(item);
    if (at < 0 && this.selectedFlow !== ALL && this.model.index.flow[item] !== this.selectedFlow) {
      this.selectFlowRow([ALL, ...this.flowOrder].indexOf(this.model.index.flow[item]!));
      at = this.positionOf(item);
    }
    if (at < 0) {
      this.message = { text: 'that PDU is hidden by the filter or errors-only; clear them to see it', tone: 'error' };
      return;
    }
    this.focus = 'pdus';
    this.selectPdu(at);
  }

  // ------------------------------------------------------------------------------------------
  // Prompt (filter, write)
  // ------------------------------------------------------------------------------------------

  prompt(): Prompt | null {
    const e = this.editing;
    if (!e) return null;
    const label = e.kind === 'filter' ? 'Display filter: ' : 'Write pcap to: ';
    const note = this.editError.length
      ? this.editError
      : e.kind === 'filter'
        ? [
            [
              { t: 'Enter applies, an empty filter clears, Esc cancels; e.g. iwarp_mpa.crc_status == "bad"', s: 'dim' },
            ] as Line,
          ]
        : [[{ t: this.writeWhat(), s: 'dim' }] as Line];
    return { label, text: e.text, note };
  }

  private editKey(full: string, ch: string | undefined): Action {
    const e = this.editing!;
    if (full === 'escape') {
      this.editing = null;
      this.editError = [];
      return 'redraw';
    }
    if (full === 'enter' || full === 'return') {
      if (e.kind === 'filter') this.applyFilter(e.text);
      else this.writePcap(e.text);
      return 'redraw';
    }
    if (full === 'backspace') e.text = Array.from(e.text).slice(0, -1).join('');
    else if (full === 'C-u') e.text = '';
    else if (ch !== undefined && ch.length > 0 && !/[\u0000-\u001f\u007f]/.test(ch)) e.text += ch;
    else return 'none';
    if (e.kind === 'filter') this.editError = this.checkFilter(e.text).lines;
    return 'redraw';
  }

  private checkFilter(text: string): { compiled: CompiledFilter | null; lines: Line[] } {
    if (text.trim() === '') return { compiled: null, lines: [] };
    try {
      return { compiled: compileEventFilter(text), lines: [] };
    } catch (err) {
      if (!(err instanceof FilterError)) throw err;
      const msg = formatFilterError(text, err).split('\n');
      const lines: Line[] = msg.map((l, k) => [{ t: l, s: k === 0 ? 'error' : k === 2 ? 'error' : undefined } as Span]);
      if (/is neither a field nor a protocol name/.test(err.message))
        lines.push([{ t: '(mpa-dissect fields lists the field names)', s: 'dim' }]);
      return { compiled: null, lines };
    }
  }

  /** Sets the display filter; on a bad filter the prompt stays open with the caret message. Returns true when applied. */
  applyFilter(text: string): boolean {
    const got = this.checkFilter(text);
    if (got.lines.length) {
      this.editing = { kind: 'filter', text };
      this.editError = got.lines;
      return false;
    }
    this.editing = null;
    this.editError = [];
    this.filter = got.compiled;
    this.filterText = got.compiled ? text : '';
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
    return true;
  }

  /** The filter error lines currently shown (the caret message), if any. */
  filterError(): string[] {
    return this.editError.map((l) => l.map((s) => s.t).join(''));
  }

  private defaultWriteName(): string {
    const base = basename(this.model.source.label).replace(/\.(pcapng|pcap|cap)$/i, '') || 'capture';
    if (this.focus === 'flows' && this.selectedFlow !== ALL) return `${base}-stream${this.selectedFlow - 1}.pcap`;
    return `${base}-${this.filter || this.errorsOnly ? 'filtered' : 'pdus'}.pcap`;
  }

  private writeWhat(): string {
    if (this.focus === 'flows' && this.selectedFlow !== ALL)
      return `every frame of the MPA records of tcp.stream ${this.selectedFlow - 1} (Enter writes, Esc cancels)`;
    return `the frames of the ${this.visible.length} PDUs listed, with each flow's Request and Reply (Enter writes, Esc cancels)`;
  }

  /** Writes the selected flow, or the PDUs listed, with the -w writer. */
  writePcap(path: string): boolean {
    this.editing = null;
    this.editError = [];
    if (path.trim() === '') return false;
    const m = this.model;
    const ix = m.index;
    const exp = new FrameExport(m.source.frames, !m.source.randomAccess);
    const items: number[] = [];
    if (this.focus === 'flows' && this.selectedFlow !== ALL) {
      const fl = m.flow(this.selectedFlow)!;
      for (let k = 0; k < fl.items.length; k++) items.push(fl.items.get(k));
    } else items.push(...this.visibleItems());
    for (let k = 0; k < ix.count; k++) {
      if (ix.kind[k] === KIND_REQUEST || ix.kind[k] === KIND_REPLY) exp.noteStartup(ix.flow[k]!, ix.framesOf(k));
    }
    for (const i of items)
      exp.select(ix.kind[i] === KIND_FINDING && ix.flow[i] === 0 ? null : ix.flow[i]!, ix.framesOf(i));
    try {
      const res = exp.write(path);
      const notes = [
        res.missing ? `${res.missing} frames no longer available` : '',
        res.otherLinkType ? `${res.otherLinkType} frames of another link type left out` : '',
      ].filter((x) => x);
      this.message = {
        text: `wrote ${res.written} frames to ${path}${notes.length ? ` (${notes.join('; ')})` : ''}`,
        tone: 'normal',
      };
      return true;
    } catch (err) {
      this.message = {
        text: `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`,
        tone: 'error',
      };
      return false;
    }
  }

  // ------------------------------------------------------------------------------------------
  // What each pane shows
  // ------------------------------------------------------------------------------------------

  panes(): PaneView[] {
    const rects = this.layout();
    return PANES.map((id) => {
      const { w, h } = this.inner(id);
      const c = this.paneContent(id, w, h);
      return {
        id,
        title:
          Array.from(c.title).length > w - 3
            ? Array.from(c.title)
                .slice(0, Math.max(1, w - 4))
                .join('') + '…'
            : c.title,
        rect: rects[id],
        lines: c.lines.map((l) => cut(l, w)),
        selected: c.selected,
        focused: this.focus === id,
      };
    });
  }

  private paneContent(id: PaneId, w: number, h: number): { title: string; lines: Line[]; selected: number } {
    switch (id) {
      case 'flows':
        return this.flowsPane(w, h);
      case 'pdus':
        return this.pduPane(h);
      case 'tree':
        return this.treePane(h);
      case 'bytes': {
        const all = this.bytesPaneLines();
        const top = Math.max(0, Math.min(this.bytesTop, all.length - h));
        return { title: 'Bytes', lines: all.slice(top, top + h), selected: -1 };
      }
      case 'findings':
        return this.ladder ? this.ladderPane(w, h) : this.findingsPane(h);
    }
  }

  private flowsPane(w: number, h: number): { title: string; lines: Line[]; selected: number } {
    const m = this.model;
    const ids = [ALL, ...this.flowOrder];
    // The endpoints column as wide as the widest pair shown (IPv6 pairs are long), within reason.
    let epW = 15;
    for (let k = this.flowTop; k < Math.min(ids.length, this.flowTop + h - 1); k++) {
      const f = ids[k] === ALL ? undefined : m.flow(ids[k]!);
      if (f) epW = Math.max(epW, Array.from(`${f.client} → ${f.server}`).length);
    }
    epW = Math.min(epW, Math.max(30, w - 48));
    // Most telling columns first, so a narrow terminal cuts the least useful ones.
    const head =
      `${padLeft('Stream', 6)} ${fit('Client → Server', epW)} ${fit('MPA', 9)} ${padLeft('Err', 4)} ${padLeft('Warn', 4)} ${padLeft('FPDUs c→s/s→c', 13)} ${padLeft('Bytes', 10)} ` +
      `Rev M   C P2P RTR ${fit('IRD/ORD', 11)} Upper`;
    const lines: Line[] = [[{ t: head, s: 'head' }]];
    for (let k = this.flowTop; k < Math.min(ids.length, this.flowTop + h - 1); k++) {
      const id = ids[k]!;
      if (id === ALL) {
        lines.push([
          {
            t: `${padLeft('*', 6)} all flows (${this.flowOrder.length}), ${m.fpdus} FPDUs, ${m.errors} errors, ${m.warnings} warnings`,
          },
        ]);
        continue;
      }
      const f = m.flow(id)!;
      const q = f.request;
      const p = f.reply;
      const e = q?.enhancedBlock ?? null;
      const ep = p?.enhancedBlock ?? null;
      const yn = (v: boolean | undefined): string => (v === undefined ? '-' : v ? '1' : '0');
      // RTR kinds the Initiator offered (RFC 6581 §5): S send, W write, R read.
      const rtr = e ? `${e.rtr.send ? 'S' : ''}${e.rtr.write ? 'W' : ''}${e.rtr.read ? 'R' : ''}` || '-' : '-';
      const irdOrd = e ? `${e.ird}/${e.ord}${ep ? ` ${ep.ird}/${ep.ord}` : ''}` : '-';
      const line: Line = [
        {
          t: `${padLeft(String(id - 1), 6)} ${fit(`${f.client} → ${f.server}`, epW)} ${fit(f.tuf ? (f.tuf === 'alignment' ? 'TUF align' : 'TUF mark') : (mpaLabel(f) ?? (m.state === 'done' ? 'not MPA' : '…')), 9)} `,
        },
        { t: padLeft(String(f.errors), 4), ...(f.errors ? { s: 'error' as StyleName } : {}) },
        { t: ' ' },
        { t: padLeft(String(f.warnings), 4), ...(f.warnings ? { s: 'warning' as StyleName } : {}) },
        {
          t:
            ` ${padLeft(`${f.fpdus[0]}/${f.fpdus[1]}`, 13)} ${padLeft(String(f.bytes[0] + f.bytes[1]), 10)} ` +
            `${fit(q ? String(q.rev) : p ? String(p.rev) : '-', 3)} ${fit(`${yn(q?.m)}/${yn(p?.m)}`, 3)} ${q && p ? (q.c || p.c ? '1' : '0') : yn(q?.c ?? p?.c)} ` +
            `${fit(e ? (e.p2p ? 'yes' : 'no') : '-', 3)} ${fit(rtr, 3)} ${fit(irdOrd, 11)} ${f.upper ?? '-'}`,
        },
      ];
      lines.push(line);
    }
    return {
      title: `Flows (tcp.stream; sorted by ${this.sort}; s to change)`,
      lines,
      selected: this.flowSel - this.flowTop + 1,
    };
  }

  private pduPane(h: number): { title: string; lines: Line[]; selected: number } {
    const m = this.model;
    const ix = m.index;
    const head = `${padLeft('No.', 7)} ${padLeft('Time', 8)}   ${padLeft('Seq', 10)} ${fit('Kind', 7)} ${padLeft('Len', 5)} Mk ${fit('CRC', 3)} Info`;
    const lines: Line[] = [[{ t: head, s: 'head' }]];
    const rows = h - 1;
    for (let k = this.pduTop; k < Math.min(this.visible.length, this.pduTop + rows); k++) {
      const i = this.visible.get(k);
      const fr = ix.framesOf(i);
      const frames = fr.length > 1 ? `${fr[0]}-${fr[fr.length - 1]}` : String(fr[0] ?? '');
      const kind = ix.kind[i]!;
      const v = ix.verdict[i]!;
      const isF = kind === KIND_FPDU;
      const crc = !isF ? '' : ix.crc[i] === 0 ? 'n/a' : ix.crc[i] === 1 ? 'ok' : ix.crc[i] === 3 ? 'SWP' : 'BAD';
      const info = m.infoOf(i);
      const sev: StyleName | undefined = v & V_ERROR ? 'error' : v & V_WARNING ? 'warning' : undefined;
      const spans: Span[] = [
        {
          t: `${padLeft(frames, 7)} ${padLeft(ix.time[i]!.toFixed(6), 8)} ${ix.dir[i] === 0 ? '→' : '←'} ${padLeft(kind === KIND_FINDING && ix.seq[i] === 0 ? '' : String(ix.seq[i]), 10)} ${fit(m.kindText(i), 7)} ${padLeft(kind === KIND_FINDING ? '' : String(ix.ulpduLength[i]), 5)} ${padLeft(isF && ix.markerCount[i] ? String(ix.markerCount[i]) : '', 2)} `,
        },
        { t: fit(crc, 3), ...(v & V_CRC_BAD ? { s: 'error' as StyleName } : {}) },
        { t: ' ' },
      ];
      const badges = [
        v & V_ERROR ? '[E]' : '',
        v & V_WARNING ? '[W]' : '',
        v & V_INFO ? '[i]' : '',
        v & V_MARKER_BAD ? '[FPDUPTR]' : '',
        v & V_PAD_NONZERO ? '[PAD]' : '',
      ]
        .filter((x) => x)
        .join('');
      if (badges) spans.push({ t: badges + ' ', ...(sev ? { s: sev } : { s: 'dim' as StyleName }) });
      spans.push({ t: info, ...(kind === KIND_FINDING && sev ? { s: sev } : {}) });
      lines.push(spans);
    }
    if (this.visible.length === 0) lines.push([{ t: this.emptyListText(), s: 'dim' }]);
    const scope = this.selectedFlow === ALL ? 'all flows' : `tcp.stream ${this.selectedFlow - 1}`;
    const extra = [
      this.filter ? 'filtered' : '',
      this.errorsOnly ? 'errors only' : '',
      this.follow ? 'follow' : '',
      this.pending() ? 'filtering…' : '',
    ]
      .filter((x) => x)
      .join(', ');
    return {
      title: `PDUs: ${scope}, ${this.visible.length} shown${extra ? ` (${extra})` : ''}`,
      lines,
      selected: this.visible.length ? this.pduSel - this.pduTop + 1 : -1,
    };
  }

  private emptyListText(): string {
    const m = this.model;
    if (m.state === 'reading')
      return m.source.live ? `capturing on ${m.source.live.iface}: no MPA records yet` : 'reading…';
    if (this.filter || this.errorsOnly) return 'nothing matches (/ to change the filter, e to leave errors only)';
    if (m.index.count === 0) return 'no MPA records in this capture';
    return 'no MPA records in this flow';
  }

  private treePane(h: number): { title: string; lines: Line[]; selected: number } {
    const rows = this.treeRows();
    const d = this.current?.decoded;
    const lines: Line[] = [];
    for (let k = this.treeTop; k < Math.min(rows.length, this.treeTop + h); k++) {
      const r = rows[k]!;
      const has = (r.node.children?.length ?? 0) > 0;
      const sign = has ? (this.collapsed.has(r.path) ? '▸ ' : '▾ ') : '  ';
      const text = nodeText(r.node);
      const bad =
        /\[FPDUPTR mismatch\]|\[expected|incorrect|CRC status: bad|byte-swapped|not zero|Malformed|damaged/.test(text);
      lines.push([
        {
          t: '  '.repeat(r.depth) + sign + text,
          ...(bad ? { s: 'error' as StyleName } : r.depth === 0 ? { s: 'bold' as StyleName } : {}),
        },
      ]);
    }
    if (!d) lines.push([{ t: 'select a PDU', s: 'dim' }]);
    else if (rows.length === 0)
      for (const f of this.model.findingsOf(this.current!.item))
        lines.push([
          {
            t: `${f.rule}: ${f.message}`,
            s: f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warning' : 'info',
          },
        ]);
    const fs = d ? this.model.findingsOf(this.current!.item) : [];
    // A stream keeps only its recent frames: an older record is what the index remembers of it.
    const gone =
      d?.rebuilt &&
      d.record &&
      !this.model.source.randomAccess &&
      this.model.wireBytes(this.current!.item, d.record) === null;
    const title = d
      ? `Detail${gone ? ' (no longer held: older than the window of recent frames; from the index, octets gone)' : d.rebuilt ? ' (rebuilt from the index; no DDP analysis subtree)' : ''}${fs.length && rows.length ? `, ${fs.length} finding${fs.length > 1 ? 's' : ''}` : ''}`
      : 'Detail';
    return { title, lines, selected: rows.length ? this.treeSel - this.treeTop : -1 };
  }

  private bytesPaneLines(): Line[] {
    const cur = this.current;
    if (!cur?.decoded.record)
      return [[{ t: cur ? 'no octets: this is a finding, not a record' : 'select a PDU', s: 'dim' }]];
    const r = cur.decoded.record;
    const fl = this.model.flow(r.flow);
    const seqStart = fl ? fl.seqStart[r.dir] : null;
    let hl: [number, number] | null = null;
    const row = this.treeRows()[this.treeSel];
    if (row && row.node.offset !== undefined && this.focus === 'tree')
      hl = fieldSpan(r, row.mpa, row.node.offset, row.node.length ?? 1);
    // Without a startup frame (heuristic or forced lock-on) SeqStart is not known: offsets count from the FPDU.
    return bytesLines(r, this.model.wireBytes(cur.item, r), isFpdu(r) ? seqStart : null, hl, this.inner('bytes').w);
  }

  private findingsPane(h: number): { title: string; lines: Line[]; selected: number } {
    const list = this.findingList();
    const m = this.model;
    const lines: Line[] = [];
    for (let k = this.findTop; k < Math.min(list.length, this.findTop + h); k++) {
      const f = m.findings[list[k]!]!;
      const s: StyleName = f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warning' : 'info';
      lines.push([
        { t: fit(f.severity, 7) + ' ', s },
        {
          t: `${f.rule}${f.rfcErrorCode !== null ? ` [MPA error ${f.rfcErrorCode}]` : ''} fr ${f.frames.slice(0, 3).join(',')}${f.frames.length > 3 ? '…' : ''}: ${f.message}`,
        },
      ]);
    }
    if (list.length === 0) lines.push([{ t: m.state === 'reading' ? 'none yet' : 'no findings', s: 'dim' }]);
    const scope =
      this.captureFindings || this.selectedFlow === ALL ? 'whole capture' : `tcp.stream ${this.selectedFlow - 1}`;
    const omitted = m.findingsOmitted ? `, ${m.findingsOmitted} more not kept` : '';
    return {
      title: `Findings: ${scope}, ${list.length}${omitted}`,
      lines,
      selected: list.length ? this.findSel - this.findTop : -1,
    };
  }

  private ladderPane(w: number, h: number): { title: string; lines: Line[]; selected: number } {
    const id =
      this.selectedFlow !== ALL
        ? this.selectedFlow
        : this.current
          ? this.model.index.flow[this.current.item]!
          : this.flowOrder[0];
    const fl = id !== undefined ? this.model.flow(id) : undefined;
    if (!fl) return { title: 'Startup ladder', lines: [[{ t: 'select a flow', s: 'dim' }]], selected: -1 };
    return {
      title: `Startup ladder: tcp.stream ${fl.id - 1}`,
      lines: ladderLines(this.model, fl, w).slice(0, h),
      selected: -1,
    };
  }

  // ------------------------------------------------------------------------------------------
  // Status, help, notices
  // ------------------------------------------------------------------------------------------

  status(): Line {
    const m = this.model;
    const src = m.source;
    const progress =
      m.state === 'reading'
        ? src.totalBytes
          ? ` reading ${Math.floor((100 * m.bytesRead) / Math.max(1, src.totalBytes))}%`
          : ' reading…'
        : m.state === 'failed'
          ? ' unreadable'
          : '';
    if (src.live) return this.liveStatus(src.live);
    const spans: Span[] = [
      { t: ` ${basename(src.label)}`, s: 'bold' },
      { t: `  ${m.packets} packets  ${m.flows.length} flows  ${m.fpdus} FPDUs  ` },
      { t: `${m.errors} errors`, ...(m.errors ? { s: 'error' as StyleName } : {}) },
      { t: '  ' },
      { t: `${m.warnings} warnings`, ...(m.warnings ? { s: 'warning' as StyleName } : {}) },
      { t: this.filterText ? `  filter: ${this.filterText}` : '  no filter' },
    ];
    if (progress) spans.push({ t: ` ${progress}`, s: 'warning' });
    if (this.message) spans.push({ t: `  ${this.message.text}`, s: this.message.tone === 'error' ? 'error' : 'good' });
    spans.push({ t: '  ? help  q quit', s: 'dim' });
    return cut(spans, this.width);
  }

  /** The status bar of `tui -i`: what is being captured where, and the backend's drop count. */
  private liveStatus(live: NonNullable<CaptureModel['source']['live']>): Line {
    const m = this.model;
    const d = live.stats().dropped;
    const where =
      m.state === 'reading'
        ? ` capturing on ${live.iface}`
        : ` capture on ${live.iface} ${m.state === 'failed' ? 'failed' : 'stopped'}`;
    const spans: Span[] = [
      { t: where, s: 'bold' },
      { t: `  ${m.packets} packets  ${m.flows.length} flows  ${m.fpdus} FPDUs  ` },
      { t: `${m.errors} errors`, ...(m.errors ? { s: 'error' as StyleName } : {}) },
      { t: '  ' },
      { t: `${m.warnings} warnings`, ...(m.warnings ? { s: 'warning' as StyleName } : {}) },
      { t: '  ' },
      d === null ? { t: 'drops n/a', s: 'dim' } : { t: `${d} dropped`, ...(d ? { s: 'error' as StyleName } : {}) },
      { t: this.filterText ? `  filter: ${this.filterText}` : '  no filter' },
    ];
    if (this.message) spans.push({ t: `  ${this.message.text}`, s: this.message.tone === 'error' ? 'error' : 'good' });
    spans.push({ t: '  ? help  q quit', s: 'dim' });
    return cut(spans, this.width);
  }

  /** A screen over everything: help, or why there is nothing to browse. */
  overlay(): Overlay | null {
    if (this.showHelp) {
      const w = Math.max(...KEYS.map((k) => k.keys.length));
      return {
        title: 'Keys (any key closes)',
        lines: KEYS.map((k) => [{ t: k.keys.padEnd(w + 2), s: 'bold' }, { t: k.does }] as Line),
        tone: 'normal',
      };
    }
    return this.notice();
  }

  private notice(): Overlay | null {
    const m = this.model;
    const name = m.source.label;
    if (m.state === 'failed' && m.source.live) {
      return {
        title: `Capture on ${m.source.live.iface} failed`,
        lines: [
          [{ t: m.error ?? `${name}: the capture ended`, s: 'error' }],
          [],
          [{ t: `The ${m.source.live.backend} capture ended before handing out any packet.` }],
          [{ t: 'q quits (exit status 2).', s: 'dim' }],
        ],
        tone: 'error',
      };
    }
    if (m.state === 'failed') {
      return {
        title: 'Cannot read the capture',
        lines: [
          [{ t: m.error ?? `${name}: unreadable`, s: 'error' }],
          [],
          [{ t: 'Check the path and that it is a pcap or pcapng file (tcpdump -w, dumpcap, Wireshark).' }],
          [{ t: 'q quits.', s: 'dim' }],
        ],
        tone: 'error',
      };
    }
    if (m.state !== 'done' || this.noticeDismissed) return null;
    if (m.packets === 0) {
      return {
        title: 'Empty capture',
        lines: [
          [{ t: `${name} holds no packets.` }],
          [],
          [{ t: 'Capture again with a filter on the RDMA port, e.g. tcpdump -i eth0 -w cap.pcap port 4420.' }],
          [{ t: 'q quits; any other key shows the (empty) panes.', s: 'dim' }],
        ],
        tone: 'normal',
      };
    }
    if (m.index.count === 0 || (m.fpdus === 0 && !m.flows.some((f) => f.request || f.reply))) {
      const tcp = m.flows.length;
      return {
        title: 'No MPA in this capture',
        lines: [
          [
            {
              t: `${m.packets} packets, ${tcp} TCP flow${tcp === 1 ? '' : 's'}; none carried MPA startup frames or FPDUs the heuristic could lock on to.`,
            },
          ],
          [],
          [{ t: 'A capture started mid-connection without markers may need MPA forced on:' }],
          [{ t: "  mpa-dissect tui --mpa 'flow=port:4420,markers=both,crc=on' capture.pcap", s: 'bold' }],
          [{ t: 'Any key shows the flows; q quits.', s: 'dim' }],
        ],
        tone: 'normal',
      };
    }
    return null;
  }
}

/** Keeps `sel` inside a window of `rows` rows starting at `top`. */
function scrollTo(top: number, sel: number, rows: number): number {
  rows = Math.max(1, rows);
  if (sel < top) return Math.max(0, sel);
  if (sel >= top + rows) return sel - rows + 1;
  return Math.max(0, top);
}

/** Cuts a line to `w` columns. */
function cut(l: Line, w: number): Line {
  const out: Span[] = [];
  let left = w;
  for (const s of l) {
    if (left <= 0) break;
    const cps = Array.from(s.t);
    if (cps.length <= left) {
      out.push(s);
      left -= cps.length;
    } else {
      out.push({ ...s, t: cps.slice(0, left).join('') });
      left = 0;
    }
  }
  return out;
}

/**
 * The flow list's MPA column: how MPA was found, with the RFC 5044 Appendix C outcome for an RDMA
 * Consortium (Rev 0) peer and "pre-std" for MPA enabled without startup frames.
 */
function mpaLabel(f: FlowRow): string | null {
  if (f.rdmac) return f.rdmac === 'v0' ? 'RDMAC v0' : 'RDMAC cls';
  if (f.detection === 'prestandard') return 'pre-std';
  return f.detection;
}
